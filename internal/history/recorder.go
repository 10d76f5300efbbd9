// Package history keeps, in the exporter's memory, the raw samples of a
// few metric families taken during benchmark windows, so that a benchmark
// runner can compute its report from the exporter alone, without a
// Prometheus server.
//
// A Recorder reads the exporter's metrics every Interval, but only while a
// benchmark window runs and for a Tail after the last one ended: when no
// benchmark runs, it costs nothing. It also reads at once when a window
// starts or ends (Wake). What it keeps is bounded by a Retention, a total
// number of samples and a number of series. Handler serves the samples in
// the JSON of Prometheus's query API, as a range query's matrix holding
// raw samples, so that one client reads both.
package history

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// Defaults of a Recorder's Options.
const (
	DefaultInterval   = time.Second
	DefaultTail       = time.Minute
	DefaultRetention  = time.Hour
	DefaultMaxSamples = 2_000_000
	DefaultMaxSeries  = 20_000
	DefaultTimeout    = 10 * time.Second
)

// BytesPerSample is about what a kept sample costs in memory (a
// millisecond timestamp and a float64, with the slack of growing slices).
const BytesPerSample = 32

// GatherFunc takes one reading of the exporter's metrics under ctx and
// tells when it was taken. The exporter's is its shared gather
// (collector.Shared), which /metrics and the status page read too.
type GatherFunc func(ctx context.Context) (families []*dto.MetricFamily, at time.Time, err error)

// Options configure a Recorder.
type Options struct {
	// Gather reads the exporter's metrics; required.
	Gather GatherFunc
	// Metrics are the names of the families kept; others are dropped. A
	// histogram's are those of its series, as Prometheus names them:
	// NAME_bucket, NAME_sum and NAME_count, each kept on its own.
	Metrics []string
	// Select, when set, is given each reading and returns which of its
	// series of the kept families to keep; nil keeps them all. The
	// exporter keeps the latency histograms of pools and top-level vdevs
	// only, the ones a report reads.
	Select func(families []*dto.MetricFamily) func(metric string, labels []*dto.LabelPair) bool
	// Activity tells whether a benchmark window runs and when the last one
	// ended; required. The recorder reads while a window runs and for
	// Tail after the last end.
	Activity func() (active bool, lastEnd time.Time)
	// Interval between readings; DefaultInterval when not positive.
	Interval time.Duration
	// Tail is how long readings go on after the last window ended;
	// DefaultTail when not positive.
	Tail time.Duration
	// Retention is how long samples are kept; DefaultRetention when not
	// positive.
	Retention time.Duration
	// MaxSamples bounds the samples kept across all series, the oldest
	// readings going first; DefaultMaxSamples when not positive.
	MaxSamples int
	// MaxSeries bounds the series kept; new series beyond it are dropped.
	// DefaultMaxSeries when not positive, and at most MaxSamples.
	MaxSeries int
	// Timeout is the deadline of one reading; DefaultTimeout when not
	// positive.
	Timeout time.Duration
	// Now is the clock; time.Now when nil.
	Now    func() time.Time
	Logger *slog.Logger
}

// Sample is one value of a series.
type Sample struct {
	Time  time.Time
	Value float64
}

// Series is the samples of one series, in time order.
type Series struct {
	Metric  string
	Labels  map[string]string // without __name__
	Samples []Sample
}

// point is a sample as kept: milliseconds since the epoch.
type point struct {
	t int64
	v float64
}

type series struct {
	metric string
	labels map[string]string
	points []point // in time order
}

// reading is one gather's timestamp and the number of samples it added.
type reading struct {
	t int64
	n int
}

// Recorder samples the exporter's metrics during benchmark windows. It is
// safe for concurrent use.
type Recorder struct {
	opts   Options
	wanted map[string]bool
	wake   chan struct{}

	mu            sync.Mutex
	series        map[string]*series
	readings      []reading // oldest first
	total         int       // samples kept
	failures      uint64    // readings that failed
	droppedSeries uint64    // series not kept for MaxSeries, per reading
	warnedFailure bool
	warnedSeries  bool
}

