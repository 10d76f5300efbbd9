package budget

import (
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
	r := FallbackReserve(t)
	start := time.Now()
	fallback := FallbackStart(start.Add(t), start).Sub(start)
	return []stage{
		{"zpool commands", 0, t - r},
		{"reaping a killed command", t - r, fallback},
		{"kstat fallback", fallback, t},
		{"late collectors", t, t + CollectorGrace},
		{"rest of the gather", t + CollectorGrace, t + ReaderGrace},
		{"writing the answer", t + ReaderGrace, t + TimeoutOffset},
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
