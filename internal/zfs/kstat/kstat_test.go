package kstat

import (
	"bytes"
	"flag"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// checkGolden compares v, as indented JSON, with the golden file, or
// rewrites the file with -update.
func checkGolden(t *testing.T, golden string, v any) {
	t.Helper()
	sample.GoldenJSON(t, golden, v, *update)
}

// fixture reads testdata/<name>.txt without its header.
func fixture(t testing.TB, name string) io.Reader {
	t.Helper()
	return bytes.NewReader(sample.MustRead(t, filepath.Join("testdata", name+".txt")).Body)
}

// parserFor picks the parser of a fixture by its name: the platform and
// the kstat it holds.
func parserFor(name string) func(io.Reader) (any, error) {
	switch {
	case strings.HasPrefix(name, "linux-state-"):
		return func(r io.Reader) (any, error) { return ParsePoolState(r) }
	case strings.HasPrefix(name, "linux-txgs-"):
		return func(r io.Reader) (any, error) { return ParseTxgs(r) }
	case strings.HasPrefix(name, "linux-io-"):
		return func(r io.Reader) (any, error) { return ParseIO(r) }
	case strings.HasPrefix(name, "linux-"):
		return func(r io.Reader) (any, error) { return ParseNamed(r) }
	case strings.HasPrefix(name, "illumos-kstat-p-"):
		return func(r io.Reader) (any, error) { return ParseKstatP(r) }
	case strings.HasPrefix(name, "illumos-kstat-"):
		return func(r io.Reader) (any, error) { return ParseKstat(r) }
	case strings.HasPrefix(name, "freebsd-sysctl-"):
		return func(r io.Reader) (any, error) { return ParseSysctl(r) }
	}
	return nil
}

func TestGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".txt")
		t.Run(name, func(t *testing.T) {
			parse := parserFor(name)
			if parse == nil {
				t.Fatalf("no parser for fixture %s", name)
			}
			got, err := parse(fixture(t, name))
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, strings.TrimSuffix(p, ".txt")+".golden.json", got)
		})
	}
}

func parseNamedFixture(t *testing.T, name string) *Named {
	t.Helper()
	n, err := ParseNamed(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func parseSysctlFixture(t *testing.T, name string) []SysctlStat {
	t.Helper()
	stats, err := ParseSysctl(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return stats
}

// wantStats checks the named values of a stats map.
func wantStats(t *testing.T, what string, stats map[string]float64, want map[string]float64) {
	t.Helper()
	for name, w := range want {
		got, ok := stats[name]
		if !ok {
			t.Errorf("%s: no %s", what, name)
		} else if got != w {
			t.Errorf("%s: %s = %v, want %v", what, name, got, w)
		}
	}
}
