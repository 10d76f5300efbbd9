package zpool

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

func parseListSample(t *testing.T, f sample.File) []ListRow {
	t.Helper()
	rows, err := ParseListVerbose(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(f.Path), err)
	}
	return rows
}

// listedRows counts the rows of a zpool list output the way a reader
// would: every line but blank ones, the header and section rows.
func listedRows(body []byte) int {
	n := 0
	for line := range strings.Lines(string(body)) {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0, fields[0] == "NAME":
		case listSectionClasses[fields[0]] != "" && strings.Trim(strings.Join(fields[1:], ""), "-") == "":
		default:
			n++
		}
	}
	return n
}

// checkListRows checks what holds of every output: a row for each line
// that is one, pools first, figures that are figures.
func checkListRows(t *testing.T, body []byte, rows []ListRow) {
	t.Helper()
	if want := listedRows(body); len(rows) != want || want == 0 {
		t.Errorf("%d rows, the output has %d", len(rows), want)
	}
	for i, r := range rows {
		if r.Pool == "" || r.Name == "" || r.Depth < -1 || (i == 0 && r.Depth != 0) {
			t.Errorf("row %d: %+v", i, r)
		}
		for _, v := range []*float64{r.Size, r.Allocated, r.Free, r.Checkpoint, r.ExpandSize, r.Fragmentation, r.Capacity, r.Dedup} {
			if v != nil && (*v < 0 || math.IsInf(*v, 0) || math.IsNaN(*v)) {
				t.Errorf("row %d (%s): figure %v", i, r.Name, *v)
			}
		}
	}
}

// Every `zpool list` of the corpus printed with the default columns: the
// table of FreeBSD's and illumos' ZFS, ZoL 0.6.5 and 0.7 (EXPANDSZ and
// FRAG either way in the man pages), OpenZFS 2.x with -p, the Delphix
// fork, a comma-decimal locale, and -Hp. The -o outputs have columns of
// their own and are ParseList's.
func TestParseListVerboseCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-list")
	var files []sample.File
	for _, pattern := range []string{"list-*.txt", "man-list-*.txt", "netdata-list-*.txt", "zol065-list-*.txt", "fbsd-handbook-list-*.txt"} {
		files = append(files, sample.Glob(t, dir, pattern)...)
	}
	parsed := 0
	for _, f := range files {
		if strings.Contains(f.Header["command"], " -o ") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f.Path), ".txt")
		t.Run(name, func(t *testing.T) {
			rows := parseListSample(t, f)
			checkListRows(t, f.Body, rows)
			checkGolden(t, filepath.Join("testdata", "list-corpus-"+name+".golden.json"), rows)
		})
		parsed++
	}
	if parsed < 12 {
		t.Errorf("%d corpus outputs read, want the 12 of the default columns", parsed)
	}
}

// The OpenZFS 2.3.2 captures of `zpool list`, -Hp and -v -Hp, the form
// the exporter runs.
func TestParseListVerboseOpenZFS23(t *testing.T) {
	dir := openZFS23(t)
	for _, slug := range []string{"zpool-list", "zpool-list-Hp", "zpool-list-v-Hp"} {
		for _, f := range sample.Glob(t, dir, "*__"+slug+".txt") {
			name := strings.TrimSuffix(filepath.Base(f.Path), ".txt")
			t.Run(name, func(t *testing.T) {
				rows := parseListSample(t, f)
				checkListRows(t, f.Body, rows)
				checkGolden(t, filepath.Join("testdata", "list-openzfs23-"+name+".golden.json"), rows)
				if slug != "zpool-list-v-Hp" {
					return
				}
				// r10 7 rows, rz1 5 and its log, cache and spare, scratch 2, tank 4.
				if len(rows) != 21 {
					t.Errorf("%d rows, want 21", len(rows))
				}
				for _, r := range rows {
					if r.Depth == 0 && (r.Dedup == nil || r.Size == nil) || r.Depth != 0 && (r.Depth != -1 || r.Dedup != nil || r.Health == "") {
						t.Errorf("row %+v", r)
					}
				}
			})
		}
	}
}

// The package's own outputs, written after the 2.3.2 captures: every
// allocation class, duplicate names, and 2.4.1's vdev rows.
func TestParseListVerboseFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/list-*.txt")
	if err != nil || len(paths) < 3 {
		t.Fatalf("list fixtures: %v %v", paths, err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			f := sample.MustRead(t, p)
			rows := parseListSample(t, f)
			checkListRows(t, f.Body, rows)
			checkGolden(t, strings.TrimSuffix(p, ".txt")+".golden.json", rows)
		})
	}
	// 2.4.1 and later print the same rows with ALTROOT: they read the same.
	a := parseListSample(t, sample.MustRead(t, "testdata/list-v-Hp-classes.txt"))
	b := parseListSample(t, sample.MustRead(t, "testdata/list-v-Hp-classes-2.4.txt"))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("2.3 and 2.4 forms differ (-2.3 +2.4):\n%s", diff)
	}
}

