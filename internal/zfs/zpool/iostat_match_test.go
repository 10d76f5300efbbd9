package zpool

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// Status trees built by hand, as the status parsers would return them.

func vd(name, typ string, children ...*Vdev) *Vdev {
	return &Vdev{Name: name, Type: typ, Children: children}
}

func leaf(name string) *Vdev {
	typ := "disk"
	if strings.HasPrefix(name, "/") && !strings.HasPrefix(name, "/dev/") {
		typ = "file"
	}
	return vd(name, typ)
}

// class sets the class of top-level vdevs (and their children).
func class(c string, tops ...*Vdev) []*Vdev {
	for _, t := range tops {
		var set func(*Vdev)
		set = func(v *Vdev) {
			v.Class = c
			for _, ch := range v.Children {
				set(ch)
			}
		}
		set(t)
	}
	return tops
}

func normal(tops ...*Vdev) []*Vdev { return class(ClassNormal, tops...) }

func testPool(name string, sections ...[]*Vdev) *Pool {
	root := vd(name, "root")
	root.Class = ClassNormal
	for _, s := range sections {
		root.Children = append(root.Children, s...)
	}
	qualifyNames(root) // as the parsers name them
	return &Pool{Name: name, State: "online", Root: root}
}

// treeVdev is a vdev with its place in the tree.
type treeVdev struct {
	path  string // names from the root, joined by " > "
	depth int
}

// iostatVdevs lists the vdevs iostat prints: all but hot spares.
func iostatVdevs(p *Pool) map[*Vdev]treeVdev {
	out := map[*Vdev]treeVdev{}
	var walk func(v *Vdev, at treeVdev)
	walk = func(v *Vdev, at treeVdev) {
		if v.Class == ClassSpare {
			return
		}
		out[v] = at
		for _, c := range v.Children {
			walk(c, treeVdev{at.path + " > " + c.Name, at.depth + 1})
		}
	}
	walk(p.Root, treeVdev{p.Name, 0})
	return out
}

// checkMatched asserts that every vdev of the pools but spares is paired
// with a row of the same pool and depth, whose name agrees.
func checkMatched(t *testing.T, m map[*Vdev]IostatRow, pools ...*Pool) {
	t.Helper()
	total := 0
	for _, p := range pools {
		for v, at := range iostatVdevs(p) {
			total++
			row, ok := m[v]
			switch {
			case !ok:
				t.Errorf("%s: not matched", at.path)
			case row.Depth != at.depth || row.Pool != p.Name || row.Class != iostatClass(v.Class):
				t.Errorf("%s: matched row %+v of another pool, depth or class", at.path, row)
			case row.Name != v.PrintedName() && row.Name != v.Path && vdevKind(row.Name) != vdevKind(v.PrintedName()):
				t.Errorf("%s: matched row %q", at.path, row.Name)
			}
		}
	}
	if len(m) != total {
		t.Errorf("%d pairs, want %d", len(m), total)
	}
}

func fuseLeaf(name string) *Vdev { return leaf("/var/tmp/zfs-fuse-capture/" + name) }

// zfsFuseTrees are the pools of the zfs-fuse scenarios, as their status
// captures show them.
func zfsFuseTrees() map[string][]*Pool {
	cmirror := func() *Pool {
		return testPool("cmirror", normal(vd("mirror-0", "mirror", fuseLeaf("m1"), fuseLeaf("m2"))))
	}
	craidz := func() *Pool {
		return testPool("craidz",
			normal(vd("raidz1-0", "raidz1", fuseLeaf("z1"), fuseLeaf("z2"), fuseLeaf("z3"))),
			class(ClassSpare, fuseLeaf("z4")))
	}
	return map[string][]*Pool{
		"mirror":   {cmirror()},
		"interval": {cmirror()},
		"raid10": {testPool("craid10", normal(
			vd("mirror-0", "mirror", fuseLeaf("r1"), fuseLeaf("r2")),
			vd("mirror-1", "mirror", fuseLeaf("r3"), fuseLeaf("r4"))))},
		"raidz1-spare":   {craidz()},
		"raidz1-offline": {craidz()},
		"raidz1-spare-inuse": {testPool("craidz",
			normal(vd("raidz1-0", "raidz1", fuseLeaf("z1"), fuseLeaf("z2"),
				vd("spare-2", "spare", fuseLeaf("z3"), fuseLeaf("z4")))),
			class(ClassSpare, fuseLeaf("z4")))},
		"two-pools": {cmirror(), testPool("ctwo", normal(fuseLeaf("t1")))},
	}
}

