package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/geom"
	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The counters keep the names and labels of the Linux ones; the gauges are
// what only iostat gives.
var (
	iostatReadOpsDesc        = desc("disk", "read_operations_total", "Reads the disk completed: iostat -x r/s times the interval, summed over intervals since the exporter started. One series per vdev the disk backs, each with the whole disk's figures.", diskLabels...)
	iostatWriteOpsDesc       = desc("disk", "write_operations_total", "Writes the disk completed: iostat -x w/s times the interval, summed.", diskLabels...)
	iostatReadBytesDesc      = desc("disk", "read_bytes_total", "Bytes read from the disk: iostat -x kr/s times the interval, summed.", diskLabels...)
	iostatWriteBytesDesc     = desc("disk", "write_bytes_total", "Bytes written to the disk: iostat -x kw/s times the interval, summed.", diskLabels...)
	iostatIOTimeDesc         = desc("disk", "io_time_seconds_total", "Time the disk had I/O in progress: iostat -x %b times the interval, summed. Its rate is the busy ratio.", diskLabels...)
	iostatIOTimeWeightedDesc = desc("disk", "io_time_weighted_seconds_total", "Time I/Os spent waiting and being serviced, weighted by how many were: iostat -x wait plus actv times the interval, summed (illumos, Solaris). Its rate is the average queue length.", diskLabels...)

	diskWaitQueueDesc         = desc("disk", "wait_queue_length", "Average number of I/Os waiting in the host's queue, not yet sent to the disk, over the last iostat interval (iostat -x wait; illumos, Solaris).", diskLabels...)
	diskActiveQueueDesc       = desc("disk", "active_queue_length", "I/Os sent to the disk and not yet completed: the average over the last iostat interval on illumos and Solaris (iostat -x actv), the number at its end on FreeBSD (iostat -x qlen).", diskLabels...)
	diskWaitServiceTimeDesc   = desc("disk", "wait_service_time_seconds", "Average time an I/O waited in the host's queue over the last iostat interval (iostat -xn wsvc_t; illumos, Solaris).", diskLabels...)
	diskActiveServiceTimeDesc = desc("disk", "active_service_time_seconds", "Average time the disk took to service an I/O over the last iostat interval (iostat -xn asvc_t; illumos, Solaris).", diskLabels...)
	diskServiceTimeDesc       = desc("disk", "service_time_seconds", "Average time of an I/O from issue to completion over the last iostat interval (iostat -x ms/t on FreeBSD, printed in whole milliseconds).", diskLabels...)
	diskReadServiceTimeDesc   = desc("disk", "read_service_time_seconds", "Average time of a read over the last iostat interval (iostat -x ms/r on FreeBSD, printed in whole milliseconds).", diskLabels...)
	diskWriteServiceTimeDesc  = desc("disk", "write_service_time_seconds", "Average time of a write over the last iostat interval (iostat -x ms/w on FreeBSD, printed in whole milliseconds).", diskLabels...)
	diskWaitBusyRatioDesc     = desc("disk", "wait_busy_ratio", "Share of the last iostat interval during which I/Os were waiting in the host's queue (iostat -x %w; illumos, Solaris).", diskLabels...)
	diskBusyRatioDesc         = desc("disk", "busy_ratio", "Share of the last iostat interval during which the disk had I/O in progress (iostat -x %b).", diskLabels...)
)

// iostatDiskCollector is the disk collector of illumos, Solaris and
// FreeBSD: the sampler's disks, joined to the leaf vdevs they back.
type iostatDiskCollector struct {
	sampler  *OSIostatSampler
	all      bool
	resolver iostatDiskResolver
	joins    lastJoins
	runner   runner.Runner // runs glabel on FreeBSD
	logger   *slog.Logger
}

func newIostatDiskCollector(cfg Config, logger *slog.Logger) *iostatDiskCollector {
	if cfg.DiskSampler != nil {
		cfg.DiskSampler.Need()
	} else {
		logger.Info("per-disk I/O on this system comes from a long-running iostat, which does not run here (--once, or --disk.iostat-interval=0)", "os", cfg.DiskOS)
	}
	return &iostatDiskCollector{
		sampler:  cfg.DiskSampler,
		all:      cfg.DiskAll,
		resolver: iostatDiskResolver{os: cfg.DiskOS},
		runner:   cfg.Runner,
		logger:   logger,
	}
}

