package history

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"
)

var t0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// clock is a fake clock that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// windows is a fake benchmark window store.
type windows struct {
	mu      sync.Mutex
	active  bool
	lastEnd time.Time
}

func (w *windows) Activity() (bool, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.active, w.lastEnd
}

func (w *windows) set(active bool, lastEnd time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.active, w.lastEnd = active, lastEnd
}

// m is one sample of a fake exposition: labels as name, value pairs.
type m struct {
	labels []string
	value  float64
}

func family(name string, typ dto.MetricType, ms ...m) *dto.MetricFamily {
	mf := &dto.MetricFamily{Name: proto.String(name), Type: typ.Enum()}
	for _, s := range ms {
		metric := &dto.Metric{}
		for i := 0; i+1 < len(s.labels); i += 2 {
			metric.Label = append(metric.Label, &dto.LabelPair{Name: proto.String(s.labels[i]), Value: proto.String(s.labels[i+1])})
		}
		switch typ {
		case dto.MetricType_COUNTER:
			metric.Counter = &dto.Counter{Value: proto.Float64(s.value)}
		case dto.MetricType_GAUGE:
			metric.Gauge = &dto.Gauge{Value: proto.Float64(s.value)}
		case dto.MetricType_UNTYPED:
			metric.Untyped = &dto.Untyped{Value: proto.Float64(s.value)}
		case dto.MetricType_HISTOGRAM:
			metric.Histogram = &dto.Histogram{SampleCount: proto.Uint64(1), SampleSum: proto.Float64(s.value)}
		}
		mf.Metric = append(mf.Metric, metric)
	}
	return mf
}

// fakeExporter answers gathers with counters that grow by step per reading.
type fakeExporter struct {
	clock *clock
	mu    sync.Mutex
	n     int
	times []time.Time
	err   error
	vdevs []string
}

func (f *fakeExporter) Gather(ctx context.Context) ([]*dto.MetricFamily, time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.clock != nil {
		now = f.clock.Now()
	}
	f.times = append(f.times, now)
	if f.err != nil {
		return nil, now, f.err
	}
	f.n++
	vdevs := f.vdevs
	if vdevs == nil {
		vdevs = []string{"tank", "mirror-0"}
	}
	var writes []m
	for i, v := range vdevs {
		writes = append(writes, m{[]string{"pool", "tank", "vdev", v}, float64(f.n * 1000 * (i + 1))})
	}
	return []*dto.MetricFamily{
		family("zfs_vdev_write_bytes_total", dto.MetricType_COUNTER, writes...),
		family("zfs_pool_state", dto.MetricType_GAUGE, m{[]string{"pool", "tank", "state", "online"}, 1}, m{[]string{"pool", "tank", "state", "degraded"}, 0}),
		family("zfs_host_cpu_seconds_total", dto.MetricType_UNTYPED, m{[]string{"mode", "user"}, float64(f.n) / 2}),
		family("zfs_pool_size_bytes", dto.MetricType_GAUGE, m{[]string{"pool", "tank"}, 1e9}),
		family("zfs_vdev_write_bytes_total_histogram", dto.MetricType_HISTOGRAM, m{nil, 1}),
		family("zfs_scrape_histogram", dto.MetricType_HISTOGRAM, m{nil, 1}),
	}, now, nil
}

func (f *fakeExporter) calls() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Time(nil), f.times...)
}

var kept = []string{"zfs_vdev_write_bytes_total", "zfs_pool_state", "zfs_host_cpu_seconds_total", "zfs_scrape_histogram"}

func newTestRecorder(c *clock, f *fakeExporter, w *windows, opts Options) *Recorder {
	opts.Gather = f.Gather
	opts.Metrics = kept
	opts.Activity = w.Activity
	opts.Now = c.Now
	return NewRecorder(opts)
}

