package collector

import (
	"context"
	"errors"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Reading is one gather of every enabled collector: its metrics, when the
// gather began, and through Status the `zpool status` they were read
// from. Readers that share a gather share its Reading and must not change
// it.
type Reading struct {
	Time time.Time
	// Err tells of metrics the gather left out (see gatherFamilies); the
	// reading holds the rest, as /metrics serves them.
	Err error

	gathered *gathered
	scrape   *zfs.Scrape
}

// Families returns the reading's metric families, sorted by name, each
// family's metrics by label values. They are built on the first call.
func (r Reading) Families() []*dto.MetricFamily { return r.gathered.metricFamilies() }

// Status returns the `zpool status` that the collectors of the gather
// read. When none of them read it (the status, vdev_io and disk
// collectors all off), it is read now, under ctx.
func (r Reading) Status(ctx context.Context) (*zpool.Status, error) {
	if r.scrape == nil {
		return nil, errNotGathered
	}
	return r.scrape.Status(ctx)
}

// errNotGathered is the status of a Reading that Gather did not make.
var errNotGathered = errors.New("the reading comes from no gather of the collectors")

// Gather runs every enabled collector once under ctx, whose deadline is
// the scrape's. Readers that may overlap (/metrics, the status page)
// gather through one Shared: a collector still at work
// for one of them would refuse to run for another, and be reported failed.
func (e *Exporter) Gather(ctx context.Context) Reading {
	return e.gather(ctx, e.cfg.ZFS.NewScrape())
}

// GatherOnce is Gather for the only gather of the process (--once), which
// may detect what zpool can do: it then reads the status and properties
// from the probes' outputs (see zfs.Client.NewOnlyScrape).
func (e *Exporter) GatherOnce(ctx context.Context) Reading {
	return e.gather(ctx, e.cfg.ZFS.NewOnlyScrape())
}

func (e *Exporter) gather(ctx context.Context, scrape *zfs.Scrape) Reading {
	r := Reading{Time: time.Now(), scrape: scrape}
	r.gathered, r.Err = gatherFamilies(e.scraperFor(ctx, r.scrape).collectTo)
	return r
}
