package collector

import (
	"errors"
	"log/slog"
	"runtime"
	"sync"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The disk collector has a variant per source of disk figures:
// /proc/diskstats on Linux (disk_diskstats.go), a long-running iostat -x
// on illumos, Solaris and FreeBSD (disk_iostat.go). This file picks one,
// and holds what both share: their labels and the join of disks to the
// leaf vdevs they back.

func init() {
	register("disk", runtime.GOOS == "linux" || UsesOSIostat(runtime.GOOS), "Per-disk I/O (operations, bytes, busy and queue time, service times), joined to the leaf vdevs the disks back: from /proc/diskstats on Linux, from a long-running iostat -x on illumos, Solaris and FreeBSD", newDiskCollector)
}

func newDiskCollector(cfg Config, logger *slog.Logger) (Collector, error) {
	if UsesOSIostat(cfg.DiskOS) {
		return newIostatDiskCollector(cfg, logger), nil
	}
	return &diskCollector{
		procRoot: cfg.ProcRoot,
		all:      cfg.DiskAll,
		resolver: diskResolver{devRoot: cfg.DevRoot, sysRoot: cfg.SysRoot, stat: statDevice},
		logger:   logger,
	}, nil
}

// A disk whose partitions back several vdevs or pools has one series per
// (device, pool, vdev), each with the whole disk's figures: sum them by
// device, not by pool, or the disk is counted more than once.
var diskLabels = []string{"device", "pool", "vdev"}

// errNoDevice is why a leaf vdev joins no disk.
var errNoDevice = errors.New("no block device found")

// diskJoin is a leaf vdev and the disk under it.
type diskJoin struct{ device, vdev string }

// poolJoins is the disks under one pool's leaves.
type poolJoins struct {
	pool  string
	joins []diskJoin
}

// lastJoins keeps the joins of the last scrape whose zpool status could be
// read. A disk's figures need no pool: when status fails, the disks are
// still reported, under the pool and vdev labels they last had, so that
// their series go on instead of ending and starting again under other
// labels. zfs_exporter_source_up{source="zpool_status"} tells that the
// join is not fresh.
type lastJoins struct {
	mu     sync.Mutex
	pools  []poolJoins
	joined bool
}

// join joins the disks to the leaves of every pool of st, with resolve.
// When status failed (statusErr), it returns the last joins instead, and
// joined is false if there were none: the caller then reports every disk
// without pool and vdev.
func (l *lastJoins) join(st *zpool.Status, statusErr error, logger *slog.Logger, resolve func(*zpool.Vdev) (string, error)) (pools []poolJoins, joined bool) {
	if statusErr != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.joined {
			logger.Debug("zpool status failed; disks keep the pool and vdev labels of the last join", "err", statusErr)
		} else {
			logger.Debug("zpool status failed and never worked; disks are reported without pool and vdev", "err", statusErr)
		}
		return l.pools, l.joined
	}
	for _, p := range st.Pools {
		pools = append(pools, poolJoins{pool: p.Name, joins: joinLeaves(p, logger, resolve)})
	}
	l.mu.Lock()
	l.pools, l.joined = pools, true
	l.mu.Unlock()
	return pools, true
}

// joinLeaves finds the disk under each leaf of the pool with resolve,
// once per leaf name: an active hot spare is printed twice. A leaf that
// cannot be joined (a removed disk, a path that no longer exists, a file
// on tmpfs, a name the OS cannot map) is skipped and logged at debug level.
func joinLeaves(p *zpool.Pool, logger *slog.Logger, resolve func(*zpool.Vdev) (string, error)) []diskJoin {
	if p.Root == nil {
		return nil
	}
	var joins []diskJoin
	seen := map[string]bool{}
	p.Root.Walk(func(v *zpool.Vdev, _ string) {
		if !isDiskLeaf(v) || seen[v.Name] {
			return
		}
		// The path of a device zpool cannot open may now be another disk.
		if v.State == "unavail" || v.State == "removed" {
			logger.Debug("not joining a vdev whose device is gone", "pool", p.Name, "vdev", v.Name, "state", v.State)
			return
		}
		device, err := resolve(v)
		if err != nil {
			logger.Debug("cannot find the disk of a vdev", "pool", p.Name, "vdev", v.Name, "path", v.Path, "err", err)
			return
		}
		seen[v.Name] = true
		joins = append(joins, diskJoin{device: device, vdev: v.Name})
	})
	return joins
}
