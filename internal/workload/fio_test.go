package workload

import (
	"bytes"
	"errors"
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
	s, err = ParseFio(bytes.NewReader(fixture(t, "fio-333-json").Body))
	if !errors.Is(err, ErrUnsupported) || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Errorf("JSON: %+v, %v", s, err)
	}
	terse := "3;fio-3.33;t;0;0;4096;409600;102400;10;0;0;0.000000;0.000000;1;428;7.325206\n"
	if _, err := ParseFio(strings.NewReader(terse)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("terse: %v", err)
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