// The forms of the releases that no sample shows whole.
func TestParseListVerboseForms(t *testing.T) {
	fp := func(v float64) *float64 { return &v }
	healthy := func(pool, name string, depth int, class string) ListRow {
		return ListRow{Pool: pool, Name: name, Depth: depth, Class: class}
	}
	tests := []struct {
		name, in string
		want     []ListRow
	}{{
		// print_list_stats of 0.7: vdev rows stop after CAP; the log
		// section is "log", its row six dashes long.
		name: "ZoL 0.7 -Hp",
		in: "tank\t1000\t400\t600\t-\t12\t40\t1.00x\tONLINE\t-\n" +
			"\tmirror\t1000\t400\t600\t-\t12\t40\n" +
			"\tsda\t-\t-\t-\t-\t-\t-\n" +
			"log            -      -      -         -      -      -\n" +
			"\tsdc\t200\t1\t199\t-\t0\t0\n" +
			"cache          -      -      -         -      -      -\n" +
			"\tsdd\t300\t100\t200\t-\t-\t33\n",
		want: []ListRow{
			{Pool: "tank", Name: "tank", Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Fragmentation: fp(0.12), Capacity: fp(0.4), Dedup: fp(1), Health: "online"},
			{Pool: "tank", Name: "mirror", Depth: -1, Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Fragmentation: fp(0.12), Capacity: fp(0.4)},
			healthy("tank", "sda", -1, ClassNormal),
			{Pool: "tank", Name: "sdc", Depth: -1, Class: ClassLog, Size: fp(200), Allocated: fp(1), Free: fp(199), Fragmentation: fp(0), Capacity: fp(0)},
			{Pool: "tank", Name: "sdd", Depth: -1, Class: ClassCache, Size: fp(300), Allocated: fp(100), Free: fp(200), Capacity: fp(0.33)},
		},
	}, {
		// FreeBSD 10 builds of 2014 print FRAG before EXPANDSZ: a
		// percentage is the fragmentation, wherever it stands.
		name: "FRAG before EXPANDSZ, -Hp",
		in: "zroot\t1000\t400\t600\t3\t-\t40\t1.00x\tONLINE\t-\n" +
			"\tada0p3\t1000\t400\t600\t3\t-\t40\n" +
			"\tada1\t-\t-\t-\t-\t1048576\t-\n",
		want: []ListRow{
			{Pool: "zroot", Name: "zroot", Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Fragmentation: fp(0.03), Capacity: fp(0.4), Dedup: fp(1), Health: "online"},
			{Pool: "zroot", Name: "ada0p3", Depth: -1, Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Fragmentation: fp(0.03), Capacity: fp(0.4)},
			{Pool: "zroot", Name: "ada1", Depth: -1, Class: ClassNormal, ExpandSize: fp(1048576)},
		},
	}, {
		// illumos of 2012 to 2014: EXPANDSZ and no FRAG; vdev rows stop
		// after EXPANDSZ.
		name: "illumos EXPANDSZ, -H",
		in: "house\t2.72T\t1.55T\t1.17T\t-\t57%\t1.00x\tONLINE\t-\n" +
			"\tmirror\t2.72T\t1.55T\t1.17T\t10G\n",
		want: []ListRow{
			{Pool: "house", Name: "house", Class: ClassNormal, Size: fp(2.72 * (1 << 40)), Allocated: fp(1.55 * (1 << 40)), Free: fp(1.17 * (1 << 40)), Capacity: fp(0.57), Dedup: fp(1), Health: "online"},
			{Pool: "house", Name: "mirror", Depth: -1, Class: ClassNormal, Size: fp(2.72 * (1 << 40)), Allocated: fp(1.55 * (1 << 40)), Free: fp(1.17 * (1 << 40)), ExpandSize: fp(10 * (1 << 30))},
		},
	}, {
		name: "ZoL 0.6.4 FRAG and no EXPANDSZ, -H",
		in:   "tank\t100G\t50G\t50G\t12%\t50%\t1.00x\tONLINE\t-\n",
		want: []ListRow{
			{Pool: "tank", Name: "tank", Class: ClassNormal, Size: fp(100 << 30), Allocated: fp(50 << 30), Free: fp(50 << 30), Fragmentation: fp(0.12), Capacity: fp(0.5), Dedup: fp(1), Health: "online"},
		},
	}, {
		name: "Oracle Solaris, -H",
		in:   "rpool\t68G\t24.9G\t43.1G\t36%\t1.00x\tONLINE\t-\n",
		want: []ListRow{
			{Pool: "rpool", Name: "rpool", Class: ClassNormal, Size: fp(68 << 30), Allocated: fp(24.9 * (1 << 30)), Free: fp(43.1 * (1 << 30)), Capacity: fp(0.36), Dedup: fp(1), Health: "online"},
		},
	}, {
		// 2.4.1 and later: vdev rows follow the column list, ALTROOT too.
		name: "OpenZFS 2.4.4 -Hp",
		in: "r10\t1000\t400\t600\t-\t-\t3\t40\t1.00\tONLINE\t-\n" +
			"\tmirror-0\t1000\t400\t600\t-\t-\t3\t40\t-\tONLINE\t-\n" +
			"\tvda\t1100\t-\t-\t-\t-\t-\t-\t-\tONLINE\t-\n",
		want: []ListRow{
			{Pool: "r10", Name: "r10", Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Fragmentation: fp(0.03), Capacity: fp(0.4), Dedup: fp(1), Health: "online"},
			{Pool: "r10", Name: "mirror-0", Depth: -1, Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Fragmentation: fp(0.03), Capacity: fp(0.4), Health: "online"},
			{Pool: "r10", Name: "vda", Depth: -1, Class: ClassNormal, Size: fp(1100), Health: "online"},
		},
	}, {
		// The table: depth from the indent, an altroot with a blank, a
		// checkpoint, and a section zpool may add one day.
		name: "table",
		in: "NAME        SIZE  ALLOC   FREE  CKPOINT  EXPANDSZ   FRAG    CAP  DEDUP    HEALTH  ALTROOT\n" +
			"tank       1000    400    600      100         -    12%    40%  1.00x    ONLINE  /mnt/my pool\n" +
			"  sda      1000    400    600      100         -    12%  40.0%      -    ONLINE\n" +
			"embedded_log   -      -      -        -         -      -      -      -         -\n" +
			"  sdb      -      -      -        -         -      -      -      -    ONLINE\n",
		want: []ListRow{
			{Pool: "tank", Name: "tank", Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Checkpoint: fp(100), Fragmentation: fp(0.12), Capacity: fp(0.4), Dedup: fp(1), Health: "online"},
			{Pool: "tank", Name: "sda", Depth: 1, Class: ClassNormal, Size: fp(1000), Allocated: fp(400), Free: fp(600), Checkpoint: fp(100), Fragmentation: fp(0.12), Capacity: fp(0.4), Health: "online"},
			{Pool: "tank", Name: "sdb", Depth: 1, Class: "embedded_log", Health: "online"},
		},
	}, {
		name: "no pools",
		in:   "no pools available\n",
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseListVerbose(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
		})
	}
}

