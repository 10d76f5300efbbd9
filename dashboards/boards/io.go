package boards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// ioBoard is zpool iostat -v beside iostat -x: per-vdev bandwidth and
// operations stacked per top-level vdev and per leaf, per-disk busy,
// service times and queues, and the pool queues where the kstat has them.
func ioBoard(cfg config.Config) (dashboard.Dashboard, error) {
	b := newBoard(cfg, "zfs-io", "ZFS / I/O",
		"Per-vdev bandwidth and operations (zpool iostat -v) next to the disks under them (iostat -x): busy, service times and queues. The regions zpool_bench writes to Grafana shade each benchmark run.", "io")
	s := b.s
	b.tagAnnotation("Benchmark runs (zpool_bench)", "orange", benchRunTag)

	type counter struct{ dir, kind, unit, metric, poolRecord, topRecord string }
	counters := []counter{
		{"Read", "bandwidth", "Bps", "zfs_vdev_read_bytes_total", config.RecordPoolReadBytesRate, config.RecordTopVdevReadBytesRate},
		{"Write", "bandwidth", "Bps", "zfs_vdev_write_bytes_total", config.RecordPoolWriteBytesRate, config.RecordTopVdevWriteBytesRate},
		{"Read", "operations", "iops", "zfs_vdev_read_operations_total", config.RecordPoolReadOpsRate, config.RecordTopVdevReadOpsRate},
		{"Write", "operations", "iops", "zfs_vdev_write_operations_total", config.RecordPoolWriteOpsRate, config.RecordTopVdevWriteOpsRate},
	}
	// Pools and top-level vdevs read the recording rules' 5m rates: their
	// joins over every vdev are the heaviest queries of the mixin.
	const recordedNote = " From the recording rules: a 5m rate."

	b.row("Pools")
	for _, c := range counters {
		b.WithPanel(b.stacked(
			fmt.Sprintf("%s %s per pool", c.dir, c.kind),
			fmt.Sprintf("%s %s of each pool, stacked: the pool row of zpool iostat, the sum of its top-level vdevs without cache and spares.", c.dir, c.kind)+recordedNote,
			c.unit, 6, 8,
			q(s.recorded(c.poolRecord), "{{instance}} {{pool}}")))
	}

	b.row("Top-level vdevs")
	for _, c := range counters {
		b.WithPanel(b.stacked(
			fmt.Sprintf("%s %s per top-level vdev", c.dir, c.kind),
			fmt.Sprintf("%s %s of each top-level vdev (mirror, raidz, draid, single disk, log, cache), stacked per pool: the top-level rows of zpool iostat -v. An even split means the layout spreads the load.", c.dir, c.kind)+recordedNote,
			c.unit, 12, 8,
			q(s.recorded(c.topRecord), "{{pool}} {{vdev}} ({{class}})")))
	}

	b.row("Leaf vdevs")
	for _, c := range counters {
		b.WithPanel(b.stacked(
			fmt.Sprintf("%s %s per leaf vdev", c.dir, c.kind),
			fmt.Sprintf("%s %s of each leaf vdev (a disk or file), stacked per pool, with the vdev above it: the leaf rows of zpool iostat -v. Counters come from vdev properties (OpenZFS 2.2+) or an integrated zpool iostat stream.", c.dir, c.kind),
			c.unit, 12, 8,
			q(s.vdevRate(c.metric, s.leaves(), "parent"), "{{pool}} {{parent}}/{{vdev}}")))
	}

	disk := "{{pool}} {{vdev}} ({{device}})"
	b.row("Disks")
	b.WithPanel(b.timeseries("Disk busy",
		"Share of time each disk had I/O in flight (iostat %b), with the pool and vdev it backs. A disk near 100% while its siblings idle is the one holding the vdev back.",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`rate(zfs_disk_io_time_seconds_total%s[$__rate_interval])`, s.pool()), disk)).
		Min(0).Max(1))
	b.WithPanel(b.timeseries("Disk service time",
		"Average time per I/O of each disk: r_await and w_await on Linux, ms/r and ms/w on FreeBSD, asvc_t and wsvc_t on illumos and Solaris.",
		"s", 12, 8,
		q(fmt.Sprintf(`rate(zfs_disk_read_time_seconds_total%s[$__rate_interval]) / rate(zfs_disk_read_operations_total%s[$__rate_interval])`, s.pool(), s.pool()), disk+" read"),
		q(fmt.Sprintf(`rate(zfs_disk_write_time_seconds_total%s[$__rate_interval]) / rate(zfs_disk_write_operations_total%s[$__rate_interval])`, s.pool(), s.pool()), disk+" write"),
		q(fmt.Sprintf(`zfs_disk_read_service_time_seconds%s`, s.pool()), disk+" read"),
		q(fmt.Sprintf(`zfs_disk_write_service_time_seconds%s`, s.pool()), disk+" write"),
		q(fmt.Sprintf(`zfs_disk_service_time_seconds%s`, s.pool()), disk),
		q(fmt.Sprintf(`zfs_disk_active_service_time_seconds%s`, s.pool()), disk+" asvc_t"),
		q(fmt.Sprintf(`zfs_disk_wait_service_time_seconds%s`, s.pool()), disk+" wsvc_t")))
	b.WithPanel(b.timeseries("Disk bandwidth",
		"Bytes per second each disk read and wrote. Compare with the leaf vdev above: the difference is what ZFS did not send to the disk, or other users of it.",
		"Bps", 12, 8,
		q(fmt.Sprintf(`rate(zfs_disk_read_bytes_total%s[$__rate_interval])`, s.pool()), disk+" read"),
		q(fmt.Sprintf(`rate(zfs_disk_write_bytes_total%s[$__rate_interval])`, s.pool()), disk+" write")))
	b.WithPanel(b.timeseries("Disk operations",
		"Reads and writes per second of each disk.",
		"iops", 12, 8,
		q(fmt.Sprintf(`rate(zfs_disk_read_operations_total%s[$__rate_interval])`, s.pool()), disk+" read"),
		q(fmt.Sprintf(`rate(zfs_disk_write_operations_total%s[$__rate_interval])`, s.pool()), disk+" write")))
	b.WithPanel(b.timeseries("Disk queue length",
		"Average number of I/Os queued or in flight per disk (iostat aqu-sz, from the weighted busy time), I/Os in flight now (Linux), and the wait and active queues of illumos and Solaris.",
		"short", 12, 8,
		q(fmt.Sprintf(`rate(zfs_disk_io_time_weighted_seconds_total%s[$__rate_interval])`, s.pool()), disk+" average"),
		q(fmt.Sprintf(`zfs_disk_io_now%s`, s.pool()), disk+" in flight"),
		q(fmt.Sprintf(`zfs_disk_wait_queue_length%s`, s.pool()), disk+" wait"),
		q(fmt.Sprintf(`zfs_disk_active_queue_length%s`, s.pool()), disk+" actv")))
	b.WithPanel(b.timeseries("Disk wait busy",
		"Share of time each disk had I/O waiting in the driver's queue (iostat %w; illumos and Solaris).",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`zfs_disk_wait_busy_ratio%s`, s.pool()), disk)).
		Min(0).Max(1))

	b.row("Pool queues and logical I/O")
	b.WithPanel(b.timeseries("Pool queue busy",
		"Share of time each pool's wait and run queues were busy, from the pool I/O kstat (illumos, Solaris, Linux before OpenZFS 2.1): %w and %b for the whole pool.",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`rate(zfs_pool_kstat_queue_busy_seconds_total%s[$__rate_interval])`, s.pool()), "{{pool}} {{queue}}")))
	b.WithPanel(b.timeseries("Pool queue length",
		"Average length of each pool's wait and run queues, from the same kstat.",
		"short", 12, 8,
		q(fmt.Sprintf(`rate(zfs_pool_kstat_queue_weighted_seconds_total%s[$__rate_interval])`, s.pool()), "{{pool}} {{queue}} average"),
		q(fmt.Sprintf(`zfs_pool_kstat_queue_length%s`, s.pool()), "{{pool}} {{queue}} now")))
	b.WithPanel(b.timeseries("Logical bandwidth",
		"Bytes per second that file systems and zvols read and wrote before the vdevs, through the ARC or Direct I/O (OpenZFS 2.3+). Against the vdev bandwidth it shows compression, caching and redundancy.",
		"Bps", 12, 8,
		q(fmt.Sprintf(`sum by (instance, pool, path) (rate(zfs_pool_logical_read_bytes_total%s[$__rate_interval]))`, s.pool()), "{{pool}} {{path}} read"),
		q(fmt.Sprintf(`sum by (instance, pool, path) (rate(zfs_pool_logical_write_bytes_total%s[$__rate_interval]))`, s.pool()), "{{pool}} {{path}} write")))
	b.WithPanel(b.timeseries("Dataset bandwidth",
		"Bytes per second read and written through each file system (objset kstats, OpenZFS 0.8+), the ten busiest.",
		"Bps", 12, 8,
		q(fmt.Sprintf(`topk(10, rate(zfs_dataset_read_bytes_total%s[$__rate_interval]))`, s.pool()), "{{dataset}} read"),
		q(fmt.Sprintf(`topk(10, rate(zfs_dataset_write_bytes_total%s[$__rate_interval]))`, s.pool()), "{{dataset}} write")))

	return b.Build()
}
