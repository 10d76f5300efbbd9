package collector

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/dataset"
)

// SnapshotLister lists snapshots in the background, every interval, for
// the dataset collector to read: on a host of many snapshots the listing
// takes minutes, and a scrape must never wait for it. Scrapes read the
// last listing that worked; its age is the freshness of
// zfs_list_snapshots.
type SnapshotLister struct {
	client      *zfs.Client
	interval    time.Duration
	perSnapshot bool
	logger      *slog.Logger

	need // no zfs runs before a collector reads the lister

	mu   sync.Mutex
	last *snapshotListing // nil until a listing worked
	// The pools the dataset collector's last scrape found listable (nil:
	// all), or safe false when it found none: a zpool status that hung
	// may be a suspended pool, on which zfs would hang too.
	pools []string
	safe  bool
}

// snapshotListing is one listing, summed up by dataset, with every
// snapshot kept by its dataset when they are exported one by one.
type snapshotListing struct {
	byDataset map[string]dataset.Snapshots
	each      map[string][]dataset.Dataset // nil unless perSnapshot
	columns   []int                        // of snapshotValues' properties in each
}

// NewSnapshotLister returns a lister; Run starts it. perSnapshot keeps
// each snapshot for a series of its own.
func NewSnapshotLister(client *zfs.Client, interval time.Duration, perSnapshot bool, logger *slog.Logger) *SnapshotLister {
	return &SnapshotLister{client: client, interval: interval, perSnapshot: perSnapshot, logger: logger, need: newNeed(), safe: true}
}

// Run lists snapshots from the first call of Need until ctx ends, a
// listing every interval from the start of the last, each under a
// deadline of one interval. It returns once the listing in progress, if
// any, has ended: its zfs is killed when ctx ends.
func (s *SnapshotLister) Run(ctx context.Context) {
	if !s.waitNeeded(ctx) {
		return
	}
	for {
		began := time.Now()
		listCtx, cancel := context.WithTimeout(ctx, s.interval)
		if err := s.List(listCtx); err != nil && ctx.Err() == nil {
			s.logger.Warn("listing snapshots failed; scrapes keep the last listing", "err", err, "next_in", s.interval-time.Since(began))
		}
		cancel()
		wait := time.NewTimer(s.interval - time.Since(began))
		select {
		case <-ctx.Done():
			wait.Stop()
			return
		case <-wait.C:
		}
	}
}

// List lists the snapshots now, under ctx, and keeps the listing for the
// scrapes that follow when it works.
func (s *SnapshotLister) List(ctx context.Context) error {
	began := time.Now()
	s.mu.Lock()
	pools, safe := s.pools, s.safe
	s.mu.Unlock()
	if !safe {
		return errPoolsUnknown
	}
	l, err := s.client.Snapshots(ctx, pools...)
	if err != nil {
		return err
	}
	listing := &snapshotListing{byDataset: dataset.SummarizeSnapshots(l)}
	if s.perSnapshot {
		listing.each = map[string][]dataset.Dataset{}
		for _, d := range l.Datasets {
			if name, _, ok := strings.Cut(d.Name, "@"); ok {
				listing.each[name] = append(listing.each[name], d)
			}
		}
		for _, v := range snapshotValues {
			listing.columns = append(listing.columns, l.Column(v.property))
		}
	}
	s.mu.Lock()
	s.last = listing
	s.mu.Unlock()
	s.logger.Debug("listed snapshots", "snapshots", len(l.Datasets), "datasets", len(listing.byDataset), "duration", time.Since(began))
	return nil
}

// latest is the last listing that worked, or nil.
// errPoolsUnknown is why a listing does not run while the last scrape
// could not tell which pools zfs can list.
var errPoolsUnknown = errors.New("not listing: at the last scrape zpool status hung or every pool was suspended, and zfs would hang")

// setPools tells the lister which pools it may list (nil: every one), or
// that the last scrape could not tell (safe false).
func (s *SnapshotLister) setPools(pools []string, safe bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pools, s.safe = pools, safe
}

func (s *SnapshotLister) latest() *snapshotListing {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}
