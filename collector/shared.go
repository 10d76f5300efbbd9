package collector

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/flight"
)

// Shared runs one gather at a time for every reader: a reader that comes
// while a gather is running waits for it and gets its reading, instead of
// starting its own. The collectors refuse to run twice at once (a
// collector still running is reported as failed in the second scrape), so
// /metrics and the status page read through one Shared, or one of them
// would miss collectors whenever they overlap.
//
// A reading is not reused once its gather has ended: each reader gets
// metrics read no earlier than its request began, or during the gather
// running when it came, so that timestamps stay as close as a scrape's.
type Shared struct {
	gather func(ctx context.Context) Reading

	mu       sync.Mutex
	inflight *flight.Call[Reading]
	gathers  uint64 // gathers started
	joins    uint64 // reads served by a gather another reader started
}

// NewShared returns a Shared over gather, normally Exporter.Gather, which
// its caller may wrap to track the gathers and end them at shutdown: a
// gather outlives the reader that started it, since others may join it.
func NewShared(gather func(ctx context.Context) Reading) *Shared {
	return &Shared{gather: gather}
}

// Gather returns the reading of the running gather, or of a new one when
// none runs. A new gather runs under ctx's deadline but not its
// cancellation, since other readers may join it; a reader canceled before
// the reading, or still without one budget.ReaderGrace past its deadline,
// gets ctx's error and no reading.
func (s *Shared) Gather(ctx context.Context) (Reading, error) {
	s.mu.Lock()
	c := s.inflight
	if c == nil {
		s.gathers++
		gctx, cancel := flight.Detach(ctx)
		// The gather clears inflight under mu, which is held until
		// inflight is set.
		c = flight.Go(func() (Reading, error) {
			defer cancel()
			r := s.gather(gctx)
			s.mu.Lock()
			s.inflight = nil
			s.mu.Unlock()
			return r, nil
		})
		s.inflight = c
	} else {
		s.joins++
	}
	s.mu.Unlock()
	// Past its deadline a reader still waits a moment: collectors report
	// what they have at the deadline and leave behind those that hang, so
	// the reading, partial, comes just after it. A reader that is canceled
	// (its client went away) stops at once.
	giveUp := budget.NewPlan(ctx, time.Now()).ReadersGiveUp()
	canceled := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		if errors.Is(ctx.Err(), context.Canceled) {
			close(canceled)
		}
	})
	defer stop()
	if r, ended, _ := c.Wait(giveUp, canceled); ended {
		return r, nil
	}
	return Reading{}, ctx.Err()
}

// Gatherer is a prometheus.Gatherer reading through s under ctx, for
// promhttp.HandlerFor: the families, and the reader's error or the
// gather's.
func (s *Shared) Gatherer(ctx context.Context) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		r, err := s.Gather(ctx)
		if err != nil {
			return nil, err
		}
		return r.Families(), r.Err
	})
}

// Counts tells how many gathers ran and how many reads joined one that
// another reader had started.
func (s *Shared) Counts() (gathers, joins uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gathers, s.joins
}

// ServeMetrics answers a request for /metrics with base's families and
// those of a reading through s under ctx. The text format, which
// Prometheus asks for unless told otherwise, is written by WriteText;
// others by promhttp. Either way what was gathered is served and what
// went wrong is logged, as promhttp's ContinueOnError does. Compression is
// left to the caller.
func (s *Shared) ServeMetrics(ctx context.Context, w http.ResponseWriter, r *http.Request, base prometheus.Gatherer, logger *slog.Logger) {
	format := expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)
	if format.FormatType() != expfmt.TypeTextPlain {
		promhttp.HandlerFor(Merge(base, s.Gatherer(ctx)), promhttp.HandlerOpts{
			ErrorLog:           slog.NewLogLogger(logger.Handler(), slog.LevelError),
			ErrorHandling:      promhttp.ContinueOnError,
			DisableCompression: true,
		}).ServeHTTP(w, r)
		return
	}
	own, err := base.Gather()
	if err != nil {
		logger.Error("gathering the exporter's own metrics", "err", err)
	}
	reading, err := s.Gather(ctx)
	if err == nil {
		err = reading.Err
	}
	if err != nil {
		logger.Error("gathering the collectors' metrics", "err", err)
	}
	w.Header().Add("Vary", "Accept")
	w.Header().Set("Content-Type", string(format))
	if err := WriteText(w, format, own, reading); err != nil {
		logger.Error("writing the exposition", "err", err)
	}
}
