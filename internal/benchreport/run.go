// Package benchreport turns the samples an exporter took during a benchmark
// window into a report: bytes moved, average and peak bandwidth of the pool
// and of each vdev, operations, CPU, ARC hit ratio and pool state, beside
// the benchmark tool's own figures; and puts several runs side by side.
package benchreport

import (
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/poolconfig"
	"github.com/zpool-exporter/zpool_exporter/internal/workload"
)

// Metrics are the metric families a report reads. Per-pool families carry
// a pool label; the CPU and ARC families are host-wide.
var Metrics = []string{
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
	SourceTimeMetric,
}

// SourceTimeMetric tells when each of the exporter's sources last
// answered. The vdev I/O counters change only when their source does (a
// report of the zpool iostat stream, a `zpool get` of vdev properties), so
// their samples are timed by it rather than by when they were scraped:
// a scrape every second of a stream that reports every second would
// otherwise see two reports in one interval and none in the next, and
// show peaks of twice the real rate.
const SourceTimeMetric = "zfs_exporter_source_last_success_timestamp_seconds"

// IOSources are the sources of the vdev I/O counters, as
// SourceTimeMetric's source label names them.
var IOSources = []string{"zpool_iostat_stream", "zpool_vdev_properties"}

// Sample is one value of a series.
type Sample struct {
	Time  time.Time
	Value float64
}

// Series is the raw samples of one time series, in time order.
type Series struct {
	Metric  string            // e.g. zfs_vdev_write_bytes_total
	Labels  map[string]string // without __name__
	Samples []Sample
}

// Run is what the runner knows about one benchmark run.
type Run struct {
	ID      string   `json:"id"` // the benchmark window's ID
	Name    string   `json:"name"`
	Pool    string   `json:"pool"`
	Command []string `json:"command"`
	Host    string   `json:"host,omitempty"`
	// Start and End are when the workload started and ended (UTC).
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// ExitStatus is the workload's: its exit code, or 128+N when signal N
	// ended it.
	ExitStatus int `json:"exit_status"`
	// Interrupted is true when the runner stopped the workload (Ctrl-C,
	// SIGTERM) before it ended by itself.
	Interrupted bool               `json:"interrupted,omitempty"`
	Config      *poolconfig.Config `json:"config,omitempty"`
	// Workload is the benchmark tool's own summary, when the tool was
	// recognised and its summary parsed; WorkloadError says why not.
	Workload      *workload.Summary `json:"workload,omitempty"`
	WorkloadError string            `json:"workload_error,omitempty"`
	// Source says where the samples came from, e.g.
	// "exporter http://localhost:9134" or "prometheus http://prom:9090".
	Source string `json:"source"`
}
