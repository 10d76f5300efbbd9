package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchrun"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/poolconfig"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// latencyRun saves a fio read of the pool tank, its output fio's JSON,
// with the exporter's latency histograms when histograms is set: the
// pool's row reads 1000 times, 800 within 1 ms and 200 within 4 ms,
// every second of a 5 s run.
func latencyRun(t *testing.T, dir, name string, histograms bool) {
	t.Helper()
	start := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	command := []string{"fio", "--name=jsonrun", "--rw=read", "--output-format=json"}
	run := benchreport.Run{ID: name, Name: name, Pool: "tank", Command: command, Start: start, End: at(5),
		Config: &poolconfig.Config{Pool: "tank", Layout: "mirror of 2"}, Source: "exporter http://localhost:9134"}
	run.Workload, run.WorkloadError = parseWorkload(workload.Fio, command, benchrun.Result{Stdout: captured(t, "fio-333-json.txt")})
	if run.Workload == nil {
		t.Fatal(run.WorkloadError)
	}
	var series []benchreport.Series
	add := func(metric string, labels map[string]string, perSecond float64) {
		s := benchreport.Series{Metric: metric, Labels: labels}
		for i := range 8 {
			s.Samples = append(s.Samples, benchreport.Sample{Time: at(float64(i) - 0.5), Value: perSecond * float64(i)})
		}
		series = append(series, s)
	}
	pool := map[string]string{"pool": "tank", "vdev": "tank"}
	add("zfs_vdev_read_bytes_total", pool, 4e6)
	add("zfs_vdev_write_bytes_total", pool, 1e4)
	if histograms {
		for _, family := range []string{benchmetrics.TotalWait, benchmetrics.DiskWait} {
			for dir, n := range map[string]float64{"read": 1000, "write": 0} {
				labels := func(le string) map[string]string {
					l := map[string]string{"pool": "tank", "vdev": "tank", "type": dir}
					if le != "" {
						l["le"] = le
					}
					return l
				}
				add(family+"_bucket", labels("0.000262143"), 0)
				add(family+"_bucket", labels("0.001048575"), 0.8*n)
				add(family+"_bucket", labels("0.004194303"), n)
				add(family+"_bucket", labels("+Inf"), n)
				add(family+"_count", labels(""), n)
				add(family+"_sum", labels(""), n*0.0015)
			}
		}
	}
	r, err := benchreport.Compute(run, series)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := saveRun(dir, r); err != nil {
		t.Fatal(err)
	}
}

