package boards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// The benchmark window metrics: active is 1 while a run is going on and 0
// once it ended, start and end are its times in seconds since the epoch
// (end only once ended). The exporter serves them with
// --web.enable-benchmark-api, so they are not in the golden expositions:
// the contract test allows them by name, the evaluation test feeds them
// as input series of its own, and the Prometheus end-to-end test of the
// exporter runs a window.
const (
	benchmarkWindowMetric = "zfs_benchmark_window_active"
	benchmarkStartMetric  = "zfs_benchmark_window_start_time_seconds"
	benchmarkEndMetric    = "zfs_benchmark_window_end_time_seconds"
)

// benchmarkBoard is what to watch during a bonnie++, fio or dd run: pool
// and vdev throughput, what the CPU and the ZFS threads pay for it, the
// ARC, and how long transaction groups take to sync.
func benchmarkBoard(cfg config.Config) (dashboard.Dashboard, error) {
	b := newBoard(cfg, "zfs-benchmark", "ZFS / Benchmark",
		"Pool and vdev throughput, host and ZFS CPU, ARC hit ratio and txg sync time side by side, for reading during a benchmark run. Benchmark windows are listed in a table and drawn as annotations: the exporter's windows as points, the regions zpool_bench writes to Grafana as shaded spans; vdev state changes, scrubs and resilvers, from the kernel's events, as points too. Every rate here is over $__rate_interval rather than the 5m recorded series, so that a run of a minute or two shows as it happened.", "benchmark")
	s := b.s
	b.Refresh("10s").Time("now-30m", "now")

	// Every minute a window was active in marks it, however short the run
	// (the annotation's step is a minute); windows of the chosen pools
	// and those that name none.
	b.annotation("Benchmark windows", "purple",
		fmt.Sprintf(`max_over_time(%s%s[1m]) == 1`, benchmarkWindowMetric, s.host(`pool=~"$pool|"`)),
		"{{name}}", "benchmark {{name}} running on {{instance}} {{pool}}", "instance,pool")
	b.tagAnnotation("Benchmark runs (zpool_bench)", "orange", benchRunTag)
	// A scrub, a resilver or a disk that fails during a run changes its
	// figures: the kernel's events mark them.
	b.eventAnnotations()

	// Windows are listed whatever the pool variable says: a window need
	// not name a pool, and an empty label matches no pool.
	b.row("Runs")
	b.WithPanel(b.table("Benchmark runs",
		"The benchmark windows the exporter keeps (--benchmark.retention), newest first: each run's name, pool and window id (as zpool_bench report takes them), when it started and ended (running while it goes on) and how long it took, or has taken so far. Windows are started through the exporter's benchmark API, by zpool_bench run or a script; they are listed for every pool.",
		24, 6,
		[]query{
			cell(windowKeys, fmt.Sprintf(`%s%s * 1000`, benchmarkStartMetric, s.host())),
			tq(fmt.Sprintf(`max by (%s) (%s%s * 1000) or max by (%s) (%s%s == 1) * 0`,
				windowKeys, benchmarkEndMetric, s.host(), windowKeys, benchmarkWindowMetric, s.host())),
			tq(fmt.Sprintf(`max by (%s) (%s%s - %s%s) or max by (%s) (time() - %s%s)`,
				windowKeys, benchmarkEndMetric, s.host(), benchmarkStartMetric, s.host(), windowKeys, benchmarkStartMetric, s.host())),
		},
		[]col{
			{"instance", "instance", nil},
			{"name", "name", nil},
			{"pool", "pool", nil},
			{"window", "window", nil},
			{"Value #A", "started", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			// A running window has no end: its cell is 0, shown as running.
			{"Value #B", "ended", []dashboard.DynamicConfigValue{unit("dateTimeAsIso"), mappings(textMap([][3]string{{"0", "running", "blue"}}))}},
			{"Value #C", "duration", []dashboard.DynamicConfigValue{unit("s")}},
		}).
		SortBy(sortByDesc("started")))

	b.row("Throughput and latency")
	b.WithPanel(b.timeseries("Pool bandwidth",
		"Bytes per second each pool read from and wrote to its vdevs: the pool row of zpool iostat, the sum of its top-level vdevs without cache and spares. It counts redundancy: a two-way mirror shows twice what the application wrote, raidz adds parity.",
		"Bps", 12, 8,
		q(s.poolRate("zfs_vdev_read_bytes_total"), "{{pool}} read"),
		q(s.poolRate("zfs_vdev_write_bytes_total"), "{{pool}} write")))
	b.WithPanel(b.timeseries("Pool operations",
		"Read and write operations per second of each pool: the pool row of zpool iostat, summed over its top-level vdevs without cache and spares.",
		"iops", 12, 8,
		q(s.poolRate("zfs_vdev_read_operations_total"), "{{pool}} read"),
		q(s.poolRate("zfs_vdev_write_operations_total"), "{{pool}} write")))
	// A run's latency sits beside its throughput: the pool row of zpool
	// iostat -w, read and write apart (type).
	for _, wt := range waits {
		b.WithPanel(b.timeseries("Pool "+wt.name,
			fmt.Sprintf("How long each pool's reads and writes took %s: the median, the 99th percentile and the mean. The mean reads the histogram's _sum, which counts each I/O at the middle of its bucket, so it is an estimate.", wt.what)+latencyNote,
			"s", 12, 8,
			q(s.quantile(0.5, wt.family, "instance, pool, type", s.root()), "{{pool}} {{type}} p50"),
			q(s.quantile(0.99, wt.family, "instance, pool, type", s.root()), "{{pool}} {{type}} p99"),
			q(s.mean(wt.family, "instance, pool, type", s.root()), "{{pool}} {{type}} mean")))
	}
	b.WithPanel(b.timeseries("Vdev bandwidth",
		"Bytes per second read and written by each top-level vdev: lines close together mean the layout spreads the load evenly.",
		"Bps", 12, 8,
		q(s.vdevRate("zfs_vdev_read_bytes_total", s.topLevel()), "{{pool}} {{vdev}} read"),
		q(s.vdevRate("zfs_vdev_write_bytes_total", s.topLevel()), "{{pool}} {{vdev}} write")))
	b.WithPanel(b.timeseries("Vdev operations",
		"Read and write operations per second of each top-level vdev.",
		"iops", 12, 8,
		q(s.vdevRate("zfs_vdev_read_operations_total", s.topLevel()), "{{pool}} {{vdev}} read"),
		q(s.vdevRate("zfs_vdev_write_operations_total", s.topLevel()), "{{pool}} {{vdev}} write")))
	b.WithPanel(b.timeseries("Logical and physical writes",
		"What file systems and zvols wrote (logical, OpenZFS 2.3+) against what the pool wrote to its vdevs: the ratio shows compression and redundancy at work.",
		"Bps", 12, 8,
		q(fmt.Sprintf(`sum by (instance, pool) (rate(zfs_pool_logical_write_bytes_total%s[$__rate_interval]))`, s.pool()), "{{pool}} logical"),
		q(s.poolRate("zfs_vdev_write_bytes_total"), "{{pool}} physical")))
	b.WithPanel(b.timeseries("Disk busy",
		"Share of time each disk had I/O in flight (iostat %b). Disks at 100% are the limit; disks well below it while throughput is flat point at the CPU or the txg sync.",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`rate(zfs_disk_io_time_seconds_total%s[$__rate_interval])`, s.pool()), "{{pool}} {{vdev}} ({{device}})")).
		Min(0).Max(1))

	b.row("CPU")
	b.WithPanel(b.stacked("Host CPU busy",
		"Share of the host's CPU time spent in each mode but idle, stacked: the top of the stack is how busy the host is. iowait is time idle with I/O outstanding.",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`sum by (instance, mode) (rate(zfs_host_cpu_seconds_total%s[$__rate_interval])) / on(instance) group_left() sum by (instance) (rate(zfs_host_cpu_seconds_total%s[$__rate_interval]))`,
			s.host(`mode!="idle"`), s.host()), "{{instance}} {{mode}}")).
		Min(0).Max(1))
	b.WithPanel(b.stacked("ZFS engine CPU",
		"CPU seconds per second (cores) used by each family of ZFS threads: z_wr_iss compresses and checksums writes, z_rd_int verifies and decompresses reads, txg_sync writes transaction groups; zfskern on FreeBSD, zpool-POOL on illumos, the zfs-fuse daemon.",
		"short", 12, 8,
		q(fmt.Sprintf(`sum by (instance, family) (rate(zfs_engine_cpu_seconds_total%s[$__rate_interval]))`, s.host()), "{{instance}} {{family}}")))

	b.row("ARC and transaction groups")
	b.WithPanel(b.timeseries("ARC hit ratio",
		"Share of ARC lookups that hit, overall and per kind (demand or prefetch, data or metadata). A benchmark larger than the ARC should see it fall; one that fits measures memory, not disks.",
		"percentunit", 8, 8,
		q(fmt.Sprintf(`sum by (instance) (rate(zfs_arc_hits_total%s[$__rate_interval])) / (sum by (instance) (rate(zfs_arc_hits_total%s[$__rate_interval])) + sum by (instance) (rate(zfs_arc_misses_total%s[$__rate_interval])))`,
			s.host(), s.host(), s.host()), "{{instance}} all"),
		q(fmt.Sprintf(`sum by (instance, kind) (rate(zfs_arc_hits_total%s[$__rate_interval])) / (sum by (instance, kind) (rate(zfs_arc_hits_total%s[$__rate_interval])) + sum by (instance, kind) (rate(zfs_arc_misses_total%s[$__rate_interval])))`,
			s.host(), s.host(), s.host()), "{{instance}} {{kind}}")).
		Min(0).Max(1))
	b.WithPanel(b.timeseries("Txg sync time",
		"How long each pool took to sync a transaction group: the 99th percentile and the mean. Syncs longer than zfs_txg_timeout (5 s) mean writes arrive faster than the disks take them.",
		"s", 8, 8,
		q(fmt.Sprintf(`histogram_quantile(0.99, sum by (instance, pool) (rate(zfs_pool_txg_sync_seconds%[1]s[$__rate_interval]))) or histogram_quantile(0.99, sum by (instance, pool, le) (rate(zfs_pool_txg_sync_seconds_bucket%[1]s[$__rate_interval])))`, s.pool()), "{{pool}} p99"),
		q(fmt.Sprintf(`histogram_sum(sum by (instance, pool) (rate(zfs_pool_txg_sync_seconds%[1]s[$__rate_interval]))) / histogram_count(sum by (instance, pool) (rate(zfs_pool_txg_sync_seconds%[1]s[$__rate_interval]))) or sum by (instance, pool) (rate(zfs_pool_txg_sync_seconds_sum%[1]s[$__rate_interval])) / sum by (instance, pool) (rate(zfs_pool_txg_sync_seconds_count%[1]s[$__rate_interval]))`, s.pool()), "{{pool}} mean")))
	b.WithPanel(b.timeseries("Write throttle",
		"Transactions per second that the write throttle delayed (dirty_delay, dirty_throttle), that hit zfs_dirty_data_max (dirty_over_max) or waited for the log (wrlog_delay).",
		"ops", 8, 8,
		q(fmt.Sprintf(`sum by (instance, result) (rate(zfs_dmu_tx_total%s[$__rate_interval]))`, s.host(`result=~"dirty_.*|wrlog_delay"`)), "{{instance}} {{result}}")))

	return b.Build()
}
