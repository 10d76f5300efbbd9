package workload

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const (
	KiB = 1 << 10
	MiB = 1 << 20
	GiB = 1 << 30
)

func TestParseFioFixtures(t *testing.T) {
	for name, c := range map[string]struct {
		headline string
		want     []exp
	}{
		"fio-333-seq-write-tmpfs": {"WRITE: bw=4129MiB/s (4330MB/s)", []exp{
			// write: IOPS=4129, BW=4129MiB/s (4330MB/s)(256MiB/62msec); lat (usec): max=1824, avg=238.99
			{Name: "write", Job: "seqwrite", Run: 1, Dir: Write, Printed: "IOPS=4129, BW=4129MiB/s (4330MB/s)", Figs: figs{
				"OperationsPerSecond": 4129, "BytesPerSecond": 4129 * MiB, "Bytes": 256 * MiB, "Seconds": 0.062,
				"LatencySeconds": 238.99e-6, "MaxLatencySeconds": 1824e-6}},
			// WRITE: bw=4129MiB/s (4330MB/s), ..., io=256MiB (268MB), run=62-62msec
			{Name: "WRITE", Run: 1, Dir: Write, Printed: "bw=4129MiB/s (4330MB/s)", Figs: figs{
				"BytesPerSecond": 4129 * MiB, "Bytes": 256 * MiB, "Seconds": 0.062}},
		}},
		"fio-333-randrw-group-reporting": {"READ: bw=2124MiB/s (2227MB/s); WRITE: bw=912MiB/s (956MB/s)", []exp{
			// read: IOPS=544k, BW=2124MiB/s (2227MB/s)(6373MiB/3001msec); lat (nsec): max=4180.3k, avg=2329.59
			{Name: "read", Job: "randrw", Dir: Read, Figs: figs{
				"OperationsPerSecond": 544e3, "BytesPerSecond": 2124 * MiB, "Bytes": 6373 * MiB, "Seconds": 3.001,
				"LatencySeconds": 2329.59e-9, "MaxLatencySeconds": 4180.3e-6}},
			{Name: "write", Job: "randrw", Dir: Write, Figs: figs{
				"OperationsPerSecond": 233e3, "BytesPerSecond": 912 * MiB, "Bytes": 2737 * MiB, "Seconds": 3.001,
				"LatencySeconds": 2333.97e-9, "MaxLatencySeconds": 1434.2e-6}},
			{Name: "READ", Dir: Read, Figs: figs{"BytesPerSecond": 2124 * MiB, "Bytes": 6373 * MiB, "Seconds": 3.001}},
			{Name: "WRITE", Dir: Write, Figs: figs{"BytesPerSecond": 912 * MiB, "Bytes": 2737 * MiB, "Seconds": 3.001}},
		}},
		"fio-333-two-groups-stonewall": {"WRITE: bw=1085MiB/s (1137MB/s); READ: bw=587MiB/s (616MB/s)", []exp{
			{Name: "write", Job: "seq-write", Dir: Write, Figs: figs{
				"OperationsPerSecond": 8677, "BytesPerSecond": 1085 * MiB, "Bytes": 128 * MiB, "Seconds": 0.118,
				"LatencySeconds": 20.67e-6, "MaxLatencySeconds": 301e-6}},
			{Name: "read", Job: "seq-read", Dir: Read, Figs: figs{
				"OperationsPerSecond": 4697, "BytesPerSecond": 587 * MiB, "Bytes": 128 * MiB, "Seconds": 0.218,
				"LatencySeconds": 211.79e-6, "MaxLatencySeconds": 13414e-6}},
			{Name: "WRITE", Dir: Write, Figs: figs{"BytesPerSecond": 1085 * MiB, "Bytes": 128 * MiB, "Seconds": 0.118}},
			{Name: "READ", Dir: Read, Figs: figs{"BytesPerSecond": 587 * MiB, "Bytes": 128 * MiB, "Seconds": 0.218}},
		}},
		// kb_base=1000 puts the SI figure first: BW=1864MB/s (1778MiB/s)(33.6MB/18msec).
		"fio-333-kb-base-1000": {"WRITE: bw=1864MB/s (1778MiB/s)", []exp{
			{Name: "write", Job: "kb1000", Dir: Write, Printed: "IOPS=28.4k, BW=1864MB/s (1778MiB/s)", Figs: figs{
				"OperationsPerSecond": 28.4e3, "BytesPerSecond": 1864e6, "Bytes": 33.6e6, "Seconds": 0.018,
				"LatencySeconds": 32.49e-6, "MaxLatencySeconds": 2514e-6}},
			{Name: "WRITE", Dir: Write, Figs: figs{"BytesPerSecond": 1864e6, "Bytes": 33.6e6, "Seconds": 0.018}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := ParseFio(bytes.NewReader(fixture(t, name).Body))
			if err != nil {
				t.Fatal(err)
			}
			checkResults(t, s.Results, c.want)
			if s.Version != "fio-3.33" || s.Headline != c.headline {
				t.Errorf("version %q, headline %q; want %q", s.Version, s.Headline, c.headline)
			}
			golden(t, name, s)
		})
	}
}

// Groups: the job results carry their group id, and so do the summaries.
func TestParseFioGroups(t *testing.T) {
	s, err := ParseFio(bytes.NewReader(fixture(t, "fio-333-two-groups-stonewall").Body))
	if err != nil {
		t.Fatal(err)
	}
	var groups []int
	for _, r := range s.Results {
		if r.Group == nil {
			t.Fatalf("%s %s without a group", r.Name, r.Job)
		}
		groups = append(groups, *r.Group)
	}
	if len(groups) != 4 || groups[0] != 0 || groups[1] != 1 || groups[2] != 0 || groups[3] != 1 {
		t.Errorf("groups %v, want [0 1 0 1]", groups)
	}
}

// --status-interval=1: four reports of a 3 s run; the last is the final.
func TestParseFioStatusInterval(t *testing.T) {
	name := "fio-333-status-interval"
	s, err := ParseFio(bytes.NewReader(fixture(t, name).Body))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 8 {
		t.Fatalf("%d results, want a job line and a group line for each of 4 reports", len(s.Results))
	}
	for i, r := range s.Results {
		if r.Run != i/2+1 {
			t.Errorf("result %d (%s) in run %d, want %d", i, r.Name, r.Run, i/2+1)
		}
	}
	checkResults(t, s.Final(), []exp{
		// read: IOPS=9121, BW=35.6MiB/s (37.4MB/s)(107MiB/3001msec); lat: max=38932, avg=109.01
		{Name: "read", Job: "randread", Run: 4, Dir: Read, Figs: figs{
			"OperationsPerSecond": 9121, "BytesPerSecond": 35.6 * MiB, "Bytes": 107 * MiB, "Seconds": 3.001,
			"LatencySeconds": 109.01e-6, "MaxLatencySeconds": 38932e-6}},
		{Name: "READ", Run: 4, Dir: Read, Figs: figs{"BytesPerSecond": 35.6 * MiB, "Bytes": 107 * MiB, "Seconds": 3.001}},
	})
	if s.Headline != "READ: bw=35.6MiB/s (37.4MB/s)" {
		t.Errorf("headline %q", s.Headline)
	}
	golden(t, name, s)
}

func TestParseFioFailures(t *testing.T) {
	// The job fails at its first write: no figures, and fio's messages.
	s, err := ParseFio(bytes.NewReader(fixture(t, "fio-333-job-error-dev-full").Body))
	if !errors.Is(err, ErrNoSummary) || s.Results != nil ||
		!strings.Contains(err.Error(), "fio: io_u error on file /dev/full: No space left on device") {
		t.Errorf("job error: %+v, %v", s, err)
	}
	s, err = ParseFio(bytes.NewReader(fixture(t, "fio-333-bad-directory").Body))
	if !errors.Is(err, ErrNoSummary) || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("bad directory: %+v, %v", s, err)
	}
	terse := "3;fio-3.33;t;0;0;4096;409600;102400;10;0;0;0.000000;0.000000;1;428;7.325206\n"
	if _, err := ParseFio(strings.NewReader(terse)); !errors.Is(err, ErrUnsupported) || !strings.HasPrefix(err.Error(), "line 1: ") {
		t.Errorf("terse: %v", err)
	}
}

