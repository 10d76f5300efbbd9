package zpool

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

func mustParseList(t *testing.T, text string) []ListRow {
	t.Helper()
	rows, err := ParseListVerbose(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func mustParseStatus(t *testing.T, text string) *Status {
	t.Helper()
	st, err := ParseStatus(strings.NewReader(text), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// pairing lists what MatchList paired, in status's print order, as
// "pool vdev(depth class) <- row": one line per vdev of the tree, "-"
// where it has no row.
func pairing(st *Status, m map[*Vdev]ListRow) []string {
	var out []string
	for _, p := range st.Pools {
		if p.Root == nil {
			continue
		}
		p.Root.Walk(func(v *Vdev, _ string) {
			row, ok := m[v]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s %s -", p.Name, v.Name))
			default:
				out = append(out, fmt.Sprintf("%s %s(%d %s) <- %s %s", p.Name, v.Name, row.Depth, row.Class, row.Name, row.Health))
			}
		})
	}
	return out
}

// Every vdev of the OpenZFS 2.3.2 captures has its row of the same
// scenario's zpool list -v -Hp, whichever status form it is matched with:
// the log, cache and spare sections included.
func TestMatchListCaptures(t *testing.T) {
	dir := openZFS23(t)
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"} {
		list := sample.MustRead(t, filepath.Join(dir, scenario+"__zpool-list-v-Hp.txt"))
		rows := parseListSample(t, list)
		for _, form := range []string{"zpool-status", "zpool-status-j-json-int"} {
			t.Run(scenario+"/"+form, func(t *testing.T) {
				f := sample.MustRead(t, filepath.Join(dir, scenario+"__"+form+".txt"))
				var st *Status
				var err error
				if strings.Contains(form, "-j") {
					st, err = ParseStatusJSON(bytes.NewReader(f.Body))
				} else {
					st, err = ParseStatus(bytes.NewReader(f.Body), time.UTC)
				}
				if err != nil {
					t.Fatal(err)
				}
				m, warnings := MatchList(st, rows)
				if len(warnings) > 0 {
					t.Errorf("warnings: %q", warnings)
				}
				got := pairing(st, m)
				if len(m) != len(rows) || slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, " -") }) {
					t.Errorf("%d of %d rows paired:\n%s", len(m), len(rows), strings.Join(got, "\n"))
				}
				for _, want := range []string{
					"rz1 rz1(0 normal) <- rz1 online",
					"rz1 virtio-zd10(1 log) <- virtio-zd10 online",
					"rz1 virtio-zd11(1 cache) <- virtio-zd11 online",
					"rz1 virtio-zd12(1 spare) <- virtio-zd12 avail",
					"r10 virtio-zd06(2 normal) <- virtio-zd06 online",
				} {
					if !slices.Contains(got, want) {
						t.Errorf("no %q in:\n%s", want, strings.Join(got, "\n"))
					}
				}
			})
		}
	}
}

