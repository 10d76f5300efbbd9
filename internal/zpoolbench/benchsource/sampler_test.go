package benchsource

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"google.golang.org/protobuf/proto"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/replaytest"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// fakeExporter serves, at /metrics, the exposition the test set last. A
// scrape while hang is set waits until its client gives up.
type fakeExporter struct {
	mu       sync.Mutex
	page     string
	hang     bool
	requests []*http.Request
}

func (f *fakeExporter) set(page string, hang bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.page, f.hang = page, hang
}

func (f *fakeExporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	page, hang := f.page, f.hang
	f.requests = append(f.requests, r)
	f.mu.Unlock()
	if r.URL.Path != "/metrics" {
		http.NotFound(w, r)
		return
	}
	if hang {
		<-r.Context().Done()
		return
	}
	_, _ = fmt.Fprint(w, page)
}

// serve starts f and a sampler of pool tank over it, on a clock the test
// sets.
func (f *fakeExporter) serve(t *testing.T, timeout time.Duration) (*Sampler, *time.Time) {
	t.Helper()
	server := httptest.NewServer(f)
	t.Cleanup(server.Close)
	now := new(time.Time)
	s := NewSampler(NewExporter(server.URL, nil), "tank", time.Second, timeout)
	s.now = func() time.Time { return *now }
	return s, now
}

// written is what pool tank has written t seconds after the start: 10 MB
// a second for 5 s, then 30 MB a second for 5 s, then nothing.
func written(t float64) float64 {
	return 100e6 + 10e6*min(t, 5) + 30e6*max(0, min(t, 10)-5)
}

// tankExposition is a scrape t seconds after the start: tank's write
// counters, its tree, a pool that is not benchmarked, a family no report
// reads, and the host's CPU.
func tankExposition(t float64) string {
	return fmt.Sprintf(`# TYPE zfs_vdev_write_bytes_total counter
zfs_vdev_write_bytes_total{pool="tank",vdev="tank"} %[1]g
zfs_vdev_write_bytes_total{pool="tank",vdev="sda"} %[1]g
zfs_vdev_write_bytes_total{pool="backup",vdev="backup"} 5
# TYPE zfs_vdev_info gauge
zfs_vdev_info{class="normal",guid="1",parent="",path="",pool="tank",vdev="tank",vdev_type="root"} 1
zfs_vdev_info{class="normal",guid="2",parent="tank",path="/dev/sda",pool="tank",vdev="sda",vdev_type="disk"} 1
zfs_vdev_info{class="normal",guid="3",parent="",path="",pool="backup",vdev="backup",vdev_type="root"} 1
# TYPE zfs_pool_size_bytes gauge
zfs_pool_size_bytes{pool="tank"} 1e+09
# TYPE zfs_host_cpu_seconds_total counter
zfs_host_cpu_seconds_total{mode="user"} %[2]g
`, written(t), 1000+t)
}

