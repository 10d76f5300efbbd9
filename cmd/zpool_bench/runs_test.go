package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/poolconfig"
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

// A run shorter than its counters' sampling interval has no average: the
// list says n/a rather than what a whole interval's bytes over the run's
// fraction of it would read (a 0.047 s run as 866.9 MB/s).
func TestListShowsNoAverageForARunTooShort(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	why := "run (0.047 s) shorter than the sampling interval of the pool's I/O counters (1.00 s): what they counted took longer than the run"
	r := benchreport.Report{
		Run:             benchreport.Run{ID: "0000dddd", Name: "dd 40M", Pool: "tank", Command: []string{"dd"}, Start: start, End: start.Add(47 * time.Millisecond)},
		DurationSeconds: 0.047,
		Pool: benchreport.VdevStats{Name: "tank", Type: "root",
			WriteBytes: benchreport.Counter{Samples: 2, Increase: 40.75e6, AverageUnavailable: why, PeakUnavailable: why},
			ReadBytes:  benchreport.Counter{Samples: 2, AverageUnavailable: why, PeakUnavailable: why}},
	}
	if _, err := saveRun(dir, r); err != nil {
		t.Fatal(err)
	}
	var out, errs bytes.Buffer
	if rc := run(t.Context(), []string{"list", "--runs.dir", dir}, env{stdout: &out, stderr: &errs}); rc != 0 {
		t.Fatalf("list: %d %s", rc, errs.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || strings.Count(lines[1], " n/a ") != 2 || !strings.Contains(lines[1], "0.047 s") || strings.Contains(lines[1], "867") {
		t.Errorf("list:\n%s\nwant the run's two averages n/a and its 0.047 s", out.String())
	}
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

// Two runs of one name started in the same second are both kept, each
// with its chart under its own base name, and both are listed and found.
func TestSavedRunsOfOneNameInOneSecondAreBothKept(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	first := savedReport(t, dir, "0000aaaa", "raidz1 ashift=9", t0, 80)
	second := savedReport(t, dir, "0000bbbb", "raidz1 ashift=9", t0.Add(300*time.Millisecond), 85)
	if want := filepath.Join(dir, "20261130-100000-raidz1-ashift-9.json"); first != want {
		t.Errorf("first run saved as %s, want %s", first, want)
	}
	if want := filepath.Join(dir, "20261130-100000-raidz1-ashift-9-2.json"); second != want {
		t.Errorf("second run saved as %s, want %s", second, want)
	}
	for path, id := range map[string]string{first: "0000aaaa", second: "0000bbbb"} {
		if r, err := readRun(path); err != nil || r.Run.ID != id {
			t.Errorf("%s holds %s, %v; want run %s", path, r.Run.ID, err, id)
		}
		if _, err := os.Stat(strings.TrimSuffix(path, ".json") + ".svg"); err != nil {
			t.Errorf("no chart beside %s: %v", path, err)
		}
	}
	assertOnlyRuns(t, dir, 4)

	var out, errs bytes.Buffer
	if rc := run(t.Context(), []string{"list", "--runs.dir", dir}, env{stdout: &out, stderr: &errs}); rc != 0 {
		t.Fatalf("list: %d %s", rc, errs.String())
	}
	if !strings.Contains(out.String(), "0000aaaa") || !strings.Contains(out.String(), "0000bbbb") {
		t.Errorf("list does not show both runs:\n%s", out.String())
	}
	for ref, want := range map[string]string{
		"0000aaaa":                          "0000aaaa",
		"0000bbbb":                          "0000bbbb",
		"20261130-100000-raidz1-ashift-9-2": "0000bbbb",
		"raidz1 ashift=9":                   "0000bbbb", // the newest of that name
	} {
		if r, err := loadRun(dir, ref); err != nil || r.Run.ID != want {
			t.Errorf("loadRun(%q) = %s, %v; want %s", ref, r.Run.ID, err, want)
		}
	}
}

// A symbolic link planted where a run is to be saved, pointing at a file
// or at nothing, is neither followed nor replaced: the run takes the next
// name, and the link and what it points at stay as they were.
func TestSaveRunLeavesPlantedLinksAlone(t *testing.T) {
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		what   string
		at     string // the planted link's extension
		target bool   // whether the link points at an existing file
	}{
		{"a link to a file at the JSON's name", ".json", true},
		{"a link to a file at the chart's name", ".svg", true},
		{"a dangling link at the JSON's name", ".json", false},
		{"a dangling link at the chart's name", ".svg", false},
	} {
		dir := t.TempDir()
		victim := filepath.Join(t.TempDir(), "victim")
		const precious = "not to be truncated\n"
		if c.target {
			if err := os.WriteFile(victim, []byte(precious), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		link := filepath.Join(dir, "20261130-100000-mirror"+c.at)
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}

		saved := savedReport(t, dir, "0000aaaa", "mirror", t0, 80)
		if want := filepath.Join(dir, "20261130-100000-mirror-2.json"); saved != want {
			t.Errorf("%s: run saved as %s, want %s", c.what, saved, want)
		}
		if r, err := readRun(saved); err != nil || r.Run.ID != "0000aaaa" {
			t.Errorf("%s: saved run %s, %v", c.what, r.Run.ID, err)
		}
		if dest, err := os.Readlink(link); err != nil || dest != victim {
			t.Errorf("%s: the link now reads %q, %v; want it untouched", c.what, dest, err)
		}
		data, err := os.ReadFile(victim)
		switch {
		case c.target && string(data) != precious:
			t.Errorf("%s: the link's target now holds %.40q..., %v", c.what, data, err)
		case !c.target && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("%s: the dangling link's target was created: %.40q..., %v", c.what, data, err)
		}
		assertOnlyRuns(t, dir, 3)
	}
}

// assertOnlyRuns fails unless dir holds n entries and no temporary file
// of a save.
func assertOnlyRuns(t *testing.T, dir string, n int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != n || slices.ContainsFunc(names, func(s string) bool { return strings.HasSuffix(s, ".tmp") }) {
		t.Errorf("%s holds %v; want %d entries and no temporary file", dir, names, n)
	}
}

// A write that fails leaves no file behind.
func TestWriteTempRemovesWhatFailed(t *testing.T) {
	dir := t.TempDir()
	_, err := writeTemp(dir, func(w io.Writer) error {
		_, _ = io.WriteString(w, `{"run": {"id": "0000`)
		return errors.New("no space left on device")
	})
	if err == nil || !strings.Contains(err.Error(), "no space") {
		t.Errorf("writeTemp: %v, want the writer's error", err)
	}
	assertOnlyRuns(t, dir, 0)
}
