package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/poolconfig"
)

// savedReport is a saved run as zpool_bench writes it, with made-up
// figures.
func savedReport(t *testing.T, dir, id, name string, start time.Time, writeMBps float64) string {
	t.Helper()
	r := benchreport.Report{
		Run: benchreport.Run{ID: id, Name: name, Pool: "tank", Command: []string{"dd"}, Start: start, End: start.Add(10 * time.Second),
			Config: &poolconfig.Config{Pool: "tank", Layout: "raidz1 of 3"}, Source: "exporter http://localhost:9134"},
		DurationSeconds: 10,
		Pool:            benchreport.VdevStats{Name: "tank", Type: "root", WriteBytes: benchreport.Counter{Samples: 2, Increase: writeMBps * 1e7, PerSecond: writeMBps * 1e6}},
	}
	paths, err := saveRun(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || filepath.Ext(paths[0]) != ".json" || filepath.Ext(paths[1]) != ".svg" {
		t.Fatalf("saved %v", paths)
	}
	return paths[0]
}

func TestSavedRunsAreFoundByFileIDOrName(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	older := savedReport(t, dir, "0000aaaa", "raidz1 ashift=9", t0, 80)
	savedReport(t, dir, "0000bbbb", "raidz1 ashift=12", t0.Add(time.Hour), 120)
	savedReport(t, dir, "0000cccc", "raidz1 ashift=9", t0.Add(2*time.Hour), 85) // the same name again

	var out, errs bytes.Buffer
	if rc := run(t.Context(), []string{"list", "--runs.dir", dir}, env{stdout: &out, stderr: &errs}); rc != 0 {
		t.Fatalf("list: %d %s", rc, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || !strings.Contains(lines[1], "0000cccc") || !strings.Contains(lines[3], "0000aaaa") {
		t.Fatalf("list, newest first:\n%s", out.String())
	}
	if !strings.Contains(lines[2], "raidz1 of 3") || !strings.Contains(lines[2], "120.0") {
		t.Errorf("list line lacks layout or write MB/s: %q", lines[2])
	}

	for ref, want := range map[string]string{
		"0000bbbb":        "0000bbbb",
		"raidz1 ashift=9": "0000cccc", // the newest of that name
		older:             "0000aaaa",
		strings.TrimSuffix(filepath.Base(older), ".json"): "0000aaaa",
	} {
		r, err := loadRun(dir, ref)
		if err != nil || r.Run.ID != want {
			t.Errorf("loadRun(%q) = %s, %v; want %s", ref, r.Run.ID, err, want)
		}
	}
	_, err := loadRun(dir, "mirror")
	if err == nil || !strings.Contains(err.Error(), "raidz1 ashift=12 (0000bbbb)") {
		t.Errorf("an unknown run: %v; want the runs there are listed", err)
	}
	_, err = loadRun(filepath.Join(dir, "none"), "mirror")
	if err == nil || !strings.Contains(err.Error(), "--runs.dir") {
		t.Errorf("no runs directory: %v", err)
	}
}

func TestSlug(t *testing.T) {
	for name, want := range map[string]string{
		"raid10 ashift=12 lz4":  "raid10-ashift-12-lz4",
		"  --  ":                "run",
		"Größe/Ärger":           "größe-ärger",
		strings.Repeat("é", 70): strings.Repeat("é", 60),
	} {
		if got := slug(name); got != want {
			t.Errorf("slug(%q) = %q, want %q", name, got, want)
		}
	}
}
