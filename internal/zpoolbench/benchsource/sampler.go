package benchsource

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// Sampler scrapes an exporter's /metrics every interval while a run goes
// on, and keeps what a report reads, as Prometheus would have stored it:
// the series of benchmetrics.Families, those of one pool among the
// per-pool ones, and the latency of that pool's row and top-level vdevs
// only (a leaf's latency histograms are most of its series, and a report
// reads none). Each sample is timed when its scrape began; a scrape that
// fails or times out leaves a gap, and is counted.
//
// It keeps about 16 bytes a sample for as long as it lives: one run.
type Sampler struct {
	exporter *Exporter
	pool     string
	interval time.Duration
	timeout  time.Duration
	now      func() time.Time

	mu       sync.Mutex
	streams  map[string]*model.SampleStream // by the series' labels, __name__ among them
	pools    map[string]bool                // every pool seen, kept or not
	scrapes  int
	failures int
	lastErr  error
}

// NewSampler samples pool's series from exporter every interval; a scrape
// may take timeout.
func NewSampler(exporter *Exporter, pool string, interval, timeout time.Duration) *Sampler {
	return &Sampler{exporter: exporter, pool: pool, interval: interval, timeout: timeout, now: time.Now,
		streams: map[string]*model.SampleStream{}, pools: map[string]bool{}}
}

var _ Source = (*Sampler)(nil)

// String is the exporter's, "exporter URL".
func (s *Sampler) String() string { return s.exporter.String() }

