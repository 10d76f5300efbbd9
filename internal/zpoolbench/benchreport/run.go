// Package benchreport turns the samples an exporter took during a benchmark
// window into a report: bytes moved, average and peak bandwidth of the pool
// and of each vdev, operations, latency percentiles of the pool and its
// top-level vdevs, CPU, ARC hit ratio and pool state, beside the benchmark
// tool's own figures; and puts several runs side by side.
package benchreport

import (
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/poolconfig"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

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