// checkLatency compares a result's distribution with the measure, mean,
// count and percentiles (percent, seconds pairs) it must hold; a nil
// count or mean must be missing.
func checkLatency(t *testing.T, r Result, measure string, mean, ops *float64, pcts ...float64) {
	t.Helper()
	l := r.Latency
	if l == nil {
		t.Fatalf("%s %s: no latency distribution", r.Job, r.Name)
	}
	if l.Measure != measure {
		t.Errorf("%s %s: measure %q, want %q", r.Job, r.Name, l.Measure, measure)
	}
	for what, f := range map[string][2]*float64{"mean": {l.MeanSeconds, mean}, "operations": {l.Operations, ops}} {
		got, want := f[0], f[1]
		if (got == nil) != (want == nil) || got != nil && !near(*got, *want) {
			t.Errorf("%s %s: %s %v, want %v", r.Job, r.Name, what, deref(got), deref(want))
		}
	}
	for i := 0; i+1 < len(pcts); i += 2 {
		if got, ok := l.At(pcts[i]); !ok || !near(got, pcts[i+1]) {
			t.Errorf("%s %s: p%v = %v (%v), want %v", r.Job, r.Name, pcts[i], got, ok, pcts[i+1])
		}
	}
	for i := 1; i < len(l.Percentiles); i++ {
		if l.Percentiles[i].Percent <= l.Percentiles[i-1].Percent {
			t.Errorf("%s %s: percentiles out of order: %v", r.Job, r.Name, l.Percentiles)
		}
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// The text report's clat percentiles, with clat's mean (234.22 µs) and not
// lat's (238.99 µs, which LatencySeconds keeps); nanoseconds where fio
// prints them so; group summaries have none.
func TestParseFioTextPercentiles(t *testing.T) {
	s, err := ParseFio(bytes.NewReader(fixture(t, "fio-333-seq-write-tmpfs").Body))
	if err != nil {
		t.Fatal(err)
	}
	// |  1.00th=[  135], ... 50.00th=[  192], ... 99.00th=[ 1123], ... 99.99th=[ 1811]
	checkLatency(t, s.Results[0], "clat", ptr(234.22e-6), nil, 1, 135e-6, 50, 192e-6, 99, 1123e-6, 99.99, 1811e-6)
	if n := len(s.Results[0].Latency.Percentiles); n != 17 {
		t.Errorf("%d percentiles, want fio's 17", n)
	}
	if s.Results[1].Latency != nil {
		t.Errorf("the group summary has a distribution: %+v", s.Results[1].Latency)
	}
	s, err = ParseFio(bytes.NewReader(fixture(t, "fio-333-randrw-group-reporting").Body))
	if err != nil {
		t.Fatal(err)
	}
	// read: clat (nsec): ... avg=2309.08; 50.00th=[ 2096], 99.00th=[ 2800], 99.99th=[82432]
	checkLatency(t, s.Results[0], "clat", ptr(2309.08e-9), nil, 50, 2096e-9, 99, 2800e-9, 99.99, 82432e-9)
	// write: clat (nsec): ... avg=2300.27; 50.00th=[ 2096], 99.00th=[ 2704]
	checkLatency(t, s.Results[1], "clat", ptr(2300.27e-9), nil, 50, 2096e-9, 99, 2704e-9)
}

// Layouts written after fio's source: lat percentiles alone
// (lat_percentiles=1, clat_percentiles=0), both with lat's printed first
// (clat's are kept), slat's (never kept), and a block cut after its
// heading.
func TestParseFioTextPercentileLayouts(t *testing.T) {
	job := "j: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2024\n" +
		"  write: IOPS=100, BW=400KiB/s (410kB/s)(4000KiB/10000msec)\n" +
		"    slat (usec): min=1, max=9, avg=2.00, stdev=1.00\n" +
		"    clat (usec): min=10, max=900, avg=40.00, stdev=9.00\n" +
		"     lat (usec): min=11, max=909, avg=42.00, stdev=9.00\n"
	slat := "    slat percentiles (usec):\n     |  50.00th=[    2], 99.00th=[    8]\n"
	lat := "    lat percentiles (usec):\n     |  50.00th=[   33], 99.00th=[  800]\n"
	clat := "    clat percentiles (usec):\n     |  50.00th=[   31], 99.00th=[  700],\n     | 99.90th=[  880]\n"
	for _, c := range []struct {
		name, in, measure string
		mean, p99         float64
	}{
		{"lat alone", job + slat + lat, "lat", 42e-6, 800e-6},
		{"lat before clat", job + lat + clat, "clat", 40e-6, 700e-6},
		{"clat before lat", job + clat + lat, "clat", 40e-6, 700e-6},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := ParseFio(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			checkLatency(t, s.Results[0], c.measure, &c.mean, nil, 99, c.p99)
			if l := s.Results[0].Latency; len(l.Percentiles) != map[string]int{"lat": 2, "clat": 3}[c.measure] {
				t.Errorf("percentiles %v: another block's are mixed in", l.Percentiles)
			}
			if lat := s.Results[0].LatencySeconds; lat == nil || *lat != 42e-6 {
				t.Errorf("LatencySeconds %v, want lat's mean", deref(lat))
			}
		})
	}
	s, err := ParseFio(strings.NewReader(job + "    clat percentiles (usec):\n"))
	if err != nil || s.Results[0].Latency != nil {
		t.Errorf("a heading without lines: %+v, %v; want no distribution", s.Results[0].Latency, err)
	}
	_, err = ParseFio(strings.NewReader(job + "    clat percentiles (usec):\n     | 99.00th=[  700], 50.00th=[   31]\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 7: fio clat percentiles out of order") {
		t.Errorf("percentiles out of order: %v", err)
	}
}

// fio --output-format=json: a result per direction that ran, with the
// figures fio printed, clat_ns's percentiles with its mean and N, and
// lat_ns's mean and maximum as LatencySeconds.
func TestParseFioJSON(t *testing.T) {
	name := "fio-333-json"
	s, err := ParseFio(bytes.NewReader(fixture(t, name).Body))
	if err != nil {
		t.Fatal(err)
	}
	// read: io_bytes 4194304, bw_bytes 349525333, iops 85333.333333,
	// runtime 12 ms, total_ios 1024; lat_ns mean 10152.176758, max 2021759.
	checkResults(t, s.Results, []exp{{Name: "read", Job: "jsonrun", Run: 1, Dir: Read, Printed: "bw_bytes=349525333, iops=85333.333333", Figs: figs{
		"Bytes": 4194304, "BytesPerSecond": 349525333, "OperationsPerSecond": 85333.333333, "Operations": 1024, "Seconds": 0.012,
		"LatencySeconds": 10152.176758e-9, "MaxLatencySeconds": 2021759e-9}}})
	// clat_ns: mean 10119.462891, N 1024; "50.000000" : 7584, "99.000000" : 47872.
	checkLatency(t, s.Results[0], "clat", ptr(10119.462891e-9), ptr(1024.0), 1, 1480e-9, 50, 7584e-9, 99, 47872e-9, 99.99, 2023424e-9)
	if s.Version != "fio-3.33" || s.Headline != "read: bw_bytes=349525333, iops=85333.333333" || s.Results[0].Group == nil || *s.Results[0].Group != 0 {
		t.Errorf("version %q, headline %q, group %v", s.Version, s.Headline, s.Results[0].Group)
	}
	golden(t, name, s)
}

// fioJSONOp is one direction of a fio 3.x JSON job, as fio writes it.
func fioJSONOp(ioBytes, runtime int, clat, lat string) string {
	return fmt.Sprintf(`{"io_bytes" : %d, "bw_bytes" : %d, "iops" : 10.000000, "runtime" : %d, "total_ios" : %d,
		"slat_ns" : {"min" : 0, "max" : 0, "mean" : 0.000000, "stddev" : 0.000000, "N" : 0},
		"clat_ns" : %s, "lat_ns" : %s}`, ioBytes, ioBytes*1000/max(runtime, 1), runtime, ioBytes/4096, clat, lat)
}

const idleLat = `{"min" : 0, "max" : 0, "mean" : 0.000000, "stddev" : 0.000000, "N" : 0}`

// fioJSONReport is a fio 3.x JSON report of jobs, each "name": [read,
// write] directions.
func fioJSONReport(jobs ...string) string {
	return "{\n  \"fio version\" : \"fio-3.36\",\n  \"jobs\" : [" + strings.Join(jobs, ",") + "]\n}\n"
}

// Reports written after fio's source (stat.c, json_add_job_opts...): lat
// percentiles alone, two reports of --status-interval with fio's messages
// around them, the text report before the JSON (--output-format=normal,json),
// a job error, and fio 2.x's JSON, which is refused.
func TestParseFioJSONLayouts(t *testing.T) {
	write := fioJSONOp(40960, 10, `{"min" : 1000, "max" : 90000, "mean" : 2000.5, "stddev" : 1.0, "N" : 10,
		"percentile" : {"99.000000" : 80000, "50.000000" : 1500, "1.000000" : 1000}}`,
		`{"min" : 1100, "max" : 91000, "mean" : 2100.5, "stddev" : 1.0, "N" : 10}`)
	latOnly := fioJSONOp(8192, 2, `{"min" : 1000, "max" : 3000, "mean" : 2000.0, "stddev" : 1.0, "N" : 2}`,
		`{"min" : 1100, "max" : 3100, "mean" : 2100.0, "stddev" : 1.0, "N" : 2, "percentile" : {"50.000000" : 1100, "99.000000" : 3100}}`)
	idle := fioJSONOp(0, 0, idleLat, idleLat)
	job := func(name string, group, errno int, read, write string) string {
		return fmt.Sprintf(`{"jobname" : %q, "groupid" : %d, "error" : %d, "read" : %s, "write" : %s, "trim" : %s}`, name, group, errno, read, write, idle)
	}

	s, err := ParseFio(strings.NewReader(fioJSONReport(job("w", 0, 0, idle, write), job("l", 1, 0, latOnly, idle))))
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, s.Results, []exp{
		{Name: "write", Job: "w", Run: 1, Dir: Write, Figs: figs{"Bytes": 40960, "BytesPerSecond": 4096000, "OperationsPerSecond": 10, "Operations": 10,
			"Seconds": 0.010, "LatencySeconds": 2100.5e-9, "MaxLatencySeconds": 91000e-9}},
		{Name: "read", Job: "l", Run: 1, Dir: Read, Figs: figs{"Bytes": 8192, "BytesPerSecond": 4096000, "OperationsPerSecond": 10, "Operations": 2,
			"Seconds": 0.002, "LatencySeconds": 2100e-9, "MaxLatencySeconds": 3100e-9}},
	})
	checkLatency(t, s.Results[0], "clat", ptr(2000.5e-9), ptr(10.0), 1, 1000e-9, 50, 1500e-9, 99, 80000e-9)
	checkLatency(t, s.Results[1], "lat", ptr(2100e-9), ptr(2.0), 50, 1100e-9, 99, 3100e-9)
	if *s.Results[1].Group != 1 {
		t.Errorf("group %d, want 1", *s.Results[1].Group)
	}

	// --status-interval: a report per interval, the last the final; fio's
	// messages on stderr come after stdout.
	text := "fio-3.36\nStarting 1 process\nw: (groupid=0, jobs=1): err= 0: pid=1: x\n  write: IOPS=1, BW=4KiB/s (4kB/s)(4KiB/1000msec)\n"
	in := text + fioJSONReport(job("w", 0, 0, idle, idle)) + fioJSONReport(job("w", 0, 0, idle, write)) + fioJSONReport(job("w", 0, 5, idle, write)) +
		"fio: pid=1, err=5/file:io_u.c:1, func=io_u error, error=Input/output error\n"
	s, err = ParseFio(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Results) != 2 || s.Results[0].Run != 1 || s.Results[1].Run != 2 || s.Results[1].Latency == nil {
		t.Errorf("results %+v; want the write of two reports, the first (which ran nothing) no run", s.Results)
	}
	wantMessages := []string{"job w: err=5", "fio: pid=1, err=5/file:io_u.c:1, func=io_u error, error=Input/output error"}
	if strings.Join(s.Messages, "\n") != strings.Join(wantMessages, "\n") {
		t.Errorf("messages %q, want %q", s.Messages, wantMessages)
	}

	if _, err := ParseFio(strings.NewReader(fioJSONReport(job("w", 0, 0, idle, idle)))); !errors.Is(err, ErrNoSummary) {
		t.Errorf("a report of nothing run: %v", err)
	}
	old := `{"io_bytes" : 40, "bw" : 4, "iops" : 10.000000, "runtime" : 10, "clat" : {"min" : 1, "max" : 9, "mean" : 2.0, "stddev" : 1.0}}`
	_, err = ParseFio(strings.NewReader("\n" + fioJSONReport(job("w", 0, 0, old, idle))))
	if !errors.Is(err, ErrUnsupported) || !wellFormedError(err) {
		t.Errorf("fio 2.x's JSON: %v", err)
	}
	_, err = ParseFio(strings.NewReader(fioJSONReport(job("w", 0, 0, idle, write))[:120]))
	if err == nil || !strings.HasPrefix(err.Error(), "line ") || !strings.Contains(err.Error(), "fio JSON") {
		t.Errorf("a cut report: %v", err)
	}
}

// A job whose header says err= has its figures and a message.
func TestParseFioJobErrorMessage(t *testing.T) {
	in := "j: (groupid=0, jobs=1): err= 5 (file:io_u.c:1, func=io_u error, error=Input/output error): pid=1: Mon Jan  1 00:00:00 2024\n" +
		"  read: IOPS=10, BW=40.0KiB/s (41.0kB/s)(400KiB/10000msec)\n"
	s, err := ParseFio(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 1 || s.Messages[0] != "job j: err=5 (file:io_u.c:1, func=io_u error, error=Input/output error)" {
		t.Errorf("messages %q", s.Messages)
	}
	checkResults(t, s.Results, []exp{{Name: "read", Job: "j", Dir: Read, Figs: figs{
		"OperationsPerSecond": 10, "BytesPerSecond": 40 * KiB, "Bytes": 400 * KiB, "Seconds": 10}}})
}

// Layouts written after fio's source: a 2.x group summary (aggrb, maxt,
// binary "KB"), a 3.x trim line, bits per second (--unit_base=8) and
// fio 2.x's "read :".
func TestParseFioLayouts(t *testing.T) {
	in := "j: (groupid=0, jobs=1): err= 0: pid=1: Mon Jan  1 00:00:00 2024\n" +
		"  read : io=524288KB, bw=52428KB/s, iops=13107, runt= 10000msec\n" +
		"  trim: IOPS=1, BW=8Mibit/s (8389kbit/s)(10.0MiB/10000msec)\n" +
		"Run status group 0 (all jobs):\n" +
		"   READ: io=524288KB, aggrb=52428KB/s, minb=52428KB/s, maxb=52428KB/s, mint=10000msec, maxt=10000msec\n"
	s, err := ParseFio(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, s.Results, []exp{
		{Name: "read", Job: "j", Dir: Read, Printed: "bw=52428KB/s, iops=13107", Figs: figs{
			"Bytes": 512 * MiB, "BytesPerSecond": 52428 * KiB, "OperationsPerSecond": 13107, "Seconds": 10}},
		{Name: "trim", Job: "j", Figs: figs{
			"OperationsPerSecond": 1, "BytesPerSecond": MiB, "Bytes": 10 * MiB, "Seconds": 10}},
		{Name: "READ", Dir: Read, Printed: "aggrb=52428KB/s", Figs: figs{
			"Bytes": 512 * MiB, "BytesPerSecond": 52428 * KiB, "Seconds": 10}},
	})
}

func TestParseFioBadFigures(t *testing.T) {
	in := "j: (groupid=0, jobs=1): err= 0: pid=1: x\n  write: IOPS=1, BW=1XB/s (1MB/s)(1MiB/1msec)\n"
	if _, err := ParseFio(strings.NewReader(in)); err == nil || !strings.HasPrefix(err.Error(), "line 2: fio write: unknown unit") {
		t.Errorf("got %v", err)
	}
}
