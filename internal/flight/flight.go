// Package flight runs a piece of work once for every caller that asks for
// it while it runs: the callers join one call and wait for its one result,
// each until its own time to give up. The exporter has three such places,
// each with its own rule for giving up:
//
//	call                      started by           a caller gives up
//	a gather (collector)      the first reader     past its deadline and a grace, or when canceled
//	zpool status (zfs.Scrape) the first collector  at the scrape's fallback start (package budget)
//	a command line (runner)   the first caller     at its context's end; the last one stops the process
//
// golang.org/x/sync/singleflight shares a result by key as the gather
// and the runner do, but a call there is over once its work ends: the
// runner keeps a command line taken while its process lingers, and a
// scrape reads its status once for the whole scrape. What they share is
// the call and the wait, which this package is.
package flight

import (
	"context"
	"time"
)

// Call is one run of the work and its result.
type Call[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// New returns a call and the function that ends it with its result, to
// be called once, by whatever runs the work.
func New[T any]() (*Call[T], func(T, error)) {
	c := &Call[T]{done: make(chan struct{})}
	return c, func(val T, err error) {
		c.val, c.err = val, err
		close(c.done)
	}
}

// Go runs work on a goroutine of its own and returns its call.
func Go[T any](work func() (T, error)) *Call[T] {
	c, end := New[T]()
	go func() { end(work()) }()
	return c
}

// Ended returns a call that has its result already.
func Ended[T any](val T, err error) *Call[T] {
	c, end := New[T]()
	end(val, err)
	return c
}

// Done is closed once the call has its result.
func (c *Call[T]) Done() <-chan struct{} { return c.done }

// Result waits for the call's result.
func (c *Call[T]) Result() (T, error) {
	<-c.done
	return c.val, c.err
}

// Wait returns the call's result, or ended false when giveUp passes first
// (the zero time: never) or stop is closed first (nil: never). A result
// that is there when the caller gives up is taken all the same: the work
// ended in time.
func (c *Call[T]) Wait(giveUp time.Time, stop <-chan struct{}) (val T, ended bool, err error) {
	var late <-chan time.Time
	if !giveUp.IsZero() {
		t := time.NewTimer(time.Until(giveUp))
		defer t.Stop()
		late = t.C
	}
	select {
	case <-c.done:
		return c.val, true, c.err
	case <-late:
	case <-stop:
	}
	select {
	case <-c.done:
		return c.val, true, c.err
	default:
		var zero T
		return zero, false, nil
	}
}

// Detach returns a context with ctx's values and deadline but not its
// cancellation, for work that callers share: it must not end when the
// caller that started it goes away while others still wait.
func Detach(ctx context.Context) (context.Context, context.CancelFunc) {
	detached := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Deadline(); ok {
		return context.WithDeadline(detached, deadline)
	}
	return context.WithCancel(detached)
}
