package rules

import (
	"fmt"
	"time"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// Series the recording rules write for ZFSVdevSlowDisk: one per leaf vdev
// (a disk or file, nobody's parent), labelled with the parent of
// zfs_vdev_info. Their rates are over Config.SlowDiskWindow, which ends
// their names as "5m" ends the other records' (config/records.go names
// those, for the dashboards).

// RecordLeafDiskOpsRate is the name of the I/Os per second that each leaf
// vdev completed on its disk, reads and writes together (the _count of
// zfs_vdev_disk_wait_seconds), over window.
func RecordLeafDiskOpsRate(window time.Duration) string {
	return "instance_pool_vdev:zfs_leaf_vdev_disk_operations:rate" + promDuration(window)
}

// RecordLeafDiskWaitQuantile is the name of each leaf vdev's p90 of disk
// time, reads and writes together, from the buckets of
// zfs_vdev_disk_wait_seconds over window, with label quantile="0.9"; no
// sample while the leaf completes no I/O.
func RecordLeafDiskWaitQuantile(window time.Duration) string {
	return "instance_pool_vdev:zfs_leaf_vdev_disk_wait_seconds:histogram_quantile_rate" + promDuration(window)
}

// slowDiskQuantile is the quantile of RecordLeafDiskWaitQuantile: the
// slowest tenth of a disk's I/Os, where a failing disk's retries show
// long before its median moves.
const slowDiskQuantile = "0.9"

// nativeOrClassic: each rule over a histogram reads both forms a
// Prometheus may store, the native histogram (Prometheus 3 with
// convert_classic_histograms_to_nhcb) and the classic _bucket, _sum and
// _count series, joined by "or": the native result of a series where it
// is stored, the classic one otherwise. On Prometheus 2 the native side is
// empty.

func (b builder) records() []group {
	w := promDuration(rateWindow)
	rate := func(metric string, matchers ...string) string {
		return fmt.Sprintf("rate(%s[%s])", b.sel(metric, matchers...), w)
	}

	// Top-level vdevs are those whose parent is the pool's root vdev.
	topLevel := fmt.Sprintf(`(
    %s
  and on (instance, pool, parent)
    label_replace(%s, "parent", "$1", "vdev", "(.*)")
)`, b.sel("zfs_vdev_info", `vdev_type!="root"`), b.sel("zfs_vdev_info", `vdev_type="root"`))
	var io []rule
	for _, c := range []struct{ counter, top, pool string }{
		{"zfs_vdev_read_bytes_total", config.RecordTopVdevReadBytesRate, config.RecordPoolReadBytesRate},
		{"zfs_vdev_write_bytes_total", config.RecordTopVdevWriteBytesRate, config.RecordPoolWriteBytesRate},
		{"zfs_vdev_read_operations_total", config.RecordTopVdevReadOpsRate, config.RecordPoolReadOpsRate},
		{"zfs_vdev_write_operations_total", config.RecordTopVdevWriteOpsRate, config.RecordPoolWriteOpsRate},
	} {
		io = append(io,
			rule{Record: c.top, Expr: fmt.Sprintf("%s\n* on (instance, pool, vdev) group_left (vdev_type, class)\n%s", rate(c.counter), topLevel)},
			// Cache and spare devices are outside the pool's own I/O, as
			// in zpool iostat.
			rule{Record: c.pool, Expr: fmt.Sprintf("sum without (vdev, vdev_type, class) (\n  %s\n)", b.sel(c.top, `class!~"cache|spare"`))},
		)
	}

	hits, misses := rate("zfs_arc_hits_total"), rate("zfs_arc_misses_total")
	hostCPU := fmt.Sprintf("sum without (mode) (%s)", rate("zfs_host_cpu_seconds_total"))
	return []group{
		{Name: "zfs-io.rules", Rules: io},
		{Name: "zfs-arc.rules", Rules: []rule{
			// No sample rather than NaN while the ARC sees no access.
			{Record: config.RecordARCHitRatio, Expr: fmt.Sprintf("sum without (kind) (%s)\n/\n(sum without (kind) (%s) + sum without (kind) (%s) > 0)", hits, hits, misses)},
			{Record: config.RecordARCHitRatioByKind, Expr: fmt.Sprintf("%s\n/\n(%s + %s > 0)", hits, hits, misses)},
		}},
		{Name: "zfs-cpu.rules", Rules: []rule{
			// iowait is idle time spent waiting: not busy.
			{Record: config.RecordHostCPUBusyRatio, Expr: fmt.Sprintf("1 - (\n  sum without (mode) (%s)\n  /\n  (%s > 0)\n)", rate("zfs_host_cpu_seconds_total", `mode=~"idle|iowait"`), hostCPU)},
			{Record: config.RecordEngineCPURate, Expr: fmt.Sprintf("sum without (mode) (%s)", rate("zfs_engine_cpu_seconds_total"))},
			{Record: config.RecordEngineCPUTotalRate, Expr: fmt.Sprintf("sum without (family) (%s)", b.sel(config.RecordEngineCPURate))},
			// The host's CPU seconds per second are its number of CPUs.
			{Record: config.RecordEngineCPURatio, Expr: fmt.Sprintf("%s\n/ ignoring (family) group_left ()\n(%s > 0)", b.sel(config.RecordEngineCPURate), hostCPU)},
		}},
		{Name: "zfs-txg.rules", Rules: []rule{
			{Record: config.RecordTxgSyncMean, Expr: fmt.Sprintf("histogram_sum(%[1]s) / (histogram_count(%[1]s) > 0)\nor\n%[2]s / (%[3]s > 0)",
				rate("zfs_pool_txg_sync_seconds"), rate("zfs_pool_txg_sync_seconds_sum"), rate("zfs_pool_txg_sync_seconds_count"))},
			b.txgQuantile("0.5", rate),
			b.txgQuantile("0.99", rate),
		}},
		{Name: "zfs-vdev-latency.rules", Rules: b.leafLatencyRecords()},
	}
}

// leafLatencyRecords are the series ZFSVdevSlowDisk compares: the disk
// time and the I/Os per second of every leaf vdev, with its parent.
func (b builder) leafLatencyRecords() []rule {
	w := promDuration(b.cfg.SlowDiskWindow)
	// A leaf is nobody's parent. The parents are grouped before they are
	// renamed into vdev, so that two children of one parent cannot make
	// two equal series.
	leaves := fmt.Sprintf(`(
      %s
    unless on (instance, pool, vdev)
      label_replace(group by (instance, pool, parent) (%s), "vdev", "$1", "parent", "(.+)")
    )`, b.sel("zfs_vdev_info"), b.sel("zfs_vdev_info"))
	// zfs_vdev_info is the side that may hold several series for one
	// vdev (a name met twice, a label changing between scrapes): each
	// takes the leaf's figure, and max merges those of one parent, so the
	// join cannot fail. The figures are one series per vdev (the sum of
	// the read and write rows).
	withParent := func(figure string) string {
		return fmt.Sprintf(`max without (class, guid, path, vdev_type) (
    %s
  * on (instance, pool, vdev) group_left ()
    %s
)`, leaves, figure)
	}
	// The histogram in either form Prometheus may store (see
	// nativeOrClassic), reads and writes summed.
	native := fmt.Sprintf("sum without (type) (rate(%s[%s]))", b.sel("zfs_vdev_disk_wait_seconds"), w)
	buckets := fmt.Sprintf("sum without (type) (rate(%s[%s]))", b.sel("zfs_vdev_disk_wait_seconds_bucket"), w)
	ops := fmt.Sprintf("(histogram_count(%s) or sum without (type) (rate(%s[%s])))", native, b.sel("zfs_vdev_disk_wait_seconds_count"), w)
	// No NaN from the empty buckets of a leaf that completed nothing.
	p90 := fmt.Sprintf(`(
        (
          histogram_quantile(%[1]s, %[2]s)
        or
          histogram_quantile(%[1]s, %[3]s)
        )
      and
        %[4]s > 0
    )`,
		slowDiskQuantile, native, buckets, ops)
	return []rule{
		{Record: RecordLeafDiskOpsRate(b.cfg.SlowDiskWindow), Expr: withParent(ops)},
		{Record: RecordLeafDiskWaitQuantile(b.cfg.SlowDiskWindow), Expr: withParent(p90), Labels: map[string]string{"quantile": slowDiskQuantile}},
	}
}

func (b builder) txgQuantile(q string, rate func(string, ...string) string) rule {
	// Only while transaction groups commit: no NaN from empty buckets.
	// The native form first, then the classic one (nativeOrClassic).
	return rule{
		Record: config.RecordTxgSyncQuantile,
		Expr: fmt.Sprintf("histogram_quantile(%[1]s, %[2]s) and (histogram_count(%[2]s) > 0)\nor\nhistogram_quantile(%[1]s, %[3]s) and (%[4]s > 0)",
			q, rate("zfs_pool_txg_sync_seconds"), rate("zfs_pool_txg_sync_seconds_bucket"), rate("zfs_pool_txg_sync_seconds_count")),
		Labels: map[string]string{"quantile": q},
	}
}
