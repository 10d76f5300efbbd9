// Package benchsource gathers the raw samples a benchmark report reads,
// for one pool and one stretch of time, from one of two places: the
// exporter's /metrics, which a Sampler scrapes while the run goes on, or a
// Prometheus server that scraped the exporter, through its query API.
//
// Each series holds the last sample at or before the query's start and
// every sample after it up to its end: raw samples as scraped, never the
// steps of a range query. Per-pool families (those with a pool label) are
// restricted to the query's pool; the host-wide ones (host and ZFS-engine
// CPU, ARC) are not.
//
// Series from Prometheus keep the labels Prometheus gave them, instance and
// job among them; the report reads only the labels it knows (pool, vdev,
// mode...). Samples from more than one scrape target are refused, since a
// report would add them up: the matchers given to Prometheus (the runner's
// --prometheus.matchers flag) must pick one exporter.
package benchsource

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// Query asks for the samples of one pool between Start and End.
type Query struct {
	Pool       string
	Start, End time.Time
}

// Source fetches samples for a report.
type Source interface {
	// Fetch returns a series per time series of the families in
	// benchmetrics.Families: per-pool ones of q.Pool only, each with the
	// last sample at or before q.Start and the samples up to q.End.
	Fetch(ctx context.Context, q Query) ([]benchreport.Series, error)
	// LatestSample is the time of the newest sample of LatestMetric the
	// source has (of any pool it holds); it wraps ErrNoSamples when there
	// is none.
	LatestSample(ctx context.Context) (time.Time, error)
	// LatestReport is when the vdev I/O counters' source last answered
	// (a report of the zpool iostat stream, a read of vdev properties),
	// as of the newest sample: figures of I/O done before it are in. It
	// is LatestSample where the source times are not exported.
	LatestReport(ctx context.Context) (time.Time, error)
	// String says what the source is, e.g. "exporter http://nas:9134".
	String() string
}

// LatestMetric is the family LatestSample looks at: the per-vdev write
// counter, which every benchmark moves.
const LatestMetric = "zfs_vdev_write_bytes_total"

// ErrNoSamples tells that a source holds no sample of LatestMetric yet.
var ErrNoSamples = errors.New("no samples yet")

// PerPool tells whether a family carries a pool label, and so is
// restricted to the pool benchmarked: the pool and vdev families. CPU,
// ARC and the exporter's own families are host-wide.
func PerPool(metric string) bool {
	return strings.HasPrefix(metric, "zfs_vdev_") || strings.HasPrefix(metric, "zfs_pool_")
}

// trim keeps the last sample at or before start and the samples after it
// up to end; it returns nil when none is left.
func trim(samples []benchreport.Sample, start, end time.Time) []benchreport.Sample {
	i := sort.Search(len(samples), func(i int) bool { return samples[i].Time.After(start) })
	i = max(0, i-1)
	j := sort.Search(len(samples), func(j int) bool { return samples[j].Time.After(end) })
	if i >= j {
		return nil
	}
	return samples[i:j:j]
}

// fromMatrix turns a matrix into series, dropping __name__ from the
// labels: the samples of Prometheus's answers and those of the exporter's
// scrapes alike.
func fromMatrix(m model.Matrix) []benchreport.Series {
	out := make([]benchreport.Series, 0, len(m))
	for _, stream := range m {
		labels := make(map[string]string, len(stream.Metric))
		for k, v := range stream.Metric {
			if k != model.MetricNameLabel {
				labels[string(k)] = string(v)
			}
		}
		samples := make([]benchreport.Sample, len(stream.Values))
		for i, p := range stream.Values {
			samples[i] = benchreport.Sample{Time: p.Timestamp.Time().UTC(), Value: float64(p.Value)}
		}
		sort.SliceStable(samples, func(a, b int) bool { return samples[a].Time.Before(samples[b].Time) })
		out = append(out, benchreport.Series{Metric: string(stream.Metric[model.MetricNameLabel]), Labels: labels, Samples: samples})
	}
	return out
}

// checkPool fails when no series of q.Pool was found; pools are the
// pools seen instead, nil when unknown.
func checkPool(series []benchreport.Series, q Query, pools map[string]bool) error {
	if q.Pool == "" {
		return nil
	}
	for _, s := range series {
		if PerPool(s.Metric) && s.Labels["pool"] == q.Pool {
			return nil
		}
	}
	seen := ""
	switch {
	case pools == nil:
	case len(pools) == 0:
		seen = " (there are samples of no pool at all)"
	default:
		names := make([]string, 0, len(pools))
		for p := range pools {
			names = append(names, strconv.Quote(p))
		}
		sort.Strings(names)
		seen = " (there are samples of " + strings.Join(names, ", ") + " only)"
	}
	return fmt.Errorf("%w of pool %q between %s and %s%s", ErrNoSamples, q.Pool,
		q.Start.UTC().Format(time.RFC3339), q.End.UTC().Format(time.RFC3339), seen)
}

func clientOrDefault(c *http.Client) *http.Client {
	if c == nil {
		return http.DefaultClient
	}
	return c
}

// redact drops a URL's password, for messages.
func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}

// newestReport is the latest I/O source time in the newest samples of
// benchmetrics.SourceTime, zero when there is none.
func newestReport(all []benchreport.Series) time.Time {
	var latest time.Time
	for _, series := range all {
		n := len(series.Samples)
		if series.Metric != benchmetrics.SourceTime || n == 0 || !slices.Contains(benchmetrics.IOSources, series.Labels["source"]) {
			continue
		}
		v := series.Samples[n-1].Value
		if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		// To the microsecond: a float64 of Unix seconds holds no more.
		if at := time.UnixMicro(int64(math.Round(v * 1e6))); at.After(latest) {
			latest = at
		}
	}
	return latest
}

// newest is the time of the newest sample of all.
func newest(all []benchreport.Series) time.Time {
	var latest time.Time
	for _, series := range all {
		if n := len(series.Samples); n > 0 && series.Samples[n-1].Time.After(latest) {
			latest = series.Samples[n-1].Time
		}
	}
	return latest
}