// The scrapes of a 10 s run, a second apart from a second before its
// start to a second after its end, one of them timing out, become the
// series Prometheus would have stored, and they the report's figures:
// the bytes written over the run, its average and its peak, and an
// interval of two seconds where the scrape failed.
func TestSamplerSeriesMakeTheReport(t *testing.T) {
	f := &fakeExporter{}
	s, now := f.serve(t, 200*time.Millisecond)
	run := benchreport.Run{Name: "dd", Pool: "tank", Start: start, End: start.Add(10 * time.Second)}
	for sec := -1; sec <= 11; sec++ {
		*now = start.Add(time.Duration(sec) * time.Second)
		f.set(tankExposition(float64(sec)), sec == 4)
		err := s.Scrape(t.Context())
		if (err != nil) != (sec == 4) {
			t.Errorf("scrape at %d s: %v", sec, err)
		}
	}
	failed, scrapes, last := s.Failures()
	if failed != 1 || scrapes != 13 || !errors.Is(last, context.DeadlineExceeded) {
		t.Errorf("Failures() = %d of %d, last %v; want the one that timed out of 13", failed, scrapes, last)
	}

	series, err := s.Fetch(t.Context(), Query{Pool: "tank", Start: run.Start, End: run.End.Add(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, one := range series {
		var times []string
		for _, p := range one.Samples {
			times = append(times, strconv.Itoa(int(p.Time.Sub(start)/time.Second)))
		}
		got = append(got, fmt.Sprintf("%s %v [%s]", one.Metric, one.Labels, strings.Join(times, " ")))
	}
	every := "0 1 2 3 5 6 7 8 9 10 11"
	want := []string{
		"zfs_host_cpu_seconds_total map[mode:user] [" + every + "]",
		"zfs_vdev_info map[class:normal guid:1 pool:tank vdev:tank vdev_type:root] [" + every + "]",
		"zfs_vdev_info map[class:normal guid:2 parent:tank path:/dev/sda pool:tank vdev:sda vdev_type:disk] [" + every + "]",
		"zfs_vdev_write_bytes_total map[pool:tank vdev:sda] [" + every + "]",
		"zfs_vdev_write_bytes_total map[pool:tank vdev:tank] [" + every + "]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("series:\n%s\nwant, from the scrape at the start, without the one at 4 s:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	r, err := benchreport.Compute(run, series)
	if err != nil {
		t.Fatal(err)
	}
	w := r.Pool.WriteBytes
	if w.Increase != 200e6 || w.PerSecond != 20e6 || w.PeakPerSecond != 30e6 {
		t.Errorf("pool writes: %.0f bytes, %.0f/s, peak %.0f/s; want 200 MB over the run, 20 MB/s, a peak of 30 MB/s", w.Increase, w.PerSecond, w.PeakPerSecond)
	}
	var gap []benchreport.Rate
	for _, rate := range r.Timeline.Pool.Write {
		if rate.To-rate.From != 1 {
			gap = append(gap, rate)
		}
	}
	if len(gap) != 1 || gap[0].From != 3 || gap[0].To != 5 || gap[0].PerSecond != 10e6 {
		t.Errorf("intervals of the timeline other than a second: %+v; want the gap from 3 s to 5 s at 10 MB/s", gap)
	}
	if len(r.Vdevs) != 1 || r.Vdevs[0].Name != "sda" || r.Vdevs[0].WriteBytes.Increase != 200e6 {
		t.Errorf("vdevs %+v, want sda with the pool's writes", r.Vdevs)
	}

	if latest, err := s.LatestSample(t.Context()); err != nil || !latest.Equal(start.Add(11*time.Second)) {
		t.Errorf("LatestSample = %v, %v; want the last scrape, 11 s after the start", latest.Sub(start), err)
	}
	_, err = s.Fetch(t.Context(), Query{Pool: "rpool", Start: run.Start, End: run.End})
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), `pool "rpool"`) || !strings.Contains(err.Error(), `"backup", "tank"`) {
		t.Errorf("another pool: %v; want ErrNoSamples naming it and the pools there are", err)
	}
}

// family builds a metric family of gauges; each series is label pairs
// then the value.
func family(name string, series ...[]string) *dto.MetricFamily {
	mf := &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_GAUGE.Enum()}
	for _, s := range series {
		m := &dto.Metric{}
		for i := 0; i+1 < len(s)-1; i += 2 {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(s[i]), Value: proto.String(s[i+1])})
		}
		v, _ := strconv.ParseFloat(s[len(s)-1], 64)
		m.Gauge = &dto.Gauge{Value: proto.Float64(v)}
		mf.Metric = append(mf.Metric, m)
	}
	return mf
}

// histogramFamily is one histogram of the exporter's latency families as
// a ConstHistogram gathers: cumulative counts at bounds, no +Inf bucket.
func histogramFamily(name string, labels []string, bounds []float64, counts []uint64, total uint64, sum float64) *dto.MetricFamily {
	h := &dto.Histogram{SampleCount: proto.Uint64(total), SampleSum: proto.Float64(sum)}
	for i, b := range bounds {
		h.Bucket = append(h.Bucket, &dto.Bucket{UpperBound: proto.Float64(b), CumulativeCount: proto.Uint64(counts[i])})
	}
	m := &dto.Metric{Histogram: h}
	for i := 0; i+1 < len(labels); i += 2 {
		m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(labels[i]), Value: proto.String(labels[i+1])})
	}
	return &dto.MetricFamily{Name: proto.String(name), Type: dto.MetricType_HISTOGRAM.Enum(), Metric: []*dto.Metric{m}}
}

