// Package budget divides the time of a scrape between the stages that
// serve it, so that each stage ends before the next one gives up on it.
//
// /metrics gives a scrape the time T up to its deadline D: Prometheus's
// scrape timeout less TimeoutOffset, or --scrape.timeout when shorter.
// With r = FallbackReserve(T), from the request on:
//
//	from               to                 what runs
//	0                  D-r                zpool commands
//	D-r                D-r+ReapWait       a hung command is killed; its caller waits to see it go
//	D-r+ReapWait       D                  the kstat fallback
//	D                  D+CollectorGrace   collectors still at work
//	D+CollectorGrace   D+ReaderGrace      the rest of the gather (the exporter's own metrics)
//	D+ReaderGrace      D+TimeoutOffset    the answer is written; then Prometheus gives up
//
// A command keeps r = min(left/10, 500 ms) of the time left to D when it
// starts, so that when zpool hangs (a suspended pool) pool health can
// still come from the kstats. Readers of zpool status stop waiting for it
// at D-r+ReapWait, whether or not the killed process has gone by then
// (under load, or stuck in the kernel, that can take a second or more).
// The fallback gets r - ReapWait: 400 ms from a 5 s timeout up, less
// below, and nothing at 1 s or less, where only the kstats read beside
// zpool status (Linux) answer. A collector that has not
// returned by D+CollectorGrace is blocked where no context reaches: it is
// reported failed and left behind. A reader of the shared gather waits
// until D+ReaderGrace for that partial result, and TimeoutOffset -
// ReaderGrace is left to write it.
//
// A Plan holds these times for one scrape: made once from its deadline,
// it is what the gather, its zpool commands and their readers read their
// times from.
package budget

import (
	"context"
	"time"
)

const (
	// TimeoutOffset is taken off Prometheus's scrape timeout: the default
	// and least value of --scrape.timeout-offset. With a smaller offset, a
	// scrape whose collectors hang would answer after Prometheus gave up.
	TimeoutOffset = 500 * time.Millisecond
	// ReaderGrace is how long past its deadline a reader of the shared
	// gather waits for the gather's result.
	ReaderGrace = TimeoutOffset - answerWrite
	// CollectorGrace is how long past the deadline a scrape waits for a
	// collector before it leaves the collector behind.
	CollectorGrace = ReaderGrace - gatherRest
	// ReapWait is how long a caller whose deadline killed its command waits
	// to see the process exit before it gets its error.
	ReapWait = 100 * time.Millisecond
)

const (
	answerWrite = 100 * time.Millisecond // to encode and send the answer
	gatherRest  = 200 * time.Millisecond // for the gather once the collectors are done

	fallbackShare = 10 // percent of the time left
	fallbackMax   = 500 * time.Millisecond
)

// Plan is the timeline of one scrape, from the time it began and its
// deadline D. The zero Plan is a scrape without a deadline: every stage
// lasts until it ends, and each time it gives is the zero time.
type Plan struct {
	Start, Deadline time.Time
}

// NewPlan is the plan of a scrape that begins at start under ctx's
// deadline, or the zero Plan when ctx has none.
func NewPlan(ctx context.Context, start time.Time) Plan {
	deadline, ok := ctx.Deadline()
	if !ok {
		return Plan{}
	}
	return Plan{Start: start, Deadline: deadline}
}

// at is D+d, or the zero time for the zero Plan.
func (p Plan) at(d time.Duration) time.Time {
	if p.Deadline.IsZero() {
		return time.Time{}
	}
	return p.Deadline.Add(d)
}

// ZpoolEnd is D-r: when the scrape's zpool commands must have ended, the
// fallback's reserve r kept.
func (p Plan) ZpoolEnd() time.Time { return p.at(-FallbackReserve(p.Deadline.Sub(p.Start))) }

// FallbackStart is D-r+ReapWait, when the kstat fallback begins: readers
// of a zpool command that hangs stop waiting for it then.
func (p Plan) FallbackStart() time.Time {
	return p.at(ReapWait - FallbackReserve(p.Deadline.Sub(p.Start)))
}

// LeaveBehind is D+CollectorGrace, when a collector still at work is
// reported failed and left behind.
func (p Plan) LeaveBehind() time.Time { return p.at(CollectorGrace) }

// ReadersGiveUp is D+ReaderGrace, when a reader of the shared gather stops
// waiting for it.
func (p Plan) ReadersGiveUp() time.Time { return p.at(ReaderGrace) }

// ZpoolContext is ctx ending at ZpoolEnd, for a zpool or zfs command of the
// scrape.
func (p Plan) ZpoolContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.Deadline.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, p.ZpoolEnd())
}

// FallbackReserve is the part of the time left to a scrape's deadline that
// a zpool command leaves unused, for the kstat fallback.
func FallbackReserve(left time.Duration) time.Duration {
	return min(left*fallbackShare/100, fallbackMax)
}
