package history

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
)

// GatherFunc takes one reading of the exporter's metrics under ctx and
// tells when it was taken.
type GatherFunc func(ctx context.Context) (families []*dto.MetricFamily, at time.Time, err error)

// Shared runs one gather at a time for every reader: a reader that comes
// while a gather is running waits for it and gets its result, instead of
// starting its own. The exporter's collectors refuse to run twice at once
// (a collector still running is reported as failed in the second scrape),
// so /metrics and the history must read through one Shared, or one of them
// would miss collectors whenever they overlap.
//
// A result is not reused once its gather has ended: each reader gets
// metrics read no earlier than its request began, or during the gather
// running when it came, so that timestamps stay as close as a scrape's.
type Shared struct {
	gather func(ctx context.Context) ([]*dto.MetricFamily, any, error)
	now    func() time.Time

	mu       sync.Mutex
	inflight *call
	gathers  uint64 // gathers started
	joins    uint64 // reads served by a gather another reader started
}

type call struct {
	done     chan struct{}
	at       time.Time
	families []*dto.MetricFamily
	extra    any
	err      error
}

// NewShared returns a Shared over gather; now is the clock (time.Now when
// nil). The families gather returns are handed to several readers, who
// must not change them.
func NewShared(gather func(ctx context.Context) ([]*dto.MetricFamily, error), now func() time.Time) *Shared {
	return NewSharedWith(func(ctx context.Context) ([]*dto.MetricFamily, any, error) {
		families, err := gather(ctx)
		return families, nil, err
	}, now)
}

// NewSharedWith is NewShared over a gather that also returns a value
// beside the metrics, for readers that need more of the gather than its
// metrics (the status page takes the `zpool status` its collectors read);
// GatherWith hands it out, to several readers, who must not change it.
func NewSharedWith(gather func(ctx context.Context) ([]*dto.MetricFamily, any, error), now func() time.Time) *Shared {
	if now == nil {
		now = time.Now
	}
	return &Shared{gather: gather, now: now}
}

// Gather returns the result of the running gather, or of a new one when
// none runs, with the time that gather began. A new gather runs under
// ctx's deadline but not its cancellation, since other readers may join
// it; a reader canceled before the result, or still without one
// budget.ReaderGrace past its deadline, gets ctx's error.
func (s *Shared) Gather(ctx context.Context) ([]*dto.MetricFamily, time.Time, error) {
	families, _, at, err := s.GatherWith(ctx)
	return families, at, err
}

// GatherWith is Gather, also returning the value the gather function
// returned beside the metrics (nil under NewShared).
func (s *Shared) GatherWith(ctx context.Context) ([]*dto.MetricFamily, any, time.Time, error) {
	s.mu.Lock()
	c := s.inflight
	if c == nil {
		c = &call{done: make(chan struct{}), at: s.now()}
		s.inflight = c
		s.gathers++
		gctx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok {
			gctx, cancel = context.WithDeadline(gctx, deadline)
		}
		go func() {
			defer cancel()
			c.families, c.extra, c.err = s.gather(gctx)
			s.mu.Lock()
			s.inflight = nil
			s.mu.Unlock()
			close(c.done)
		}()
	} else {
		s.joins++
	}
	s.mu.Unlock()
	// Past its deadline a reader still waits a moment: collectors report
	// what they have at the deadline and leave behind those that hang, so
	// the result, partial, comes just after it. A reader that is canceled
	// (its client went away) stops at once.
	var late <-chan time.Time
	if deadline, ok := ctx.Deadline(); ok {
		timer := time.NewTimer(time.Until(deadline) + budget.ReaderGrace)
		defer timer.Stop()
		late = timer.C
	}
	canceled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			close(canceled)
		}
	})
	defer stop()
	select {
	case <-c.done:
		return c.families, c.extra, c.at, c.err
	case <-late:
		return nil, nil, time.Time{}, ctx.Err()
	case <-canceled:
		return nil, nil, time.Time{}, ctx.Err()
	}
}

// Gatherer is a prometheus.Gatherer reading through s under ctx, for
// promhttp.HandlerFor.
func (s *Shared) Gatherer(ctx context.Context) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		families, _, err := s.Gather(ctx)
		return families, err
	})
}

// Counts tells how many gathers ran and how many reads joined one that
// another reader had started.
func (s *Shared) Counts() (gathers, joins uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gathers, s.joins
}
