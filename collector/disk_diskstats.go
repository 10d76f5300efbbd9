package collector

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/procfs/blockdevice"

	"github.com/zpool-exporter/zpool_exporter/internal/diskstats"
	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Linux counts diskstats sectors in 512-byte units, whatever the disk's
// sector size.
const diskSectorBytes = 512

var (
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
	all      bool
	resolver diskResolver
	joins    lastJoins
	cache    joinCache
	logger   *slog.Logger
}

func (c *diskCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	stats, err := c.readDiskstats()
	if err != nil {
		return err
	}
	devs := newDiskIndex(stats)
	st, statusErr := s.Status(ctx)
	now := time.Now()
	stamp, settled := joinStamp(stats, c.resolver.devRoot, now)
	c.cache.renew(stamp, settled, now)
	r := c.resolver.forJoin()
	resolve := func(v *zpool.Vdev) (string, error) {
		return c.cache.resolve(v, func(v *zpool.Vdev) (string, error) { return r.resolve(v, devs) })
	}
	isPartition := func(name string) bool { return r.isPartition(name, devs) }
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
			if used[name] || isVirtualDisk(name) || c.cache.isPartition(name, isPartition) {
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
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		// Every Linux kernel has it: only a replay without disks lacks it.
		return nil, fmt.Errorf("%w: no %s", ErrNoData, file)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	stats, err := diskstats.Parse(f)
	if err != nil {
		return nil, parse.WithSource(err, file)
	}
	return stats, nil
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
