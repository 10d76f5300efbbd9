// Package benchmetrics names the metric families a benchmark report reads.
// The exporter's history keeps them while a window runs, and zpool_bench
// asks for them, from that history or from Prometheus. The names have a
// package of their own so that the exporter links them without the report
// and the workload parsers.
package benchmetrics

// Families are the metric families a report reads. Per-pool families carry
// a pool label; the CPU and ARC families are host-wide. Histograms are
// named by their series, as Prometheus stores them: NAME_bucket (with an
// le label), NAME_sum and NAME_count.
var Families = append([]string{
	"zfs_vdev_info",
	"zfs_vdev_read_bytes_total",
	"zfs_vdev_write_bytes_total",
	"zfs_vdev_read_operations_total",
	"zfs_vdev_write_operations_total",
	"zfs_pool_state",
	"zfs_vdev_state",
	"zfs_host_cpu_seconds_total",
	"zfs_engine_cpu_seconds_total",
	"zfs_arc_hits_total",
	"zfs_arc_misses_total",
	SourceTime,
}, LatencyFamilies...)

// The latency histograms of the vdev_latency collector (zpool iostat -w),
// by type="read" and "write", for the pool's row (vdev named after the
// pool), its top-level vdevs and its leaves.
const (
	// DiskWait is the time an I/O took on the disk.
	DiskWait = "zfs_vdev_disk_wait_seconds"
	// TotalWait is the time from an I/O's entry in ZFS's queue to its
	// completion: the queue and the disk.
	TotalWait = "zfs_vdev_total_wait_seconds"
)

// LatencyFamilies are the series of DiskWait and TotalWait, the part of
// Families a report can do without: the vdev_latency collector is off by
// default, zfs-fuse and OpenZFS before 0.7 have no zpool iostat -w, and an
// exporter older than these names does not keep them. A report without
// them says why its latency figures are missing.
var LatencyFamilies = []string{
	DiskWait + "_bucket", DiskWait + "_sum", DiskWait + "_count",
	TotalWait + "_bucket", TotalWait + "_sum", TotalWait + "_count",
}

// SourceTime tells when each of the exporter's sources last answered. The
// vdev I/O counters change only when their source does (a report of the
// zpool iostat stream, a `zpool get` of vdev properties), so their samples
// are timed by it rather than by when they were scraped: a scrape every
// second of a stream that reports every second would otherwise see two
// reports in one interval and none in the next, and show peaks of twice
// the real rate.
const SourceTime = "zfs_exporter_source_last_success_timestamp_seconds"

// IOSources are the sources of the vdev I/O counters, as SourceTime's
// source label names them.
var IOSources = []string{"zpool_iostat_stream", "zpool_vdev_properties"}
