package kstat

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
)

func TestParseNamedArcstats(t *testing.T) {
	n := parseNamedFixture(t, "linux-arcstats-2.3")
	if n.Header == nil || n.Header.NData != 147 || n.Header.Type != KstatNamed || n.Header.Snaptime != 860412093815204 {
		t.Fatalf("header = %+v, want 147 named entries taken at 860412093815204", n.Header)
	}
	if len(n.Entries) != 147 {
		t.Fatalf("%d entries, want 147", len(n.Entries))
	}
	mem, ok := n.Lookup("memory_available_bytes")
	if !ok || mem.Type != DataInt64 || mem.Int != -268435456 || mem.Value != -268435456 {
		t.Errorf("memory_available_bytes = %+v, want int64 -268435456", mem)
	}
	arc := ARCFromNamed(n)
	// The fixture's totals add up: hits and misses are the sums of their
	// demand and prefetch parts, size the sum of the ARC's components.
	wantStats(t, "arcstats", arc.Stats, map[string]float64{
		ARCHits:            240740432,
		ARCMisses:          7044010,
		ARCIOHits:          142976,
		ARCSize:            28852180480,
		ARCTargetSize:      30064771072,
		ARCMinSize:         2147483648,
		ARCMaxSize:         33567000576,
		ARCMFUHits:         209619977,
		ARCL2Hits:          3301298,
		ARCL2Misses:        7044010 - 3301298,
		ARCL2Size:          214748364800,
		ARCL2AllocatedSize: 120259084288,
		ARCMemoryAvailable: -268435456,
	})
	if _, ok := arc.Get(ARCMRUTargetSize); ok {
		t.Error("2.3 arcstats has no p, but ARC reports one")
	}
	var parts float64
	for _, name := range []string{ARCDemandDataHits, ARCDemandMetadataHits, ARCPrefetchDataHits, ARCPrefetchMetadataHits} {
		parts += arc.Stats[name]
	}
	if parts != arc.Stats[ARCHits] {
		t.Errorf("demand and prefetch hits add up to %v, hits = %v", parts, arc.Stats[ARCHits])
	}
}

func TestParseNamedObjsetWithSpace(t *testing.T) {
	n := parseNamedFixture(t, "linux-objset-space-in-name")
	d, err := DatasetFromNamed(n)
	if err != nil {
		t.Fatal(err)
	}
	want := Dataset{
		Pool: "tank", Name: "tank/vm images",
		Writes: 1804402, WriteBytes: 59157913600, Reads: 903311, ReadBytes: 29600284672,
		Unlinks: 12, Unlinked: 12,
	}
	got := d
	got.Stats = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dataset = %+v\nwant      %+v", got, want)
	}
	if len(d.Stats) != 26 || d.Stats["zil_commit_count"] != 88213 {
		t.Errorf("stats: %d numeric, zil_commit_count %v; want 26 and 88213", len(d.Stats), d.Stats["zil_commit_count"])
	}
}