// Run scrapes at once, then every interval, until ctx ends. Scrapes do not
// overlap: one that takes longer than the interval delays the next.
func (s *Sampler) Run(ctx context.Context) {
	tick := time.NewTicker(s.interval)
	defer tick.Stop()
	for {
		_ = s.Scrape(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Scrape scrapes once and keeps the samples; it returns the scrape's
// error, which Failures counts. A scrape cut short by the end of ctx is
// not counted.
func (s *Sampler) Scrape(ctx context.Context) error {
	at := s.now()
	scrape, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	fams, err := s.exporter.Metrics(scrape)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.scrapes++
		s.failures++
		s.lastErr = err
		return err
	}
	// Timestamps in the exposition win, as in Prometheus; the exporter
	// sends none.
	samples, _ := expfmt.ExtractSamples(&expfmt.DecodeOptions{Timestamp: model.TimeFromUnixNano(at.UnixNano())}, s.pick(fams)...)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrapes++
	for _, sample := range samples {
		name := string(sample.Metric[model.MetricNameLabel])
		if !wanted[name] {
			continue
		}
		if pool, ok := sample.Metric["pool"]; ok && PerPool(name) {
			s.pools[string(pool)] = true
			if string(pool) != s.pool {
				continue
			}
		}
		// An empty label is no label, as Prometheus stores it.
		for label, value := range sample.Metric {
			if value == "" {
				delete(sample.Metric, label)
			}
		}
		key := sample.Metric.String()
		stream := s.streams[key]
		if stream == nil {
			stream = &model.SampleStream{Metric: sample.Metric}
			s.streams[key] = stream
		}
		// Out of order or again: Prometheus would refuse it too.
		if n := len(stream.Values); n > 0 && sample.Timestamp <= stream.Values[n-1].Timestamp {
			continue
		}
		stream.Values = append(stream.Values, model.SamplePair{Timestamp: sample.Timestamp, Value: sample.Value})
	}
	return nil
}

// wanted are the series names a report reads.
var wanted = func() map[string]bool {
	m := map[string]bool{}
	for _, name := range benchmetrics.Families {
		m[name] = true
	}
	return m
}()

// pick returns the families of a scrape a report reads, a histogram by
// the names of its series, with the latency of the pool's row and
// top-level vdevs only.
func (s *Sampler) pick(fams map[string]*dto.MetricFamily) []*dto.MetricFamily {
	all := make([]*dto.MetricFamily, 0, len(fams))
	for _, mf := range fams {
		all = append(all, mf)
	}
	selected := benchmetrics.TopLevelLatency(all)
	var out []*dto.MetricFamily
	for _, mf := range all {
		name := mf.GetName()
		histogram := mf.GetType() == dto.MetricType_HISTOGRAM || mf.GetType() == dto.MetricType_GAUGE_HISTOGRAM
		if !wanted[name] && !(histogram && (wanted[name+"_bucket"] || wanted[name+"_sum"] || wanted[name+"_count"])) {
			continue
		}
		if histogram && selected != nil {
			var kept []*dto.Metric
			for _, m := range mf.GetMetric() {
				if selected(name+"_bucket", m.GetLabel()) {
					kept = append(kept, m)
				}
			}
			mf.Metric = kept
		}
		out = append(out, mf)
	}
	return out
}

// Failures tells how many of the scrapes so far failed, and the last
// failure's error.
func (s *Sampler) Failures() (failed, scrapes int, last error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failures, s.scrapes, s.lastErr
}

// Fetch returns the samples of q: the series of q.Pool (the sampler's
// pool) and the host-wide ones, each from the last sample at or before
// q.Start to q.End.
func (s *Sampler) Fetch(_ context.Context, q Query) ([]benchreport.Series, error) {
	if q.End.Before(q.Start) {
		return nil, fmt.Errorf("the end %v is before the start %v", q.End, q.Start)
	}
	s.mu.Lock()
	matrix := make(model.Matrix, 0, len(s.streams))
	for _, stream := range s.streams {
		matrix = append(matrix, &model.SampleStream{Metric: stream.Metric, Values: stream.Values})
	}
	pools := make(map[string]bool, len(s.pools))
	for p := range s.pools {
		pools[p] = true
	}
	s.mu.Unlock()
	sort.Slice(matrix, func(i, j int) bool { return matrix[i].Metric.String() < matrix[j].Metric.String() })
	var out []benchreport.Series
	for _, series := range fromMatrix(matrix) {
		if q.Pool != "" && PerPool(series.Metric) && series.Labels["pool"] != q.Pool {
			continue
		}
		if series.Samples = trim(series.Samples, q.Start, q.End); series.Samples != nil {
			out = append(out, series)
		}
	}
	if err := checkPool(out, q, pools); err != nil {
		return nil, fmt.Errorf("the %s: %w", s.exporter, err)
	}
	return out, nil
}

// LatestSample is the time of the newest scrape that had the pool's
// LatestMetric.
func (s *Sampler) LatestSample(context.Context) (time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var latest model.Time
	for _, stream := range s.streams {
		if n := len(stream.Values); n > 0 && string(stream.Metric[model.MetricNameLabel]) == LatestMetric && stream.Values[n-1].Timestamp > latest {
			latest = stream.Values[n-1].Timestamp
		}
	}
	if latest != 0 {
		return latest.Time().UTC(), nil
	}
	switch {
	case s.scrapes == 0:
		return time.Time{}, fmt.Errorf("the %s: %w (no scrape has ended)", s.exporter, ErrNoSamples)
	case s.scrapes == s.failures:
		return time.Time{}, fmt.Errorf("the %s: %w: %w", s.exporter, ErrNoSamples, s.lastErr)
	}
	return time.Time{}, fmt.Errorf("the %s has no %s of pool %q%s: %w (is its vdev_io collector on? where zpool iostat gives the vdev I/O, its first report comes after --zpool.iostat-interval)",
		s.exporter, LatestMetric, s.pool, s.seenPools(), ErrNoSamples)
}

// seenPools says which pools the scrapes had, when not the sampler's.
func (s *Sampler) seenPools() string {
	if len(s.pools) == 0 || s.pools[s.pool] {
		return ""
	}
	names := make([]string, 0, len(s.pools))
	for p := range s.pools {
		names = append(names, strconv.Quote(p))
	}
	sort.Strings(names)
	return " (it has " + strings.Join(names, ", ") + ")"
}

// LatestReport is the newest time the I/O counters' source answered, as
// of the newest scrape; LatestSample where the exporter does not say.
func (s *Sampler) LatestReport(ctx context.Context) (time.Time, error) {
	s.mu.Lock()
	var matrix model.Matrix
	for _, stream := range s.streams {
		if n := len(stream.Values); n > 0 && string(stream.Metric[model.MetricNameLabel]) == benchmetrics.SourceTime {
			matrix = append(matrix, &model.SampleStream{Metric: stream.Metric, Values: stream.Values[n-1:]})
		}
	}
	s.mu.Unlock()
	if latest := newestReport(fromMatrix(matrix)); !latest.IsZero() {
		return latest, nil
	}
	return s.LatestSample(ctx)
}
