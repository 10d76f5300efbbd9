package workload

import (
	"bytes"
	"errors"
	"flag"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture returns a sample of testdata: its header and the output after it.
func fixture(t testing.TB, name string) sample.File {
	t.Helper()
	return sample.MustRead(t, filepath.Join("testdata", name+".txt"))
}

// golden compares s, as indented JSON, with testdata/<name>.golden.json.
func golden(t *testing.T, name string, s Summary) {
	t.Helper()
	sample.GoldenJSON(t, filepath.Join("testdata", name+".golden.json"), s, *update)
}

// figs names a result's figures by field; a figure missing from the map
// must be nil.
type figs map[string]float64

// exp is what a result must hold. Run 0 is not checked.
type exp struct {
	Name, Job string
	Run       int
	Dir       Direction
	Printed   string
	Figs      figs
}

func figures(r Result) map[string]*float64 {
	return map[string]*float64{
		"Bytes": r.Bytes, "Seconds": r.Seconds, "BytesPerSecond": r.BytesPerSecond,
		"Operations": r.Operations, "OperationsPerSecond": r.OperationsPerSecond,
		"LatencySeconds": r.LatencySeconds, "MaxLatencySeconds": r.MaxLatencySeconds,
		"CPURatio": r.CPURatio,
	}
}

// near is equality up to the rounding of converting units.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), 1e-9)
}

func checkResult(t *testing.T, r Result, e exp) {
	t.Helper()
	if r.Name != e.Name || r.Job != e.Job || r.Direction != e.Dir || (e.Run != 0 && r.Run != e.Run) {
		t.Errorf("result %s/%s run %d direction %q, want %s/%s run %d direction %q", r.Name, r.Job, r.Run, r.Direction, e.Name, e.Job, e.Run, e.Dir)
	}
	if e.Printed != "" && r.Printed != e.Printed {
		t.Errorf("%s: printed %q, want %q", e.Name, r.Printed, e.Printed)
	}
	for k := range e.Figs {
		if _, ok := figures(r)[k]; !ok {
			t.Fatalf("no figure %s", k)
		}
	}
	for k, got := range figures(r) {
		want, ok := e.Figs[k]
		switch {
		case !ok && got != nil:
			t.Errorf("%s %s: %s = %v, want none", e.Name, e.Job, k, *got)
		case ok && got == nil:
			t.Errorf("%s %s: %s missing, want %v", e.Name, e.Job, k, want)
		case ok && !near(*got, want):
			t.Errorf("%s %s: %s = %v, want %v", e.Name, e.Job, k, *got, want)
		}
	}
}

// checkResults compares every result, in order.
func checkResults(t *testing.T, got []Result, want []exp) {
	t.Helper()
	if len(got) != len(want) {
		var names []string
		for _, r := range got {
			names = append(names, r.Name)
		}
		t.Fatalf("%d results %q, want %d", len(got), names, len(want))
	}
	for i := range want {
		checkResult(t, got[i], want[i])
	}
}

// errorNamesLine is the package's promise for errors: each names the line
// it is about, or says the output has no summary or the wrong format.
var errorNamesLine = regexp.MustCompile(`^line [0-9]+: `)

func wellFormedError(err error) bool {
	return errors.Is(err, ErrNoSummary) || errors.Is(err, ErrUnsupported) || errorNamesLine.MatchString(err.Error())
}

func TestToolFor(t *testing.T) {
	for cmd, want := range map[string]Tool{
		"dd": DD, "/usr/bin/fio": Fio, "/usr/sbin/bonnie++": Bonnie, "dbench": Dbench, "/usr/local/bin/filebench": Filebench,
	} {
		if got, ok := ToolFor(cmd); !ok || got != want {
			t.Errorf("ToolFor(%q) = %q, %v; want %q", cmd, got, ok, want)
		}
	}
	for _, cmd := range []string{"", "/usr/bin/", "bonnie", "iozone", "dd.sh", "fio/x"} {
		if got, ok := ToolFor(cmd); ok {
			t.Errorf("ToolFor(%q) = %q, want none", cmd, got)
		}
	}
}

// commandTool is the tool a fixture's command runs: its first word that
// names a tool (commands may start with "timeout -s INT 1").
func commandTool(t *testing.T, f sample.File) Tool {
	t.Helper()
	for _, w := range strings.Fields(f.Header["command"]) {
		if tool, ok := ToolFor(w); ok {
			return tool
		}
	}
	t.Fatalf("%s: no tool in command %q", f.Path, f.Header["command"])
	return ""
}