func TestMatchIostatZfsFuse(t *testing.T) {
	paths, err := filepath.Glob("testdata/zfs-fuse/*__iostat-v*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no zfs-fuse iostat captures: %v", err)
	}
	trees := zfsFuseTrees()
	for _, p := range paths {
		scenario, _, _ := strings.Cut(filepath.Base(p), "__")
		pools, ok := trees[scenario]
		if !ok {
			t.Errorf("%s: no status tree for scenario %q", p, scenario)
			continue
		}
		for i, report := range parseIostatSample(t, p) {
			t.Run(fmt.Sprintf("%s/%d", filepath.Base(p), i), func(t *testing.T) {
				m, err := MatchIostatReport(&Status{Pools: pools}, report.Rows)
				if err != nil {
					t.Fatal(err)
				}
				checkMatched(t, m, pools...)
				if len(pools) == 1 {
					single, err := MatchIostat(pools[0], report.Rows)
					if err != nil || len(single) != len(m) {
						t.Errorf("MatchIostat: %d pairs, %v; want %d", len(single), err, len(m))
					}
				}
			})
		}
	}

	// status's spare-2 is iostat's bare "spare", with its own figures.
	pool := trees["raidz1-spare-inuse"][0]
	m, err := MatchIostat(pool, parseIostatSample(t, "testdata/zfs-fuse/raidz1-spare-inuse__iostat-v.txt")[0].Rows)
	if err != nil {
		t.Fatal(err)
	}
	spare := pool.Root.Children[0].Children[2]
	if row := m[spare]; row.Name != "spare" || row.ReadOps != 97 {
		t.Errorf("spare-2 matched %+v, want the spare row with 97 reads", row)
	}
	if row := m[spare.Children[1]]; row.WriteBytes != 6.05*(1<<20) {
		t.Errorf("z4 under spare-2 matched %+v, want 6.05M written", row)
	}
	if _, ok := m[pool.Root.Children[1]]; ok {
		t.Error("the hot spare entry was matched; iostat does not print spares")
	}

	// Two mirrors printed as "mirror" twice go by position.
	raid10 := trees["raid10"][0]
	m, err = MatchIostat(raid10, parseIostatSample(t, "testdata/zfs-fuse/raid10__iostat-v.txt")[0].Rows)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := m[raid10.Root.Children[0]], m[raid10.Root.Children[1]]; *a.Alloc != 13.7*(1<<20) || *b.Alloc != 13.6*(1<<20) {
		t.Errorf("mirror-0 and mirror-1 matched %+v and %+v", a, b)
	}
}

// openZFS23Trees are the pools of the OpenZFS 2.3.2 scenarios, as
// `zpool status` shows them.
func openZFS23Trees(scenario string) *Status {
	r10b, tankA := "virtio-zd04", "vdb"
	if scenario != "04-scrubbed-healthy" {
		r10b, tankA = "virtio-zs02", "vdo"
	}
	return &Status{Pools: []*Pool{
		testPool("r10", normal(
			vd("mirror-0", "mirror", leaf("virtio-zd03"), leaf(r10b)),
			vd("mirror-1", "mirror", leaf("virtio-zd05"), leaf("virtio-zd06")))),
		testPool("rz1",
			normal(vd("raidz1-0", "raidz1", leaf("virtio-zd07"), leaf("virtio-zd08"), leaf("virtio-zd09"))),
			class(ClassLog, leaf("virtio-zd10")),
			class(ClassCache, leaf("virtio-zd11")),
			class(ClassSpare, leaf("virtio-zd12"))),
		testPool("scratch", normal(leaf("vdn"))),
		testPool("tank", normal(vd("mirror-0", "mirror", leaf(tankA), leaf("vdc")))),
	}}
}

