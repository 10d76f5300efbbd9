package zfs

import (
	"context"
	"sync"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Scrape is the client for the time of one scrape: `zpool status` and
// `zpool get` are read at most once, by whichever collector asks first,
// and every other reader of the scrape gets the same result. The client's
// other reads pass through.
type Scrape struct {
	*Client

	statusOnce sync.Once
	status     *zpool.Status
	statusErr  error

	propsOnce sync.Once
	props     []zpool.Property
	propsErr  error
}

// NewScrape starts a scrape.
func (c *Client) NewScrape() *Scrape { return &Scrape{Client: c} }

// NewScrapeWithStatus starts a scrape whose `zpool status` was read
// elsewhere, as st or as the error err: its collectors then map that
// status (a fixture, in tests) without running zpool status.
func (c *Client) NewScrapeWithStatus(st *zpool.Status, err error) *Scrape {
	s := &Scrape{Client: c, status: st, statusErr: err}
	s.statusOnce.Do(func() {})
	return s
}

// Status returns the scrape's `zpool status`, read under the ctx of the
// first caller.
func (s *Scrape) Status(ctx context.Context) (*zpool.Status, error) {
	s.statusOnce.Do(func() { s.status, s.statusErr = s.Client.Status(ctx) })
	return s.status, s.statusErr
}

// Properties returns the scrape's pool properties; where they are read as
// a table of named pools, the pools come from the scrape's Status.
func (s *Scrape) Properties(ctx context.Context) ([]zpool.Property, error) {
	s.propsOnce.Do(func() { s.props, s.propsErr = s.properties(ctx, s.Status) })
	return s.props, s.propsErr
}