// Errors name the line and what is wrong with it, and are parse errors at
// that line, but for a line too long for the reader.
func TestParseListVerboseErrors(t *testing.T) {
	const pool = "tank\t1000\t400\t600\t-\t-\t3\t40\t1.00\tONLINE\t-\n"
	tests := []struct{ name, in, want string }{
		{"vdev before a pool", "\tsda\t1000\n", "line 1: vdev \"sda\" before any pool"},
		{"section before a pool", "logs  -  -  -\n", "line 1: section \"logs\" before any pool"},
		{"unknown column set", "tank\t1000\t400\n", "line 1: 3 columns"},
		{"pools of two column sets", pool + "rz1\t1000\t400\t600\t-\t3\t40\t1.00\tONLINE\t-\n", "line 2: pool row of 10 columns, want 11"},
		{"not a size", "tank\tlots\t400\t600\t-\t-\t3\t40\t1.00\tONLINE\t-\n", "line 1: size of tank: invalid size"},
		{"a negative size", "tank\t-1000\t400\t600\t-\t-\t3\t40\t1.00\tONLINE\t-\n", "line 1: size of tank: not a figure"},
		{"not a percentage", pool + "\tmirror-0\t1000\t400\t600\t-\t-\tmuch\n", "line 2: fragmentation of mirror-0: invalid percentage"},
		{"a vdev row too long", pool + "\tsda\t1\t2\t3\t4\t5\t6\t7\t8\t9\t10\t11\n", "line 2: vdev row of 12 columns"},
		{"a table row too short", "NAME SIZE ALLOC FREE\ntank 1000 400\n", "line 2: pool row of 3 columns, want 4"},
		{"stray text", pool + "what is this\n", "line 2: neither a header nor a row"},
		{"a line too long", pool + strings.Repeat("x", maxLineBytes+1) + "\n", "line 2: bufio.Scanner: token too long"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rows, err := ParseListVerbose(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) || rows != nil {
				t.Fatalf("ParseListVerbose: %d rows, error %v; want none and an error with %q", len(rows), err, tc.want)
			}
			parsetest.CheckAt(t, err, tc.want)
		})
	}
}

func FuzzParseListVerbose(f *testing.F) {
	addSeeds(f, listVerboseSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		rows, err := ParseListVerbose(bytes.NewReader(data))
		if err != nil {
			if rows != nil {
				t.Fatalf("%d rows with error %v", len(rows), err)
			}
			parsetest.Check(t, err)
			return
		}
		for i, r := range rows {
			if r.Pool == "" || r.Name == "" || r.Depth < -1 || i == 0 && r.Depth != 0 {
				t.Fatalf("row %d: %+v", i, r)
			}
		}
		// Pairing rows with a status that does not fit them warns and
		// pairs nothing wrong, whatever the rows.
		st := &Status{Pools: []*Pool{{Name: rowsPool(rows), Root: &Vdev{Name: rowsPool(rows), Type: "root"}}}}
		if m, _ := MatchList(st, rows); len(m) > 1 {
			t.Fatalf("%d vdevs paired in a tree of one", len(m))
		}
	})
}

func rowsPool(rows []ListRow) string {
	if len(rows) == 0 {
		return "tank"
	}
	return rows[0].Pool
}