// Recording is true while a window runs and for the tail after the last
// one ended, and never before any window.
func TestRecordingOnlyDuringWindowsAndTail(t *testing.T) {
	c, w := &clock{now: t0}, &windows{}
	r := newTestRecorder(c, &fakeExporter{clock: c}, w, Options{Tail: time.Minute})
	for _, tc := range []struct {
		what    string
		active  bool
		lastEnd time.Time
		now     time.Time
		want    bool
	}{
		{"no window ever", false, time.Time{}, t0, false},
		{"a window runs", true, time.Time{}, t0, true},
		{"a window runs, an older one ended long ago", true, t0.Add(-time.Hour), t0, true},
		{"just ended", false, t0, t0, true},
		{"ended 59 s ago", false, t0, t0.Add(59 * time.Second), true},
		{"ended a minute ago", false, t0, t0.Add(time.Minute), true},
		{"ended a minute and a millisecond ago", false, t0, t0.Add(time.Minute + time.Millisecond), false},
		{"ended an hour ago", false, t0, t0.Add(time.Hour), false},
	} {
		w.set(tc.active, tc.lastEnd)
		if got := r.Recording(tc.now); got != tc.want {
			t.Errorf("%s: Recording = %v, want %v", tc.what, got, tc.want)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// Run reads nothing while no window runs, reads at once when woken (the
// interval here is an hour, so no timer could have done it), and reads
// again at once when the window ends.
func TestRunReadsAtOnceOnWake(t *testing.T) {
	f, w := &fakeExporter{}, &windows{}
	r := NewRecorder(Options{Gather: f.Gather, Metrics: kept, Activity: w.Activity, Interval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	time.Sleep(50 * time.Millisecond)
	if n := len(f.calls()); n != 0 {
		t.Fatalf("%d readings with no window, want none", n)
	}
	w.set(true, time.Time{})
	r.Wake()
	waitFor(t, "the reading at the window's start", func() bool { return len(f.calls()) == 1 })
	time.Sleep(50 * time.Millisecond)
	if n := len(f.calls()); n != 1 {
		t.Fatalf("%d readings within 50 ms of the start with a 1 h interval, want 1", n)
	}
	w.set(false, time.Now())
	r.Wake()
	waitFor(t, "the reading at the window's end", func() bool { return len(f.calls()) == 2 })
	if s := r.Stats(); s.Readings != 2 {
		t.Errorf("kept %d readings, want 2", s.Readings)
	}
}

// Run reads every interval while a window runs and through the tail, then
// stops by itself.
func TestRunStopsAfterTail(t *testing.T) {
	f, w := &fakeExporter{}, &windows{}
	const interval, tail = 20 * time.Millisecond, 200 * time.Millisecond
	r := NewRecorder(Options{Gather: f.Gather, Metrics: kept, Activity: w.Activity, Interval: interval, Tail: tail})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	began := time.Now()
	w.set(true, time.Time{})
	r.Wake()
	time.Sleep(300 * time.Millisecond)
	during := len(f.calls())
	// 15 intervals; a loaded machine may lose some.
	if during < 5 || during > 17 {
		t.Errorf("%d readings in 300 ms at a 20 ms interval, want about 15", during)
	}
	ended := time.Now()
	w.set(false, ended)
	r.Wake()
	time.Sleep(tail + 200*time.Millisecond)
	after := f.calls()
	time.Sleep(200 * time.Millisecond)
	if n := len(f.calls()); n != len(after) {
		t.Errorf("%d readings after the tail, want none", n-len(after))
	}
	if len(after)-during < 5 {
		t.Errorf("%d readings during the 200 ms tail, want about 10", len(after)-during)
	}
	last := after[len(after)-1]
	if last.Before(ended.Add(tail-3*interval)) || last.After(ended.Add(tail+3*interval)) {
		t.Errorf("last reading %v after the end, want about the tail of %v", last.Sub(ended), tail)
	}
	if first := after[0]; first.Sub(began) > 10*time.Millisecond {
		t.Errorf("first reading %v after the wake, want at once", first.Sub(began))
	}
}

// Only the named families are kept, a histogram only by the names of its
// series; each sample has the time of its reading; counters, gauges and
// untyped values are read.
func TestKeepsNamedFamiliesAtReadingTimes(t *testing.T) {
	c, f, w := &clock{now: t0}, &fakeExporter{}, &windows{}
	f.clock = c
	r := newTestRecorder(c, f, w, Options{})
	for i := range 3 {
		c.Set(t0.Add(time.Duration(i)*time.Second + 123*time.Millisecond))
		r.SampleOnce(t.Context())
	}
	s := r.Stats()
	// 2 vdevs + 2 pool states + 1 cpu mode.
	if s.Series != 5 || s.Samples != 15 || s.Readings != 3 {
		t.Errorf("stats %+v, want 5 series, 15 samples, 3 readings", s)
	}
	if got := r.Query("zfs_pool_size_bytes", t0, t0.Add(time.Hour)); len(got) != 0 {
		t.Errorf("kept an unnamed family: %+v", got)
	}
	if got := r.Query("zfs_scrape_histogram", t0, t0.Add(time.Hour)); len(got) != 0 {
		t.Errorf("kept a histogram by its family's name, which names no series: %+v", got)
	}
	got := r.Query("zfs_vdev_write_bytes_total", t0, t0.Add(time.Hour))
	if len(got) != 2 {
		t.Fatalf("zfs_vdev_write_bytes_total: %d series, want 2", len(got))
	}
	// Sorted by labels: mirror-0 before tank.
	if got[0].Labels["vdev"] != "mirror-0" || got[0].Labels["pool"] != "tank" || len(got[0].Labels) != 2 || got[0].Metric != "zfs_vdev_write_bytes_total" {
		t.Errorf("first series %s %v, want the mirror-0 vdev of tank", got[0].Metric, got[0].Labels)
	}
	for i, p := range got[1].Samples {
		want := Sample{t0.Add(time.Duration(i)*time.Second + 123*time.Millisecond), float64((i + 1) * 1000)}
		if !p.Time.Equal(want.Time) || p.Value != want.Value {
			t.Errorf("tank sample %d = %v %v, want %v %v", i, p.Time, p.Value, want.Time, want.Value)
		}
	}
	cpu := r.Query("zfs_host_cpu_seconds_total", t0, t0.Add(time.Hour))
	if len(cpu) != 1 || len(cpu[0].Samples) != 3 || cpu[0].Samples[2].Value != 1.5 {
		t.Errorf("untyped cpu series %+v, want 3 samples ending at 1.5", cpu)
	}
	states := r.Query("zfs_pool_state", t0, t0.Add(time.Hour))
	if len(states) != 2 || states[1].Labels["state"] != "online" || states[1].Samples[0].Value != 1 {
		t.Errorf("pool state series %+v", states)
	}
}

// A query gives the last sample at or before start, then every sample up
// to end; a series with nothing there is left out.
func TestQueryWindow(t *testing.T) {
	c, f, w := &clock{now: t0}, &fakeExporter{}, &windows{}
	f.clock = c
	r := newTestRecorder(c, f, w, Options{})
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	for _, s := range []int{0, 10, 20, 30, 40} {
		c.Set(at(s))
		if s == 40 {
			f.vdevs = []string{"tank"} // mirror-0 disappears
		}
		r.SampleOnce(t.Context())
	}
	times := func(ss []Sample) []int {
		var out []int
		for _, s := range ss {
			out = append(out, int(s.Time.Sub(t0)/time.Second))
		}
		return out
	}
	for _, tc := range []struct {
		start, end int
		want       string // per series, mirror-0 then tank
	}{
		{15, 35, "[[10 20 30] [10 20 30]]"}, // 10 is the last before 15
		{20, 30, "[[20 30] [20 30]]"},       // 20 is at start
		{-5, 5, "[[0] [0]]"},                // nothing before: start with the first
		{35, 100, "[[30] [30 40]]"},         // mirror-0 stopped at 30
		{41, 50, "[[30] [40]]"},             // only the last before start
		{-10, -5, "[]"},                     // before every sample
	} {
		var got [][]int
		for _, s := range r.Query("zfs_vdev_write_bytes_total", at(tc.start), at(tc.end)) {
			got = append(got, times(s.Samples))
		}
		if s := fmt.Sprint(got); s != tc.want && !(tc.want == "[]" && got == nil) {
			t.Errorf("query [%d, %d]: samples at %s, want %s", tc.start, tc.end, s, tc.want)
		}
	}
}

// Samples older than the retention go, and then the oldest readings while
// over the sample budget; a series beyond the series limit is not kept;
// a series whose samples all went is forgotten.
func TestBounds(t *testing.T) {
	t.Run("retention", func(t *testing.T) {
		c, f, w := &clock{now: t0}, &fakeExporter{}, &windows{}
		f.clock = c
		r := newTestRecorder(c, f, w, Options{Retention: time.Minute})
		for s := range 150 {
			c.Set(t0.Add(time.Duration(s) * time.Second))
			r.SampleOnce(t.Context())
		}
		st := r.Stats()
		if st.Readings != 61 || st.Samples != 61*5 {
			t.Errorf("%+v after 150 s of readings with a 1 min retention; want 61 readings, 305 samples", st)
		}
		got := r.Query("zfs_vdev_write_bytes_total", t0, t0.Add(time.Hour))
		if len(got) != 2 || !got[0].Samples[0].Time.Equal(t0.Add(89*time.Second)) {
			t.Errorf("oldest sample kept %v, want 89 s in", got[0].Samples[0].Time.Sub(t0))
		}
		// A query after a long quiet time drops what aged out, except the
		// newest reading.
		c.Set(t0.Add(time.Hour))
		got = r.Query("zfs_vdev_write_bytes_total", t0, t0.Add(2*time.Hour))
		if st := r.Stats(); st.Readings != 1 || len(got) != 2 || len(got[0].Samples) != 1 {
			t.Errorf("an hour later: %+v, %d series; want the newest reading only", st, len(got))
		}
	})
	t.Run("samples", func(t *testing.T) {
		c, f, w := &clock{now: t0}, &fakeExporter{}, &windows{}
		f.clock = c
		r := newTestRecorder(c, f, w, Options{MaxSamples: 12})
		for s := range 10 {
			c.Set(t0.Add(time.Duration(s) * time.Second))
			r.SampleOnce(t.Context())
		}
		// 5 samples a reading: two readings fit in 12.
		st := r.Stats()
		if st.Samples != 10 || st.Readings != 2 {
			t.Errorf("%+v with a budget of 12 samples; want 10 samples in 2 readings", st)
		}
		got := r.Query("zfs_host_cpu_seconds_total", t0, t0.Add(time.Hour))
		if len(got) != 1 || len(got[0].Samples) != 2 || !got[0].Samples[0].Time.Equal(t0.Add(8*time.Second)) {
			t.Errorf("kept %+v, want the readings at 8 and 9 s", got)
		}
	})
	t.Run("series", func(t *testing.T) {
		c, f, w := &clock{now: t0}, &fakeExporter{}, &windows{}
		f.clock = c
		r := newTestRecorder(c, f, w, Options{MaxSeries: 3})
		for s := range 4 {
			c.Set(t0.Add(time.Duration(s) * time.Second))
			r.SampleOnce(t.Context())
		}
		st := r.Stats()
		if st.Series != 3 || st.Samples != 12 || st.DroppedSeries != 8 {
			t.Errorf("%+v with at most 3 series; want 3 series, 12 samples, 2 series dropped in each of 4 readings", st)
		}
	})
	t.Run("vanished series", func(t *testing.T) {
		c, f, w := &clock{now: t0}, &fakeExporter{}, &windows{}
		f.clock = c
		r := newTestRecorder(c, f, w, Options{Retention: 10 * time.Second})
		for s := range 30 {
			if s == 5 {
				f.vdevs = []string{"tank"}
			}
			c.Set(t0.Add(time.Duration(s) * time.Second))
			r.SampleOnce(t.Context())
		}
		if st := r.Stats(); st.Series != 4 {
			t.Errorf("%+v; want 4 series once mirror-0's samples aged out", st)
		}
	})
}

// A failed reading is counted and keeps nothing; a reading with the time
// of the last one (two readers shared one gather) is kept once.
func TestFailedAndRepeatedReadings(t *testing.T) {
	c, f, w := &clock{now: t0}, &fakeExporter{}, &windows{}
	f.clock = c
	r := newTestRecorder(c, f, w, Options{})
	f.err = errors.New("no")
	r.SampleOnce(t.Context())
	r.SampleOnce(t.Context())
	if st := r.Stats(); st.Failures != 2 || st.Readings != 0 || st.Samples != 0 {
		t.Errorf("after two failed readings: %+v", st)
	}
	f.err = nil
	r.SampleOnce(t.Context())
	r.SampleOnce(t.Context()) // same clock time
	if st := r.Stats(); st.Failures != 2 || st.Readings != 1 || st.Samples != 5 {
		t.Errorf("after two readings at one time: %+v; want one kept", st)
	}
}

// histogram is a histogram family of one series per labels, holding
// counts (cumulative, at bounds) and sum, as a ConstHistogram gathers: no
// +Inf bucket, whose count is the sample count.
func histogram(name string, labels []string, bounds []float64, counts []uint64, total uint64, sum float64) *dto.MetricFamily {
	h := &dto.Histogram{SampleCount: proto.Uint64(total), SampleSum: proto.Float64(sum)}
	for i, b := range bounds {
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(counts[i])})
	}
	metric := &dto.Metric{Histogram: h}
	for i := 0; i+1 < len(labels); i += 2 {
		metric.Label = append(metric.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(labels[i+1])})
	}
	return &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_HISTOGRAM.Enum(), Metric: []*dto.Metric{metric}}
}

// A histogram is kept as Prometheus stores it: a _bucket series per bound
// with its le label as /metrics writes it, the implicit +Inf bucket
// holding every sample, _sum and _count; only the series named are kept.
func TestKeepsHistogramsAsPrometheusStoresThem(t *testing.T) {
	c, w := &clock{now: t0}, &windows{}
	n := uint64(0)
	r := NewRecorder(Options{
		Metrics: []string{"zfs_vdev_disk_wait_seconds_bucket", "zfs_vdev_disk_wait_seconds_count", "zfs_vdev_total_wait_seconds_sum"},
		Gather: func(context.Context) ([]*dto.MetricFamily, time.Time, error) {
			n++
			labels := []string{"pool", "tank", "type", "write", "vdev", "tank"}
			bounds := []float64{1.023e-06, 0.001048575, 1}
			return []*dto.MetricFamily{
				histogram("zfs_vdev_disk_wait_seconds", labels, bounds, []uint64{0, 10 * n, 12 * n}, 13*n, 0.5*float64(n)),
				histogram("zfs_vdev_total_wait_seconds", labels, bounds, []uint64{0, 8 * n, 12 * n}, 13*n, 0.75*float64(n)),
			}, c.Now(), nil
		},
		Activity: w.Activity, Now: c.Now,
	})
	for i := range 2 {
		c.Set(t0.Add(time.Duration(i) * time.Second))
		r.SampleOnce(t.Context())
	}
	buckets := r.Query("zfs_vdev_disk_wait_seconds_bucket", t0, t0.Add(time.Minute))
	var got []string
	for _, s := range buckets {
		var values []string
		for _, p := range s.Samples {
			values = append(values, fmt.Sprint(p.Value))
		}
		got = append(got, fmt.Sprintf("%s %v %v", s.Metric, s.Labels, values))
	}
	// Sorted by labels, the le values as text: +Inf first.
	want := []string{
		"zfs_vdev_disk_wait_seconds_bucket map[le:+Inf pool:tank type:write vdev:tank] [13 26]",
		"zfs_vdev_disk_wait_seconds_bucket map[le:0.001048575 pool:tank type:write vdev:tank] [10 20]",
		"zfs_vdev_disk_wait_seconds_bucket map[le:1 pool:tank type:write vdev:tank] [12 24]",
		"zfs_vdev_disk_wait_seconds_bucket map[le:1.023e-06 pool:tank type:write vdev:tank] [0 0]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("buckets:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	count := r.Query("zfs_vdev_disk_wait_seconds_count", t0, t0.Add(time.Minute))
	if len(count) != 1 || len(count[0].Samples) != 2 || count[0].Samples[1].Value != 26 || count[0].Labels["le"] != "" {
		t.Errorf("disk wait count %+v, want 13 then 26, without le", count)
	}
	sum := r.Query("zfs_vdev_total_wait_seconds_sum", t0, t0.Add(time.Minute))
	if len(sum) != 1 || sum[0].Samples[1].Value != 1.5 {
		t.Errorf("total wait sum %+v, want 0.75 then 1.5", sum)
	}
	for _, unnamed := range []string{"zfs_vdev_disk_wait_seconds_sum", "zfs_vdev_total_wait_seconds_bucket", "zfs_vdev_total_wait_seconds_count"} {
		if got := r.Query(unnamed, t0, t0.Add(time.Minute)); len(got) != 0 {
			t.Errorf("kept %s, which was not named: %+v", unnamed, got)
		}
	}
	// 4 buckets and a count of disk wait, a sum of total wait.
	if s := r.Stats(); s.Series != 6 || s.Samples != 12 {
		t.Errorf("stats %+v, want 6 series and 12 samples", s)
	}
}

// A histogram parsed from a text exposition lists its +Inf bucket: it is
// kept once, with its own count.
func TestHistogramWithItsInfBucket(t *testing.T) {
	c, w := &clock{now: t0}, &windows{}
	r := NewRecorder(Options{
		Metrics: []string{"h_bucket"},
		Gather: func(context.Context) ([]*dto.MetricFamily, time.Time, error) {
			mf := histogram("h", nil, []float64{0.5, math.Inf(+1)}, []uint64{3, 7}, 9, 1)
			return []*dto.MetricFamily{mf}, c.Now(), nil
		},
		Activity: w.Activity, Now: c.Now,
	})
	r.SampleOnce(t.Context())
	got := r.Query("h_bucket", t0, t0)
	if len(got) != 2 || got[0].Labels["le"] != "+Inf" || got[0].Samples[0].Value != 7 || got[1].Labels["le"] != "0.5" {
		t.Errorf("buckets %+v, want 0.5 and the listed +Inf bucket, at 7", got)
	}
}

// Select is asked with each reading, and the series it refuses are not
// kept: the exporter keeps the latency of pools and top-level vdevs only.
func TestSelectChoosesSeriesByReading(t *testing.T) {
	c, w := &clock{now: t0}, &windows{}
	bounds := []float64{0.001, 1}
	var asked int
	r := NewRecorder(Options{
		Metrics: []string{"zfs_vdev_disk_wait_seconds_bucket", "zfs_vdev_disk_wait_seconds_count"},
		Gather: func(context.Context) ([]*dto.MetricFamily, time.Time, error) {
			return []*dto.MetricFamily{
				histogram("zfs_vdev_disk_wait_seconds", []string{"pool", "tank", "vdev", "tank"}, bounds, []uint64{1, 2}, 3, 0.1),
				histogram("zfs_vdev_disk_wait_seconds", []string{"pool", "tank", "vdev", "sda"}, bounds, []uint64{1, 2}, 3, 0.1),
			}, c.Now(), nil
		},
		Select: func(families []*dto.MetricFamily) func(string, []*dto.LabelPair) bool {
			asked++
			if len(families) != 2 {
				t.Errorf("Select was given %d families, want the reading's two", len(families))
			}
			return func(metric string, labels []*dto.LabelPair) bool {
				for _, l := range labels {
					if l.GetName() == "vdev" {
						return l.GetValue() != "sda" || metric == "zfs_vdev_disk_wait_seconds_count"
					}
				}
				return true
			}
		},
		Activity: w.Activity, Now: c.Now,
	})
	for i := range 2 {
		c.Set(t0.Add(time.Duration(i) * time.Second))
		r.SampleOnce(t.Context())
	}
	if asked != 2 {
		t.Errorf("Select asked %d times, want once per reading", asked)
	}
	for _, s := range r.Query("zfs_vdev_disk_wait_seconds_bucket", t0, t0.Add(time.Minute)) {
		if s.Labels["vdev"] != "tank" {
			t.Errorf("kept %s %v, which Select refused", s.Metric, s.Labels)
		}
	}
	if got := r.Query("zfs_vdev_disk_wait_seconds_count", t0, t0.Add(time.Minute)); len(got) != 2 {
		t.Errorf("%d count series, want both vdevs'", len(got))
	}
	// 3 buckets (+Inf included) and a count of tank, a count of sda.
	if s := r.Stats(); s.Series != 5 {
		t.Errorf("stats %+v, want 5 series", s)
	}
}
