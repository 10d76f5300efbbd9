package zfs

import (
	"context"
	"errors"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

// Kstats is one read of the kernel's ZFS statistics, in the same shape
// whatever the OS, so that each concept has one metric name.
type Kstats struct {
	ARC      *kstat.ARC             // nil where the OS has none
	Datasets []kstat.Dataset        // per-dataset I/O (Linux, FreeBSD)
	Txgs     map[string][]kstat.Txg // recent transaction groups by pool (Linux, FreeBSD)
	// Misc holds the module-wide kstats (zil, dmu_tx, abdstats,
	// zfetchstats) this kernel has, by name.
	Misc map[string]kstat.Misc
	// PoolIOStats is each pool's iostats (Linux, FreeBSD; OpenZFS 0.8+),
	// PoolIO each pool's I/O kstat by pool (illumos, Solaris, and Linux
	// before OpenZFS 2.1).
	PoolIOStats []kstat.PoolIOStats
	PoolIO      map[string]kstat.IO
}

// ErrNoKstats means this host has no ZFS kstats to read: no kstat source
// on its OS, no ZFS module loaded, or no ARC among the kstats.
var ErrNoKstats = errors.New("no ZFS kstats")

// kstatReader reads the kstats of one OS: Linux's /proc/spl/kstat/zfs,
// FreeBSD's sysctl kstat.zfs, illumos's kstat -p.
type kstatReader interface {
	snapshot(ctx context.Context) (*Kstats, error)
	// poolStates is pool health that needs no zpool process; nil where
	// the OS has no such kstat (illumos).
	poolStates(ctx context.Context) (map[string]string, error)
}

// kstatReader returns how this host's kstats are read, or nil.
func (c *Client) kstatReader() kstatReader {
	switch c.cfg.KstatOS {
	case "linux":
		if c.cfg.Kstat != nil {
			return procfsKstats{c.cfg.Kstat}
		}
	case "freebsd":
		return sysctlKstats{c.cfg.Runner}
	case "illumos", "solaris":
		return kstatPKstats{c.cfg.Runner}
	}
	return nil
}

// Kstats reads the kernel's ZFS statistics. A kstat that cannot be read
// is an error naming it, returned with the others; a read that gives
// nothing at all returns nil. Unless the host has none (ErrNoKstats), the
// read counts in the freshness of kstat.
func (c *Client) Kstats(ctx context.Context) (*Kstats, error) {
	reader := c.kstatReader()
	if reader == nil {
		return nil, ErrNoKstats
	}
	snap, err := reader.snapshot(ctx)
	if snap != nil || !errors.Is(err, ErrNoKstats) {
		c.record(SourceKstat, err)
	}
	return snap, err
}
