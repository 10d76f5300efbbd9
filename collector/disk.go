package collector

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs/blockdevice"

	"github.com/zpool-exporter/zpool_exporter/collector/internal/zpool"
)

func init() {
	register("disk", runtime.GOOS == "linux" || UsesOSIostat(runtime.GOOS), "Per-disk I/O (operations, bytes, busy and queue time, service times), joined to the leaf vdevs the disks back: from /proc/diskstats on Linux, from a long-running iostat -x on illumos, Solaris and FreeBSD", newDiskCollector)
}

// Linux counts diskstats sectors in 512-byte units, whatever the disk's
// sector size.
const diskSectorBytes = 512

// A disk whose partitions back several vdevs or pools has one series per
// (device, pool, vdev), each with the whole disk's figures: sum them by
// device, not by pool, or the disk is counted more than once.
var (
	diskLabels             = []string{"device", "pool", "vdev"}
	diskReadOpsDesc        = desc("disk", "read_operations_total", "Reads the disk completed (diskstats). One series per vdev the disk backs, each with the whole disk's figures.", diskLabels...)
	diskWriteOpsDesc       = desc("disk", "write_operations_total", "Writes the disk completed (diskstats).", diskLabels...)
	diskReadBytesDesc      = desc("disk", "read_bytes_total", "Bytes read from the disk (diskstats sectors of 512 bytes).", diskLabels...)
	diskWriteBytesDesc     = desc("disk", "write_bytes_total", "Bytes written to the disk (diskstats sectors of 512 bytes).", diskLabels...)
	diskReadTimeDesc       = desc("disk", "read_time_seconds_total", "Time reads spent from issue to completion, summed over reads: its rate over the rate of read operations is the mean read latency (iostat r_await).", diskLabels...)
	diskWriteTimeDesc      = desc("disk", "write_time_seconds_total", "Time writes spent from issue to completion, summed over writes (its rate over the write rate is iostat w_await).", diskLabels...)
	diskIOTimeDesc         = desc("disk", "io_time_seconds_total", "Time the disk had I/O in flight: its rate is the busy ratio (iostat %util, %b).", diskLabels...)
	diskIOTimeWeightedDesc = desc("disk", "io_time_weighted_seconds_total", "Time I/Os spent in flight, weighted by how many were: its rate is the average queue length (iostat aqu-sz).", diskLabels...)
	diskIONowDesc          = desc("disk", "io_now", "I/Os in flight on the disk at the time of the scrape.", diskLabels...)
)

type diskCollector struct {
	procRoot string
	sysRoot  string
	all      bool
	resolver diskResolver
	joins    lastJoins
	logger   *slog.Logger
}

func newDiskCollector(src *Source, logger *slog.Logger) (Collector, error) {
	cfg := src.cfg
	if UsesOSIostat(cfg.DiskOS) {
		return newIostatDiskCollector(src, logger), nil
	}
	return &diskCollector{
		procRoot: cfg.ProcRoot,
		sysRoot:  cfg.SysRoot,
		all:      cfg.DiskAll,
		resolver: diskResolver{devRoot: cfg.DevRoot, sysRoot: cfg.SysRoot, stat: statDevice},
		logger:   logger,
	}, nil
}

func (c *diskCollector) Update(ctx context.Context, s *Scrape, ch chan<- prometheus.Metric) error {
	stats, err := c.readDiskstats()
	if err != nil {
		return err
	}
	devs := newDiskIndex(stats)
	st, statusErr := s.Status(ctx)
	resolve := func(v *zpool.Vdev) (string, error) { return c.resolver.resolve(v, devs) }
	pools, joined := c.joins.join(st, statusErr, c.logger, resolve)
	used := map[string]bool{}
	for _, p := range pools {
		for _, j := range p.joins {
			if d, ok := devs.stats[j.device]; ok { // a remembered disk may be gone
				collectDisk(ch, d, j.device, p.pool, j.vdev)
				used[j.device] = true
			}
		}
	}
	if c.all || !joined {
		for _, d := range stats {
			name := d.DeviceName
			if used[name] || isVirtualDisk(name) || c.resolver.isPartition(name, devs) {
				continue
			}
			used[name] = true
			collectDisk(ch, devs.stats[name], name, "", "")
		}
	}
	if len(used) == 0 {
		return ErrNoData
	}
	return nil
}

func (c *diskCollector) readDiskstats() ([]blockdevice.Diskstats, error) {
	file := filepath.Join(c.procRoot, "diskstats")
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		// Every Linux kernel has it: only a replay without disks lacks it.
		return nil, fmt.Errorf("%w: no %s", ErrNoData, file)
	}
	block, err := blockdevice.NewFS(c.procRoot, c.sysRoot)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	stats, err := block.ProcDiskstats()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return stats, nil
}

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

func collectDisk(ch chan<- prometheus.Metric, d *blockdevice.Diskstats, labels ...string) {
	counter(ch, diskReadOpsDesc, float64(d.ReadIOs), labels...)
	counter(ch, diskWriteOpsDesc, float64(d.WriteIOs), labels...)
	counter(ch, diskReadBytesDesc, float64(d.ReadSectors)*diskSectorBytes, labels...)
	counter(ch, diskWriteBytesDesc, float64(d.WriteSectors)*diskSectorBytes, labels...)
	counter(ch, diskReadTimeDesc, milliseconds(d.ReadTicks), labels...)
	counter(ch, diskWriteTimeDesc, milliseconds(d.WriteTicks), labels...)
	counter(ch, diskIOTimeDesc, milliseconds(d.IOsTotalTicks), labels...)
	counter(ch, diskIOTimeWeightedDesc, milliseconds(d.WeightedIOTicks), labels...)
	gauge(ch, diskIONowDesc, float64(d.IOsInProgress), labels...)
}

func milliseconds(ms uint64) float64 { return float64(ms) / 1000 }

// diskIndex looks diskstats entries up by kernel name and device number.
type diskIndex struct {
	stats   map[string]*blockdevice.Diskstats
	numbers map[devNumber]string
}

func newDiskIndex(stats []blockdevice.Diskstats) *diskIndex {
	idx := &diskIndex{stats: map[string]*blockdevice.Diskstats{}, numbers: map[devNumber]string{}}
	for i := range stats {
		d := &stats[i]
		idx.stats[d.DeviceName] = d
		idx.numbers[devNumber{d.MajorNumber, d.MinorNumber}] = d.DeviceName
	}
	return idx
}

func (idx *diskIndex) has(name string) bool {
	_, ok := idx.stats[name]
	return ok
}

func (idx *diskIndex) byNumber(n devNumber) (string, bool) {
	name, ok := idx.numbers[n]
	return name, ok
}