// text writes families as the text exposition, those of one name as one.
func text(t *testing.T, fams ...*dto.MetricFamily) string {
	t.Helper()
	var names []string
	byName := map[string]*dto.MetricFamily{}
	for _, mf := range fams {
		if merged := byName[mf.GetName()]; merged != nil {
			merged.Metric = append(merged.Metric, mf.Metric...)
			continue
		}
		byName[mf.GetName()] = proto.Clone(mf).(*dto.MetricFamily)
		names = append(names, mf.GetName())
	}
	var b strings.Builder
	for _, name := range names {
		if _, err := expfmt.MetricFamilyToText(&b, byName[name]); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// The latency histograms are kept as Prometheus stores them (NAME_bucket
// by le, +Inf included, NAME_sum, NAME_count), of the pool's row and its
// top-level vdevs only, and a report has the pool's latency over the
// window from them: tank writes 200 I/Os between scrapes, 150 of them
// within 1 ms and the rest within 4 ms.
func TestSamplerKeepsTopLevelLatency(t *testing.T) {
	f := &fakeExporter{}
	s, now := f.serve(t, time.Second)
	bounds := []float64{0.000262143, 0.001048575, 0.004194303}
	n := uint64(0)
	for *now = start.Add(-time.Second); !now.After(end.Add(time.Second)); *now = now.Add(10 * time.Second) {
		n++
		var fams []*dto.MetricFamily
		fams = append(fams, family("zfs_vdev_info",
			[]string{"pool", "tank", "vdev", "tank", "parent", "", "1"},
			[]string{"pool", "tank", "vdev", "mirror-0", "parent", "tank", "1"},
			[]string{"pool", "tank", "vdev", "sda", "parent", "mirror-0", "1"}),
			family("zfs_vdev_write_bytes_total", []string{"pool", "tank", "vdev", "tank", strconv.FormatUint(n*1000, 10)}))
		for _, vdev := range []string{"tank", "mirror-0", "sda"} {
			labels := []string{"pool", "tank", "type", "write", "vdev", vdev}
			fams = append(fams,
				histogramFamily(benchmetrics.TotalWait, labels, bounds, []uint64{0, 150 * n, 200 * n}, 200*n, 0.1*float64(n)),
				histogramFamily(benchmetrics.DiskWait, labels, bounds, []uint64{0, 180 * n, 200 * n}, 200*n, 0.05*float64(n)))
		}
		fams = append(fams, histogramFamily(benchmetrics.DiskWait, []string{"pool", "backup", "type", "write", "vdev", "backup"}, bounds, []uint64{0, 0, 0}, 0, 0))
		f.set(text(t, fams...), false)
		if err := s.Scrape(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	series, err := s.Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err != nil {
		t.Fatal(err)
	}
	var les []string
	names := map[string]int{}
	for _, one := range series {
		if slices.Contains(benchmetrics.LatencyFamilies, one.Metric) {
			names[one.Metric+" "+one.Labels["vdev"]]++
		}
		if one.Metric == benchmetrics.TotalWait+"_bucket" && one.Labels["vdev"] == "tank" {
			les = append(les, one.Labels["le"])
		}
	}
	slices.Sort(les)
	if want := []string{"+Inf", "0.000262143", "0.001048575", "0.004194303"}; !slices.Equal(les, want) {
		t.Errorf("total wait buckets %q, want %q", les, want)
	}
	for _, m := range benchmetrics.LatencyFamilies {
		for _, vdev := range []string{"tank", "mirror-0", "sda"} {
			want := map[bool]int{true: 4, false: 1}[strings.HasSuffix(m, "_bucket")]
			if vdev == "sda" {
				want = 0
			}
			if got := names[m+" "+vdev]; got != want {
				t.Errorf("%d series of %s of %s, want %d", got, m, vdev, want)
			}
		}
	}
	// Scrapes every 10 s from 1 s before the start: 10 in the window, 9
	// intervals of 200 writes.
	r, err := benchreport.Compute(benchreport.Run{Name: "latency", Pool: "tank", Start: start, End: end}, series)
	if err != nil {
		t.Fatal(err)
	}
	l := r.Pool.Latency.TotalWait.Write
	if l.Unavailable != "" || l.Operations != 1800 || math.Abs(l.MeanSeconds-0.9/1800) > 1e-12 {
		t.Errorf("pool total wait of writes %+v, want 1800 writes at a mean of 0.5 ms", l)
	}
	// Rank 900 of 1800: the 900th of the 1350 in (262 µs, 1 ms].
	if want := 0.000262143 + (0.001048575-0.000262143)*900/1350; math.Abs(l.P50Seconds-want) > 1e-12 {
		t.Errorf("p50 %v, want %v", l.P50Seconds, want)
	}
}

// The exporter's own collectors (status, vdev_io and vdev_latency over a
// host of OpenZFS 2.4's outputs), served as /metrics serves them, through
// the sampler give a report its latency: the pool's row and its mirrors
// have their histograms, found under the names the report reads them by.
// The host's outputs do not change between scrapes, so no I/O completed.
func TestSamplerOverTheRealCollectors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "host")
	if err := hostgen.Write(dir, hostgen.Spec{Pools: 1, Leaves: 4, Version: "2.4"}); err != nil {
		t.Fatal(err)
	}
	shared := collector.NewShared(replaytest.Exporter(t, dir, "status", "vdev_io", "vdev_latency").Gather)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shared.ServeMetrics(r.Context(), w, r, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	}))
	defer server.Close()
	s := NewSampler(NewExporter(server.URL, nil), "tank0", time.Second, 10*time.Second)

	if err := s.Scrape(t.Context()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	run := benchreport.Run{Name: "idle", Pool: "tank0", Start: time.Now()}
	time.Sleep(10 * time.Millisecond)
	run.End = time.Now()
	time.Sleep(10 * time.Millisecond)
	if err := s.Scrape(t.Context()); err != nil {
		t.Fatal(err)
	}

	series, err := s.Fetch(t.Context(), Query{Pool: run.Pool, Start: run.Start, End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := benchreport.Compute(run, series)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range append([]benchreport.VdevStats{r.Pool}, r.Vdevs...) {
		if v.Latency == nil {
			continue
		}
		for what, l := range map[string]benchreport.Latency{
			"total read": v.Latency.TotalWait.Read, "total write": v.Latency.TotalWait.Write,
			"disk read": v.Latency.DiskWait.Read, "disk write": v.Latency.DiskWait.Write,
		} {
			dir := strings.Fields(what)[1]
			if l.Samples != 2 || l.Unavailable != "no "+dir+"s completed during the run" {
				t.Errorf("%s %s: %d samples, n/a %q; want both scrapes and no I/O", v.Name, what, l.Samples, l.Unavailable)
			}
		}
		got = append(got, v.Name)
	}
	if want := []string{"tank0", "mirror-0", "mirror-1"}; !slices.Equal(got, want) {
		t.Errorf("vdevs with a latency %q, want the pool's row and its top-level vdevs %q", got, want)
	}
}

// LatestReport is the I/O source's own time, not the scrape's: a zpool
// iostat report 0.7 s before each scrape. Other sources' times do not
// count, and without source times it is the newest scrape.
func TestSamplerLatestReport(t *testing.T) {
	for _, withTimes := range []bool{true, false} {
		f := &fakeExporter{}
		s, now := f.serve(t, time.Second)
		for *now = start; !now.After(start.Add(3 * time.Second)); *now = now.Add(time.Second) {
			fams := []*dto.MetricFamily{family("zfs_vdev_write_bytes_total", []string{"pool", "tank", "vdev", "tank", "1"})}
			if withTimes {
				unix := func(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', 3, 64) }
				fams = append(fams, family(benchmetrics.SourceTime,
					[]string{"source", "zpool_iostat_stream", unix(now.Add(-700 * time.Millisecond))},
					[]string{"source", "zpool_status", unix(now.Add(5 * time.Second))}))
			}
			f.set(text(t, fams...), false)
			if err := s.Scrape(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.LatestReport(t.Context())
		want := start.Add(3 * time.Second)
		if withTimes {
			want = want.Add(-700 * time.Millisecond)
		}
		if err != nil || !got.Equal(want) {
			t.Errorf("with source times %v: LatestReport = %v, %v; want %v", withTimes, got.Sub(start), err, want.Sub(start))
		}
	}
}

// Scrapes go with basic authentication and the scrape timeout, as
// Prometheus sends them; their errors name the exporter without its
// password; and until the pool's counters come, LatestSample says why.
func TestSamplerErrors(t *testing.T) {
	f := &fakeExporter{}
	server := httptest.NewServer(f)
	defer server.Close()
	u, _ := url.Parse(server.URL)
	u.User = url.UserPassword("bench", "hunter2")
	s := NewSampler(NewExporter(u.String(), nil), "tank", time.Second, 3*time.Second)
	if s.String() != "exporter http://bench:xxxxx@"+u.Host {
		t.Errorf("String() = %q", s.String())
	}
	_, err := s.LatestSample(t.Context())
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), "no scrape has ended") {
		t.Errorf("before any scrape: %v", err)
	}

	f.set(tankExposition(0), false)
	if err := s.Scrape(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := f.requests[0]
	user, password, _ := r.BasicAuth()
	timeout, _ := strconv.ParseFloat(r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"), 64)
	if user != "bench" || password != "hunter2" || timeout <= 2 || timeout > 3 || !strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
		t.Errorf("the scrape sent user %q, password %q, timeout %v s, Accept %q; want bench's, about 3 s, text", user, password, timeout, r.Header.Get("Accept"))
	}

	other := NewSampler(NewExporter(server.URL, nil), "rpool", time.Second, time.Second)
	if err := other.Scrape(t.Context()); err != nil {
		t.Fatal(err)
	}
	_, err = other.LatestSample(t.Context())
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), `pool "rpool" (it has "backup", "tank")`) {
		t.Errorf("a pool the exporter does not have: %v; want the pools it has", err)
	}

	server.Close()
	failing := NewSampler(NewExporter(u.String(), nil), "tank", time.Second, time.Second)
	err = failing.Scrape(t.Context())
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "bench:xxxxx@") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("nothing listening: %v; want the exporter named without its password", err)
	}
	_, err = failing.LatestSample(t.Context())
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("after failed scrapes only: %v; want the last failure", err)
	}

	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	err = NewSampler(NewExporter(notFound.URL, nil), "tank", time.Second, time.Second).Scrape(t.Context())
	if err == nil || !strings.Contains(err.Error(), notFound.URL) || !strings.Contains(err.Error(), "HTTP 404 Not Found: 404 page not found") {
		t.Errorf("no /metrics: %v", err)
	}
}

