package benchsource

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// Lookback is how far before a query's start Prometheus is asked for
// samples, to find the last one at or before the start: more than any
// scrape interval.
const Lookback = 5 * time.Minute

// PrometheusSource reads raw samples from a Prometheus server.
type PrometheusSource struct {
	base     string
	matchers string
	api      v1.API
	err      error // why no client could be made of base
}

// Prometheus reads the raw samples a Prometheus server at baseURL (e.g.
// http://prometheus:9090) scraped from the exporter, with instant queries
// of range selectors such as
//
//	zfs_vdev_write_bytes_total{pool="tank",instance="nas:9134"}[305s]
//
// at the query's end: a range query would give its steps instead, each
// the last sample before it, and a peak over a step would not be one over
// a scrape. matchers, when not empty, are label matchers added to every
// selector to pick one exporter among those Prometheus scrapes, e.g.
// `instance="nas:9134"` (braces are optional). client is
// http.DefaultClient when nil; user and password in baseURL are sent as
// basic authentication.
func Prometheus(baseURL, matchers string, client *http.Client) *PrometheusSource {
	m := strings.TrimSpace(matchers)
	m = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(m, "{"), "}"))
	s := &PrometheusSource{base: strings.TrimRight(baseURL, "/"), matchers: m}
	c, err := api.NewClient(api.Config{Address: s.base, Client: clientOrDefault(client)})
	if err != nil {
		s.err = fmt.Errorf("the Prometheus URL %s: %w", redact(s.base), err)
		return s
	}
	s.api = v1.NewAPI(c)
	return s
}

var _ Source = (*PrometheusSource)(nil)

// String is "prometheus URL", with the matchers when given.
func (s *PrometheusSource) String() string {
	if s.matchers == "" {
		return "prometheus " + redact(s.base)
	}
	return "prometheus " + redact(s.base) + " {" + s.matchers + "}"
}

// selector is metric{pool="...",matchers}.
func (s *PrometheusSource) selector(metric, pool string) string {
	var parts []string
	if pool != "" && PerPool(metric) {
		parts = append(parts, "pool="+strconv.Quote(pool))
	}
	if s.matchers != "" {
		parts = append(parts, s.matchers)
	}
	if len(parts) == 0 {
		return metric
	}
	return metric + "{" + strings.Join(parts, ",") + "}"
}

// query runs an instant query of a range selector at at (Prometheus's
// present when zero) and checks that its series come from one scrape
// target.
func (s *PrometheusSource) query(ctx context.Context, expr string, at time.Time) ([]benchreport.Series, error) {
	if s.err != nil {
		return nil, s.err
	}
	value, _, _, err := s.api.Query(ctx, expr, at)
	if err != nil {
		return nil, fmt.Errorf("querying Prometheus at %s for %s: %w", redact(s.base), expr, explain(err))
	}
	matrix, ok := value.(model.Matrix)
	if !ok {
		what := "nothing"
		if value != nil {
			what = "a " + value.Type().String()
		}
		return nil, fmt.Errorf("querying Prometheus at %s for %s: the answer is %s, not a matrix", redact(s.base), expr, what)
	}
	series := fromMatrix(matrix)
	if targets := targetsOf(series); len(targets) > 1 {
		if s.matchers == "" {
			return nil, fmt.Errorf("the Prometheus at %s has %s from %d scrape targets (%s): pass --prometheus.matchers to choose one, e.g. --prometheus.matchers='%s'",
				redact(s.base), expr, len(targets), strings.Join(targets, "; "), strings.TrimSuffix(strings.SplitN(targets[0], ",", 2)[0], ","))
		}
		return nil, fmt.Errorf("the Prometheus at %s has %s from %d scrape targets (%s) even with the matchers {%s}: make --prometheus.matchers pick one",
			redact(s.base), expr, len(targets), strings.Join(targets, "; "), s.matchers)
	}
	return series, nil
}

// explain adds to an error of the API client what the server sent with
// it: the client keeps the page of a proxy's refusal (a 502 from a
// reverse proxy, a login page) apart, and that page says what went wrong.
func explain(err error) error {
	var apiErr *v1.Error
	if !errors.As(err, &apiErr) {
		return err
	}
	detail := strings.Join(strings.Fields(apiErr.Detail), " ")
	if detail == "" {
		return err
	}
	if len(detail) > 300 {
		detail = detail[:300] + "..."
	}
	return fmt.Errorf("%w: %s", err, detail)
}

// targetsOf lists the distinct instance and job labels of series, sorted.
func targetsOf(series []benchreport.Series) []string {
	seen := map[string]bool{}
	for _, s := range series {
		var parts []string
		for _, l := range []string{"instance", "job"} {
			if v, ok := s.Labels[l]; ok {
				parts = append(parts, l+"="+strconv.Quote(v))
			}
		}
		seen[strings.Join(parts, ",")] = true
	}
	out := make([]string, 0, len(seen))
	for t := range seen {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// Fetch reads the samples of q, one query per family.
func (s *PrometheusSource) Fetch(ctx context.Context, q Query) ([]benchreport.Series, error) {
	if q.End.Before(q.Start) {
		return nil, fmt.Errorf("the end %v is before the start %v", q.End, q.Start)
	}
	secs := int64(math.Ceil((q.End.Sub(q.Start) + Lookback).Seconds()))
	var out []benchreport.Series
	for _, metric := range benchmetrics.Families {
		expr := fmt.Sprintf("%s[%ds]", s.selector(metric, q.Pool), secs)
		series, err := s.query(ctx, expr, q.End)
		if err != nil {
			return nil, err
		}
		for _, one := range series {
			if one.Metric == "" {
				one.Metric = metric
			}
			if one.Samples = trim(one.Samples, q.Start, q.End); one.Samples != nil {
				out = append(out, one)
			}
		}
	}
	if err := checkPool(out, q, nil); err != nil {
		return nil, fmt.Errorf("the Prometheus at %s: %w", redact(s.base), err)
	}
	return out, nil
}

// LatestReport is the newest I/O source time Prometheus has scraped.
func (s *PrometheusSource) LatestReport(ctx context.Context) (time.Time, error) {
	expr := fmt.Sprintf("%s[%ds]", s.selector(benchmetrics.SourceTime, ""), int64(Lookback.Seconds()))
	series, err := s.query(ctx, expr, time.Time{})
	if err != nil {
		return time.Time{}, err
	}
	if latest := newestReport(series); !latest.IsZero() {
		return latest, nil
	}
	return s.LatestSample(ctx)
}

// LatestSample reads the samples of the last Lookback at Prometheus's
// present time.
func (s *PrometheusSource) LatestSample(ctx context.Context) (time.Time, error) {
	expr := fmt.Sprintf("%s[%ds]", s.selector(LatestMetric, ""), int64(Lookback.Seconds()))
	series, err := s.query(ctx, expr, time.Time{})
	if err != nil {
		return time.Time{}, err
	}
	latest := newest(series)
	if latest.IsZero() {
		return time.Time{}, fmt.Errorf("the Prometheus at %s has no sample of %s in the last %v: %w (does it scrape the exporter? is the vdev_io collector on?)", redact(s.base), expr, Lookback, ErrNoSamples)
	}
	return latest, nil
}
