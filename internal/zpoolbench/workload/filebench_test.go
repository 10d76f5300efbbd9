package workload

import (
	"errors"
	"strings"
	"testing"
)

// filebench is not in Debian's archive, so nothing was captured here: the
// corpus holds a real 1.5 output (see TestCorpus), and these lines follow
// the format strings of filebench 1.4's stats.c.
func TestParseFilebench14(t *testing.T) {
	in := "Filebench Version 1.4.9.1\n" +
		"12345: 0.001: Allocated 170MB of shared memory\n" +
		"12345: 62.510: Run took 60 seconds...\n" +
		"12345: 62.511: Per-Operation Breakdown\n" +
		"readfile1                  45ops/s   1.4mb/s      2.1ms/op      120us/op-cpu\n" +
		"appendfilerand1            45ops/s   0.3mb/s      3.0ms/op      250us/op-cpu\n" +
		"12345: 62.511: \n" +
		"IO Summary:       5403 ops  90.0 ops/s, (45/45 r/w)   1.7mb/s,    259us cpu/op,   2.2ms latency\n" +
		"12345: 62.511: Shutting down processes\n"
	s, err := ParseFilebench(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, s.Results, []exp{
		{Name: "readfile1", Run: 1, Printed: "45ops/s 1.4mb/s", Figs: figs{"OperationsPerSecond": 45, "BytesPerSecond": 1.4 * MiB, "LatencySeconds": 2.1e-3}},
		{Name: "appendfilerand1", Run: 1, Figs: figs{"OperationsPerSecond": 45, "BytesPerSecond": 0.3 * MiB, "LatencySeconds": 3e-3}},
		{Name: "IO Summary", Run: 1, Dir: Mixed, Printed: "90.0 ops/s, 1.7mb/s, 2.2ms/op", Figs: figs{
			"Operations": 5403, "OperationsPerSecond": 90, "BytesPerSecond": 1.7 * MiB, "LatencySeconds": 2.2e-3, "Seconds": 60}},
	})
	if s.Version != "1.4.9.1" || s.Headline != "90.0 ops/s, 1.7mb/s, 2.2ms/op" {
		t.Errorf("version %q, headline %q", s.Version, s.Headline)
	}
}

func TestParseFilebenchDirections(t *testing.T) {
	for rw, want := range map[string]Direction{"0/0": Metadata, "12/0": Read, "0/3": Write, "5/5": Mixed} {
		in := "1.0: IO Summary: 100 ops 10.000 ops/s " + rw + " rd/wr   1.0mb/s   0.5ms/op\n"
		s, err := ParseFilebench(strings.NewReader(in))
		if err != nil || len(s.Results) != 1 || s.Results[0].Direction != want {
			t.Errorf("%s: %+v, %v; want %q", rw, s, err, want)
		}
	}
}

func TestParseFilebenchErrors(t *testing.T) {
	_, err := ParseFilebench(strings.NewReader("1.0: Run took 60 seconds...\n2.0: IO Summary: lots of ops\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `line 2: filebench IO Summary in an unknown layout: "2.0: IO Summary: lots of ops"`) {
		t.Errorf("bad summary: %v", err)
	}
	_, err = ParseFilebench(strings.NewReader("0.000: Allocated 173MB of shared memory\n0.002: Error: failed to create fileset bigfileset\n"))
	if !errors.Is(err, ErrNoSummary) || !strings.Contains(err.Error(), "no \"IO Summary:\" line") ||
		!strings.Contains(err.Error(), "Error: failed to create fileset") {
		t.Errorf("no summary: %v", err)
	}
}
