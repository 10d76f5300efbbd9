package benchsource

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/proto"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/history"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/replaytest"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

var (
	start = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	end   = start.Add(90*time.Second + 500*time.Millisecond)
)

// fakePrometheus answers instant queries of range selectors with samples
// every 15 s from 10 minutes before the evaluation time to 1 minute after
// it (which Prometheus would not send, and the source must drop), for the
// targets given.
type fakePrometheus struct {
	targets []string // instance label values
	mu      sync.Mutex
	queries []url.Values
}

var (
	selectorRE = regexp.MustCompile(`^(\w+)(?:\{([^}]*)\})?\[(\d+)s\]$`)
	matchersRE = regexp.MustCompile(`^(?:\w+(?:=|!=|=~|!~)"[^"]*"(?:,\w+(?:=|!=|=~|!~)"[^"]*")*)?$`)
)

func (p *fakePrometheus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The API client POSTs its queries as a form, as Prometheus allows.
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	q := r.Form
	p.mu.Lock()
	p.queries = append(p.queries, q)
	p.mu.Unlock()
	if r.URL.Path != "/api/v1/query" {
		http.NotFound(w, r)
		return
	}
	m := selectorRE.FindStringSubmatch(q.Get("query"))
	if m == nil || !matchersRE.MatchString(m[2]) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"status":"error","errorType":"bad_data","error":"1:1: parse error: unexpected character"}`)
		return
	}
	at := time.Now()
	if v := q.Get("time"); v != "" {
		f, _ := strconv.ParseFloat(v, 64)
		at = time.UnixMilli(int64(f * 1000))
	}
	var result []string
	for _, instance := range p.targets {
		labels := `"__name__":"` + m[1] + `","instance":"` + instance + `","job":"zfs"`
		if strings.Contains(m[2], `pool="tank"`) {
			labels += `,"pool":"tank","vdev":"mirror-0"`
		}
		var values []string
		for t := at.Add(-10 * time.Minute); !t.After(at.Add(time.Minute)); t = t.Add(15 * time.Second) {
			values = append(values, fmt.Sprintf(`[%.3f,"%d"]`, float64(t.UnixMilli())/1000, t.Unix()-start.Unix()))
		}
		result = append(result, `{"metric":{`+labels+`},"values":[`+strings.Join(values, ",")+`]}`)
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":[%s]}}`, strings.Join(result, ","))
}

func TestPrometheusQueriesRawSamples(t *testing.T) {
	p := &fakePrometheus{targets: []string{"nas:9134"}}
	server := httptest.NewServer(p)
	defer server.Close()
	src := Prometheus(server.URL+"/", `{instance="nas:9134"}`, nil)
	if got, want := src.String(), "prometheus "+server.URL+` {instance="nas:9134"}`; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	series, err := src.Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.queries) != len(benchmetrics.Families) {
		t.Fatalf("%d queries, want one per family (%d)", len(p.queries), len(benchmetrics.Families))
	}
	// 90.5 s of window and 300 s of lookback: 391 s, at the end.
	for i, q := range p.queries {
		metric := benchmetrics.Families[i]
		want := metric + `{pool="tank",instance="nas:9134"}[391s]`
		if !PerPool(metric) {
			want = metric + `{instance="nas:9134"}[391s]`
		}
		if q.Get("query") != want || q.Get("time") != "1741942890.5" {
			t.Errorf("query %d: %s at time=%s; want %s at time=1741942890.5", i, q.Get("query"), q.Get("time"), want)
		}
	}
	for _, want := range []string{"zfs_vdev_write_bytes_total", "zfs_host_cpu_seconds_total", "zfs_arc_hits_total", "zfs_pool_state"} {
		if !slices.ContainsFunc(series, func(s benchreport.Series) bool { return s.Metric == want }) {
			t.Errorf("no %s series", want)
		}
	}
	for _, s := range series {
		if PerPool(s.Metric) != (s.Labels["pool"] == "tank") {
			t.Errorf("%s %v: pool label wrong", s.Metric, s.Labels)
		}
		if _, ok := s.Labels["__name__"]; ok || s.Labels["instance"] != "nas:9134" {
			t.Errorf("%s labels %v: want instance kept, __name__ dropped", s.Metric, s.Labels)
		}
		// Samples every 15 s back from the end (start+90.5s): the last
		// before the start is at start-14.5s, then start+0.5s ... the end.
		first, last := s.Samples[0].Time, s.Samples[len(s.Samples)-1].Time
		if !first.Equal(start.Add(-14500*time.Millisecond)) || !last.Equal(end) || len(s.Samples) != 8 {
			t.Errorf("%s: %d samples from %v to %v; want 8, from the last before the start (start-14.5s) to the end", s.Metric, len(s.Samples), first.Sub(start), last.Sub(start))
		}
		if v := s.Samples[0].Value; v != -15 {
			t.Errorf("%s: first value %v, want -15", s.Metric, v)
		}
	}

	// Without matchers and without a pool: bare selectors.
	p.queries = nil
	if _, err := Prometheus(server.URL, "", nil).Fetch(t.Context(), Query{Start: start, End: start}); err != nil {
		t.Fatal(err)
	}
	if got := p.queries[1].Get("query"); got != "zfs_vdev_read_bytes_total[300s]" {
		t.Errorf("query without pool and matchers: %s", got)
	}
}