// Every fixture is told apart by Detect, but dd status=none, which prints
// nothing.
func TestDetectFixtures(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if len(paths) < 20 {
		t.Fatalf("%d fixtures, want the 22 captured ones", len(paths))
	}
	for _, p := range paths {
		f := sample.MustRead(t, p)
		want := commandTool(t, f)
		got, err := Detect(bytes.NewReader(f.Body))
		if len(bytes.TrimSpace(f.Body)) == 0 {
			if !errors.Is(err, ErrUnknownTool) {
				t.Errorf("%s: empty output detected as %q, %v", p, got, err)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("%s: Detect = %q, %v; want %q", p, got, err, want)
		}
	}
}

func TestDetectUnknown(t *testing.T) {
	_, err := Detect(strings.NewReader("Iozone: Performance Test of File I/O\n\tVersion $Revision: 3.489 $\n"))
	if !errors.Is(err, ErrUnknownTool) || !strings.Contains(err.Error(), "2 lines") {
		t.Errorf("iozone output: %v", err)
	}
}

func TestParseDispatch(t *testing.T) {
	f := fixture(t, "fio-333-seq-write-tmpfs")
	direct, err := ParseFio(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []Tool{Fio, ""} {
		got, err := Parse(tool, bytes.NewReader(f.Body))
		if err != nil || got.Tool != Fio || got.Headline != direct.Headline || len(got.Results) != len(direct.Results) {
			t.Errorf("Parse(%q) = %+v, %v", tool, got, err)
		}
	}
	if _, err := Parse("iozone", bytes.NewReader(f.Body)); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("Parse(iozone): %v", err)
	}
	// The parsers refuse each other's output rather than return nothing.
	for _, tool := range []Tool{DD, Bonnie, Dbench, Filebench} {
		s, err := Parse(tool, bytes.NewReader(f.Body))
		if !errors.Is(err, ErrNoSummary) || s.Results != nil {
			t.Errorf("Parse(%s) of fio output = %+v, %v; want ErrNoSummary", tool, s, err)
		}
	}
}

func TestReadLines(t *testing.T) {
	got, err := readLines(strings.NewReader("\r10 s\r20 s\nfio-3.7     \t\r\nlast"))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"20 s", "fio-3.7", "last"}; !slices.Equal(got, want) {
		t.Errorf("readLines = %q, want %q", got, want)
	}
}

func TestFinal(t *testing.T) {
	s := Summary{Results: []Result{{Name: "a", Run: 1}, {Name: "b", Run: 2}, {Name: "c", Run: 2}}}
	if got := s.Final(); len(got) != 2 || got[0].Name != "b" || got[1].Name != "c" {
		t.Errorf("Final = %+v", got)
	}
	if got := (Summary{}).Final(); got != nil {
		t.Errorf("Final of nothing = %+v", got)
	}
}

func TestUnits(t *testing.T) {
	for _, c := range []struct {
		unit   string
		legacy bool
		want   float64
	}{
		{"", false, 1}, {"B", false, 1}, {"bytes", false, 1},
		{"kB", false, 1e3}, {"KB", false, 1e3}, {"MB", false, 1e6}, {"GB", false, 1e9}, {"TB", false, 1e12},
		{"KiB", false, 1024}, {"MiB", false, 1 << 20}, {"GiB", false, 1 << 30}, {"TiB", false, 1 << 40},
		{"KB", true, 1024}, {"MB", true, 1 << 20}, {"KiB", true, 1024},
		{"Mibit", false, 1 << 17}, {"Mbit", false, 125e3}, {"bit", false, 0.125},
	} {
		got, err := byteUnit(c.unit, c.legacy)
		if err != nil || got != c.want {
			t.Errorf("byteUnit(%q, %v) = %v, %v; want %v", c.unit, c.legacy, got, err, c.want)
		}
	}
	for _, bad := range []string{"XB", "KiX", "Kx", "KiiB", "iB"} {
		if v, err := byteUnit(bad, false); err == nil {
			t.Errorf("byteUnit(%q) = %v, want an error", bad, v)
		}
	}
	for s, want := range map[string]float64{"6243": 6243, "14.3k": 14300, "1.2M": 1.2e6, "42220k": 42220e3} {
		if got, err := count(s); err != nil || !near(got, want) {
			t.Errorf("count(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]float64{"21103us": 0.021103, "801ms": 0.801, "2s": 2} {
		if got, err := duration(s); err != nil || !near(got, want) {
			t.Errorf("duration(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for s, want := range map[string]float64{"63,8": 63.8, "8.0473e-05": 8.0473e-05, "0.0": 0} {
		if got, err := number(s); err != nil || got != want {
			t.Errorf("number(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "Infinity", "NaN", "inf", "-5", "+5", "0x10", "1e31", "1_0", "12 "} {
		if v, err := number(bad); err == nil {
			t.Errorf("number(%q) = %v, want an error", bad, v)
		}
	}
	if _, err := duration("us"); err == nil {
		t.Error("duration without a figure")
	}
}
