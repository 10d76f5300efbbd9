package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchrun"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/poolconfig"
)

// copyRun is a run as the issue's: dd copies a file into the pool in 0.4
// s with fsync, and the pool's counters move every second (zpool iostat
// at --zpool.iostat-interval=1s). saved is what zpool_bench saved.
func copyRun(t *testing.T, dir, name string, written float64) (saved string) {
	t.Helper()
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	command := []string{"dd", "if=/var/tmp/src", "of=/tank/f", "bs=1M", "conv=fsync"}
	run := benchreport.Run{ID: name, Name: name, Pool: "tank", Command: command, Start: start, End: at(0.4),
		Config: &poolconfig.Config{Pool: "tank", Layout: "raidz1 of 3"}, Source: "exporter http://localhost:9134"}
	run.Workload, run.WorkloadError = parseWorkload("dd", command, benchrun.Result{Stderr: captured(t, "dd-gnu91-write-fdatasync.txt")})
	if run.Workload == nil {
		t.Fatal(run.WorkloadError)
	}
	// Most of it in the second the run ends in, the rest while settling.
	var series []benchreport.Series
	for metric, values := range map[string][]float64{
		"zfs_vdev_write_bytes_total": {0, 0.7 * written, written, written, written},
		"zfs_vdev_read_bytes_total":  {0, 1e5, 1e5, 1e5, 1e5},
	} {
		s := benchreport.Series{Metric: metric, Labels: map[string]string{"pool": "tank", "vdev": "tank"}}
		for i, v := range values {
			s.Samples = append(s.Samples, benchreport.Sample{Time: at(-0.6 + float64(i)), Value: v})
		}
		series = append(series, s)
	}
	r, err := benchreport.Compute(run, series)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := saveRun(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	return paths[0]
}

// `zpool_bench report` and `compare` of runs shorter than the sampling
// interval, in every format: no average and no peak, the reason, the bytes
// the pool wrote, and dd's copy into the pool named a write.
func TestShortCopyRunsInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	copyRun(t, dir, "raidz 3x3", 151.6e6)
	copyRun(t, dir, "raidz 1x9", 168.4e6)
	const reason = "run (0.400 s) shorter than the sampling interval of the pool's I/O counters (1.00 s)"
	const noAverage = reason + ": what they counted took longer than the run"

	out := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if rc := run(t.Context(), append(args, "--runs.dir", dir), env{stdout: &stdout, stderr: &stderr}); rc != 0 {
			t.Fatalf("%q: %d\n%s", args, rc, stderr.String())
		}
		return stdout.String()
	}

	table := out("report", "raidz 3x3")
	for _, want := range []string{"note: MB/s peak n/a: " + reason, "note: MB/s avg n/a: " + noAverage,
		"dd wrote: 268.4 MB in 0.207 s, 1300 MB/s | pool: 151.6 MB written, average n/a, peak n/a"} {
		if !strings.Contains(table, want) {
			t.Errorf("report table lacks %q:\n%s", want, table)
		}
	}
	if md := out("report", "--format", "markdown", "raidz 3x3"); !strings.Contains(md, "| MB/s peak | n/a | n/a |") || !strings.Contains(md, "- note: MB/s peak n/a: "+reason) {
		t.Errorf("report Markdown:\n%s", md)
	}
	recs, err := csv.NewReader(strings.NewReader(out("report", "--format", "csv", "raidz 3x3"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	if pool := recs[1]; pool[col["peak_write_bytes_per_second"]] != "" || pool[col["peak_write_unavailable"]] != reason || pool[col["write_bytes_per_second"]] != "" || pool[col["write_bytes"]] != "1.516e+08" {
		t.Errorf("report CSV:\n%q\n%q", recs[0], pool)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out("report", "--format", "json", "raidz 3x3")), &rep); err != nil {
		t.Fatal(err)
	}
	w := rep["pool"].(map[string]any)["write_bytes"].(map[string]any)
	if peak, ok := w["peak_per_second"]; !ok || peak != nil || w["peak_unavailable"] != reason || w["per_second"] != nil || w["average_unavailable"] != noAverage {
		t.Errorf("report JSON write_bytes = %v", w)
	}

	cmp := out("compare", "raidz 3x3", "raidz 1x9")
	for _, want := range []string{"note: n/a in run 1 (raidz 3x3), pool write MB/s peak and pool read MB/s peak: " + reason,
		"note: n/a in run 2 (raidz 1x9), pool write MB/s peak and pool read MB/s peak: " + reason} {
		if !strings.Contains(cmp, want) {
			t.Errorf("comparison lacks %q:\n%s", want, cmp)
		}
	}
	for _, l := range strings.Split(cmp, "\n") {
		f := strings.Fields(l)
		switch {
		case strings.HasPrefix(l, "pool write MB/s avg"):
			if f[len(f)-2] != "n/a" || f[len(f)-1] != "n/a" {
				t.Errorf("write average: %q, want n/a for both runs", l)
			}
		case strings.HasPrefix(l, "pool write MB/s peak"):
			if f[len(f)-2] != "n/a" || f[len(f)-1] != "n/a" {
				t.Errorf("write peak: %q, want n/a for both runs", l)
			}
		}
	}
	if !strings.Contains(cmp, "dd wrote MB/s") || strings.Contains(cmp, "mixed") || strings.Contains(cmp, "copied") {
		t.Errorf("dd's figure in the comparison:\n%s", cmp)
	}
	if md := out("compare", "--format", "markdown", "raidz 3x3", "raidz 1x9"); !strings.Contains(md, "| pool write MB/s peak | n/a | n/a |") || !strings.Contains(md, "| dd wrote MB/s |") {
		t.Errorf("comparison Markdown:\n%s", md)
	}
	cmpCSV := out("compare", "--format", "csv", "raidz 3x3", "raidz 1x9")
	if want := "pool.write.peak_bytes_per_second,bytes/s,,,,false,run 1: " + reason + "; run 2: " + reason + "\n"; !strings.Contains(cmpCSV, want) {
		t.Errorf("comparison CSV lacks %q:\n%s", want, cmpCSV)
	}
	var c benchreport.Comparison
	if err := json.Unmarshal([]byte(out("compare", "--format", "json", "raidz 3x3", "raidz 1x9")), &c); err != nil {
		t.Fatal(err)
	}
	for _, row := range c.Rows {
		if row.Key == "pool.write.peak_bytes_per_second" && (row.Values[0] != nil || row.Values[1] != nil || len(row.Unavailable) != 2 || row.Unavailable[1] != reason) {
			t.Errorf("comparison JSON peak row %+v", row)
		}
		if strings.HasPrefix(row.Key, "workload.") && row.Key != "workload.dd wrote.bytes_per_second" {
			t.Errorf("comparison JSON workload row %q, want workload.dd wrote.bytes_per_second", row.Key)
		}
	}
}