func TestPrometheusSeveralExporters(t *testing.T) {
	p := &fakePrometheus{targets: []string{"nas:9134", "backup:9134"}}
	server := httptest.NewServer(p)
	defer server.Close()
	_, err := Prometheus(server.URL, "", nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	for _, want := range []string{server.URL, "2 scrape targets", `instance="backup:9134",job="zfs"; instance="nas:9134",job="zfs"`, `--prometheus.matchers='instance="backup:9134"'`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("two exporters without matchers: error %v; want it to say %s", err, want)
		}
	}
	_, err = Prometheus(server.URL, `job="zfs"`, nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err == nil || !strings.Contains(err.Error(), `even with the matchers {job="zfs"}`) {
		t.Errorf("two exporters through loose matchers: error %v", err)
	}
	_, err = Prometheus(server.URL, "", nil).LatestSample(t.Context())
	if err == nil || !strings.Contains(err.Error(), "--prometheus.matchers") {
		t.Errorf("LatestSample over two exporters: error %v", err)
	}
}

func TestPrometheusLatestSample(t *testing.T) {
	p := &fakePrometheus{targets: []string{"nas:9134"}}
	server := httptest.NewServer(p)
	defer server.Close()
	before := time.Now()
	latest, err := Prometheus(server.URL, "", nil).LatestSample(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if q := p.queries[0]; q.Get("query") != "zfs_vdev_write_bytes_total[300s]" || q.Has("time") {
		t.Errorf("query %v; want the last 5 minutes at Prometheus's present", q)
	}
	// The fake sends samples up to a minute ahead: the newest is the one.
	if latest.Before(before.Add(45*time.Second)) || latest.After(time.Now().Add(time.Minute)) {
		t.Errorf("latest sample %v from now, want the newest sent", time.Until(latest))
	}

	p.targets = nil
	_, err = Prometheus(server.URL, "", nil).LatestSample(t.Context())
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), server.URL) {
		t.Errorf("no samples: %v; want ErrNoSamples naming the server", err)
	}
	_, err = Prometheus(server.URL, "", nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), `pool "tank"`) {
		t.Errorf("Fetch with no series: %v; want ErrNoSamples naming the pool", err)
	}
}

