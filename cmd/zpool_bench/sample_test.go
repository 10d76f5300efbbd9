package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// An exporter whose every third scrape fails: the run's report is made
// from the others, and it and the log say how many failed.
func TestFailedScrapesAreNoted(t *testing.T) {
	dir := t.TempDir()
	zpool := writeFakeZpool(t, dir)
	var (
		mu      sync.Mutex
		scrapes int
	)
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == benchwindow.Path:
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(benchwindow.Window{ID: "0badc0de", Name: "x", Start: time.Now().UTC(), Active: true})
		case strings.HasSuffix(r.URL.Path, "/end"):
			_ = json.NewEncoder(w).Encode(benchwindow.Window{ID: "0badc0de", Name: "x", Start: time.Now().UTC(), End: time.Now().UTC()})
		case r.URL.Path == "/metrics":
			mu.Lock()
			scrapes++
			n := scrapes
			mu.Unlock()
			if n%3 == 0 {
				http.Error(w, "collectors busy", http.StatusServiceUnavailable)
				return
			}
			fmt.Fprintf(w, "# TYPE zfs_vdev_write_bytes_total counter\nzfs_vdev_write_bytes_total{pool=\"tank\",vdev=\"tank\"} %d\n", n*1000)
		default:
			http.NotFound(w, r)
		}
	}))
	defer exporter.Close()

	var out, errs bytes.Buffer
	status := run(t.Context(), []string{"run", "--name", "x", "--pool", "tank", "--zpool.command", zpool, "--zfs.command", zpool,
		"--exporter.url", exporter.URL, "--exporter.sample-interval", "100ms", "--settle", "0s", "--runs.dir", dir, "--format", "json",
		"--", "sleep", "1"}, env{stdout: &out, stderr: &errs})
	if status != 0 {
		t.Fatalf("exit status %d\n%s", status, errs.String())
	}
	var rep benchreport.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, out.String())
	}
	if rep.Pool.WriteBytes.Samples < 5 || rep.Pool.WriteBytes.Increase <= 0 {
		t.Errorf("tank's writes from %d samples, %v bytes; want the scrapes that did not fail", rep.Pool.WriteBytes.Samples, rep.Pool.WriteBytes.Increase)
	}
	var note string
	for _, m := range rep.Missing {
		if strings.Contains(m, "scrapes of the exporter's /metrics failed") {
			note = m
		}
	}
	t.Logf("note: %s", note)
	if note == "" || !strings.Contains(note, "503 Service Unavailable: collectors busy") || !strings.Contains(errs.String(), note) {
		t.Errorf("the report's notes %q and the log do not both say how many scrapes failed and why:\n%s", rep.Missing, errs.String())
	}
}