func TestParseNamedDmuTxAssignNames(t *testing.T) {
	in := "451 1 0x01 3 816 1451698481637227 1454383185424447\n" +
		"name                            type data\n" +
		"1 ns                            4    0\n" +
		"128 ns                          4    4195\n" +
		"2147483648 ns                   4    12\n"
	n, err := ParseNamed(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range n.Entries {
		got = append(got, e.Name)
	}
	if strings.Join(got, ",") != "1 ns,128 ns,2147483648 ns" || n.Entries[1].Uint != 4195 {
		t.Errorf("entries = %+v", n.Entries)
	}
}

func TestParseNamedTypes(t *testing.T) {
	in := "name                            type data\n" +
		"pad                             0    abc             \n" +
		"i32                             1    -7\n" +
		"u32                             2    4294967295\n" +
		"wrapped                         4    18446744073709537686\n" +
		"newtype                         9    12.5\n" +
		"label                           7    a  b \n"
	n, err := ParseNamed(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if n.Header != nil {
		t.Errorf("header %+v from input without one", n.Header)
	}
	want := []Entry{
		{Name: "pad", Type: DataChar, String: "abc"},
		{Name: "i32", Type: DataInt32, Int: -7, Value: -7},
		{Name: "u32", Type: DataUint32, Uint: 4294967295, Value: 4294967295},
		{Name: "wrapped", Type: DataUint64, Uint: 18446744073709537686, Value: 18446744073709537686},
		{Name: "newtype", Type: 9, String: "12.5", Value: 12.5},
		{Name: "label", Type: DataString, String: "a  b "},
	}
	if len(n.Entries) != len(want) {
		t.Fatalf("%d entries, want %d", len(n.Entries), len(want))
	}
	for i, w := range want {
		if n.Entries[i] != w {
			t.Errorf("entry %d = %+v, want %+v", i, n.Entries[i], w)
		}
	}
	if v := n.Values(); len(v) != 3 || v["wrapped"] != 18446744073709537686 {
		t.Errorf("values = %v, want the three numeric types", v)
	}
}

func TestParseTxgsStates(t *testing.T) {
	txgs, err := ParseTxgs(fixture(t, "linux-txgs-states"))
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, x := range txgs {
		states = append(states, x.State)
	}
	if got := strings.Join(states, " "); got != "committed committed committed syncing wait_for_sync open" {
		t.Fatalf("states = %s", got)
	}
	// A txg is born when the one before it stops being open.
	for i := 1; i < len(txgs); i++ {
		if txgs[i].TXG != txgs[i-1].TXG+1 || txgs[i].Birth != txgs[i-1].Birth+txgs[i-1].Open {
			t.Errorf("txg %d born at %v, want %v + %v", txgs[i].TXG, txgs[i].Birth, txgs[i-1].Birth, txgs[i-1].Open)
		}
	}
	syncing := txgs[3]
	if syncing.TXG != 412873 || syncing.Wait != 97130*time.Nanosecond || syncing.Sync != 0 || syncing.NWritten != 0 {
		t.Errorf("syncing txg = %+v, want 412873 with 97.13µs waited and no sync time or I/O yet", syncing)
	}
	if c := txgs[0]; c.NDirty != 1<<30 || c.Writes != 9804 || c.Sync != 2105532311*time.Nanosecond {
		t.Errorf("first txg = %+v", c)
	}
}

func TestParseTxgsOldColumns(t *testing.T) {
	// ZFS on Linux 0.6.3: kstat header, other column order, no ndirty or wtime.
	in := "9 5 0x01 60 4320 8934272774 4241608239489766\n" +
		"txg      state birth         nread        nwritten     reads    writes   otime        qtime        stime       \n" +
		"7917723  C     4241593463350422 0            1127424      0        351         156093280         3990    148591575\n" +
		"7917730  O     4241594567713008 0            0            0        0        0            0            0           \n"
	txgs, err := ParseTxgs(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := Txg{TXG: 7917723, Birth: 4241593463350422, State: "committed", NWritten: 1127424, Writes: 351,
		Open: 156093280, Quiesce: 3990, Sync: 148591575}
	if len(txgs) != 2 || txgs[0] != want || txgs[1].State != "open" {
		t.Errorf("txgs = %+v\nwant first %+v", txgs, want)
	}
}

func TestParseIOFixture(t *testing.T) {
	c, err := ParseIO(fixture(t, "linux-io-0.7"))
	if err != nil {
		t.Fatal(err)
	}
	want := IO{
		NRead: 99831910400, NWritten: 210478645248, Reads: 1203311, Writes: 4410221,
		WTime: 1821443108812, WLenTime: 30114770233105, WUpdate: 4385540887102,
		RTime: 2710338844217, RLenTime: 9912004811290, RUpdate: 4385540899120,
		WCnt: 0, RCnt: 1,
	}
	if *c != want {
		t.Errorf("io = %+v\nwant %+v", *c, want)
	}
}

func TestPoolIOStatsFromNamed(t *testing.T) {
	s := PoolIOStatsFromNamed("tank", parseNamedFixture(t, "linux-iostats-2.3"))
	if s.Pool != "tank" || len(s.Stats) != 26 {
		t.Fatalf("iostats of %q with %d counters, want tank with 26", s.Pool, len(s.Stats))
	}
	wantStats(t, "iostats", s.Stats, map[string]float64{
		"trim_bytes_written":     412316860416,
		"trim_extents_failed":    2,
		"autotrim_bytes_written": 87241326592,
		"direct_write_bytes":     2679111680,
		"arc_read_count":         903311,
	})
}

func TestParsePoolState(t *testing.T) {
	got, err := ParsePoolState(fixture(t, "linux-state-degraded"))
	if err != nil || got != "degraded" {
		t.Errorf("state = %q, %v; want degraded", got, err)
	}
	guid, err := ParsePoolGUID(strings.NewReader("14462676634310329861\n"))
	if err != nil || guid != 14462676634310329861 {
		t.Errorf("guid = %d, %v", guid, err)
	}
}

func TestParseTableEmptyAndLastColumn(t *testing.T) {
	tbl, err := ParseTable(strings.NewReader("UID      start            objset   object   level    blkid    aflags   origin                   pid      process         \n"))
	if err != nil || len(tbl.Columns) != 10 || len(tbl.Rows) != 0 {
		t.Errorf("reads = %+v, %v; want 10 columns and no rows", tbl, err)
	}
	tbl, err = ParseTable(strings.NewReader("timestamp    message \n1796021645   ff36fbdcca67c200 vdev.c:184:vdev_dbgmsg(): disk vdev '/dev/vdc1': probe done  \n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tbl.Rows) != 1 || tbl.Rows[0][1] != "ff36fbdcca67c200 vdev.c:184:vdev_dbgmsg(): disk vdev '/dev/vdc1': probe done" {
		t.Errorf("dbgmsg rows = %q", tbl.Rows)
	}
}

func TestLinuxErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parse func(string) error
		in    string
		want  string
	}{
		{"named bad number", named, "name type data\nhits 4 x1\n", `line 2: cannot parse unsigned value "x1" of "hits"`},
		{"named negative uint", named, "1 1 0x01 1 272 1 2\nname type data\nhits 4 -1\n", `line 3: cannot parse unsigned value "-1"`},
		{"named no type", named, "name type data\nhits\n", `line 2: want "name type value"`},
		{"named missing value", named, "name type data\nhits 4\n", `line 2: cannot parse unsigned value ""`},
		// A form feed is white space to a reader of the name but not a
		// column separator: the row has a type and a value but no name.
		{"named no name", named, "name type data\n\f 00\n", `line 2: no name before the type in "\f 00"`},
		{"named not named", named, "ONLINE\n", `line 1: want the "name type data" column header`},
		{"named header only", named, "1 1 0x01 1 272 1 2\n", `line 2: no "name type data" column header`},
		{"state empty", state, "\n", "line 2: no pool state"},
		{"state two words", state, "ONLINE\nDEGRADED\n", "line 2: want a single word"},
		{"guid", guid, "12x\n", `line 1: cannot parse pool GUID "12x"`},
		{"io short row", ioKstat, "nread nwritten reads\n1 2\n", "line 2: 2 values for the 3 columns"},
		{"io no row", ioKstat, "12 3 0x00 1 80 1 2\nnread nwritten\n", "line 3: no row of I/O counters"},
		{"io bad value", ioKstat, "nread nwritten\n1 -2\n", `line 2: cannot parse nwritten "-2"`},
		{"io two rows", ioKstat, "nread\n1\n2\n", "line 3: an I/O kstat has one row"},
		{"io not io", ioKstat, "name type data\n", "line 1: want the column names of an I/O kstat"},
		{"txgs bad", txgs, "txg birth state\n1 x C\n", `line 2: cannot parse birth "x"`},
		{"txgs short", txgs, "txg birth state ndirty\n1 2 C\n", "line 2: 3 values for the 4 columns"},
		{"txgs not txgs", txgs, "name type data\n", "line 1: want the column names of a txg history"},
		{"table empty", table, "", "line 1: no column header"},
	} {
		err := tc.parse(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
		parsetest.CheckAt(t, err, tc.want)
	}
}

func named(s string) error   { _, err := ParseNamed(strings.NewReader(s)); return err }
func state(s string) error   { _, err := ParsePoolState(strings.NewReader(s)); return err }
func guid(s string) error    { _, err := ParsePoolGUID(strings.NewReader(s)); return err }
func ioKstat(s string) error { _, err := ParseIO(strings.NewReader(s)); return err }
func txgs(s string) error    { _, err := ParseTxgs(strings.NewReader(s)); return err }
func table(s string) error   { _, err := ParseTable(strings.NewReader(s)); return err }

// A named kstat with no entries reads as nothing at all (seen for
// <pool>/dmu_tx_assign on OpenZFS 2.3.2).
func TestParseNamedEmpty(t *testing.T) {
	n, err := ParseNamed(strings.NewReader(""))
	if err != nil || n.Header != nil || len(n.Entries) != 0 {
		t.Errorf("empty kstat = %+v, %v; want no entries", n, err)
	}
}

func TestDatasetFromNamedWithoutName(t *testing.T) {
	n, err := ParseNamed(strings.NewReader("name type data\nwrites 4 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DatasetFromNamed(n); !errors.Is(err, parse.ErrUnexpected) {
		t.Errorf("objset without dataset_name: error %v, want a parse error", err)
	}
}