// Errors name the server, the query, and what the server said: the
// error of Prometheus's API, or the page of a proxy.
func TestPrometheusErrors(t *testing.T) {
	p := &fakePrometheus{targets: []string{"nas:9134"}}
	server := httptest.NewServer(p)
	defer server.Close()
	_, err := Prometheus(server.URL, `instance=~`, nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	for _, want := range []string{server.URL, `zfs_vdev_info{pool="tank",instance=~}[391s]`, "bad_data: 1:1: parse error"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad matchers: error %v; want it to say %s", err, want)
		}
	}

	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "upstream connect error", http.StatusBadGateway)
	}))
	defer proxy.Close()
	_, err = Prometheus(proxy.URL, "", nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err == nil || !strings.Contains(err.Error(), "502: upstream connect error") {
		t.Errorf("a proxy's error page: %v", err)
	}

	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, err = Prometheus(closed.URL, "", nil).LatestSample(t.Context())
	if err == nil || !strings.Contains(err.Error(), closed.URL) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("nothing listening: %v", err)
	}
	if _, err := Prometheus(server.URL, "", nil).Fetch(t.Context(), Query{Start: end, End: start}); err == nil {
		t.Error("an end before the start was accepted")
	}
}

// User and password in the URL go to Prometheus as basic authentication,
// and never into a message.
func TestPrometheusBasicAuth(t *testing.T) {
	p := &fakePrometheus{targets: []string{"nas:9134"}}
	var users []string
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, _ := r.BasicAuth()
		users = append(users, user+":"+password)
		p.ServeHTTP(w, r)
	}))
	defer server.Close()
	u, _ := url.Parse(server.URL)
	u.User = url.UserPassword("bench", "hunter2")
	src := Prometheus(u.String(), "", nil)
	if _, err := src.LatestSample(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || users[0] != "bench:hunter2" {
		t.Errorf("Prometheus got the users %q, want bench:hunter2", users)
	}
	server.Close()
	_, err := src.Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err == nil || strings.Contains(err.Error()+src.String(), "hunter2") || !strings.Contains(err.Error(), "bench:xxxxx@") {
		t.Errorf("a password in the URL: %v, %s; want it redacted", err, src)
	}
}

// family builds a metric family of gauges; ms are label pairs then value.
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

// A recorder holding readings every 10 s from start-30s to end+30s, of
// two pools, behind the real history handler.
func historyServer(t *testing.T, readings bool) *httptest.Server {
	t.Helper()
	var now time.Time
	n := 0
	rec := history.NewRecorder(history.Options{
		Metrics:  benchmetrics.Families,
		Activity: func() (bool, time.Time) { return true, time.Time{} },
		Now:      func() time.Time { return now },
		Gather: func(context.Context) ([]*dto.MetricFamily, time.Time, error) {
			n++
			v := strconv.Itoa(n)
			return []*dto.MetricFamily{
				family("zfs_vdev_write_bytes_total", []string{"pool", "tank", "vdev", "tank", v}, []string{"pool", "backup", "vdev", "backup", v}),
				family("zfs_pool_state", []string{"pool", "tank", "state", "online", "1"}, []string{"pool", "backup", "state", "online", "1"}),
				family("zfs_host_cpu_seconds_total", []string{"mode", "user", v}),
				family("zfs_arc_hits_total", []string{v}),
				family("zfs_pool_size_bytes", []string{"pool", "tank", "1e9"}),
			}, now, nil
		},
	})
	if readings {
		for now = start.Add(-30 * time.Second); !now.After(end.Add(30 * time.Second)); now = now.Add(10 * time.Second) {
			rec.SampleOnce(t.Context())
		}
	}
	server := httptest.NewServer(history.Handler(rec))
	t.Cleanup(server.Close)
	return server
}

