package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"now":                  now,
		"now-30m":              now.Add(-30 * time.Minute),
		"2025-01-01T10:00:00Z": time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC),
		"1735725600":           time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC),
		"1735725600.5":         time.Date(2025, 1, 1, 10, 0, 0, 5e8, time.UTC),
	} {
		got, err := parseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "yesterday", "now+1h", "now-", "2025-01-01"} {
		if _, err := parseTime(in, now); err == nil {
			t.Errorf("parseTime(%q) accepted", in)
		}
	}
}

const emptyAnswer = `{"status":"success","data":{"resultType":"matrix","result":[]}}`

// The command writes <uid>.svg for each file, and exits 1 when a query
// failed, after writing every picture.
func TestRun(t *testing.T) {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.FormValue("query"), "zfs_pool_state") {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"no"}`))
			return
		}
		_, _ = w.Write([]byte(emptyAnswer))
	}))
	defer prom.Close()
	out := t.TempDir()
	files, err := filepath.Glob("../../out/dashboards/*.json")
	if err != nil || len(files) != 6 {
		t.Fatalf("dashboards: %v %v", files, err)
	}
	var stdout, stderr bytes.Buffer
	args := append([]string{"-prometheus", prom.URL, "-from", "now-10m", "-to", "now", "-var", "pool=tank", "-out", out}, files...)
	if code := run(args, time.Now(), &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1; stderr:\n%s", code, stderr.String())
	}
	for _, uid := range []string{"zfs-pools", "zfs-io", "zfs-benchmark", "zfs-scans", "zfs-datasets", "zfs-arc"} {
		if _, err := os.Stat(filepath.Join(out, uid+".svg")); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stderr.String(), `zfs-pools: panel "Pools not online": query A: bad_data: no`) {
		t.Errorf("the failed query is not reported:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "zfs-io.svg: 36 panels") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
}

func TestRunNeedsPrometheusAndOut(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-out", t.TempDir()}, time.Now(), &stdout, &stderr); code != 2 {
		t.Errorf("exit %d without -prometheus, want 2", code)
	}
	if code := run([]string{"-prometheus", "http://127.0.0.1:1", "-out", t.TempDir(), "-from", "later"}, time.Now(), &stdout, &stderr); code != 2 {
		t.Errorf("exit %d with a bad -from, want 2", code)
	}
}
