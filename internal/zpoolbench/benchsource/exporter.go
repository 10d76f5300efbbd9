package benchsource

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/history"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// ExporterSource reads an exporter's benchmark history.
type ExporterSource struct {
	base   string
	client *http.Client
}

// Exporter reads the benchmark history of the exporter at baseURL (e.g.
// http://localhost:9134), which must run with --web.enable-benchmark-api.
// client is http.DefaultClient when nil; give one with TLS settings or
// basic authentication when the exporter's --web.config.file asks for
// them.
func Exporter(baseURL string, client *http.Client) *ExporterSource {
	return &ExporterSource{base: strings.TrimRight(baseURL, "/"), client: clientOrDefault(client)}
}

var _ Source = (*ExporterSource)(nil)

// String is "exporter URL".
func (s *ExporterSource) String() string { return "exporter " + redact(s.base) }

func (s *ExporterSource) get(ctx context.Context, metrics []string, start, end string) ([]benchreport.Series, error) {
	q := url.Values{"metric": metrics, "start": {start}, "end": {end}}
	u := s.base + history.Path + "?" + q.Encode()
	result, err := getMatrix(ctx, s.client, u)
	if err != nil {
		return nil, fmt.Errorf("reading the benchmark history of the exporter at %s (GET %s): %w", redact(s.base), history.Path, err)
	}
	return toSeries(result), nil
}

// Fetch reads the samples of q from the history: the latency histograms
// too where the exporter keeps them, and the rest without them where it
// is older than they are.
func (s *ExporterSource) Fetch(ctx context.Context, q Query) ([]benchreport.Series, error) {
	if q.End.Before(q.Start) {
		return nil, fmt.Errorf("the end %v is before the start %v", q.End, q.Start)
	}
	from, to := formatTime(q.Start), formatTime(q.End)
	var core []string
	for _, m := range benchmetrics.Families {
		if !slices.Contains(benchmetrics.LatencyFamilies, m) {
			core = append(core, m)
		}
	}
	all, err := s.get(ctx, core, from, to)
	if err != nil {
		return nil, err
	}
	// Asked apart: the history of an exporter older than the latency
	// families refuses them (400, a metric it does not keep), and the
	// report is then made without them, saying they are missing.
	latency, err := s.get(ctx, benchmetrics.LatencyFamilies, from, to)
	var refused *httpError
	switch {
	case err == nil:
		all = append(all, latency...)
	case !errors.As(err, &refused) || refused.code != http.StatusBadRequest:
		return nil, err
	}
	var out []benchreport.Series
	pools := map[string]bool{}
	for _, series := range all {
		if PerPool(series.Metric) && series.Labels["pool"] != "" {
			pools[series.Labels["pool"]] = true
		}
		if q.Pool != "" && PerPool(series.Metric) && series.Labels["pool"] != q.Pool {
			continue
		}
		if series.Samples = trim(series.Samples, q.Start, q.End); series.Samples != nil {
			out = append(out, series)
		}
	}
	if err := checkPool(out, q, pools); err != nil {
		return nil, fmt.Errorf("the exporter at %s: %w", redact(s.base), err)
	}
	return out, nil
}

// farFuture asks the history for each series' newest sample: the last one
// at or before it.
const farFuture = "9999999999"

// LatestSample is the time of the history's newest sample of LatestMetric.
func (s *ExporterSource) LatestSample(ctx context.Context) (time.Time, error) {
	all, err := s.get(ctx, []string{LatestMetric}, farFuture, farFuture)
	if err != nil {
		return time.Time{}, err
	}
	latest := newest(all)
	if latest.IsZero() {
		return time.Time{}, fmt.Errorf("the exporter at %s holds no sample of %s: %w (it samples only while a benchmark window runs and a minute after)", redact(s.base), LatestMetric, ErrNoSamples)
	}
	return latest, nil
}

// LatestReport is the newest I/O source time in the history.
func (s *ExporterSource) LatestReport(ctx context.Context) (time.Time, error) {
	all, err := s.get(ctx, []string{benchmetrics.SourceTime}, farFuture, farFuture)
	if err != nil {
		return time.Time{}, err
	}
	if latest := newestReport(all); !latest.IsZero() {
		return latest, nil
	}
	return s.LatestSample(ctx)
}

func newest(all []benchreport.Series) time.Time {
	var latest time.Time
	for _, series := range all {
		if n := len(series.Samples); n > 0 && series.Samples[n-1].Time.After(latest) {
			latest = series.Samples[n-1].Time
		}
	}
	return latest
}