// The package's own outputs: every allocation class (2.3 and 2.4 forms),
// and names zpool repeats (the guest's status of 10-duplicate-names:
// spare-0 twice, replacing-0 twice, each dRAID spare twice). Each vdev
// gets its own row, by position.
func TestMatchListFixtures(t *testing.T) {
	classes := sample.MustRead(t, "testdata/status-classes-slow.txt")
	dupes := sample.MustRead(t, "testdata/openzfs-2.3-guest/10-duplicate-names__zpool_status.txt")
	dupesJSON := sample.MustRead(t, "testdata/openzfs-2.3-guest/10-duplicate-names__zpool_status_-j_--json-int.txt")
	tests := []struct {
		list   string
		status sample.File
		json   bool
		want   []string
	}{
		{"testdata/list-v-Hp-classes.txt", classes, false, classesPairing},
		{"testdata/list-v-Hp-classes-2.4.txt", classes, false, classesPairing},
		{"testdata/list-v-Hp-duplicate-names.txt", dupes, false, dupesPairing},
		{"testdata/list-v-Hp-duplicate-names.txt", dupesJSON, true, dupesPairing},
	}
	for _, tc := range tests {
		t.Run(filepath.Base(tc.list)+"/"+filepath.Base(tc.status.Path), func(t *testing.T) {
			rows := parseListSample(t, sample.MustRead(t, tc.list))
			var st *Status
			var err error
			if tc.json {
				st, err = ParseStatusJSON(bytes.NewReader(tc.status.Body))
			} else {
				st, err = ParseStatus(bytes.NewReader(tc.status.Body), time.UTC)
			}
			if err != nil {
				t.Fatal(err)
			}
			m, warnings := MatchList(st, rows)
			if len(warnings) > 0 {
				t.Errorf("warnings: %q", warnings)
			}
			got := pairing(st, m)
			got = slices.DeleteFunc(got, func(s string) bool {
				pool := strings.Fields(s)[0]
				return pool == "mir" || pool == "r10" || pool == "rz1" // not listed
			})
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("paired:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

var classesPairing = []string{
	"fast fast(0 normal) <- fast online",
	"fast mirror-0(1 normal) <- mirror-0 online",
	"fast sda(2 normal) <- sda online",
	"fast sdb(2 normal) <- sdb online",
	"fast mirror-1(1 dedup) <- mirror-1 online",
	"fast nvme0n1p1(2 dedup) <- nvme0n1p1 online",
	"fast nvme1n1p1(2 dedup) <- nvme1n1p1 online",
	"fast mirror-2(1 special) <- mirror-2 online",
	"fast nvme0n1p2(2 special) <- nvme0n1p2 online",
	"fast nvme1n1p2(2 special) <- nvme1n1p2 online",
	"fast mirror-3(1 log) <- mirror-3 online",
	"fast nvme0n1p3(2 log) <- nvme0n1p3 online",
	"fast nvme1n1p3(2 log) <- nvme1n1p3 online",
	"fast nvme2n1(1 cache) <- nvme2n1 online",
	"fast sdc(1 spare) <- sdc avail",
}

var dupesPairing = []string{
	"dr dr(0 normal) <- dr online",
	"dr draid1:2d:5c:1s-0(1 normal) <- draid1:2d:5c:1s-0 online",
	"dr virtio-zd13(2 normal) <- virtio-zd13 online",
	"dr virtio-zd14(2 normal) <- virtio-zd14 online",
	"dr virtio-zd15(2 normal) <- virtio-zd15 online",
	"dr virtio-zd16(2 normal) <- virtio-zd16 online",
	"dr virtio-zd17(2 normal) <- virtio-zd17 online",
	"dr draid1-0-0(1 spare) <- draid1-0-0 avail",
	"dupd dupd(0 normal) <- dupd degraded",
	"dupd draid1:2d:4c:1s-0(1 normal) <- draid1:2d:4c:1s-0 degraded",
	"dupd draid1:2d:4c:1s-0/spare-0(2 normal) <- spare-0 degraded",
	"dupd /var/tmp/dup1984221827/f01(3 normal) <- /var/tmp/dup1984221827/f01 offline",
	"dupd draid1-0-0(3 normal) <- draid1-0-0 online",
	"dupd /var/tmp/dup1984221827/f02(2 normal) <- /var/tmp/dup1984221827/f02 online",
	"dupd /var/tmp/dup1984221827/f03(2 normal) <- /var/tmp/dup1984221827/f03 online",
	"dupd /var/tmp/dup1984221827/f04(2 normal) <- /var/tmp/dup1984221827/f04 online",
	"dupd draid1:2d:4c:1s-1(1 normal) <- draid1:2d:4c:1s-1 degraded",
	"dupd draid1:2d:4c:1s-1/spare-0(2 normal) <- spare-0 degraded",
	"dupd /var/tmp/dup1984221827/f05(3 normal) <- /var/tmp/dup1984221827/f05 offline",
	"dupd draid1-1-0(3 normal) <- draid1-1-0 online",
	"dupd /var/tmp/dup1984221827/f06(2 normal) <- /var/tmp/dup1984221827/f06 online",
	"dupd /var/tmp/dup1984221827/f07(2 normal) <- /var/tmp/dup1984221827/f07 online",
	"dupd /var/tmp/dup1984221827/f08(2 normal) <- /var/tmp/dup1984221827/f08 online",
	"dupd draid1-0-0(1 spare) <- draid1-0-0 inuse",
	"dupd draid1-1-0(1 spare) <- draid1-1-0 inuse",
	"dupr dupr(0 normal) <- dupr online",
	"dupr raidz1-0(1 normal) <- raidz1-0 online",
	"dupr raidz1-0/replacing-0(2 normal) <- replacing-0 online",
	"dupr /var/tmp/dup1984221827/f09(3 normal) <- /var/tmp/dup1984221827/f09 online",
	"dupr /var/tmp/dup1984221827/f15(3 normal) <- /var/tmp/dup1984221827/f15 online",
	"dupr /var/tmp/dup1984221827/f10(2 normal) <- /var/tmp/dup1984221827/f10 online",
	"dupr /var/tmp/dup1984221827/f11(2 normal) <- /var/tmp/dup1984221827/f11 online",
	"dupr raidz1-1(1 normal) <- raidz1-1 online",
	"dupr raidz1-1/replacing-0(2 normal) <- replacing-0 online",
	"dupr /var/tmp/dup1984221827/f12(3 normal) <- /var/tmp/dup1984221827/f12 online",
	"dupr /var/tmp/dup1984221827/f16(3 normal) <- /var/tmp/dup1984221827/f16 online",
	"dupr /var/tmp/dup1984221827/f13(2 normal) <- /var/tmp/dup1984221827/f13 online",
	"dupr /var/tmp/dup1984221827/f14(2 normal) <- /var/tmp/dup1984221827/f14 online",
}

// twoMirrors is a status of two pools: tank, two mirrors with a log, a
// cache device and a spare; and scratch, one disk.
const twoMirrors = `  pool: tank
 state: ONLINE
config:

	NAME        STATE     READ WRITE CKSUM
	tank        ONLINE       0     0     0
	  mirror-0  ONLINE       0     0     0
	    sda     ONLINE       0     0     0
	    sdb     ONLINE       0     0     0
	  mirror-1  ONLINE       0     0     0
	    sdc     ONLINE       0     0     0
	    sdd     ONLINE       0     0     0
	logs
	  sde       ONLINE       0     0     0
	cache
	  sdf       ONLINE       0     0     0
	spares
	  sdg       AVAIL

errors: No known data errors

  pool: scratch
 state: ONLINE
config:

	NAME        STATE     READ WRITE CKSUM
	scratch     ONLINE       0     0     0
	  sdh       ONLINE       0     0     0

errors: No known data errors
`

// The two commands run one after the other: what changed in between
// costs the rows it makes unfit, with a warning, and nothing else.
func TestMatchListChangedBetweenCommands(t *testing.T) {
	const (
		tank = "tank\t1000\t400\t600\t-\t-\t3\t40\t1.00\tONLINE\t-\n" +
			"\tmirror-0\t500\t200\t300\t-\t-\t3\t40\t-\tONLINE\n" +
			"\tsda\t520\t-\t-\t-\t-\t-\t-\t-\tONLINE\n" +
			"\tsdb\t520\t-\t-\t-\t-\t-\t-\t-\tONLINE\n"
		mirror1 = "\tmirror-1\t500\t200\t300\t-\t-\t3\t40\t-\tONLINE\n" +
			"\tsdc\t520\t-\t-\t-\t-\t-\t-\t-\tONLINE\n" +
			"\tsdd\t520\t-\t-\t-\t-\t-\t-\t-\tONLINE\n"
		logs    = "logs     -      -      -        -         -      -      -      -         -\n\tsde\t100\t1\t99\t-\t-\t0\t1\t-\tONLINE\n"
		cache   = "cache    -      -      -        -         -      -      -      -         -\n\tsdf\t100\t50\t50\t-\t-\t0\t50\t-\tONLINE\n"
		spares  = "spare    -      -      -        -         -      -      -      -         -\n\tsdg\t520\t-\t-\t-\t-\t-\t-\t-\tAVAIL\n"
		scratch = "scratch\t100\t10\t90\t-\t-\t1\t10\t1.00\tONLINE\t-\n\tsdh\t110\t10\t90\t-\t-\t1\t10\t-\tONLINE\n"
	)
	st := mustParseStatus(t, twoMirrors)
	tests := []struct {
		name     string
		list     string
		unpaired []string // status's vdevs without a row
		warnings []string // what each warning holds
	}{
		{"the same", tank + mirror1 + logs + cache + spares + scratch, nil, nil},
		{"a pool created since", tank + mirror1 + logs + cache + spares + "new\t100\t10\t90\t-\t-\t1\t10\t1.00\tONLINE\t-\n\tsdz\t110\t10\t90\t-\t-\t1\t10\t-\tONLINE\n" + scratch,
			nil, []string{`pool "new", which zpool status does not`}},
		{"a pool destroyed since", tank + mirror1 + logs + cache + spares,
			[]string{"scratch", "sdh"}, nil},
		{"a disk attached since", tank + "\tsdx\t520\t-\t-\t-\t-\t-\t-\t-\tONLINE\n" + mirror1 + logs + cache + spares + scratch,
			[]string{"mirror-1", "sdc", "sdd"}, []string{`row "sdx" does not fit zpool status's normal vdev "mirror-1" (depth 1): it and the 3 rows after it`}},
		{"a mirror added since", tank + mirror1 + "\tmirror-2\t500\t0\t500\t-\t-\t0\t0\t-\tONLINE\n\tsdx\t520\t-\t-\t-\t-\t-\t-\t-\tONLINE\n" + logs + cache + spares + scratch,
			nil, []string{`row "mirror-2" and the 1 rows after it in the normal section are not in zpool status`}},
		{"a spare added in status only", tank + mirror1 + logs + cache + scratch,
			[]string{"sdg"}, nil},
		{"a cache device removed since", tank + mirror1 + logs + spares + scratch,
			[]string{"sdf"}, nil},
		{"a special vdev status does not have", tank + mirror1 + "special  -  -  -\n\tmirror-3\t500\t0\t500\t-\t-\t0\t0\t-\tONLINE\n" + logs + cache + spares + scratch,
			nil, []string{`zpool list shows a special section ("mirror-3" first)`}},
		{"a removed vdev's indirect row", tank + "\tindirect-1\t-\t-\t-\t-\t-\t-\t-\t-\tONLINE\n" + mirror1 + logs + cache + spares + scratch,
			nil, nil},
		{"a pool listed twice", tank + mirror1 + logs + cache + spares + scratch + scratch,
			nil, []string{`pool "scratch" twice`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, warnings := MatchList(st, mustParseList(t, tc.list))
			var unpaired []string
			for _, p := range st.Pools {
				p.Root.Walk(func(v *Vdev, _ string) {
					if _, ok := m[v]; !ok {
						unpaired = append(unpaired, v.Name)
					}
				})
			}
			if !slices.Equal(unpaired, tc.unpaired) {
				t.Errorf("unpaired %q, want %q", unpaired, tc.unpaired)
			}
			if len(warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q, want one with %q", warnings[i], w)
				}
			}
			for v, row := range m {
				if row.Name != v.PrintedName() || row.Depth < 0 {
					t.Errorf("vdev %s paired with row %+v", v.Name, row)
				}
			}
		})
	}
	if m, warnings := MatchList(nil, mustParseList(t, scratch)); len(m) != 0 || len(warnings) != 1 {
		t.Errorf("without a status: %d paired, warnings %q", len(m), warnings)
	}
}

// Older zpools name every mirror "mirror" (FreeBSD's own ZFS, OpenZFS
// before 2.2) and ZoL 0.6 lists log devices among the others, without a
// section: rows still pair by position.
func TestMatchListOldNames(t *testing.T) {
	st := mustParseStatus(t, twoMirrors)
	list := "NAME        SIZE  ALLOC   FREE  EXPANDSZ   FRAG    CAP  DEDUP  HEALTH  ALTROOT\n" +
		"tank       1000    400    600         -     3%    40%  1.00x  ONLINE  -\n" +
		"  mirror    500    200    300         -     3%    40%\n" +
		"    sda       -      -      -         -      -      -\n" +
		"    sdb       -      -      -         -      -      -\n" +
		"  mirror    500    200    300         -     3%    40%\n" +
		"    sdc       -      -      -         -      -      -\n" +
		"    sdd       -      -      -         -      -      -\n" +
		"  sde       100      1     99         -     0%     1%\n" +
		"cache         -      -      -         -      -      -\n" +
		"  sdf       100     50     50         -     0%    50%\n"
	m, warnings := MatchList(st, mustParseList(t, list))
	if len(warnings) > 0 {
		t.Errorf("warnings: %q", warnings)
	}
	got := pairing(st, m)
	want := []string{
		"tank tank(0 normal) <- tank online",
		"tank mirror-0(1 normal) <- mirror ",
		"tank sda(2 normal) <- sda ",
		"tank sdb(2 normal) <- sdb ",
		"tank mirror-1(1 normal) <- mirror ",
		"tank sdc(2 normal) <- sdc ",
		"tank sdd(2 normal) <- sdd ",
		"tank sde(1 log) <- sde ",
		"tank sdf(1 cache) <- sdf ",
		"tank sdg -",
		"scratch scratch -",
		"scratch sdh -",
	}
	if !slices.Equal(got, want) {
		t.Errorf("paired:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The test bed's guests, OpenZFS 2.1.11, 2.3.2 and 2.4.4: every row of
// zpool list -v, scripted and as the table, pairs with the vdev of the
// same scenario's status but for the indirect vdev a removal left, which
// status does not show; the two forms agree, to the table's rounding.
func TestMatchListGuestCaptures(t *testing.T) {
	var lists []string
	for _, release := range []string{"2.1", "2.3", "2.4"} {
		paths, err := filepath.Glob("testdata/openzfs-" + release + "-guest/*__zpool_list_-v_-Hp.txt")
		if err != nil {
			t.Fatal(err)
		}
		lists = append(lists, paths...)
	}
	if len(lists) == 0 {
		t.Skip("the guests' captures hold no zpool list -v")
	}
	for _, path := range lists {
		scenario := strings.TrimSuffix(path, "__zpool_list_-v_-Hp.txt")
		t.Run(strings.TrimPrefix(scenario, "testdata/"), func(t *testing.T) {
			st, err := ParseStatus(bytes.NewReader(sample.MustRead(t, scenario+"__zpool_status.txt").Body), time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			var paired []map[*Vdev]ListRow
			for _, form := range []string{"__zpool_list_-v_-Hp.txt", "__zpool_list_-v.txt"} {
				f := sample.MustRead(t, scenario+form)
				rows := parseListSample(t, f)
				checkListRows(t, f.Body, rows)
				m, warnings := MatchList(st, rows)
				if len(warnings) > 0 {
					t.Errorf("%s: warnings %q", form, warnings)
				}
				indirect := 0
				for _, r := range rows {
					if indirectName.MatchString(r.Name) {
						indirect++
					}
				}
				if len(m) != len(rows)-indirect {
					t.Errorf("%s: %d of %d rows paired, %d of them indirect vdevs:\n%s", form, len(m), len(rows), indirect, strings.Join(pairing(st, m), "\n"))
				}
				paired = append(paired, m)
			}
			scripted, table := paired[0], paired[1]
			if len(scripted) != len(table) {
				t.Fatalf("%d vdevs paired with -Hp, %d with the table", len(scripted), len(table))
			}
			for v, s := range scripted {
				tb := table[v]
				if s.Name != tb.Name || s.Depth != tb.Depth || s.Class != tb.Class || s.Health != tb.Health || !near(s.Size, tb.Size) || !near(s.Allocated, tb.Allocated) {
					t.Errorf("%s: -Hp %+v, the table %+v", v.Name, s, tb)
				}
			}
		})
	}
}

// near tells whether an exact figure and the table's, three digits and a
// unit, are the same figure.
func near(exact, rounded *float64) bool {
	if exact == nil || rounded == nil {
		return exact == rounded
	}
	return math.Abs(*exact-*rounded) <= 0.01**exact
}
