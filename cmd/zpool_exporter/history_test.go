package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/history"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchsource"
)

// replayWithHostCPU is the zfs-fuse replay with the host's /proc beside it,
// so that the cpu collector reads real host CPU times.
func replayWithHostCPU(t *testing.T) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads the host's CPU times from /proc")
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(replayDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc", filepath.Join(dir, "proc")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func getHistory(t *testing.T, base string, q url.Values) (int, history.Response) {
	t.Helper()
	code, body := call(t, http.MethodGet, base+history.Path+"?"+q.Encode(), "")
	var resp history.Response
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatalf("GET %s: not JSON: %v\n%s", history.Path, err, body)
	}
	return code, resp
}

func unixSeconds(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64)
}

// A benchmark window started and ended through the API: the history holds
// the pool's vdev write counters and the host CPU, sampled every second
// inside the window, while /metrics scraped every 200 ms lost no collector.
func TestBenchmarkHistory(t *testing.T) {
	dir := replayWithHostCPU(t)
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+dir, "--zpool.iostat-interval=1s",
		"--web.enable-benchmark-api", "--no-collector.disk", "--benchmark.history-interval=1s")
	tank := map[string]string{"pool": "tank", "vdev": "tank"}
	e.WaitFor(t, 15*time.Second, "tank's write counter from the iostat stream", func(m e2e.Metrics) bool {
		_, ok := m.Get("zfs_vdev_write_bytes_total", tank)
		return ok
	})

	all := url.Values{"metric": {"zfs_vdev_write_bytes_total", "zfs_host_cpu_seconds_total"}, "start": {"0"}, "end": {unixSeconds(time.Now().Add(time.Hour))}}
	if code, resp := getHistory(t, e.URL, all); code != http.StatusOK || resp.Status != "success" || len(resp.Data.Result) != 0 {
		t.Fatalf("history before any window: %d %+v; want success and nothing sampled", code, resp)
	}

	// Scrape as a Prometheus with a 200 ms interval would, all along.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	scrapes, failed := 0, map[string]int{}
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
			m := e.Scrape(t)
			mu.Lock()
			scrapes++
			for _, s := range m.Series("zfs_exporter_collector_success", nil) {
				if e2e.Value(s) != 1 {
					failed[e2e.Label(s, "collector")]++
				}
			}
			if _, ok := m.Get("zfs_vdev_write_bytes_total", tank); !ok {
				failed["no zfs_vdev_write_bytes_total"]++
			}
			mu.Unlock()
		}
	})

	ended := holdWindow(t, e.URL, `{"name": "history", "pool": "tank"}`, 4500*time.Millisecond)
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(failed) > 0 || scrapes < 20 {
		t.Errorf("%d scrapes during the window, failures %v; want about 30, none failing", scrapes, failed)
	}

	q := url.Values{"metric": {"zfs_vdev_write_bytes_total", "zfs_host_cpu_seconds_total"}, "start": {unixSeconds(ended.Start)}, "end": {ended.End.Format(time.RFC3339Nano)}}
	code, resp := getHistory(t, e.URL, q)
	if code != http.StatusOK || resp.Status != "success" || resp.Data.ResultType != "matrix" {
		t.Fatalf("GET history: %d %+v", code, resp)
	}
	inside := func(ps []history.Point) int {
		n := 0
		for _, p := range ps {
			if !p.Time.Before(ended.Start) && !p.Time.After(ended.End) {
				n++
			}
		}
		return n
	}
	var vdevSeries, cpuSeries int
	for _, s := range resp.Data.Result {
		switch s.Metric["__name__"] {
		case "zfs_vdev_write_bytes_total":
			if s.Metric["pool"] == "tank" {
				vdevSeries++
			}
			if s.Metric["pool"] == "tank" && s.Metric["vdev"] == "tank" {
				if n := inside(s.Values); n < 4 {
					t.Errorf("tank's write counter: %d samples inside the %.1f s window, want at least 4: %v", n, ended.DurationSeconds, s.Values)
				}
				// The first reading comes at once when the window starts.
				if first := s.Values[0].Time; first.Before(ended.Start) || first.Sub(ended.Start) > 500*time.Millisecond {
					t.Errorf("first sample %v after the window's start, want at once", first.Sub(ended.Start))
				}
				for i := 1; i < len(s.Values); i++ {
					if s.Values[i].Value < s.Values[i-1].Value || !s.Values[i].Time.After(s.Values[i-1].Time) {
						t.Errorf("tank's write counter went back or repeated a time: %v", s.Values)
						break
					}
				}
			}
		case "zfs_host_cpu_seconds_total":
			cpuSeries++
			if s.Metric["mode"] == "" || inside(s.Values) < 4 {
				t.Errorf("host CPU series %v: %d samples inside the window, want a mode and at least 4", s.Metric, inside(s.Values))
			}
		}
	}
	if vdevSeries < 4 || cpuSeries < 4 {
		t.Errorf("%d write counter series of tank and %d host CPU series; want tank's 4 vdev rows and the CPU modes", vdevSeries, cpuSeries)
	}

	// The runner's client reads the same.
	src := benchsource.Exporter(e.URL, nil)
	series, err := src.Fetch(t.Context(), benchsource.Query{Pool: "tank", Start: ended.Start, End: ended.End})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, s := range series {
		kinds[s.Metric] = true
		if benchsource.PerPool(s.Metric) && s.Labels["pool"] != "tank" {
			t.Errorf("a series of another pool: %s %v", s.Metric, s.Labels)
		}
	}
	for _, want := range []string{"zfs_vdev_write_bytes_total", "zfs_vdev_info", "zfs_pool_state", "zfs_host_cpu_seconds_total"} {
		if !kinds[want] {
			t.Errorf("Fetch returned no %s series (got %v)", want, kinds)
		}
	}
	latest, err := src.LatestSample(t.Context())
	if err != nil || latest.Before(ended.End) {
		t.Errorf("LatestSample = %v, %v; want one at or after the window's end %v (taken at its end)", latest, err, ended.End)
	}
}

// Without --web.enable-benchmark-api the history answers like the rest of
// the API: 404 and a JSON error naming the flag.
func TestBenchmarkHistoryOff(t *testing.T) {
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+replayDir)
	code, body := call(t, http.MethodGet, e.URL+history.Path+"?metric=zfs_pool_state&start=0&end=1", "")
	var answer benchwindow.ErrorResponse
	if err := json.Unmarshal([]byte(body), &answer); err != nil || code != http.StatusNotFound || !strings.Contains(answer.Error, "--web.enable-benchmark-api") {
		t.Errorf("history with the API off: %d %s; want 404 and a JSON error naming the flag", code, body)
	}
	_, err := benchsource.Exporter(e.URL, nil).LatestSample(t.Context())
	if err == nil || !strings.Contains(err.Error(), "--web.enable-benchmark-api") {
		t.Errorf("the client over an exporter without the API: %v; want the exporter's advice", err)
	}
}

// holdWindow starts a window through the exporter's API at base, keeps it
// open for d and returns it ended.
func holdWindow(t *testing.T, base, start string, d time.Duration) benchwindow.Window {
	t.Helper()
	api := base + benchwindow.Path
	code, body := call(t, http.MethodPost, api, start)
	if code != http.StatusCreated {
		t.Fatalf("POST %s: %d %s", api, code, body)
	}
	w := decodeWindow(t, body)
	time.Sleep(d)
	code, body = call(t, http.MethodPost, api+"/"+w.ID+"/end", "")
	if code != http.StatusOK {
		t.Fatalf("POST end: %d %s", code, body)
	}
	return decodeWindow(t, body)
}
