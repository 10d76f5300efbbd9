package runner

import (
	"context"
	"time"
)

// Backoff is the restart policy of Supervise. The zero value restarts after
// 1 s, doubling up to 1 min, and forgets past failures after a run that
// lasted 1 min.
type Backoff struct {
	Initial    time.Duration // first delay; default 1s
	Max        time.Duration // longest delay; default 1m
	ResetAfter time.Duration // a run lasting this long was healthy: the next delay is Initial again; default 1m

	// OnExit, if set, is called each time run returns, with its error and
	// the delay before the next start (for logging).
	OnExit func(err error, delay time.Duration)

	// Now and Sleep replace the clock in tests. Sleep returns early with
	// ctx's error when ctx ends.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Supervise keeps run running until ctx ends: each time run returns, for
// whatever reason, it is started again after a delay that doubles from
// b.Initial to b.Max and starts over after a healthy run. It returns ctx's
// error. run is typically a sampler that reads a stream until it breaks.
func Supervise(ctx context.Context, b Backoff, run func(ctx context.Context) error) error {
	b = b.withDefaults()
	delay := b.Initial
	for {
		started := b.Now()
		err := run(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if b.Now().Sub(started) >= b.ResetAfter {
			delay = b.Initial
		}
		if b.OnExit != nil {
			b.OnExit(err, delay)
		}
		if err := b.Sleep(ctx, delay); err != nil {
			return err
		}
		delay = min(2*delay, b.Max)
	}
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial <= 0 {
		b.Initial = time.Second
	}
	if b.Max <= 0 {
		b.Max = time.Minute
	}
	if b.Max < b.Initial {
		b.Max = b.Initial
	}
	if b.ResetAfter <= 0 {
		b.ResetAfter = time.Minute
	}
	if b.Now == nil {
		b.Now = time.Now
	}
	if b.Sleep == nil {
		b.Sleep = sleep
	}
	return b
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