func TestExporterReadsTheHistory(t *testing.T) {
	server := historyServer(t, true)
	src := Exporter(server.URL, server.Client())
	if src.String() != "exporter "+server.URL {
		t.Errorf("String() = %q", src.String())
	}
	series, err := src.Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range series {
		var times []string
		for _, p := range s.Samples {
			times = append(times, fmt.Sprintf("%v=%v", p.Time.Sub(start), p.Value))
		}
		got = append(got, fmt.Sprintf("%s %v %v", s.Metric, s.Labels, times))
	}
	// Readings at -30s, -20s, -10s, 0s, 10s, ... 90s, 100s...: 0s is at the
	// start, 90s the last before the end (90.5 s).
	want := []string{
		"zfs_vdev_write_bytes_total map[pool:tank vdev:tank] [0s=4 10s=5 20s=6 30s=7 40s=8 50s=9 1m0s=10 1m10s=11 1m20s=12 1m30s=13]",
		"zfs_pool_state map[pool:tank state:online] [0s=1 10s=1 20s=1 30s=1 40s=1 50s=1 1m0s=1 1m10s=1 1m20s=1 1m30s=1]",
		"zfs_host_cpu_seconds_total map[mode:user] [0s=4 10s=5 20s=6 30s=7 40s=8 50s=9 1m0s=10 1m10s=11 1m20s=12 1m30s=13]",
		"zfs_arc_hits_total map[] [0s=4 10s=5 20s=6 30s=7 40s=8 50s=9 1m0s=10 1m10s=11 1m20s=12 1m30s=13]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("series:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	latest, err := src.LatestSample(t.Context())
	if err != nil || !latest.Equal(start.Add(120*time.Second)) {
		t.Errorf("LatestSample = %v, %v; want the reading 120 s after the start", latest.Sub(start), err)
	}

	_, err = src.Fetch(t.Context(), Query{Pool: "rpool", Start: start, End: end})
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), `pool "rpool"`) || !strings.Contains(err.Error(), `"backup", "tank"`) {
		t.Errorf("an unknown pool: %v; want ErrNoSamples naming it and the pools there are", err)
	}
}

func TestExporterErrors(t *testing.T) {
	empty := historyServer(t, false)
	_, err := Exporter(empty.URL, nil).LatestSample(t.Context())
	if !errors.Is(err, ErrNoSamples) || !strings.Contains(err.Error(), empty.URL) {
		t.Errorf("an empty history: %v; want ErrNoSamples naming the exporter", err)
	}

	off := httptest.NewServer(benchwindow.NotEnabled("the benchmark window API is off; start zpool_exporter with --web.enable-benchmark-api to turn it on"))
	defer off.Close()
	_, err = Exporter(off.URL, nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	for _, want := range []string{off.URL, "/api/v1/benchmark/history", "404 Not Found", "--web.enable-benchmark-api"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("the API off: %v; want it to say %s", err, want)
		}
	}

	// The history's own refusal comes through with its text.
	server := historyServer(t, true)
	_, err = Exporter(server.URL, nil).Fetch(t.Context(), Query{Pool: "tank", Start: time.Unix(2e13, 0), End: time.Unix(2e13+1, 0)})
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request: bad_data: invalid parameter") {
		t.Errorf("a time the history refuses: %v", err)
	}

	secret := httptest.NewServer(http.NotFoundHandler())
	secret.Close()
	u, _ := url.Parse(secret.URL)
	u.User = url.UserPassword("bench", "hunter2")
	src := Exporter(u.String(), nil)
	_, err = src.Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err == nil || strings.Contains(err.Error()+src.String(), "hunter2") || !strings.Contains(err.Error(), "bench:xxxxx@") {
		t.Errorf("a password in the URL: %v, %s; want it redacted", err, src)
	}
}

