package zfs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/flight"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/dataset"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Scrape is what a collector may read of ZFS in one scrape. `zpool
// status` and `zpool get` are read at most once, by whichever collector
// asks first, and every other reader of the scrape gets the same result;
// the other reads run each time they are called, as their comments say.
// It holds its client rather than embedding it, so that no collector
// reaches past the shared reads to the client's own.
//
// Its zpool and zfs commands end at the plan's ZpoolEnd, so that when
// zpool hangs (a suspended pool can hang it in the kernel) the kstat
// fallback still has its time before the deadline (see package budget).
type Scrape struct {
	client *Client

	planOnce sync.Once
	plan     budget.Plan

	statusOnce sync.Once
	status     *flight.Call[*zpool.Status]

	propsOnce sync.Once
	props     []zpool.Property
	propsErr  error

	takeProbes bool // see NewOnlyScrape
	detectOnce sync.Once
	caps       Capabilities
	probed     probed
	detectErr  error
}

// NewScrape starts a scrape.
func (c *Client) NewScrape() *Scrape { return &Scrape{client: c} }

// NewOnlyScrape starts the only scrape of the process (--once), which
// detects the capabilities itself: its status and properties are then
// what the probes printed, rather than the same commands run again a
// moment later. A server detects at its start, long before its scrapes:
// they run their own, and one that detects (after a detection that
// failed) runs and counts its commands as the others do.
func (c *Client) NewOnlyScrape() *Scrape { return &Scrape{client: c, takeProbes: true} }

// NewScrapeWithStatus starts a scrape whose `zpool status` was read
// elsewhere, as st or as the error err: its collectors then map that
// status (a fixture, in tests) without running zpool status.
func (c *Client) NewScrapeWithStatus(st *zpool.Status, err error) *Scrape {
	s := &Scrape{client: c, status: flight.Ended(st, err)}
	s.statusOnce.Do(func() {})
	return s
}

// Plan is the scrape's timeline, made from the deadline of its first
// read's ctx when that read began: the collectors of a gather share one
// deadline.
func (s *Scrape) Plan(ctx context.Context) budget.Plan {
	s.planOnce.Do(func() { s.plan = budget.NewPlan(ctx, time.Now()) })
	return s.plan
}

// zpoolContext is ctx ending when the scrape's zpool commands must end.
func (s *Scrape) zpoolContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return s.Plan(ctx).ZpoolContext(ctx)
}

// Status returns the scrape's `zpool status`, read under the ctx of the
// first caller. Readers wait for it until the kstat fallback begins (the
// plan's FallbackStart), and no longer: a zpool killed at
// its deadline that is slow to go (a loaded machine, a process stuck in
// the kernel) must not take that time as well. When ctx is canceled
// (shutdown), they wait for the read, which ends once its zpool is killed:
// the exporter must not exit with it still running.
func (s *Scrape) Status(ctx context.Context) (*zpool.Status, error) {
	s.statusOnce.Do(func() {
		s.status = flight.Go(func() (*zpool.Status, error) {
			ctx, cancel := s.zpoolContext(ctx)
			defer cancel()
			return s.client.status(ctx, s.capabilities)
		})
	})
	if st, ended, err := s.status.Wait(s.Plan(ctx).FallbackStart(), nil); ended {
		return st, err
	}
	err := fmt.Errorf("%w: zpool status had not ended when the scrape's time for it was up", runner.ErrTimeout)
	s.client.record(SourceStatus, err)
	return nil, err
}

// Properties returns the scrape's pool properties; where they are read as
// a table of named pools, the pools come from the scrape's Status.
func (s *Scrape) Properties(ctx context.Context) ([]zpool.Property, error) {
	s.propsOnce.Do(func() {
		zctx, cancel := s.zpoolContext(ctx)
		defer cancel()
		s.props, s.propsErr = s.client.properties(zctx, s.capabilities, s.Status)
	})
	return s.props, s.propsErr
}

// capabilities asks the client for its capabilities once in the scrape,
// and gives what the probes printed to the only scrape when it ran them.
func (s *Scrape) capabilities(ctx context.Context) (Capabilities, probed, error) {
	s.detectOnce.Do(func() {
		s.caps, s.probed, s.detectErr = s.client.capabilities(ctx)
		if !s.takeProbes {
			s.probed = probed{}
		}
	})
	return s.caps, s.probed, s.detectErr
}

// The reads below are the client's, run at each call (no two collectors
// ask for the same one in a scrape), those of zpool and zfs ending at the
// plan's ZpoolEnd.

// VdevProperties is Client.VdevProperties.
func (s *Scrape) VdevProperties(ctx context.Context, pool string, properties ...string) ([]zpool.Property, bool, error) {
	ctx, cancel := s.zpoolContext(ctx)
	defer cancel()
	return s.client.VdevProperties(ctx, pool, properties...)
}

// VdevList is Client.VdevList.
func (s *Scrape) VdevList(ctx context.Context) ([]zpool.ListRow, error) {
	ctx, cancel := s.zpoolContext(ctx)
	defer cancel()
	return s.client.VdevList(ctx)
}

// Histograms is Client.Histograms.
func (s *Scrape) Histograms(ctx context.Context, kind zpool.HistogramKind, keep func(column string) bool) ([]zpool.Histograms, error) {
	ctx, cancel := s.zpoolContext(ctx)
	defer cancel()
	return s.client.Histograms(ctx, kind, keep)
}

// Queues is Client.Queues.
func (s *Scrape) Queues(ctx context.Context) ([]zpool.IostatRow, error) {
	ctx, cancel := s.zpoolContext(ctx)
	defer cancel()
	return s.client.Queues(ctx)
}

// Kstats is Client.Kstats.
func (s *Scrape) Kstats(ctx context.Context) (*Kstats, error) { return s.client.Kstats(ctx) }

// KstatPoolStates is Client.KstatPoolStates.
func (s *Scrape) KstatPoolStates(ctx context.Context) *PoolStatesRead {
	return s.client.KstatPoolStates(ctx)
}

// Datasets is Client.Datasets.
func (s *Scrape) Datasets(ctx context.Context, pools ...string) (*dataset.List, error) {
	ctx, cancel := s.zpoolContext(ctx)
	defer cancel()
	return s.client.Datasets(ctx, pools...)
}

// Version is Client.Version.
func (s *Scrape) Version(ctx context.Context) (Version, error) {
	ctx, cancel := s.zpoolContext(ctx)
	defer cancel()
	return s.client.Version(ctx)
}

// Detected is Client.Detected: it reads nothing.
func (s *Scrape) Detected() (Capabilities, bool) { return s.client.Detected() }
