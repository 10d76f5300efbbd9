package collector

import (
	"context"
	"errors"
	"testing"
	"time"
)

// No stream starts before Need, and supervise still returns when ctx ends.
func TestStreamSamplerStartsNothingBeforeNeed(t *testing.T) {
	s := newStreamSampler(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	started := make(chan struct{}, 1)
	go func() {
		defer close(done)
		s.supervise(ctx, func(context.Context) error {
			started <- struct{}{}
			return nil
		}, nil)
	}()
	select {
	case <-started:
		t.Fatal("the stream started before Need")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("supervise did not return when ctx ended")
	}
	if len(started) > 0 {
		t.Error("the stream started without Need")
	}
}

// Need starts the stream; when it ends, ended is told why and how long
// until it starts again, and supervise returns once ctx ends.
func TestStreamSamplerSupervisesAfterNeed(t *testing.T) {
	s := newStreamSampler(time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	broken := errors.New("stream broke")
	runs := 0
	var endedWith error
	var delay time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.supervise(ctx, func(context.Context) error {
			runs++
			return broken
		}, func(err error, d time.Duration) {
			endedWith, delay = err, d
			cancel()
		})
	}()
	s.Need()
	s.Need() // a second call changes nothing
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("supervise did not return when ctx ended")
	}
	if runs != 1 {
		t.Errorf("the stream ran %d times, want 1", runs)
	}
	if !errors.Is(endedWith, broken) || delay <= 0 {
		t.Errorf("ended told %v, restart in %s; want %v and a delay", endedWith, delay, broken)
	}
}

// A stream is healthy while it runs and reported within three intervals;
// its last report stays known after it stopped.
func TestStreamSamplerHealth(t *testing.T) {
	s := newStreamSampler(10 * time.Second)
	now := testNow
	s.now = func() time.Time { return now }
	if _, ok := s.LastReport(); ok || s.Healthy() {
		t.Fatal("a sampler without a report has a last report or is healthy")
	}
	s.setRunning(true)
	if s.Healthy() {
		t.Error("a running stream without a report is healthy")
	}
	s.mu.Lock()
	s.lastReport = now
	s.mu.Unlock()
	if last, ok := s.LastReport(); !ok || !last.Equal(testNow) {
		t.Errorf("last report %s (%v), want %s", last, ok, testNow)
	}
	for _, tc := range []struct {
		since   time.Duration
		running bool
		healthy bool
	}{
		{0, true, true},
		{29 * time.Second, true, true},
		{30 * time.Second, true, false},
		{time.Second, false, false},
	} {
		now = testNow.Add(tc.since)
		s.setRunning(tc.running)
		if got := s.Healthy(); got != tc.healthy {
			t.Errorf("%s after the last report, running %v: healthy %v, want %v", tc.since, tc.running, got, tc.healthy)
		}
	}
	if last, ok := s.LastReport(); !ok || !last.Equal(testNow) {
		t.Errorf("after the stream stopped: last report %s (%v), want %s", last, ok, testNow)
	}
}
