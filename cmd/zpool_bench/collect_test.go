package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchsource"
)

// scrapedSource holds readings timed by their scrapes, and answers a
// Fetch as the sampler and Prometheus do: per series, the last
// reading at or before the query's start and every later one.
type scrapedSource struct{ series []benchreport.Series }

func (s *scrapedSource) Fetch(_ context.Context, q benchsource.Query) ([]benchreport.Series, error) {
	var out []benchreport.Series
	for _, in := range s.series {
		keep := in
		keep.Samples = nil
		for i, p := range in.Samples {
			if p.Time.After(q.End) {
				break
			}
			if !p.Time.After(q.Start) && i+1 < len(in.Samples) && !in.Samples[i+1].Time.After(q.Start) {
				continue
			}
			keep.Samples = append(keep.Samples, p)
		}
		out = append(out, keep)
	}
	return out, nil
}

func (s *scrapedSource) LatestSample(context.Context) (time.Time, error) { return time.Now(), nil }
func (s *scrapedSource) LatestReport(context.Context) (time.Time, error) { return time.Now(), nil }
func (s *scrapedSource) String() string                                  { return "readings" }

// What the OpenZFS guest showed: under load a scrape's zpool get of vdev
// properties answers seconds after the scrape began. The reading begun
// just before the workload started is timed by its answer, after the
// start, so the baseline is the reading before it.
func TestBaselineOfSlowReadings(t *testing.T) {
	start := time.Date(2026, 11, 30, 20, 15, 30, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	// scrape began, vdev properties answered, pool mir written so far
	readings := [][3]float64{{-3.1, -0.4, 54.8e6}, {-0.3, 3.1, 91.5e6}, {3.1, 9.3, 260.8e6}, {9.3, 13.2, 476e6}, {13.3, 16.1, 476e6}}
	counter := benchreport.Series{Metric: "zfs_vdev_write_bytes_total", Labels: map[string]string{"pool": "mir", "vdev": "mir"}}
	answered := benchreport.Series{Metric: benchmetrics.SourceTime, Labels: map[string]string{"source": "zpool_vdev_properties"}}
	for _, r := range readings {
		counter.Samples = append(counter.Samples, benchreport.Sample{Time: at(r[0]), Value: r[2]})
		answered.Samples = append(answered.Samples, benchreport.Sample{Time: at(r[0]), Value: float64(at(r[1]).UnixMicro()) / 1e6})
	}
	c := &runCommand{env: env{stdout: io.Discard, stderr: io.Discard}, settleTimeout: time.Second}
	rep, err := c.collect(benchreport.Run{ID: "1", Name: "slow", Pool: "mir", Start: start, End: at(12)},
		&scrapedSource{series: []benchreport.Series{counter, answered}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rep.Pool.WriteBytes.Increase, 476e6-54.8e6; got != want {
		t.Errorf("pool wrote %.1f MB, want %.1f MB from the reading answered before the start; notes %q", got/1e6, want/1e6, rep.Missing)
	}
}
