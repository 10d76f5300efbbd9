package zfs

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Scrape is the client for the time of one scrape: `zpool status` and
// `zpool get` are read at most once, by whichever collector asks first,
// and every other reader of the scrape gets the same result. The client's
// other reads pass through.
type Scrape struct {
	*Client

	statusOnce sync.Once
	statusRead chan struct{} // closed once status and statusErr are set
	giveUp     time.Time     // when readers stop waiting for status; zero: never
	status     *zpool.Status
	statusErr  error

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
func (c *Client) NewScrape() *Scrape { return &Scrape{Client: c} }

// NewOnlyScrape starts the only scrape of the process (--once), which
// detects the capabilities itself: its status and properties are then
// what the probes printed, rather than the same commands run again a
// moment later. A server detects at its start, long before its scrapes:
// they run their own, and one that detects (after a detection that
// failed) runs and counts its commands as the others do.
func (c *Client) NewOnlyScrape() *Scrape { return &Scrape{Client: c, takeProbes: true} }

// NewScrapeWithStatus starts a scrape whose `zpool status` was read
// elsewhere, as st or as the error err: its collectors then map that
// status (a fixture, in tests) without running zpool status.
func (c *Client) NewScrapeWithStatus(st *zpool.Status, err error) *Scrape {
	s := &Scrape{Client: c, status: st, statusErr: err, statusRead: make(chan struct{})}
	close(s.statusRead)
	s.statusOnce.Do(func() {})
	return s
}

// Status returns the scrape's `zpool status`, read under the ctx of the
// first caller. Readers wait for it until the time the scrape keeps for
// the kstat fallback (see package budget), and no longer: a zpool killed at
// its deadline that is slow to go (a loaded machine, a process stuck in
// the kernel) must not take that time as well. When ctx is canceled
// (shutdown), they wait for the read, which ends once its zpool is killed:
// the exporter must not exit with it still running.
func (s *Scrape) Status(ctx context.Context) (*zpool.Status, error) {
	s.statusOnce.Do(func() {
		if deadline, ok := ctx.Deadline(); ok {
			s.giveUp = budget.FallbackStart(deadline, time.Now())
		}
		s.statusRead = make(chan struct{})
		go func() {
			defer close(s.statusRead)
			s.status, s.statusErr = s.Client.status(ctx, s.capabilities)
		}()
	})
	var giveUp <-chan time.Time
	if !s.giveUp.IsZero() {
		t := time.NewTimer(time.Until(s.giveUp))
		defer t.Stop()
		giveUp = t.C
	}
	select {
	case <-s.statusRead:
		return s.status, s.statusErr
	case <-giveUp:
	}
	select {
	case <-s.statusRead: // it ended as the wait did
		return s.status, s.statusErr
	default:
	}
	err := fmt.Errorf("%w: zpool status had not ended when the scrape's time for it was up", runner.ErrTimeout)
	s.record(SourceStatus, err)
	return nil, err
}

// Properties returns the scrape's pool properties; where they are read as
// a table of named pools, the pools come from the scrape's Status.
func (s *Scrape) Properties(ctx context.Context) ([]zpool.Property, error) {
	s.propsOnce.Do(func() { s.props, s.propsErr = s.properties(ctx, s.capabilities, s.Status) })
	return s.props, s.propsErr
}

// capabilities asks the client for its capabilities once in the scrape,
// and gives what the probes printed to the only scrape when it ran them.
func (s *Scrape) capabilities(ctx context.Context) (Capabilities, probed, error) {
	s.detectOnce.Do(func() {
		s.caps, s.probed, s.detectErr = s.Client.capabilities(ctx)
		if !s.takeProbes {
			s.probed = probed{}
		}
	})
	return s.caps, s.probed, s.detectErr
}
