package kstat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// seeds are every fixture and every kstat sample of the shared corpus and
// OpenZFS captures when they are there, whatever its format: each parser
// must survive the others' inputs too. The large dbgmsg and dbufs captures
// are left out to keep fuzzing quick.
func seeds(t testing.TB) [][]byte {
	in := sample.Bodies(sample.Glob(t, "testdata", "*.txt"))
	for _, dir := range []string{"corpus/kstat-linux", "corpus/kstat-freebsd", "corpus/kstat-illumos"} {
		in = append(in, sample.Bodies(sample.Seeds(t, dir, "*.txt"))...)
	}
	for _, s := range sample.Seeds(t, "captures/openzfs-2.3", "*__kstat-zfs-*.txt") {
		if !strings.Contains(s.Path, "dbgmsg") && !strings.Contains(s.Path, "dbufs") {
			in = append(in, s.Body)
		}
	}
	return in
}

func addSeeds(f *testing.F) {
	for _, in := range seeds(f) {
		f.Add(in)
	}
}

func TestFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{"kstat": seeds})
}

func FuzzParseNamed(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ParseNamed(bytes.NewReader(data))
		parsetest.Check(t, err)
		if err != nil {
			if n != nil {
				t.Fatalf("error %v with a result", err)
			}
			return
		}
		for _, e := range n.Entries {
			if e.Name == "" {
				t.Fatalf("entry without a name: %+v", e)
			}
			if e.Type.Numeric() && e.Value != float64(e.Int) && e.Value != float64(e.Uint) {
				t.Fatalf("value %v differs from the exact %d/%d", e.Value, e.Int, e.Uint)
			}
		}
		ARCFromNamed(n)
		PoolIOStatsFromNamed("tank", n)
		for _, name := range MiscKstats {
			checkMisc(t, MiscFromNamed(name, n), true)
		}
		d, err := DatasetFromNamed(n)
		if err == nil && (d.Name == "" || strings.Contains(d.Pool, "/")) {
			t.Fatalf("dataset %+v", d)
		}
		parsetest.Check(t, err)
	})
}

func FuzzParsePoolState(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParsePoolState(bytes.NewReader(data))
		if err == nil && (s == "" || s != strings.ToLower(s) || strings.ContainsAny(s, " \t\n")) {
			t.Fatalf("state %q", s)
		}
		parsetest.Check(t, err)
	})
}

func FuzzParsePoolGUID(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParsePoolGUID(bytes.NewReader(data))
		if err != nil && g != 0 {
			t.Fatalf("error %v with GUID %d", err, g)
		}
		parsetest.Check(t, err)
	})
}

func FuzzParseTxgs(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		txgs, err := ParseTxgs(bytes.NewReader(data))
		if err != nil && txgs != nil {
			t.Fatalf("error %v with %d txgs", err, len(txgs))
		}
		parsetest.Check(t, err)
	})
}

func FuzzParseIO(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseIO(bytes.NewReader(data))
		if err != nil && c != nil {
			t.Fatalf("error %v with %+v", err, c)
		}
		parsetest.Check(t, err)
	})
}

func FuzzParseTable(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tbl, err := ParseTable(bytes.NewReader(data))
		parsetest.Check(t, err)
		if err != nil {
			if tbl != nil {
				t.Fatalf("error %v with a table", err)
			}
			return
		}
		if len(tbl.Columns) == 0 {
			t.Fatal("table without columns")
		}
		for _, row := range tbl.Rows {
			if len(row) == 0 || len(row) > len(tbl.Columns) {
				t.Fatalf("row %q for %d columns", row, len(tbl.Columns))
			}
		}
	})
}

// checkStats is what kstat(1M) output must satisfy whichever form it came in.
func checkStats(t *testing.T, stats []Stat, err error) {
	t.Helper()
	parsetest.Check(t, err)
	if err != nil {
		if stats != nil {
			t.Fatalf("error %v with %d statistics", err, len(stats))
		}
		return
	}
	for _, s := range stats {
		if s.Module == "" || s.Name == "" || s.Statistic == "" || strings.Contains(s.Statistic, ":") {
			t.Fatalf("statistic without a full name: %+v", s)
		}
	}
	if len(Group(stats)) > len(stats) {
		t.Fatal("more kstats than statistics")
	}
	ARCFromKstatP(stats)
	_, err = PoolIOFromKstatP(stats)
	parsetest.Check(t, err)
	for _, name := range MiscKstats {
		m, ok := MiscFromKstatP(stats, name)
		checkMisc(t, m, ok)
	}
}

// checkMisc is what a module-wide kstat found in any output must satisfy:
// its own name, and no statistic that wrapped below zero.
func checkMisc(t *testing.T, m Misc, found bool) {
	t.Helper()
	if !found {
		if len(m.Stats) != 0 {
			t.Fatalf("%d statistics of a kstat not found", len(m.Stats))
		}
		return
	}
	if m.Name == "" {
		t.Fatalf("kstat without a name: %+v", m)
	}
	for name, v := range m.Stats {
		if name == "" || wrapped(v) || v != v {
			t.Fatalf("%s: statistic %q = %v", m.Name, name, v)
		}
	}
}

func FuzzParseKstatP(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		stats, err := ParseKstatP(bytes.NewReader(data))
		checkStats(t, stats, err)
	})
}

func FuzzParseKstat(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		stats, err := ParseKstat(bytes.NewReader(data))
		checkStats(t, stats, err)
	})
}

func FuzzParseSysctl(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		stats, err := ParseSysctl(bytes.NewReader(data))
		parsetest.Check(t, err)
		if err != nil {
			if stats != nil {
				t.Fatalf("error %v with %d sysctls", err, len(stats))
			}
			return
		}
		for _, s := range stats {
			if s.Name == "" || strings.ContainsAny(s.Name, " \t") || strings.Join(s.Path, ".") != s.Name {
				t.Fatalf("sysctl %+v", s)
			}
		}
		ARCFromSysctl(stats)
		PoolStatesFromSysctl(stats)
		for _, d := range DatasetsFromSysctl(stats) {
			if d.Name == "" || d.Pool == "" || d.Objset == "" {
				t.Fatalf("dataset %+v", d)
			}
		}
		for _, p := range PoolIOStatsFromSysctl(stats) {
			if p.Pool == "" {
				t.Fatalf("iostats without a pool: %+v", p)
			}
		}
		for _, name := range MiscKstats {
			m, ok := MiscFromSysctl(stats, name)
			checkMisc(t, m, ok)
		}
	})
}
