package kstat

import (
	"reflect"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
)

func TestSysctlArcstats(t *testing.T) {
	stats := parseSysctlFixture(t, "freebsd-sysctl-arcstats")
	if len(stats) != 148 {
		t.Fatalf("%d sysctls, want 148", len(stats))
	}
	if s := stats[0]; s.Name != "kstat.zfs.misc.arcstats.abd_chunk_waste_size" ||
		!reflect.DeepEqual(s.Path, []string{"kstat", "zfs", "misc", "arcstats", "abd_chunk_waste_size"}) || s.Number != 626176 {
		t.Errorf("first sysctl = %+v", s)
	}
	arc, ok := ARCFromSysctl(stats)
	if !ok || len(arc.Stats) != 148 {
		t.Fatalf("ARC of %d statistics, want 148", len(arc.Stats))
	}
	wantStats(t, "arcstats", arc.Stats, map[string]float64{
		ARCHits:    11376763,
		ARCMisses:  225076,
		ARCSize:    3291993600,
		ARCMaxSize: 7516192768,
		ARCMFUHits: 11376763 - 1803322,
	})
}

func TestSysctlPoolStates(t *testing.T) {
	got := PoolStatesFromSysctl(parseSysctlFixture(t, "freebsd-sysctl-pool-state"))
	want := map[string]string{"tank": "online", "backup": "degraded"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("states = %v, want %v", got, want)
	}
}

func TestSysctlDatasets(t *testing.T) {
	got := DatasetsFromSysctl(parseSysctlFixture(t, "freebsd-sysctl-datasets"))
	if len(got) != 2 {
		t.Fatalf("%d datasets, want 2", len(got))
	}
	www := got[0]
	www.Stats = nil
	want := Dataset{Pool: "tank", Name: "tank/jails/www", Objset: "objset-0x10f",
		Writes: 88120, WriteBytes: 1101463552, Reads: 310223, ReadBytes: 5073010688, Unlinks: 4, Unlinked: 4}
	if !reflect.DeepEqual(www, want) {
		t.Errorf("dataset = %+v\nwant      %+v", www, want)
	}
	if len(got[0].Stats) != 6 || got[1].Name != "tank" || got[1].Objset != "objset-0x36" || got[1].ReadBytes != 901120 {
		t.Errorf("datasets = %+v", got)
	}
}

func TestSysctlIostats(t *testing.T) {
	got := PoolIOStatsFromSysctl(parseSysctlFixture(t, "freebsd-sysctl-iostats"))
	if len(got) != 1 || got[0].Pool != "tank" || len(got[0].Stats) != 18 {
		t.Fatalf("iostats = %+v, want tank's 18 counters", got)
	}
	wantStats(t, "iostats", got[0].Stats, map[string]float64{
		"trim_bytes_written":       53687091200,
		"autotrim_extents_skipped": 1102,
		"simple_trim_bytes_failed": 0,
	})
}

// A pool name may hold dots, and sysctl names are matched from the right.
func TestSysctlDottedPool(t *testing.T) {
	in := "kstat.zfs.data.2024.misc.state: ONLINE\n" +
		"kstat.zfs.data.2024.misc.iostats.trim_bytes_written: 42\n" +
		"kstat.zfs.data.2024.dataset.objset-0x36.nread: 7\n" +
		"kstat.zfs.data.2024.dataset.objset-0x36.dataset_name: data.2024\n" +
		"kstat.zfs.misc.arcstats.hits: 5\n"
	stats, err := ParseSysctl(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := PoolStatesFromSysctl(stats); !reflect.DeepEqual(got, map[string]string{"data.2024": "online"}) {
		t.Errorf("states = %v", got)
	}
	if got := PoolIOStatsFromSysctl(stats); len(got) != 1 || got[0].Pool != "data.2024" || got[0].Stats["trim_bytes_written"] != 42 {
		t.Errorf("iostats = %+v", got)
	}
	if got := DatasetsFromSysctl(stats); len(got) != 1 || got[0].Pool != "data.2024" || got[0].Name != "data.2024" || got[0].ReadBytes != 7 {
		t.Errorf("datasets = %+v", got)
	}
	if arc, ok := ARCFromSysctl(stats); !ok || len(arc.Stats) != 1 || arc.Stats[ARCHits] != 5 {
		t.Errorf("arc = %+v", arc)
	}
}

// A raw kstat's value spans lines: the txg history read through sysctl is
// the same table as on Linux.
func TestSysctlMultiLineValue(t *testing.T) {
	in := "kstat.zfs.tank.misc.txgs: \n" +
		"txg      birth            state ndirty       nread        nwritten     reads    writes   otime        qtime        wtime        stime       \n" +
		"10       46304889560      C     0            0            786432       0        96       4573617240   21680        115000       163876650   \n" +
		"11       50878506800      O     0            0            0            0        0        0            0            0            0           \n" +
		"kstat.zfs.tank.misc.state: ONLINE\n"
	stats, err := ParseSysctl(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || stats[0].Numeric || stats[1].Value != "ONLINE" {
		t.Fatalf("stats = %+v", stats)
	}
	txgs, err := ParseTxgs(strings.NewReader(stats[0].Value))
	if err != nil {
		t.Fatal(err)
	}
	if len(txgs) != 2 || txgs[0].NWritten != 786432 || txgs[1].State != "open" {
		t.Errorf("txgs = %+v", txgs)
	}
}

func TestSysctlErrors(t *testing.T) {
	for in, want := range map[string]string{
		"no name here\n":                   `line 1: want "name: value", got "no name here"`,
		"\n\n12 34\nkstat.zfs.x: 1\n":      `line 3: want "name: value"`,
		"name with space: 1\n":             `line 1: want "name: value"`,
		": 5\n":                            `line 1: want "name: value"`,
		"kstat.zfs.misc.arcstats.hits 5\n": `line 1: want "name: value"`,
	} {
		_, err := ParseSysctl(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
		parsetest.CheckAt(t, err, want)
	}
	stats, err := ParseSysctl(strings.NewReader("vfs.zfs.trim.enabled: 1\nkern.hostname:\n"))
	if err != nil || len(stats) != 2 || stats[1].Value != "" || stats[1].Numeric {
		t.Errorf("stats = %+v, %v", stats, err)
	}
}
