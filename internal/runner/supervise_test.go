package runner

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

func TestSuperviseBackoff(t *testing.T) {
	// How long each run lasts before it fails; a 2-minute run is healthy.
	runs := []time.Duration{0, 0, 0, 0, 0, 0, 0, 0, 2 * time.Minute, 0, 0}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var slept, reported []time.Duration
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	b := Backoff{
		Now:    func() time.Time { return now },
		Sleep:  func(_ context.Context, d time.Duration) error { slept = append(slept, d); now = now.Add(d); return nil },
		OnExit: func(_ error, d time.Duration) { reported = append(reported, d) },
	}
	err := Supervise(ctx, b, func(ctx context.Context) error {
		now = now.Add(runs[n])
		n++
		if n == len(runs) {
			cancel()
		}
		return errors.New("stream died")
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Supervise = %v, want context.Canceled", err)
	}
	s, m := time.Second, time.Minute
	want := []time.Duration{1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, m, m, 1 * s, 2 * s}
	if !slices.Equal(slept, want) {
		t.Errorf("delays = %v, want %v", slept, want)
	}
	if !slices.Equal(reported, want) {
		t.Errorf("OnExit delays = %v, want %v", reported, want)
	}
	if n != len(runs) {
		t.Errorf("%d runs, want %d", n, len(runs))
	}
}

func TestSuperviseStopsDuringSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	done := make(chan error)
	go func() {
		done <- Supervise(ctx, Backoff{Initial: time.Hour}, func(context.Context) error {
			runs++
			return nil // a stream that ended cleanly is restarted too
		})
	}()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || runs != 1 {
			t.Errorf("Supervise = %v after %d runs, want context.Canceled after 1", err, runs)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Supervise did not return when its context was cancelled during a back-off")
	}
}