// Run scrapes at once and then every interval, one scrape at a time, and
// ends with its context; the scrape it cuts short is no failure.
func TestSamplerRun(t *testing.T) {
	f := &fakeExporter{}
	f.set(tankExposition(0), false)
	server := httptest.NewServer(f)
	defer server.Close()
	s := NewSampler(NewExporter(server.URL, nil), "tank", 100*time.Millisecond, 10*time.Second)
	ctx, cancel := context.WithCancel(t.Context())
	began := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, scrapes, _ := s.Failures(); scrapes >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 scrapes in 5 s at an interval of 100 ms")
		}
	}
	f.set("", true)
	time.Sleep(250 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
	failed, scrapes, _ := s.Failures()
	f.mu.Lock()
	requests := f.requests
	f.mu.Unlock()
	if failed != 0 || scrapes < 3 || len(requests) != scrapes+1 {
		t.Errorf("%d failed of %d scrapes, %d requests; want none failed, the one cut short not counted", failed, scrapes, len(requests))
	}
	series, err := s.Fetch(t.Context(), Query{Pool: "tank", Start: began, End: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	for _, one := range series {
		if first := one.Samples[0].Time; first.Sub(began) > 50*time.Millisecond {
			t.Errorf("%s: first sample %v after Run began, want at once", one.Metric, first.Sub(began))
		}
		for i := 1; i < len(one.Samples); i++ {
			if gap := one.Samples[i].Time.Sub(one.Samples[i-1].Time); gap < 90*time.Millisecond {
				t.Errorf("%s: samples %v apart, want the 100 ms interval", one.Metric, gap)
			}
		}
	}
}
