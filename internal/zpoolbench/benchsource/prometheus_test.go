package benchsource

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
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
