package boards

import (
	"fmt"
	"strings"

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

	type counter struct{ dir, kind, unit, metric string }
	counters := []counter{
		{"Read", "bandwidth", "Bps", "zfs_vdev_read_bytes_total"},
		{"Write", "bandwidth", "Bps", "zfs_vdev_write_bytes_total"},
		{"Read", "operations", "iops", "zfs_vdev_read_operations_total"},
		{"Write", "operations", "iops", "zfs_vdev_write_operations_total"},
	}
	// Pools, top-level vdevs and leaves take their rates over the same
	// $__rate_interval, so that panels side by side agree at every
	// instant; the recording rules' 5m rates would lag a one-minute run.

	b.row("Pools")
	for _, c := range counters {
		b.WithPanel(b.stacked(
			fmt.Sprintf("%s %s per pool", c.dir, c.kind),
			fmt.Sprintf("%s %s of each pool, stacked: the pool row of zpool iostat, the sum of its top-level vdevs without cache and spares.", c.dir, c.kind),
			c.unit, 6, 8,
			q(s.poolRate(c.metric), "{{instance}} {{pool}}")))
	}

	b.row("Top-level vdevs")
	for _, c := range counters {
		b.WithPanel(b.stacked(
			fmt.Sprintf("%s %s per top-level vdev", c.dir, c.kind),
			fmt.Sprintf("%s %s of each top-level vdev (mirror, raidz, draid, single disk, log, cache), stacked per pool: the top-level rows of zpool iostat -v. An even split means the layout spreads the load.", c.dir, c.kind),
			c.unit, 12, 8,
			q(s.vdevRate(c.metric, s.topLevel(), "class"), "{{pool}} {{vdev}} ({{class}})")))
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

	latencyRow(b)

	return b.Build()
}

// latencyNote ends the description of every panel that reads the
// vdev_latency collector: an empty panel would not say why.
const latencyNote = " Needs the vdev_latency collector: on unless --no-collector.vdev_latency, on OpenZFS 0.7 and later (not zfs-fuse, Solaris or illumos)."

// waits are the latency histograms of zpool iostat -w that are kept for
// reads and writes (label type).
var waits = []struct{ name, family, what string }{
	{"disk wait", "zfs_vdev_disk_wait_seconds", "on the disk, from their issue to their completion (zpool iostat -w disk_wait)"},
	{"total wait", "zfs_vdev_total_wait_seconds", "from their entry in ZFS's queue to their completion, queue and disk together (zpool iostat -w total_wait)"},
}

// latencyRow is zpool iostat -w, -r and -q: how long I/Os took, how large
// they were and how many waited, from the vdev_latency collector: first
// what it sends by default, then its detail row. The
// histograms count since the pool's import, so each panel reads their
// rate: what the last $__rate_interval added.
func latencyRow(b *board) {
	s := b.s
	dirs := []struct{ name, match string }{{"Read", `type="read"`}, {"Write", `type="write"`}}

	b.row("Latency")
	for _, wt := range waits {
		for _, d := range dirs {
			b.WithPanel(b.heatmap(
				fmt.Sprintf("%s %s", d.name, wt.name),
				fmt.Sprintf("How long %ss took %s: each column is one moment, each cell the %ss per second in one bucket. The pool rows of zpool iostat -w (log devices included, cache devices not), summed over the pools chosen: choose one pool to see it alone.", strings.ToLower(d.name), wt.what, strings.ToLower(d.name))+latencyNote,
				"s", 6, 8,
				hq(s.bucketSum(wt.family, s.root(), d.match))))
		}
	}

	top := s.topLevel()
	for _, d := range dirs {
		b.WithPanel(b.timeseries(
			fmt.Sprintf("%s wait p99 per top-level vdev", d.name),
			fmt.Sprintf("99th percentile of how long %ss took on each top-level vdev (mirror, raidz, draid, single disk, log, cache): on the disk (disk wait) and from ZFS's queue on (total wait). A vdev slower than its siblings holds the pool back; total well above disk means the I/Os waited in ZFS's queues.", strings.ToLower(d.name))+latencyNote,
			"s", 12, 8,
			q(s.quantile(0.99, "zfs_vdev_disk_wait_seconds", "instance, pool, vdev", top, d.match), "{{pool}} {{vdev}} disk p99"),
			q(s.quantile(0.99, "zfs_vdev_total_wait_seconds", "instance, pool, vdev", top, d.match), "{{pool}} {{vdev}} total p99")))
	}

	leaves := s.leaves()
	for _, d := range dirs {
		b.WithPanel(b.timeseries(
			fmt.Sprintf("%s disk wait per leaf vdev", d.name),
			fmt.Sprintf("Median and 99th percentile of how long %ss took on each leaf vdev (a disk or file), from its issue to its completion. The disks of one mirror or raidz get much the same work: the one whose lines stand above its siblings' is the slow disk.", strings.ToLower(d.name))+latencyNote,
			"s", 12, 8,
			q(s.quantile(0.5, "zfs_vdev_disk_wait_seconds", "instance, pool, vdev", leaves, d.match), "{{pool}} {{vdev}} p50"),
			q(s.quantile(0.99, "zfs_vdev_disk_wait_seconds", "instance, pool, vdev", leaves, d.match), "{{pool}} {{vdev}} p99")))
	}

	latencyDetailRow(b)
}

// latencyDetailRow is what the exporter sends only when asked, each
// family behind a flag of its own: request sizes (zpool iostat -r), queue
// lengths (-q) and the waits in ZFS's queue of each class. Each panel
// names its flag, so that an empty one says how to fill it.
func latencyDetailRow(b *board) {
	s := b.s
	b.row("Latency detail (exporter flags)")
	sizes := " Needs --collector.vdev_latency.request-sizes." + latencyNote
	for _, r := range []struct{ name, match, what string }{
		{"Individual", `request="individual"`, "as ZFS queued them"},
		{"Aggregated", `request="aggregated"`, "merged with their neighbours into one larger I/O"},
	} {
		b.WithPanel(b.heatmap(
			r.name+" request sizes",
			fmt.Sprintf("Sizes of the I/Os ZFS issued %s, every class together (zpool iostat -r): each cell the I/Os per second in one size bucket. The pool rows, summed over the pools chosen.", r.what)+sizes,
			"bytes", 6, 8,
			hq(s.bucketSum("zfs_vdev_request_size_bytes", s.root(), r.match))))
	}
	b.WithPanel(b.timeseries("Mean request size per class",
		"Mean size of the I/Os of each class (sync and async reads and writes, scrub, trim, rebuild), individual as ZFS queued them and aggregated with their neighbours, for each pool (zpool iostat -r). Aggregated well above individual means ZFS merges small I/Os into larger ones. zpool keeps no sum: each I/O counts at the bottom of its bucket, which is exact for sizes that are powers of two."+sizes,
		"bytes", 12, 8,
		q(s.mean("zfs_vdev_request_size_bytes", "instance, pool, class, request", s.root()), "{{pool}} {{class}} {{request}}")))

	queues := " Needs --collector.vdev_latency.queue-lengths." + latencyNote
	b.WithPanel(b.stacked("Queued I/Os per class",
		"I/Os waiting in ZFS's queues of each pool, per class, not yet issued to a disk (zpool iostat -q pend), stacked. A queue that keeps growing means the disks take I/Os slower than they come."+queues,
		"short", 8, 8,
		q(fmt.Sprintf("sum by (instance, pool, class) (zfs_vdev_queue_pending%s and on(instance, pool, vdev) (%s))", s.pool(), s.root()), "{{pool}} {{class}}")))
	b.WithPanel(b.stacked("Active I/Os per class",
		"I/Os of each pool issued to its disks and not yet completed, per class (zpool iostat -q activ), stacked. ZFS caps them per disk and class (zfs_vdev_*_max_active)."+queues,
		"short", 8, 8,
		q(fmt.Sprintf("sum by (instance, pool, class) (zfs_vdev_queue_active%s and on(instance, pool, vdev) (%s))", s.pool(), s.root()), "{{pool}} {{class}}")))
	b.WithPanel(b.timeseries("Queue wait p99 per class",
		"99th percentile of how long I/Os of each class waited in ZFS's queue of each pool before their issue to a disk (zpool iostat -w syncq_wait, asyncq_wait, scrub, trim, rebuild). Needs --collector.vdev_latency.queue-wait."+latencyNote,
		"s", 8, 8,
		q(s.quantile(0.99, "zfs_vdev_queue_wait_seconds", "instance, pool, class", s.root()), "{{pool}} {{class}}")))
}