func TestMatchIostatOpenZFS23(t *testing.T) {
	dir := openZFS23(t)
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"} {
		for _, slug := range []string{"zpool-iostat-v", "zpool-iostat-vHp", "zpool-iostat-vHp-1-3", "zpool-iostat-vHp-l-q"} {
			name := scenario + "__" + slug + ".txt"
			for i, report := range parseIostatSample(t, filepath.Join(dir, name)) {
				t.Run(fmt.Sprintf("%s/%d", name, i), func(t *testing.T) {
					st := openZFS23Trees(scenario)
					m, err := MatchIostatReport(st, report.Rows)
					if err != nil {
						t.Fatal(err)
					}
					checkMatched(t, m, st.Pools...)
					rz1 := st.Pools[1]
					if row := m[rz1.Root.Children[1]]; row.Name != "virtio-zd10" || row.Free == nil || *row.Free < 200<<20 {
						t.Errorf("rz1 log matched %+v", row)
					}
					if row := m[rz1.Root.Children[2]]; row.Name != "virtio-zd11" || row.Alloc == nil {
						t.Errorf("rz1 cache matched %+v", row)
					}
				})
			}
		}
	}
}

func TestMatchIostatFixtures(t *testing.T) {
	fast := testPool("fast",
		normal(vd("mirror-0", "mirror", leaf("sda"), leaf("sdb"))),
		// status prints special before dedup; iostat the other way round.
		class(ClassSpecial, vd("mirror-2", "mirror", leaf("nvme0n1p2"), leaf("nvme1n1p2"))),
		class(ClassDedup, vd("mirror-1", "mirror", leaf("nvme0n1p1"), leaf("nvme1n1p1"))))
	m, err := MatchIostat(fast, parseIostatSample(t, "testdata/iostat-v-special-dedup.txt")[0].Rows)
	if err != nil {
		t.Fatal(err)
	}
	checkMatched(t, m, fast)
	if row := m[fast.Root.Children[1]]; row.Name != "mirror-2" || row.Class != ClassSpecial {
		t.Errorf("special mirror matched %+v", row)
	}

	rz1 := openZFS23Trees("04-scrubbed-healthy").Pools[1]
	for i, report := range parseIostatSample(t, "testdata/iostat-vHp-y-Tu-1-2.txt") {
		m, err := MatchIostat(rz1, report.Rows)
		if err != nil {
			t.Fatalf("report %d: %v", i, err)
		}
		checkMatched(t, m, rz1)
	}
}

