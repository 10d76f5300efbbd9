package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchsource"
)

// Debian's Prometheus scrapes two replay exporters every second; the
// Prometheus source refuses to mix them without matchers, and with them
// returns the raw samples of one, a second apart, for a benchmark window.
func TestBenchmarkSourcePrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 15 s; skipped with -short")
	}
	prometheusBin := lookPath(t, "prometheus", "prometheus")
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
	p := startServer(t, "prometheus", prometheusBin, addr, "--config.file="+path,
		"--storage.tsdb.path="+filepath.Join(promDir, "data"), "--web.listen-address="+addr)

	instance := strings.TrimPrefix(nas.URL, "http://")
	src := benchsource.Prometheus(p.url, `instance="`+instance+`"`, nil)
	// Wait until Prometheus has tank's counters from the iostat stream.
	var latest time.Time
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var err error
		if latest, err = src.LatestSample(t.Context()); err == nil {
			break
		}
	}
	if latest.IsZero() {
		t.Fatal("Prometheus never had a sample of zfs_vdev_write_bytes_total")
	}

	ended := holdWindow(t, nas.URL, `{"name": "prometheus source", "pool": "tank"}`, 5*time.Second)
	// The runner waits for a sample after the end.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !latest.After(ended.End); time.Sleep(250 * time.Millisecond) {
		latest, _ = src.LatestSample(t.Context())
	}
	if !latest.After(ended.End) {
		t.Fatalf("no sample after the window's end: newest %v, end %v", latest, ended.End)
	}

	q := benchsource.Query{Pool: "tank", Start: ended.Start, End: ended.End}
	_, err := benchsource.Prometheus(p.url, "", nil).Fetch(t.Context(), q)
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
			t.Errorf("%d samples of tank's write counter for a %.1f s window scraped every second, want 5 to 8", n, ended.DurationSeconds)
		}
		if first := s.Samples[0].Time; first.After(ended.Start) {
			t.Errorf("first sample %v after the start, want the last at or before it", first.Sub(ended.Start))
		}
		if last := s.Samples[len(s.Samples)-1].Time; last.After(ended.End) {
			t.Errorf("a sample %v after the end", last.Sub(ended.End))
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
