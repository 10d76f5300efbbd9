// Package benchmetrics names the metric families a benchmark report reads:
// those zpool_bench keeps of its scrapes of the exporter's /metrics, and
// asks Prometheus for. The report computes from them, and the sources
// fetch them.
package benchmetrics

import dto "github.com/prometheus/client_model/go"

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
// Families a report can do without: the vdev_latency collector may be
// turned off, zfs-fuse and OpenZFS before 0.7 have no zpool iostat -w, and an
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

// TopLevelLatency selects, of a reading's latency series, those of each
// pool's own row and its top-level vdevs: a report reads no others, and a
// leaf's 64 latency series would be five in six of all a scrape keeps of
// it. The vdevs' places come from zfs_vdev_info in the same reading;
// without it every series is kept.
func TopLevelLatency(families []*dto.MetricFamily) func(metric string, labels []*dto.LabelPair) bool {
	topLevel := map[[2]string]bool{}
	for _, mf := range families {
		if mf.GetName() != "zfs_vdev_info" {
			continue
		}
		for _, m := range mf.GetMetric() {
			pool, vdev, parent := label(m.GetLabel(), "pool"), label(m.GetLabel(), "vdev"), label(m.GetLabel(), "parent")
			if vdev == pool || parent == pool {
				topLevel[[2]string{pool, vdev}] = true
			}
		}
	}
	if len(topLevel) == 0 {
		return nil
	}
	return func(metric string, labels []*dto.LabelPair) bool {
		if !latency[metric] {
			return true
		}
		return topLevel[[2]string{label(labels, "pool"), label(labels, "vdev")}]
	}
}

var latency = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range LatencyFamilies {
		m[name] = true
	}
	return m
}()

func label(labels []*dto.LabelPair, name string) string {
	for _, l := range labels {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