func TestMatchIostatMismatch(t *testing.T) {
	text := parseIostatSample(t, "testdata/zfs-fuse/raid10__iostat-v.txt")[0].Rows
	status := openZFS23Trees("04-scrubbed-healthy")
	scripted := parseIostatSample(t, filepath.Join(openZFS23(t), "04-scrubbed-healthy__zpool-iostat-vHp.txt"))[0].Rows
	raid10 := func() *Pool { return zfsFuseTrees()["raid10"][0] }

	for _, tc := range []struct {
		name string
		run  func() (map[*Vdev]IostatRow, error)
		want string
	}{
		{"vdev added after iostat", func() (map[*Vdev]IostatRow, error) {
			p := raid10()
			p.Root.Children = append(p.Root.Children, normal(vd("mirror-2", "mirror", fuseLeaf("r5"), fuseLeaf("r6")))...)
			return MatchIostat(p, text)
		}, `pool craid10: status has normal vdev "mirror-2" (depth 1) that iostat does not show`},
		{"leaf renamed", func() (map[*Vdev]IostatRow, error) {
			p := raid10()
			p.Root.Children[1].Children[0] = fuseLeaf("r9")
			return MatchIostat(p, text)
		}, `pool craid10: iostat row "/var/tmp/zfs-fuse-capture/r3" (depth 2) does not match status vdev "/var/tmp/zfs-fuse-capture/r9" (depth 2)`},
		{"mirror became raidz", func() (map[*Vdev]IostatRow, error) {
			p := raid10()
			p.Root.Children[0].Name, p.Root.Children[0].Type = "raidz1-0", "raidz1"
			return MatchIostat(p, text)
		}, `pool craid10: iostat row "mirror" (depth 1) does not match status vdev "raidz1-0"`},
		{"leaf detached", func() (map[*Vdev]IostatRow, error) {
			p := raid10()
			p.Root.Children[1].Children = p.Root.Children[1].Children[:1]
			return MatchIostat(p, text)
		}, `pool craid10: iostat row "/var/tmp/zfs-fuse-capture/r4" (depth 2) in the normal section is not in status`},
		{"another pool", func() (map[*Vdev]IostatRow, error) {
			return MatchIostat(status.Pools[0], text)
		}, `pool r10: iostat rows do not start with the pool row`},
		{"pool missing from status", func() (map[*Vdev]IostatRow, error) {
			return MatchIostatReport(&Status{Pools: status.Pools[1:]}, scripted)
		}, `iostat shows pool "r10", which status does not`},
		{"log added to status", func() (map[*Vdev]IostatRow, error) {
			st := openZFS23Trees("04-scrubbed-healthy")
			st.Pools[0].Root.Children = append(st.Pools[0].Root.Children, class(ClassLog, leaf("nvme0n1"))...)
			return MatchIostatReport(st, scripted)
		}, `pool r10: iostat has no log section where status has "nvme0n1"`},
		{"cache removed from status", func() (map[*Vdev]IostatRow, error) {
			st := openZFS23Trees("04-scrubbed-healthy")
			rz1 := st.Pools[1].Root
			rz1.Children = slices.Delete(rz1.Children, 2, 3)
			return MatchIostatReport(st, scripted)
		}, `pool rz1: iostat has a section starting at "virtio-zd11" that status does not have`},
		{"text cache section unknown to status", func() (map[*Vdev]IostatRow, error) {
			rows := parseIostatSample(t, filepath.Join(openZFS23(t), "04-scrubbed-healthy__zpool-iostat-v.txt"))[0].Rows
			st := openZFS23Trees("04-scrubbed-healthy")
			rz1 := st.Pools[1].Root
			rz1.Children = slices.Delete(rz1.Children, 2, 3)
			return MatchIostatReport(st, rows)
		}, `pool rz1: iostat shows "virtio-zd11" in a cache section, which status does not have`},
		{"no tree", func() (map[*Vdev]IostatRow, error) {
			return MatchIostat(&Pool{Name: "x"}, text)
		}, "no status tree"},
		{"no tree, scripted", func() (map[*Vdev]IostatRow, error) {
			return MatchIostatReport(&Status{Pools: []*Pool{{Name: "r10"}}}, scripted)
		}, "pool r10: no status tree"},
		{"no status", func() (map[*Vdev]IostatRow, error) {
			return MatchIostatReport(nil, scripted)
		}, "no status"},
		{"pool twice", func() (map[*Vdev]IostatRow, error) {
			return MatchIostatReport(openZFS23Trees("04-scrubbed-healthy"), slices.Concat(scripted, scripted))
		}, `iostat shows pool "r10" twice in one report`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.run()
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || m != nil {
				t.Errorf("got %d pairs, error %v; want error %q", len(m), err, tc.want)
			}
		})
	}
}

func TestMatchIostatTolerates(t *testing.T) {
	rows := func(in string) []IostatRow {
		reports, err := ParseIostat(bytes.NewReader([]byte(in)))
		if err != nil || len(reports) != 1 {
			t.Fatalf("%d reports, %v", len(reports), err)
		}
		return reports[0].Rows
	}
	header := "pool        alloc   free   read  write   read  write\n"

	t.Run("old logs without a section", func(t *testing.T) {
		p := testPool("tank",
			normal(vd("mirror-0", "mirror", leaf("c0t0d0"), leaf("c0t1d0"))),
			class(ClassLog, leaf("c0t2d0")))
		m, err := MatchIostat(p, rows(header+
			"tank        6.05G  61.9G      0      0    786    107\n"+
			"  mirror    6.05G  61.9G      0      0    786    107\n"+
			"    c0t0d0      -      -      0      0    786    107\n"+
			"    c0t1d0      -      -      0      0    786    107\n"+
			"  c0t2d0    1.00M  1.00G      0      0      0      0\n"))
		if err != nil {
			t.Fatal(err)
		}
		checkMatched(t, m, p)
	})
	t.Run("full paths and old raidz", func(t *testing.T) {
		sda, sdb := leaf("sda"), leaf("sdb")
		sda.Path, sdb.Path = "/dev/sda", "/dev/sdb"
		p := testPool("tank", normal(vd("raidz1-0", "raidz1", sda, sdb)))
		m, err := MatchIostat(p, rows(header+
			"tank        6.05G  61.9G      0      0    786    107\n"+
			"  raidz     6.05G  61.9G      0      0    786    107\n"+
			"    /dev/sda    -      -      0      0    786    107\n"+
			"    /dev/sdb    -      -      0      0    786    107\n"))
		if err != nil {
			t.Fatal(err)
		}
		checkMatched(t, m, p)
	})
	t.Run("indirect vdev not printed", func(t *testing.T) {
		p := testPool("tank", normal(vd("indirect-0", "indirect"), leaf("sdb")))
		m, err := MatchIostat(p, rows(header+
			"tank        6.05G  61.9G      0      0    786    107\n"+
			"  sdb       6.05G  61.9G      0      0    786    107\n"))
		if err != nil || len(m) != 2 {
			t.Fatalf("%d pairs, %v", len(m), err)
		}
	})
	t.Run("dRAID", func(t *testing.T) {
		p := testPool("tank", normal(vd("draid1:4d:11c:1s-0", "draid1", leaf("sda"), leaf("sdb"))))
		m, err := MatchIostat(p, rows(header+
			"tank                  6.05G  61.9G      0      0    786    107\n"+
			"  draid1:4d:11c:1s-0  6.05G  61.9G      0      0    786    107\n"+
			"    sda                   -      -      0      0    786    107\n"+
			"    sdb                   -      -      0      0    786    107\n"))
		if err != nil {
			t.Fatal(err)
		}
		checkMatched(t, m, p)
	})
}

