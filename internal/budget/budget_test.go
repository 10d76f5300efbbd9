package budget

import (
	"context"
	"testing"
	"time"
)

// stage is one span of a scrape, counted from the request.
type stage struct {
	what       string
	start, end time.Duration
}

// stages lays out a scrape of timeout t as the package comment does, each
// stage starting where the one before ends: the last ends when Prometheus
// gives up.
func stages(t time.Duration) []stage {
	start := time.Now()
	p := Plan{Start: start, Deadline: start.Add(t)}
	since := func(at time.Time) time.Duration { return at.Sub(start) }
	return []stage{
		{"zpool commands", 0, since(p.ZpoolEnd())},
		{"reaping a killed command", since(p.ZpoolEnd()), since(p.FallbackStart())},
		{"kstat fallback", since(p.FallbackStart()), t},
		{"late collectors", t, since(p.LeaveBehind())},
		{"rest of the gather", since(p.LeaveBehind()), since(p.ReadersGiveUp())},
		{"writing the answer", since(p.ReadersGiveUp()), t + TimeoutOffset},
	}
}

// timeouts are scrape timeouts /metrics may give: any positive one, here
// from 1 ms to an hour, finely around the steps of the reserve.
func timeouts() []time.Duration {
	var ts []time.Duration
	for t := time.Millisecond; t <= time.Hour; t = t*11/10 + time.Millisecond {
		ts = append(ts, t)
	}
	for t := 900 * time.Millisecond; t <= 5100*time.Millisecond; t += 10 * time.Millisecond {
		ts = append(ts, t)
	}
	return ts
}

// Each stage gets the time the package comment promises it, whatever the
// timeout: no stage ends before it began, so none eats into the next.
func TestEachStageGetsItsTime(t *testing.T) {
	for _, timeout := range timeouts() {
		s := stages(timeout)
		took := func(i int) time.Duration { return s[i].end - s[i].start }
		// zpool commands have nine tenths of the time at least.
		if took(0) < timeout*9/10 {
			t.Errorf("timeout %s: zpool commands get %s", timeout, took(0))
		}
		// The kstat fallback gets time beyond 1 s, 400 ms from 5 s up.
		fallback := took(2)
		switch {
		case timeout >= 5*time.Second && fallback != 400*time.Millisecond:
			t.Errorf("timeout %s: the kstat fallback gets %s, want 400ms", timeout, fallback)
		case timeout > time.Second && fallback <= 0:
			t.Errorf("timeout %s: the kstat fallback gets %s", timeout, fallback)
		}
		// Past the deadline each stage has 100 ms at least.
		for i := 3; i < len(s); i++ {
			if least := 100 * time.Millisecond; took(i) < least {
				t.Errorf("timeout %s: %s gets %s, want %s at least", timeout, s[i].what, took(i), least)
			}
		}
	}
}

// A scrape without a deadline has no stage that ends: every time of its
// plan is the zero time, which its readers take as never, and its zpool
// commands run under the caller's context as it is.
func TestPlanWithoutDeadline(t *testing.T) {
	p := NewPlan(context.Background(), time.Now())
	for name, at := range map[string]time.Time{"ZpoolEnd": p.ZpoolEnd(), "FallbackStart": p.FallbackStart(),
		"LeaveBehind": p.LeaveBehind(), "ReadersGiveUp": p.ReadersGiveUp()} {
		if !at.IsZero() {
			t.Errorf("%s = %v, want the zero time", name, at)
		}
	}
	ctx, cancel := p.ZpoolContext(context.Background())
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Error("a zpool command of a scrape without a deadline got one")
	}
	deadline := time.Now().Add(10 * time.Second)
	parent, stop := context.WithDeadline(context.Background(), deadline)
	defer stop()
	p = NewPlan(parent, deadline.Add(-10*time.Second))
	ctx, cancel = p.ZpoolContext(parent)
	defer cancel()
	if d, _ := ctx.Deadline(); !d.Equal(deadline.Add(-500 * time.Millisecond)) {
		t.Errorf("a zpool command of a 10 s scrape ends at D%v, want D-500ms", d.Sub(deadline))
	}
}