// LatestReport is the I/O source's own time, not the scrape's: a zpool
// iostat report 0.7 s before each reading. Other sources' times do not
// count, and without source times it is the newest reading.
func TestExporterLatestReport(t *testing.T) {
	for _, withTimes := range []bool{true, false} {
		var now time.Time
		rec := history.NewRecorder(history.Options{
			Metrics:  benchmetrics.Families,
			Activity: func() (bool, time.Time) { return true, time.Time{} },
			Now:      func() time.Time { return now },
			Gather: func(context.Context) ([]*dto.MetricFamily, time.Time, error) {
				fams := []*dto.MetricFamily{family("zfs_vdev_write_bytes_total", []string{"pool", "tank", "vdev", "tank", "1"})}
				if withTimes {
					unix := func(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', 3, 64) }
					fams = append(fams, family(benchmetrics.SourceTime,
						[]string{"source", "zpool_iostat_stream", unix(now.Add(-700 * time.Millisecond))},
						[]string{"source", "zpool_status", unix(now.Add(5 * time.Second))}))
				}
				return fams, now, nil
			},
		})
		for now = start; !now.After(start.Add(3 * time.Second)); now = now.Add(time.Second) {
			rec.SampleOnce(t.Context())
		}
		server := httptest.NewServer(history.Handler(rec))
		got, err := Exporter(server.URL, nil).LatestReport(t.Context())
		server.Close()
		want := start.Add(3 * time.Second)
		if withTimes {
			want = want.Add(-700 * time.Millisecond)
		}
		if err != nil || !got.Equal(want) {
			t.Errorf("with source times %v: LatestReport = %v, %v; want %v", withTimes, got.Sub(start), err, want.Sub(start))
		}
	}
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

// latencyHistory is the history of an exporter whose pool tank writes 200
// I/Os a reading, 150 of them within 1 ms and the rest within 4 ms, and
// that keeps metrics (an older exporter keeps fewer).
func latencyHistory(t *testing.T, metrics []string) *httptest.Server {
	t.Helper()
	var now time.Time
	n := uint64(0)
	rec := history.NewRecorder(history.Options{
		Metrics:  metrics,
		Activity: func() (bool, time.Time) { return true, time.Time{} },
		Now:      func() time.Time { return now },
		Gather: func(context.Context) ([]*dto.MetricFamily, time.Time, error) {
			n++
			v := strconv.FormatUint(n*1000, 10)
			labels := []string{"pool", "tank", "type", "write", "vdev", "tank"}
			bounds := []float64{0.000262143, 0.001048575, 0.004194303}
			return []*dto.MetricFamily{
				family("zfs_vdev_write_bytes_total", []string{"pool", "tank", "vdev", "tank", v}),
				histogramFamily(benchmetrics.TotalWait, labels, bounds, []uint64{0, 150 * n, 200 * n}, 200*n, 0.1*float64(n)),
				histogramFamily(benchmetrics.DiskWait, labels, bounds, []uint64{0, 180 * n, 200 * n}, 200*n, 0.05*float64(n)),
				histogramFamily(benchmetrics.DiskWait, []string{"pool", "backup", "type", "write", "vdev", "backup"}, bounds, []uint64{0, 0, 0}, 0, 0),
			}, now, nil
		},
	})
	for now = start.Add(-time.Second); !now.After(end.Add(time.Second)); now = now.Add(10 * time.Second) {
		rec.SampleOnce(t.Context())
	}
	server := httptest.NewServer(history.Handler(rec))
	t.Cleanup(server.Close)
	return server
}

// The history keeps the latency histograms as Prometheus stores them,
// and a report computed from what the source fetched has the pool's
// latency over the window.
func TestExporterReadsLatencyHistograms(t *testing.T) {
	server := latencyHistory(t, benchmetrics.Families)
	series, err := Exporter(server.URL, nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err != nil {
		t.Fatal(err)
	}
	var les []string
	names := map[string]int{}
	for _, s := range series {
		names[s.Metric]++
		if s.Labels["pool"] != "tank" {
			t.Errorf("%s of pool %q, want tank's only", s.Metric, s.Labels["pool"])
		}
		if s.Metric == benchmetrics.TotalWait+"_bucket" {
			les = append(les, s.Labels["le"])
		}
	}
	slices.Sort(les)
	if want := []string{"+Inf", "0.000262143", "0.001048575", "0.004194303"}; !slices.Equal(les, want) {
		t.Errorf("total wait buckets %q, want %q", les, want)
	}
	for _, m := range benchmetrics.LatencyFamilies {
		if want := map[bool]int{true: 4, false: 1}[strings.HasSuffix(m, "_bucket")]; names[m] != want {
			t.Errorf("%d series of %s, want %d", names[m], m, want)
		}
	}
	// Readings every 10 s from 1 s before the start: 10 in the window, 9
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

// The history of an exporter older than the latency families refuses
// them: the report is made without them. Any other failure of that
// request is one.
func TestExporterWithoutLatencyHistograms(t *testing.T) {
	var older []string
	for _, m := range benchmetrics.Families {
		if !slices.Contains(benchmetrics.LatencyFamilies, m) {
			older = append(older, m)
		}
	}
	server := latencyHistory(t, older)
	series, err := Exporter(server.URL, nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err != nil {
		t.Fatalf("an exporter without the latency families: %v", err)
	}
	if len(series) != 1 || series[0].Metric != "zfs_vdev_write_bytes_total" {
		t.Errorf("series %+v, want the write counter alone", series)
	}
	r, err := benchreport.Compute(benchreport.Run{Name: "latency", Pool: "tank", Start: start, End: end}, series)
	if err != nil {
		t.Fatal(err)
	}
	if why := r.Pool.Latency.DiskWait.Read.Unavailable; !strings.Contains(why, "the exporter predates them") {
		t.Errorf("n/a %q, want the reason to name an older exporter", why)
	}

	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(r.URL.Query()["metric"], benchmetrics.DiskWait+"_bucket") {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		history.Handler(history.NewRecorder(history.Options{Metrics: benchmetrics.Families, Activity: func() (bool, time.Time) { return false, time.Time{} }})).ServeHTTP(w, r)
	}))
	defer failing.Close()
	_, err = Exporter(failing.URL, nil).Fetch(t.Context(), Query{Pool: "tank", Start: start, End: end})
	if err == nil || !strings.Contains(err.Error(), "503 Service Unavailable: overloaded") {
		t.Errorf("the latency request failing: %v, want its error", err)
	}
}

// The exporter's own collectors (status, vdev_io and vdev_latency over a
// host of OpenZFS 2.4's outputs) through the history and this source give
// a report its latency: the pool's row and its mirrors have their
// histograms, found under the names the report reads them by. The host's
// outputs do not change between scrapes, so no I/O completed.
func TestExporterHistoryOfTheRealCollectors(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "host")
	if err := hostgen.Write(dir, hostgen.Spec{Pools: 1, Leaves: 4, Version: "2.4"}); err != nil {
		t.Fatal(err)
	}
	shared := collector.NewShared(replaytest.Exporter(t, dir, "status", "vdev_io", "vdev_latency").Gather)
	rec := history.NewRecorder(history.Options{Gather: shared.Metrics, Metrics: benchmetrics.Families,
		Activity: func() (bool, time.Time) { return true, time.Time{} }})
	server := httptest.NewServer(history.Handler(rec))
	defer server.Close()

	rec.SampleOnce(t.Context())
	time.Sleep(10 * time.Millisecond)
	run := benchreport.Run{Name: "idle", Pool: "tank0", Start: time.Now()}
	time.Sleep(10 * time.Millisecond)
	run.End = time.Now()
	time.Sleep(10 * time.Millisecond)
	rec.SampleOnce(t.Context())

	series, err := Exporter(server.URL, nil).Fetch(t.Context(), Query{Pool: run.Pool, Start: run.Start, End: time.Now()})
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
				t.Errorf("%s %s: %d samples, n/a %q; want both readings and no I/O", v.Name, what, l.Samples, l.Unavailable)
			}
		}
		got = append(got, v.Name)
	}
	if want := []string{"tank0", "mirror-0", "mirror-1"}; !slices.Equal(got, want) {
		t.Errorf("vdevs with a latency %q, want the pool's row and its top-level vdevs %q", got, want)
	}
}