// configRows reads the first field of every config row of a status
// output, sections headers ("logs", "spares"...) left out.
func configRows(body []byte) []string {
	var names []string
	inConfig := false
	for _, line := range strings.Split(string(body), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
			inConfig = false
		case fields[0] == "NAME":
			inConfig = true
		case inConfig && len(fields) == 1 && iostatClassHeaders[fields[0]] != "":
		case inConfig:
			names = append(names, fields[0])
		}
	}
	return names
}

func treeNames(pools []*Pool) []string {
	var names []string
	var walk func(v *Vdev)
	walk = func(v *Vdev) {
		names = append(names, v.PrintedName()) // as printed in the config rows
		for _, c := range v.Children {
			walk(c)
		}
	}
	for _, p := range pools {
		walk(p.Root)
	}
	return names
}

// TestHandBuiltTrees checks the trees the matching tests use against the
// status captures of the same scenarios, config row by config row.
func TestHandBuiltTrees(t *testing.T) {
	for scenario, pools := range zfsFuseTrees() {
		if scenario == "interval" {
			scenario = "mirror" // the same pool, captured in its own scenario
		}
		body := sample.MustRead(t, "testdata/zfs-fuse/"+scenario+"__status.txt").Body
		if got, want := treeNames(pools), configRows(body); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: tree %v, status %v", scenario, got, want)
		}
	}
	dir := openZFS23(t)
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"} {
		body := sample.MustRead(t, filepath.Join(dir, scenario+"__zpool-status.txt")).Body
		if got, want := treeNames(openZFS23Trees(scenario).Pools), configRows(body); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: tree %v, status %v", scenario, got, want)
		}
	}
}

// TestMatchIostatParsedStatus pairs the iostat captures with the status
// parsers' trees of the same scenarios, text (zfs-fuse) and JSON (OpenZFS).
func TestMatchIostatParsedStatus(t *testing.T) {
	type pair struct{ status, iostat string }
	var pairs []pair
	statuses, _ := filepath.Glob("testdata/zfs-fuse/*__status.txt")
	for _, s := range statuses {
		io := strings.TrimSuffix(s, "__status.txt") + "__iostat-v.txt"
		if _, err := os.Stat(io); err == nil {
			pairs = append(pairs, pair{s, io})
		}
	}
	if len(pairs) < 6 {
		t.Fatalf("want at least 6 zfs-fuse status and iostat pairs, found %d", len(pairs))
	}
	dir := openZFS23(t)
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"} {
		for _, slug := range []string{"zpool-iostat-v", "zpool-iostat-vHp", "zpool-iostat-vHp-1-3", "zpool-iostat-vHp-l-q"} {
			pairs = append(pairs, pair{
				filepath.Join(dir, scenario+"__zpool-status-j-json-int.txt"),
				filepath.Join(dir, scenario+"__"+slug+".txt"),
			})
		}
	}
	for _, p := range pairs {
		t.Run(filepath.Base(p.iostat), func(t *testing.T) {
			body := sample.MustRead(t, p.status).Body
			var st *Status
			var err error
			if strings.Contains(p.status, "json") {
				st, err = ParseStatusJSON(bytes.NewReader(body))
			} else {
				st, err = ParseStatus(bytes.NewReader(body), time.UTC)
			}
			if err != nil {
				t.Fatalf("%s: %v", filepath.Base(p.status), err)
			}
			for i, report := range parseIostatSample(t, p.iostat) {
				m, err := MatchIostatReport(st, report.Rows)
				if err != nil {
					t.Fatalf("report %d: %v", i, err)
				}
				checkMatched(t, m, st.Pools...)
			}
		})
	}
}

