package workload

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseDbenchFixtures(t *testing.T) {
	for name, c := range map[string]struct {
		headline string
		ops      int
		checked  []exp // the table's ReadX, WriteX and Flush, then Throughput
	}{
		"dbench-400-t5-2-clients": {"181.369 MB/sec", 14, []exp{
			{Name: "WriteX", Dir: Write, Figs: figs{"Operations": 14751, "LatencySeconds": 0.044e-3, "MaxLatencySeconds": 126.969e-3}},
			{Name: "ReadX", Dir: Read, Figs: figs{"Operations": 46912, "LatencySeconds": 0.006e-3, "MaxLatencySeconds": 46.957e-3}},
			{Name: "Flush", Figs: figs{"Operations": 2101, "LatencySeconds": 2.007e-3, "MaxLatencySeconds": 239.327e-3}},
			// Throughput 181.369 MB/sec  2 clients  2 procs  max_latency=239.346 ms
			{Name: "Throughput", Dir: Mixed, Printed: "181.369 MB/sec", Figs: figs{"BytesPerSecond": 181.369e6, "MaxLatencySeconds": 0.239346, "Seconds": 5}},
		}},
		"dbench-400-sync-open-dirs": {"63.2784 MB/sec (sync open) (sync dirs)", 16, []exp{
			{Name: "WriteX", Dir: Write, Figs: figs{"Operations": 4024, "LatencySeconds": 1.206e-3, "MaxLatencySeconds": 38.310e-3}},
			{Name: "ReadX", Dir: Read, Figs: figs{"Operations": 10145, "LatencySeconds": 0.004e-3, "MaxLatencySeconds": 0.751e-3}},
			{Name: "Flush", Figs: figs{"Operations": 484, "LatencySeconds": 0.363e-3, "MaxLatencySeconds": 9.467e-3}},
			{Name: "Throughput", Dir: Mixed, Figs: figs{"BytesPerSecond": 63.2784e6, "MaxLatencySeconds": 0.034409, "Seconds": 4}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := ParseDbench(bytes.NewReader(fixture(t, name).Body))
			if err != nil {
				t.Fatal(err)
			}
			checkDbench(t, s, c.ops, c.checked)
			if s.Version != "4.00" || s.Headline != c.headline {
				t.Errorf("version %q, headline %q; want %q", s.Version, s.Headline, c.headline)
			}
			golden(t, name, s)
		})
	}
}

// checkDbench checks a one-run summary: ops table rows, then Throughput;
// want holds ReadX, WriteX, Flush and Throughput.
func checkDbench(t *testing.T, s Summary, ops int, want []exp) {
	t.Helper()
	if len(s.Results) != ops+1 {
		t.Fatalf("%d results, want %d operations and Throughput", len(s.Results), ops)
	}
	byName := map[string]Result{}
	for _, r := range s.Results {
		if r.Run != 1 {
			t.Errorf("%s in run %d", r.Name, r.Run)
		}
		if _, dup := byName[r.Name]; dup {
			t.Errorf("%s twice", r.Name)
		}
		byName[r.Name] = r
		if _, special := dbenchDirection[r.Name]; !special && r.Name != "Throughput" && r.Direction != Metadata {
			t.Errorf("%s: direction %q", r.Name, r.Direction)
		}
	}
	if last := s.Results[len(s.Results)-1]; last.Name != "Throughput" {
		t.Errorf("last result %s", last.Name)
	}
	for _, e := range want {
		checkResult(t, byName[e.Name], e)
	}
}

func TestParseDbenchInterrupted(t *testing.T) {
	s, err := ParseDbench(bytes.NewReader(fixture(t, "dbench-400-interrupted").Body))
	if !errors.Is(err, ErrNoSummary) || s.Results != nil ||
		!strings.Contains(err.Error(), `no "Throughput" line: the run did not finish`) ||
		!strings.Contains(err.Error(), "output ends at line 8") {
		t.Errorf("got %+v, %v", s, err)
	}
}

// dbench 3.x prints neither clients nor latency; two runs in one output
// are numbered; lines about failures are messages.
func TestParseDbenchLayouts(t *testing.T) {
	in := "failed to create barrier semaphore \n" +
		"Throughput 54.3 MB/sec (sync dirs) 8 procs\n" +
		" Throughput 60 MB/sec  4 clients  4 procs  max_latency=12.5 ms\n"
	s, err := ParseDbench(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, s.Results, []exp{
		{Name: "Throughput", Run: 1, Dir: Mixed, Printed: "54.3 MB/sec (sync dirs)", Figs: figs{"BytesPerSecond": 54.3e6}},
		{Name: "Throughput", Run: 2, Dir: Mixed, Printed: "60 MB/sec", Figs: figs{"BytesPerSecond": 60e6, "MaxLatencySeconds": 0.0125}},
	})
	if s.Headline != "60 MB/sec" || len(s.Messages) != 1 || s.Messages[0] != "failed to create barrier semaphore" {
		t.Errorf("headline %q, messages %q", s.Headline, s.Messages)
	}
}