// NewRecorder returns a recorder; Run makes it read.
func NewRecorder(opts Options) *Recorder {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Tail <= 0 {
		opts.Tail = DefaultTail
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.MaxSamples <= 0 {
		opts.MaxSamples = DefaultMaxSamples
	}
	if opts.MaxSeries <= 0 {
		opts.MaxSeries = DefaultMaxSeries
	}
	opts.MaxSeries = min(opts.MaxSeries, opts.MaxSamples)
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	wanted := map[string]bool{}
	for _, m := range opts.Metrics {
		wanted[m] = true
	}
	return &Recorder{opts: opts, wanted: wanted, wake: make(chan struct{}, 1), series: map[string]*series{}}
}

// Metrics are the names of the families the recorder keeps, sorted.
func (r *Recorder) Metrics() []string {
	out := make([]string, 0, len(r.wanted))
	for m := range r.wanted {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// Keeps tells whether the recorder keeps the family metric.
func (r *Recorder) Keeps(metric string) bool { return r.wanted[metric] }

// Wake makes Run read at once: call it when a window starts or ends. It
// never blocks.
func (r *Recorder) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Recording tells whether the recorder reads at now: a window runs, or
// the last one ended at most Tail ago.
func (r *Recorder) Recording(now time.Time) bool {
	active, lastEnd := r.opts.Activity()
	return active || (!lastEnd.IsZero() && now.Sub(lastEnd) <= r.opts.Tail)
}

// Run reads every Interval while Recording, and at once on Wake, until
// ctx ends. While not recording it only waits for Wake.
func (r *Recorder) Run(ctx context.Context) {
	var last time.Time // when the last reading began, by the real clock
	for {
		var tick <-chan time.Time
		var timer *time.Timer
		if r.Recording(r.opts.Now()) {
			timer = time.NewTimer(max(0, r.opts.Interval-time.Since(last)))
			tick = timer.C
		}
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-r.wake:
		case <-tick:
		}
		if timer != nil {
			timer.Stop()
		}
		last = time.Now()
		r.SampleOnce(ctx)
	}
}

// SampleOnce takes one reading now and keeps its samples. A reading that
// fails is counted and skipped; one that returns metrics with an error
// (some metrics were inconsistent) keeps what it got, as /metrics serves
// it.
func (r *Recorder) SampleOnce(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	families, at, err := r.opts.Gather(ctx)
	cancel()
	if err != nil && len(families) == 0 {
		r.mu.Lock()
		r.failures++
		warn := !r.warnedFailure
		r.warnedFailure = true
		r.mu.Unlock()
		if warn {
			r.opts.Logger.Warn("benchmark history: reading the metrics failed; the sample is skipped (later failures are logged at debug level)", "err", err)
		} else {
			r.opts.Logger.Debug("benchmark history: reading the metrics failed; the sample is skipped", "err", err)
		}
		return
	}
	if err != nil {
		r.opts.Logger.Debug("benchmark history: some metrics were inconsistent; keeping the rest", "err", err)
	}
	r.add(at, families)
}

// add keeps the wanted samples of one reading taken at at.
func (r *Recorder) add(at time.Time, families []*dto.MetricFamily) {
	t := at.UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	// Two readers joining one shared gather get the same time: keep one.
	if n := len(r.readings); n > 0 && t <= r.readings[n-1].t {
		return
	}
	added := 0
	var selected func(string, []*dto.LabelPair) bool
	if r.opts.Select != nil {
		selected = r.opts.Select(families)
	}
	var key strings.Builder
	keep := func(name string, labels []*dto.LabelPair, v float64) {
		if selected != nil && !selected(name, labels) {
			return
		}
		key.Reset()
		seriesKey(&key, name, labels)
		s := r.series[key.String()]
		if s == nil {
			if len(r.series) >= r.opts.MaxSeries {
				r.droppedSeries++
				if !r.warnedSeries {
					r.warnedSeries = true
					r.opts.Logger.Warn("benchmark history: series limit reached; new series are not kept", "max_series", r.opts.MaxSeries, "metric", name)
				}
				return
			}
			m := make(map[string]string, len(labels))
			for _, l := range labels {
				m[l.GetName()] = l.GetValue()
			}
			s = &series{metric: name, labels: m}
			r.series[key.String()] = s
		}
		s.points = append(s.points, point{t, v})
		added++
	}
	for _, mf := range families {
		name := mf.GetName()
		if isHistogram(mf.GetType()) {
			r.addHistograms(name, mf.GetMetric(), keep)
			continue
		}
		if !r.wanted[name] {
			continue
		}
		for _, m := range mf.GetMetric() {
			if v, ok := value(mf.GetType(), m); ok {
				keep(name, m.GetLabel(), v)
			}
		}
	}
	r.readings = append(r.readings, reading{t, added})
	r.total += added
	r.prune(t)
}

// prune drops the readings older than the retention as of now, then the
// oldest ones while over MaxSamples; r.mu is held. The newest reading
// always stays.
func (r *Recorder) prune(now int64) {
	oldest := now - r.opts.Retention.Milliseconds()
	drop := 0
	for drop < len(r.readings)-1 && (r.readings[drop].t < oldest || r.total > r.opts.MaxSamples) {
		r.total -= r.readings[drop].n
		drop++
	}
	if drop == 0 {
		return
	}
	r.readings = r.readings[drop:]
	keep := r.readings[0].t
	for k, s := range r.series {
		i, _ := slices.BinarySearchFunc(s.points, keep, func(p point, t int64) int { return cmpInt(p.t, t) })
		if i == len(s.points) {
			delete(r.series, k)
			continue
		}
		s.points = s.points[i:]
	}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func seriesKey(b *strings.Builder, name string, labels []*dto.LabelPair) {
	b.WriteString(name)
	sorted := labels
	if !slices.IsSortedFunc(labels, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) }) {
		sorted = slices.SortedFunc(slices.Values(labels), func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	}
	for _, l := range sorted {
		b.WriteByte(0xff)
		b.WriteString(l.GetName())
		b.WriteByte(0xfe)
		b.WriteString(l.GetValue())
	}
}

// isHistogram tells the families whose samples are histograms.
func isHistogram(t dto.MetricType) bool {
	return t == dto.MetricType_HISTOGRAM || t == dto.MetricType_GAUGE_HISTOGRAM
}

// addHistograms keeps the wanted series of a histogram family as
// Prometheus stores a scrape of them: NAME_bucket with an le label per
// bucket, +Inf included (the exposition's implicit last bucket, holding
// every sample), NAME_sum and NAME_count. A report takes their increase
// over a run, bucket by bucket, as histogram_quantile(increase(...)) does.
func (r *Recorder) addHistograms(name string, metrics []*dto.Metric, keep func(string, []*dto.LabelPair, float64)) {
	bucket, sum, count := name+"_bucket", name+"_sum", name+"_count"
	if !r.wanted[bucket] && !r.wanted[sum] && !r.wanted[count] {
		return
	}
	le := model.BucketLabel
	for _, m := range metrics {
		h := m.GetHistogram()
		if h == nil {
			continue
		}
		total := h.GetSampleCountFloat()
		if total == 0 {
			total = float64(h.GetSampleCount())
		}
		if r.wanted[bucket] {
			labels := make([]*dto.LabelPair, len(m.GetLabel()), len(m.GetLabel())+1)
			copy(labels, m.GetLabel())
			labels = append(labels, nil)
			infSeen := false
			for _, b := range h.GetBucket() {
				v := b.GetCumulativeCountFloat()
				if v == 0 {
					v = float64(b.GetCumulativeCount())
				}
				bound := b.GetUpperBound()
				infSeen = infSeen || math.IsInf(bound, +1)
				labels[len(labels)-1] = &dto.LabelPair{Name: &le, Value: proto.String(formatBound(bound))}
				keep(bucket, labels, v)
			}
			if !infSeen {
				labels[len(labels)-1] = &dto.LabelPair{Name: &le, Value: proto.String(formatBound(math.Inf(+1)))}
				keep(bucket, labels, total)
			}
		}
		if r.wanted[sum] {
			keep(sum, m.GetLabel(), h.GetSampleSum())
		}
		if r.wanted[count] {
			keep(count, m.GetLabel(), total)
		}
	}
}

// formatBound writes a bucket's upper bound as the text exposition does,
// so that the history's le labels are those of /metrics: "0.001048575",
// "1.023e-06", "+Inf".
func formatBound(f float64) string {
	if math.IsInf(f, +1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// value is a sample's value; summaries are not kept, and histograms are
// kept by addHistograms.
func value(t dto.MetricType, m *dto.Metric) (float64, bool) {
	switch t {
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue(), m.Counter != nil
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), m.Gauge != nil
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), m.Untyped != nil
	}
	return 0, false
}

// Query returns the series of metric with the last sample at or before
// start and every sample after it up to end, sorted by labels. Series
// without such samples are left out.
func (r *Recorder) Query(metric string, start, end time.Time) []Series {
	from, to := start.UnixMilli(), end.UnixMilli()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prune(r.opts.Now().UnixMilli())
	var out []Series
	for _, s := range r.series {
		if s.metric != metric {
			continue
		}
		// The first sample after start, then one back.
		i := sort.Search(len(s.points), func(i int) bool { return s.points[i].t > from })
		i = max(0, i-1)
		j := sort.Search(len(s.points), func(j int) bool { return s.points[j].t > to })
		if i >= j {
			continue
		}
		samples := make([]Sample, 0, j-i)
		for _, p := range s.points[i:j] {
			samples = append(samples, Sample{time.UnixMilli(p.t).UTC(), p.v})
		}
		out = append(out, Series{Metric: s.metric, Labels: maps.Clone(s.labels), Samples: samples})
	}
	sort.Slice(out, func(a, b int) bool { return labelString(out[a].Labels) < labelString(out[b].Labels) })
	return out
}

func labelString(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, m[k])
	}
	return b.String()
}

// Stats are what a recorder holds and what it dropped.
type Stats struct {
	Series, Samples, Readings int
	Failures                  uint64 // readings that failed
	DroppedSeries             uint64 // series left out for MaxSeries, counted per reading
}

// Stats tells what the recorder holds.
func (r *Recorder) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Series: len(r.series), Samples: r.total, Readings: len(r.readings), Failures: r.failures, DroppedSeries: r.droppedSeries}
}