// The tables of -vHp -w and -r, one per vdev after an empty line each,
// pair with the status tree by position: the log and cache devices of rz1
// after its raidz, its spare nowhere, the next pool's table after them.
func TestMatchIostatTablesOpenZFS23(t *testing.T) {
	dir := openZFS23(t)
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"} {
		for slug, kind := range map[string]HistogramKind{"zpool-iostat-vHp-w": LatencyHistogram, "zpool-iostat-vHp-r": SizeHistogram} {
			t.Run(scenario+"/"+slug, func(t *testing.T) {
				tables := parseHistogramSample(t, filepath.Join(dir, scenario+"__"+slug+".txt"), kind)
				st := openZFS23Trees(scenario)
				index, err := MatchIostatTables(st, tableNames(tables))
				if err != nil {
					t.Fatal(err)
				}
				checkTables(t, index, tables, st.Pools...)
				rz1 := st.Pools[1]
				if i := index[rz1.Root.Children[1]]; tables[i].Name != "virtio-zd10" {
					t.Errorf("rz1's log has table %d %q", i, tables[i].Name)
				}
				if _, ok := index[rz1.Root.Children[3]]; ok {
					t.Errorf("rz1's spare has a table")
				}
			})
		}
	}
}

// Names that do not follow the tree, or a pool that status lacks, are
// errors, never a shifted pairing.
func TestMatchIostatTablesMismatch(t *testing.T) {
	st := &Status{Pools: []*Pool{
		testPool("tank", normal(vd("mirror-0", "mirror", leaf("sda"), leaf("sdb"))), class(ClassLog, leaf("sdc")), class(ClassCache, leaf("sdd"))),
		testPool("mir", normal(vd("mirror-0", "mirror", leaf("sde"), leaf("sdf")))),
	}}
	whole := []string{"tank", "mirror-0", "sda", "sdb", "sdc", "sdd", "mir", "mirror-0", "sde", "sdf"}
	index, err := MatchIostatTables(st, whole)
	if err != nil {
		t.Fatal(err)
	}
	for v, i := range index {
		if whole[i] != v.PrintedName() {
			t.Errorf("vdev %s has table %d %q", v.Name, i, whole[i])
		}
	}
	if len(index) != len(whole) {
		t.Errorf("%d vdevs paired, want %d", len(index), len(whole))
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"tank", "mirror-0", "sda", "sdb", "sdd", "sdc"}, `pool tank: status has log vdev "sdc" (depth 1) that iostat does not show`},
		{[]string{"tank", "mirror-0", "sda", "sdb", "sdc", "sdd", "tank"}, `iostat shows pool "tank" twice`},
		{[]string{"tank", "mirror-0", "sda", "sdb", "sdc", "sdd", "other"}, `iostat shows pool "other", which status does not`},
		{[]string{"tank", "mirror-0", "sda", "sdc", "sdd"}, `pool tank: status has normal vdev "sdb" (depth 2) that iostat does not show`},
		{[]string{"mir", "mirror-0", "sde", "sdf", "sdg"}, `iostat shows pool "sdg", which status does not`},
	} {
		if _, err := MatchIostatTables(st, c.names); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one with %q", c.names, err, c.want)
		}
	}
}

// checkTables is checkMatched for the index MatchIostatTables returns.
func checkTables(t *testing.T, index map[*Vdev]int, tables []Histograms, pools ...*Pool) {
	t.Helper()
	total := 0
	for _, p := range pools {
		for v, at := range iostatVdevs(p) {
			total++
			i, ok := index[v]
			switch {
			case !ok:
				t.Errorf("%s: no table", at.path)
			case tables[i].Name != v.PrintedName() && vdevKind(tables[i].Name) != vdevKind(v.PrintedName()):
				t.Errorf("%s: table %d %q", at.path, i, tables[i].Name)
			}
		}
	}
	if len(index) != total || total != len(tables) {
		t.Errorf("%d pairs of %d tables, want %d", len(index), len(tables), total)
	}
}