// `zpool_bench report` and `compare` give the pool's latency in every
// format, fio's own from its JSON beside it, and n/a with the reason for
// a run without histograms and for the writes the run did not do.
func TestLatencyInEveryFormat(t *testing.T) {
	dir := t.TempDir()
	latencyRun(t, dir, "with histograms", true)
	latencyRun(t, dir, "collector off", false)
	out := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if rc := run(t.Context(), append(args, "--runs.dir", dir), env{stdout: &stdout, stderr: &stderr}); rc != 0 {
			t.Fatalf("%q: %d\n%s", args, rc, stderr.String())
		}
		return stdout.String()
	}
	// 7000 reads over 7 s: rank 3500 of the 5600 within 1 ms, rank 6930
	// the 1330th of the 1400 in (1 ms, 4 ms].
	p50 := 0.000262143 + (0.001048575-0.000262143)*3500/5600
	p99 := 0.001048575 + (0.004194303-0.001048575)*1330/1400
	const noWrites = "no writes completed during the run"

	table := out("report", "with histograms")
	for _, want := range []string{
		fmt.Sprintf("fio jsonrun group 0 read clat: p50 0.00758 ms, p99 0.0479 ms, mean 0.0101 ms | pool read total wait: p50 %.3f ms, p99 %.2f ms, mean 1.50 ms", p50*1e3, p99*1e3),
		"note: latency n/a for tank write: " + noWrites,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("report table lacks %q:\n%s", want, table)
		}
	}
	if md := out("report", "--format", "markdown", "collector off"); !strings.Contains(md, `- note: latency n/a: no zfs\_vdev\_total\_wait\_seconds or zfs\_vdev\_disk\_wait\_seconds histograms`) ||
		strings.Contains(md, "| TOTAL p50 |") {
		t.Errorf("report Markdown without histograms:\n%s", md)
	}
	recs, err := csv.NewReader(strings.NewReader(out("report", "--format", "csv", "with histograms"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	if pool := recs[1]; pool[col["total_wait_read_mean_seconds"]] != "0.0015" || pool[col["total_wait_write_p50_seconds"]] != "" || pool[col["total_wait_write_unavailable"]] != noWrites {
		t.Errorf("report CSV:\n%q\n%q", recs[0], pool)
	}
	var rep struct {
		Pool struct {
			Latency map[string]map[string]map[string]any `json:"latency"`
		} `json:"pool"`
		Run struct {
			Workload struct {
				Results []struct {
					Latency struct {
						Measure     string
						MeanSeconds float64
						Percentiles []struct{ Percent, Seconds float64 }
					}
				}
			} `json:"workload"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(out("report", "--format", "json", "with histograms")), &rep); err != nil {
		t.Fatal(err)
	}
	read, write := rep.Pool.Latency["total_wait"]["read"], rep.Pool.Latency["disk_wait"]["write"]
	if read["p99_seconds"] == nil || read["operations"] != 7000.0 || write["p99_seconds"] != nil || write["unavailable"] != noWrites {
		t.Errorf("report JSON pool.latency: read %v, write %v", read, write)
	}
	if l := rep.Run.Workload.Results[0].Latency; l.Measure != "clat" || len(l.Percentiles) != 17 || l.Percentiles[6].Percent != 50 {
		t.Errorf("report JSON run.workload.Results[0].Latency = %+v", l)
	}

	cmp := out("compare", "with histograms", "collector off")
	for _, want := range []string{
		"note: n/a in run 1 (with histograms), pool write latency ms: " + noWrites,
		"note: n/a in run 2 (collector off), pool latency ms: no zfs_vdev_total_wait_seconds",
	} {
		if !strings.Contains(cmp, want) {
			t.Errorf("comparison lacks %q:\n%s", want, cmp)
		}
	}
	for _, want := range []string{
		fmt.Sprintf(`(?m)^pool read total wait p99 ms +%.2f +n/a$`, p99*1e3),
		`(?m)^pool write disk wait p99 ms +n/a +n/a$`,
		// fio's clat p99, 47872 ns.
		`(?m)read clat p99 ms +0\.0479 +0\.0479 \(1\.00×\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(cmp) {
			t.Errorf("comparison lacks a line matching %s:\n%s", want, cmp)
		}
	}
	if md := out("compare", "--format", "markdown", "with histograms", "collector off"); !strings.Contains(md, fmt.Sprintf("| pool read total wait p50 ms | %.3f | n/a |", p50*1e3)) {
		t.Errorf("comparison Markdown:\n%s", md)
	}
	if c := out("compare", "--format", "csv", "with histograms", "collector off"); !strings.Contains(c, "\npool.write.disk_wait.p99_seconds,seconds,,,,false,\"run 1: "+noWrites+"; run 2: no zfs_vdev_total_wait_seconds") {
		t.Errorf("comparison CSV:\n%s", c)
	}
	var c benchreport.Comparison
	if err := json.Unmarshal([]byte(out("compare", "--format", "json", "with histograms", "collector off")), &c); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, row := range c.Rows {
		if row.Key == "pool.read.total_wait.p99_seconds" {
			found = true
			if row.Values[0] == nil || *row.Values[0] < 0.001 || row.Values[1] != nil || !strings.Contains(row.Unavailable[1], "--no-collector.vdev_latency") {
				t.Errorf("comparison JSON row %+v", row)
			}
		}
	}
	if !found {
		t.Error("no pool.read.total_wait.p99_seconds row in the comparison JSON")
	}
}

// fio's JSON on stdout and its messages on stderr are read together: the
// summary holds its latency distribution and its messages.
func TestParseFioJSONWorkload(t *testing.T) {
	s, msg := parseWorkload("", []string{"./bench.sh"}, benchrun.Result{
		Stdout: captured(t, "fio-333-json.txt"),
		Stderr: []byte("fio: file hash not empty on exit\n"),
	})
	if s == nil || msg != "" || s.Tool != workload.Fio {
		t.Fatalf("fio JSON behind a script: %+v, %q", s, msg)
	}
	if l := s.Final()[0].Latency; l == nil || l.Measure != "clat" {
		t.Errorf("no clat distribution: %+v", l)
	}
	if len(s.Messages) != 1 || s.Messages[0] != "fio: file hash not empty on exit" {
		t.Errorf("messages %q", s.Messages)
	}
}
