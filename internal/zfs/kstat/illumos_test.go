package kstat

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
)

func TestParseKstatPFixture(t *testing.T) {
	stats, err := ParseKstatP(fixture(t, "illumos-kstat-p-arcstats-pools"))
	if err != nil {
		t.Fatal(err)
	}
	kstats := Group(stats)
	if len(kstats) != 3 || kstats[0].Name != "arcstats" || kstats[1].Name != "rpool" || kstats[2].Name != "tank" {
		t.Fatalf("kstats = %v, want arcstats, rpool, tank", kstatNames(kstats))
	}
	arcstats := kstats[0]
	if arcstats.Class != "misc" || len(arcstats.Stats) != 84 {
		t.Errorf("arcstats: class %q, %d statistics; want misc and 84 (class apart)", arcstats.Class, len(arcstats.Stats))
	}
	if crtime, _ := arcstats.Lookup("crtime"); !crtime.Numeric || crtime.Number != 29.803412876 {
		t.Errorf("crtime = %+v, want 29.803412876 seconds", crtime)
	}

	arc, ok := ARCFromKstatP(stats)
	if !ok {
		t.Fatal("no arcstats")
	}
	wantStats(t, "arcstats", arc.Stats, map[string]float64{
		ARCHits:          119592440,
		ARCMisses:        3952584,
		ARCSize:          12031463424,
		ARCTargetSize:    12884901888,
		ARCMRUTargetSize: 6442450944,
		ARCMetaUsed:      1118310432,
	})
	for _, name := range []string{"crtime", "snaptime", "class"} {
		if _, ok := arc.Get(name); ok {
			t.Errorf("ARC has kstat bookkeeping %s", name)
		}
	}

	pools, err := PoolIOFromKstatP(stats)
	if err != nil {
		t.Fatal(err)
	}
	if len(pools) != 2 {
		t.Fatalf("pool I/O of %d pools, want rpool and tank", len(pools))
	}
	// The seconds kstat prints convert to the exact nanoseconds, even
	// where float64 would round.
	want := IO{
		NRead: 5497558138880, NWritten: 2199023255552, Reads: 44120311, Writes: 18220445,
		WTime: 120331044210998, WLenTime: 15480260499887487, WUpdate: 8830145118003214,
		RTime: 211248067361317, RLenTime: 880412331120055, RUpdate: 8830145118101005,
		WCnt: 2, RCnt: 7,
	}
	if pools["tank"] != want {
		t.Errorf("tank I/O = %+v\nwant %+v", pools["tank"], want)
	}
	if r := pools["rpool"]; r.RCnt != 0 || r.WTime != 1821443108812*time.Nanosecond {
		t.Errorf("rpool I/O = %+v", r)
	}
}

func kstatNames(ks []*Kstat) []string {
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	return names
}

// The human-readable form of the same kstats reads to the same statistics
// as `kstat -p`.
func TestParseKstatMatchesKstatP(t *testing.T) {
	human, err := ParseKstat(fixture(t, "illumos-kstat-arcstats-pool"))
	if err != nil {
		t.Fatal(err)
	}
	parsable, err := ParseKstatP(fixture(t, "illumos-kstat-p-arcstats-pools"))
	if err != nil {
		t.Fatal(err)
	}
	parsable = slices.DeleteFunc(parsable, func(s Stat) bool { return s.Name == "rpool" })
	key := func(s Stat) string { return s.Module + ":" + s.Name + ":" + s.Statistic + "=" + s.Value }
	var got, want []string
	for _, s := range human {
		got = append(got, key(s))
	}
	for _, s := range parsable {
		want = append(want, key(s))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("kstat and kstat -p differ:\n%s", strings.Join(diffLines(want, got), "\n"))
	}
	if len(human) != 84+1+15 {
		t.Errorf("%d statistics, want 85 of arcstats and 15 of tank", len(human))
	}
}

func diffLines(want, got []string) []string {
	var out []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			out = append(out, "- "+w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			out = append(out, "+ "+g)
		}
	}
	return out
}

func TestParseKstatPForms(t *testing.T) {
	in := "zfs:0:arcstats:recycle_miss     74068\n" + // a paste that lost the tab
		"sd:0:sd0,err:Hard Errors\t0\n" + // statistic names may hold spaces
		"cpu_info:0:cpu_info0:brand\tIntel(r) Xeon(r) CPU\n" + // and values too
		"\n" +
		"zfs:0:arcstats:hits\n" // kstat -p -l: names only
	stats, err := ParseKstatP(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Stat{
		{Module: "zfs", Name: "arcstats", Statistic: "recycle_miss", Value: "74068", Number: 74068, Numeric: true},
		{Module: "sd", Name: "sd0,err", Statistic: "Hard Errors", Value: "0", Numeric: true},
		{Module: "cpu_info", Name: "cpu_info0", Statistic: "brand", Value: "Intel(r) Xeon(r) CPU"},
		{Module: "zfs", Name: "arcstats", Statistic: "hits"},
	}
	if !slices.Equal(stats, want) {
		t.Errorf("stats = %+v\nwant %+v", stats, want)
	}
}

func TestIllumosErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(string) error
		in    string
		want  string
	}{
		{"p three parts", kstatP, "zfs:0:arcstats\t1\n", `line 1: want module:instance:name:statistic, got "zfs:0:arcstats"`},
		{"p bad instance", kstatP, "zfs:0:arcstats:hits\t1\nzfs:x:arcstats:hits\t1\n", `line 2: cannot parse instance "x"`},
		{"p empty statistic", kstatP, "zfs:0:arcstats:\t1\n", "line 1: want module:instance:name:statistic"},
		{"human stat first", kstatHuman, "\thits   1\n", `line 1: statistic "hits   1" outside a kstat`},
		{"human name first", kstatHuman, "name:   arcstats   class:  misc\n", "line 1: \"name:   arcstats   class:  misc\" without a module line"},
		{"human bad module", kstatHuman, "module: zfs  instance: x\n", "line 1: want \"module: M  instance: N\""},
		{"human no name", kstatHuman, "module: zfs   instance: 0\n\thits  1\n", `line 2: statistic "hits  1" outside a kstat`},
		{"human colon statistic", kstatHuman, "module:0 instance:0\nname:000000000\n:", `line 3: statistic ":" holds a colon`},
	} {
		err := tc.parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		parsetest.CheckAt(t, err, tc.want)
	}
	k := &Kstat{Module: "zfs", Name: "tank", Stats: []Stat{newStat("zfs", 0, "tank", "wtime", "-1.5")}}
	if _, err := IOFromKstat(k); !errors.Is(err, parse.ErrUnexpected) || !strings.Contains(err.Error(), `zfs:0:tank: cannot parse wtime "-1.5"`) {
		t.Errorf("negative wtime: error %v", err)
	}
}

func kstatP(s string) error     { _, err := ParseKstatP(strings.NewReader(s)); return err }
func kstatHuman(s string) error { _, err := ParseKstat(strings.NewReader(s)); return err }

func TestParseSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0":                  0,
		"13.066910337":       13066910337,
		"15480260.499887487": 15480260499887487,
		"1.5":                1500000000,
		"2.1234567891":       2123456789, // beyond nanoseconds: cut
	} {
		if got, ok := parseSeconds(in); !ok || got != want {
			t.Errorf("parseSeconds(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "-1", "1e3", "NaN", "1.", ".5", "99999999999999999999"} {
		if got, ok := parseSeconds(in); ok {
			t.Errorf("parseSeconds(%q) = %v, want not ok", in, got)
		}
	}
}
