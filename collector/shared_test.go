package collector

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
)

// familiesNamed returns empty families of the given names.
func familiesNamed(names ...string) []*dto.MetricFamily {
	families := make([]*dto.MetricFamily, len(names))
	for i, name := range names {
		families[i] = &dto.MetricFamily{Name: &name}
	}
	return families
}

// busyExporter behaves like an Exporter: a gather that starts while
// another runs finds its collector busy and reads no pool.
type busyExporter struct {
	running atomic.Bool
	gathers atomic.Int32
	hold    time.Duration
}

func (b *busyExporter) gather(ctx context.Context) Reading {
	b.gathers.Add(1)
	r := Reading{Time: time.Now(), gathered: gatheredOf(familiesNamed("zfs_exporter_collector_success"))}
	if !b.running.CompareAndSwap(false, true) {
		return r
	}
	defer b.running.Store(false)
	select {
	case <-time.After(b.hold):
	case <-ctx.Done():
	}
	r.gathered = gatheredOf(familiesNamed("zfs_exporter_collector_success", "zfs_pool_state"))
	return r
}

func complete(r Reading) bool {
	for _, mf := range r.Families() {
		if mf.GetName() == "zfs_pool_state" {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Readers that overlap share one gather and all get complete metrics,
// where gathering each on its own makes all but one miss the collector.
func TestSharedJoinsTheRunningGather(t *testing.T) {
	const readers = 8
	run := func(gather func(ctx context.Context) (Reading, error)) (completeReads int, times map[time.Time]bool) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		times = map[time.Time]bool{}
		start := make(chan struct{})
		for range readers {
			wg.Go(func() {
				<-start
				r, err := gather(t.Context())
				mu.Lock()
				defer mu.Unlock()
				if err == nil && complete(r) {
					completeReads++
				}
				times[r.Time] = true
			})
		}
		close(start)
		wg.Wait()
		return completeReads, times
	}

	alone := &busyExporter{hold: 50 * time.Millisecond}
	n, _ := run(func(ctx context.Context) (Reading, error) { return alone.gather(ctx), nil })
	if n != 1 {
		t.Fatalf("control: %d of %d overlapping gathers without sharing were complete, want 1", n, readers)
	}

	shared := &busyExporter{hold: 50 * time.Millisecond}
	s := NewShared(shared.gather)
	n, times := run(s.Gather)
	if n != readers {
		t.Errorf("%d of %d overlapping readers got complete metrics through Shared, want all", n, readers)
	}
	gathers, joins := s.Counts()
	if gathers != uint64(shared.gathers.Load()) || gathers+joins != readers || gathers > 2 || len(times) != int(gathers) {
		t.Errorf("%d gathers, %d joins, %d distinct times for %d readers; want one gather (two at most) shared by all, one time each", gathers, joins, len(times), readers)
	}

	// Once it ended, a reading is not reused: the next reader gathers anew.
	s.Gather(t.Context())
	if g, _ := s.Counts(); g != gathers+1 {
		t.Errorf("a reader after the gather ended reused it: %d gathers, want %d", g, gathers+1)
	}
}

// A reader whose context ends stops waiting; the gather goes on for the
// others, under the deadline of the reader that started it but not its
// cancellation.
func TestSharedReaderGivesUp(t *testing.T) {
	release := make(chan struct{})
	var sawDeadline atomic.Bool
	s := NewShared(func(ctx context.Context) Reading {
		_, ok := ctx.Deadline()
		sawDeadline.Store(ok)
		select {
		case <-release:
			return Reading{gathered: gatheredOf(familiesNamed("zfs_pool_state"))}
		case <-ctx.Done():
			return Reading{Err: ctx.Err()}
		}
	})
	first, cancel := context.WithTimeout(t.Context(), time.Minute)
	got := make(chan error, 2)
	go func() { _, err := s.Gather(first); got <- err }()
	waitFor(t, "the first gather", func() bool { g, _ := s.Counts(); return g == 1 })
	go func() {
		r, err := s.Gather(t.Context())
		if err == nil && !complete(r) {
			err = errors.New("incomplete")
		}
		got <- err
	}()
	waitFor(t, "the second reader to join", func() bool { _, j := s.Counts(); return j == 1 })
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled reader got %v, want context.Canceled", err)
	}
	close(release)
	if err := <-got; err != nil {
		t.Errorf("the reader that joined got %v after the first gave up, want the metrics", err)
	}
	if !sawDeadline.Load() {
		t.Error("the gather ran without the first reader's deadline")
	}
}

// A gather whose collectors hang reports what the others read just after
// the deadline: the reader that started it waits for that, rather than
// answer with no collector at all.
func TestSharedReaderGetsTheReadingJustPastItsDeadline(t *testing.T) {
	s := NewShared(func(ctx context.Context) Reading {
		<-ctx.Done()
		time.Sleep(200 * time.Millisecond) // the collectors' own grace
		return Reading{gathered: gatheredOf(familiesNamed("zfs_pool_state"))}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	r, err := s.Gather(ctx)
	if err != nil || !complete(r) {
		t.Fatalf("got %v, %v; want the partial reading that came 200 ms after the deadline", r.Families(), err)
	}

	// Longer than the grace, the reader gives up.
	slow := NewShared(func(ctx context.Context) Reading {
		<-ctx.Done()
		time.Sleep(budget.ReaderGrace + time.Second)
		return Reading{}
	})
	ctx2, cancel2 := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel2()
	if _, err := slow.Gather(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a gather past the grace: %v, want context.DeadlineExceeded", err)
	}
}