// glabelProviders returns, for one scrape, the GEOM provider under each
// label (gpt/..., gptid/..., diskid/...), from `glabel status -s`, run
// the first time a leaf needs it.
func (c *iostatDiskCollector) glabelProviders(ctx context.Context) func(name string) (string, error) {
	var (
		labels map[string]string
		err    error
		ran    bool
	)
	return func(name string) (string, error) {
		if !ran {
			ran = true
			var out []byte
			if out, err = c.runner.Run(ctx, runner.Cmd("glabel", "status", "-s")); err == nil {
				labels, err = geom.ParseGlabelStatus(bytes.NewReader(out))
				err = parse.WithSource(err, "glabel status -s")
			}
		}
		if err != nil {
			return "", err
		}
		provider, ok := labels[name]
		if !ok {
			return "", fmt.Errorf("%w: GEOM has no label %s", errNoDevice, name)
		}
		return provider, nil
	}
}

func (c *iostatDiskCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	if c.sampler == nil {
		return ErrNoData
	}
	disks, fresh, streamErr := c.sampler.snapshot()
	if disks == nil {
		if streamErr != nil {
			return fmt.Errorf("no iostat report yet: %w", streamErr)
		}
		return ErrNoData // iostat has not finished its first interval
	}
	st, statusErr := s.Status(ctx)
	if c.resolver.os == "freebsd" && c.runner != nil {
		c.resolver.provider = c.glabelProviders(ctx)
	}
	resolve := func(v *zpool.Vdev) (string, error) { return c.resolve(v, disks) }
	joinedPools, joined := c.joins.join(st, statusErr, c.logger, resolve)
	pools := map[string]bool{}
	used := map[string]bool{}
	for _, p := range joinedPools {
		pools[p.pool] = true
		for _, j := range p.joins {
			if d, ok := disks[j.device]; ok { // a remembered disk may be gone
				collectIostatDisk(ch, d, fresh, j.device, p.pool, j.vdev)
				used[j.device] = true
			}
		}
	}
	if c.all || !joined {
		for _, name := range slices.Sorted(maps.Keys(disks)) {
			if used[name] || isIostatPseudoDevice(name, pools) {
				continue
			}
			// Without any join the pools are unknown, and illumos lists
			// them among the devices: only rows named as disks are taken.
			if disk, ok := iostatDiskOf(c.resolver.os, name); !joined && (!ok || disk != name) {
				continue
			}
			used[name] = true
			collectIostatDisk(ch, disks[name], fresh, name, "", "")
		}
	}
	if !fresh && streamErr != nil {
		return fmt.Errorf("iostat stream is stale: %w", streamErr)
	}
	if len(used) == 0 {
		return ErrNoData
	}
	return nil
}

// resolve tries the leaf's name, then its path (JSON status).
func (c *iostatDiskCollector) resolve(v *zpool.Vdev, disks map[string]iostatDisk) (string, error) {
	var errs []error
	for _, name := range []string{v.Name, v.Path} {
		if name == "" {
			continue
		}
		device, err := c.resolver.resolve(name)
		if err == nil {
			if _, ok := disks[device]; ok {
				return device, nil
			}
			err = fmt.Errorf("%w: iostat reports no disk %s", errNoDevice, device)
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func collectIostatDisk(ch chan<- prometheus.Metric, d iostatDisk, fresh bool, labels ...string) {
	counter(ch, iostatReadOpsDesc, d.readOps, labels...)
	counter(ch, iostatWriteOpsDesc, d.writeOps, labels...)
	counter(ch, iostatReadBytesDesc, d.readBytes, labels...)
	counter(ch, iostatWriteBytesDesc, d.writeBytes, labels...)
	counter(ch, iostatIOTimeDesc, d.busySeconds, labels...)
	if d.hasQueue {
		counter(ch, iostatIOTimeWeightedDesc, d.queueSeconds, labels...)
	}
	// A stream that stopped leaves its last gauges behind: leave them out.
	if !fresh || d.last == nil {
		return
	}
	l := d.last
	active := l.Actv
	if active == nil {
		active = l.QueueLength // FreeBSD qlen
	}
	optGauge(ch, diskWaitQueueDesc, l.Wait, labels...)
	optGauge(ch, diskActiveQueueDesc, active, labels...)
	optGauge(ch, diskWaitServiceTimeDesc, l.WaitSvcSeconds, labels...)
	optGauge(ch, diskActiveServiceTimeDesc, l.ActvSvcSeconds, labels...)
	optGauge(ch, diskServiceTimeDesc, l.AwaitSeconds, labels...)
	optGauge(ch, diskReadServiceTimeDesc, l.ReadAwaitSeconds, labels...)
	optGauge(ch, diskWriteServiceTimeDesc, l.WriteAwaitSeconds, labels...)
	optGauge(ch, diskWaitBusyRatioDesc, l.WaitRatio, labels...)
	optGauge(ch, diskBusyRatioDesc, l.BusyRatio, labels...)
}
