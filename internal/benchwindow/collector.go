package benchwindow

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var windowLabels = []string{"window", "name", "pool"}

var (
	activeDesc = prometheus.NewDesc("zfs_benchmark_window_active",
		"1 while the benchmark window is running, 0 once it ended; one series per window still retained (--benchmark.retention). window is its id in the API, name the run's name, pool the pool benchmarked (empty when not given). Dashboards draw windows from zfs_benchmark_window_active == 1.",
		windowLabels, nil)
	startDesc = prometheus.NewDesc("zfs_benchmark_window_start_time_seconds",
		"When the benchmark window started, in seconds since the Unix epoch.",
		windowLabels, nil)
	endDesc = prometheus.NewDesc("zfs_benchmark_window_end_time_seconds",
		"When the benchmark window ended, in seconds since the Unix epoch; absent while it runs.",
		windowLabels, nil)
	startedDesc = prometheus.NewDesc("zfs_benchmark_windows_started_total",
		"Benchmark windows started through the API since the exporter started, including those no longer retained.",
		nil, nil)
)

// Collector exports a store's windows as metrics.
type Collector struct{ store *Store }

// NewCollector returns the collector of store.
func NewCollector(store *Store) *Collector { return &Collector{store: store} }

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- activeDesc
	ch <- startDesc
	ch <- endDesc
	ch <- startedDesc
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	// Started first: a window started between the two reads is then in
	// the list and counted by the next scrape, never counted before it
	// appears.
	started := c.store.Started()
	for _, w := range c.store.List() {
		labels := []string{w.ID, w.Name, w.Pool}
		active := 0.0
		if w.Active {
			active = 1
		}
		ch <- gauge(activeDesc, active, labels)
		ch <- gauge(startDesc, unixSeconds(w.Start), labels)
		if !w.Active {
			ch <- gauge(endDesc, unixSeconds(w.End), labels)
		}
	}
	ch <- prometheus.MustNewConstMetric(startedDesc, prometheus.CounterValue, float64(started))
}

// gauge builds a window's series. The store refuses names that are not
// text, so this never fails; if it did, the registry would report the one
// series and serve the rest, where a Must would end the process.
func gauge(d *prometheus.Desc, v float64, labels []string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

// unixSeconds is t in seconds since the epoch; the store's times are whole
// milliseconds, and so are these.
func unixSeconds(t time.Time) float64 { return float64(t.UnixMilli()) / 1e3 }
