package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
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
	if err := os.CopyFS(dir, os.DirFS("../../collector/testdata/replay/zfs-fuse")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc", filepath.Join(dir, "proc")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Debian's Prometheus scrapes two replay exporters every second. A run
// with --prometheus.url and matchers that pick one has its report made
// from that one's raw samples, a second apart from the last before the
// start; without matchers the Prometheus source refuses to mix them.
func TestRunWithPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 15 s; skipped with -short")
	}
	prometheusBin, err := exec.LookPath("prometheus")
	if err != nil {
		e2e.SkipOrFail(t, "prometheus is not installed (Debian package prometheus)")
	}
	dir := replayWithHostCPU(t)
	args := []string{"--zpool.replay-dir=" + dir, "--zpool.iostat-interval=1s", "--web.enable-benchmark-api", "--no-collector.disk"}
	nas, other := e2e.Start(t, exporterBin, nil, args...), e2e.Start(t, exporterBin, nil, args...)

	promDir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: zfs
    static_configs:
      - targets: [%q, %q]
`, strings.TrimPrefix(nas.URL, "http://"), strings.TrimPrefix(other.URL, "http://"))
	path := filepath.Join(promDir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := e2e.FreeAddress(t)
	prometheusURL := "http://" + addr
	e2e.StartServer(t, "prometheus", exec.Command(prometheusBin, "--config.file="+path,
		"--storage.tsdb.path="+filepath.Join(promDir, "data"), "--web.listen-address="+addr), prometheusURL)

	instance := strings.TrimPrefix(nas.URL, "http://")
	matchers := `instance="` + instance + `"`
	src := benchsource.Prometheus(prometheusURL, matchers, nil)
	// Wait until Prometheus has tank's counters from the iostat stream.
	var latest time.Time
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if latest, err = src.LatestSample(t.Context()); err == nil {
			break
		}
	}
	if latest.IsZero() {
		t.Fatalf("Prometheus never had a sample of zfs_vdev_write_bytes_total: %v", err)
	}

	r := startBench(t, "run", "--name", "prometheus source", "--pool", "tank", "--exporter.url", nas.URL,
		"--pool.config-from", "exporter", "--prometheus.url", prometheusURL, "--prometheus.matchers", matchers,
		"--runs.dir", t.TempDir(), "--format", "json", "--settle", "1s", "--", "sleep", "5")
	if status := r.wait(t); status != 0 {
		t.Fatalf("zpool_bench run exited %d\nstderr:\n%s", status, r.stderr.String())
	}
	var rep benchreport.Report
	if err := json.Unmarshal(r.stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, r.stdout.String())
	}
	if want := "prometheus " + prometheusURL + " {" + matchers + "}"; rep.Run.Source != want {
		t.Errorf("the report's source %q, want %q", rep.Run.Source, want)
	}
	// One sample a second from the last before the start to the first
	// report a second after the end.
	if n := rep.Pool.WriteBytes.Samples; n < 6 || n > 10 {
		t.Errorf("%d samples of tank's write counter for a %.1f s run scraped every second, want 6 to 10", n, rep.DurationSeconds)
	}
	if rep.Samples.From.After(rep.Run.Start) || rep.Samples.SettleSeconds < 1 {
		t.Errorf("samples from %v to %v for a run from %v to %v; want the last before the start to a second after the end",
			rep.Samples.From, rep.Samples.To, rep.Run.Start, rep.Run.End)
	}
	checkWindowEnded(t, nas, rep.Run.ID, "tank")

	q := benchsource.Query{Pool: "tank", Start: rep.Run.Start, End: rep.Run.End}
	_, err = benchsource.Prometheus(prometheusURL, "", nil).Fetch(t.Context(), q)
	if err == nil || !strings.Contains(err.Error(), "2 scrape targets") || !strings.Contains(err.Error(), instance) || !strings.Contains(err.Error(), "--prometheus.matchers") {
		t.Errorf("two exporters without matchers: %v; want an error naming both targets and the flag", err)
	}

	series, err := src.Fetch(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range series {
		if s.Labels["instance"] != instance {
			t.Errorf("%s from %s, want %s only", s.Metric, s.Labels["instance"], instance)
		}
		if s.Metric != "zfs_vdev_write_bytes_total" || s.Labels["vdev"] != "tank" {
			continue
		}
		found = true
		// Raw samples: one per scrape, a second apart, the first at or
		// before the start, none after the end.
		if n := len(s.Samples); n < 5 || n > 8 {
			t.Errorf("%d samples of tank's write counter for a %.1f s run scraped every second, want 5 to 8", n, rep.DurationSeconds)
		}
		if first := s.Samples[0].Time; first.After(q.Start) {
			t.Errorf("first sample %v after the start, want the last at or before it", first.Sub(q.Start))
		}
		if last := s.Samples[len(s.Samples)-1].Time; last.After(q.End) {
			t.Errorf("a sample %v after the end", last.Sub(q.End))
		}
		for i := 1; i < len(s.Samples); i++ {
			if gap := s.Samples[i].Time.Sub(s.Samples[i-1].Time); gap < 500*time.Millisecond || gap > 1500*time.Millisecond {
				t.Errorf("samples %v apart, want about the 1 s scrape interval: %v", gap, s.Samples)
				break
			}
		}
	}
	if !found {
		t.Errorf("no zfs_vdev_write_bytes_total series of tank's top vdev among %d series", len(series))
	}
}
