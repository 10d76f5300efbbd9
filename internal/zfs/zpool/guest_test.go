package zpool

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The outputs in testdata/openzfs-*-guest were captured by the walk of the
// project's test bed (testbed/openzfs) from a real OpenZFS (2.4.4, 2.3.2, 2.1.11),
// each headed by its command, scenario and exit status. Every one that
// zpool printed parses; the status ones have goldens. Commands an older
// zpool refused (`status -j`, vdev properties on 2.1) are kept with their
// exit status and skipped.
func TestOpenZFSGuestCaptures(t *testing.T) {
	paths, err := filepath.Glob("testdata/openzfs-*-guest/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			f := sample.MustRead(t, path)
			if exit := f.Header["exit"]; exit != "" && exit != "0" {
				// Refused: usage on stderr, nothing on stdout.
				if body := strings.TrimSpace(string(f.Body)); body != "" {
					t.Errorf("zpool exited %s but printed %q", exit, body)
				}
				return
			}
			cmd := f.Header["command"]
			golden := strings.TrimSuffix(path, ".txt") + ".golden.json"
			switch {
			case strings.HasPrefix(cmd, "zpool status -j"):
				st, err := ParseStatusJSON(bytes.NewReader(f.Body))
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, golden, st)
			case strings.HasPrefix(cmd, "zpool status"):
				st, err := ParseStatus(bytes.NewReader(f.Body), time.UTC)
				if err != nil {
					t.Fatal(err)
				}
				checkGolden(t, golden, st)
			case cmd == "zpool version":
				if userland, kernel, err := ParseVersion(f.Body); err != nil || userland == "" || kernel == "" {
					t.Errorf("version %q, module %q, %v", userland, kernel, err)
				}
			case strings.HasPrefix(cmd, "zpool iostat") && (strings.HasSuffix(cmd, " -w") || strings.HasSuffix(cmd, " -r")):
				kind := LatencyHistogram
				if strings.HasSuffix(cmd, " -r") {
					kind = SizeHistogram
				}
				tables, err := ParseHistograms(bytes.NewReader(f.Body), kind)
				if err != nil {
					t.Fatal(err)
				}
				checkHistograms(t, kind, tables)
				// The tables pair with the status of the scenario. Most
				// of those fixtures come from an earlier walk, whose spares
				// and replacements went otherwise in later scenarios: the
				// first, of the pools as created, is the same in every
				// walk, and the slow disk's were captured with its tables.
				scenario, _, _ := strings.Cut(filepath.Base(path), "__")
				if !strings.Contains(cmd, "-vHp") || scenario != "01-created" && scenario != "12-slow-disk" {
					return
				}
				st, err := guestStatus(t, filepath.Dir(path), scenario)
				if err != nil {
					t.Fatal(err)
				}
				index, err := MatchIostatTables(st, tableNames(tables))
				if err != nil {
					t.Fatal(err)
				}
				if len(index) != len(tables) {
					t.Errorf("%d tables, %d paired with a vdev", len(tables), len(index))
				}
			case strings.HasPrefix(cmd, "zpool iostat"):
				if _, err := ParseIostat(bytes.NewReader(f.Body)); err != nil {
					t.Fatal(err)
				}
			case strings.HasPrefix(cmd, "zpool get"):
				props, err := ParseGet(bytes.NewReader(f.Body))
				if err != nil || len(props) == 0 {
					t.Fatalf("%d properties, %v", len(props), err)
				}
			case strings.HasPrefix(cmd, "zpool list -v"):
				// Paired with the status in TestMatchListGuestCaptures.
				rows, err := ParseListVerbose(bytes.NewReader(f.Body))
				if err != nil {
					t.Fatal(err)
				}
				checkListRows(t, f.Body, rows)
			default:
				t.Fatalf("no parser for %q", cmd)
			}
		})
	}
}

// guestStatus is a scenario's status: the JSON, or the text where zpool
// has no JSON (before 2.3).
func guestStatus(t *testing.T, dir, scenario string) (*Status, error) {
	t.Helper()
	f := sample.MustRead(t, filepath.Join(dir, scenario+"__zpool_status_-j_--json-int.txt"))
	if exit := f.Header["exit"]; exit == "" || exit == "0" {
		return ParseStatusJSON(bytes.NewReader(f.Body))
	}
	return ParseStatus(bytes.NewReader(sample.MustRead(t, filepath.Join(dir, scenario+"__zpool_status_-p.txt")).Body), time.UTC)
}

// OpenZFS 2.3.2's JSON leaves out the type, state and GUID of a dRAID
// vdev. The type is taken from its name; the state must come from
// elsewhere (the exporter reads the text status for it), so it stays
// empty here rather than being guessed.
func TestJSONDraidWithoutTypeOrState(t *testing.T) {
	draid := jsonDraid(t, "2.3")
	if draid.Type != "draid1" || draid.State != "" || len(draid.Children) != 5 {
		t.Errorf("dRAID vdev: type %q, state %q, %d children; want draid1, no state, 5 children", draid.Type, draid.State, len(draid.Children))
	}
	for _, leaf := range draid.Children {
		if leaf.State != "online" {
			t.Errorf("leaf %s state %q, want online", leaf.Name, leaf.State)
		}
	}
}

// OpenZFS 2.4.4 prints the dRAID vdev's type ("draid"), state and GUID that
// 2.3.2 left out. The type keeps its parity, as from 2.3's name, so that
// both releases export the same vdev_type.
func TestJSONDraidWithTypeAndState(t *testing.T) {
	draid := jsonDraid(t, "2.4")
	if draid.Type != "draid1" || draid.State != "online" || draid.GUID == "" || len(draid.Children) != 5 {
		t.Errorf("dRAID vdev: type %q, state %q, GUID %q, %d children; want draid1, online, a GUID, 5 children", draid.Type, draid.State, draid.GUID, len(draid.Children))
	}
}

// OpenZFS 2.4 adds three vdev properties, read like the others: sit_out on
// the leaves of raidz and dRAID vdevs only (no source), autosit on those
// vdevs themselves, and slow_io_events on every vdev. It also lists the
// dRAID vdev itself, which 2.3.2 left out.
func TestVdevPropertiesOfOpenZFS24(t *testing.T) {
	read := func(pool string) map[[2]string]Property {
		return readVdevProperties(t, "2.4", pool)
	}
	const draid = "draid1:2d:5c:1s-0"
	if _, ok := read("dr")[[2]string{draid, "write_bytes"}]; !ok {
		t.Errorf("2.4.4 lists no counters of the dRAID vdev")
	}
	if p, ok := readVdevProperties(t, "2.3", "dr")[[2]string{draid, "write_bytes"}]; ok {
		t.Errorf("2.3.2 lists the dRAID vdev: %+v", p)
	}
	rz1, mir := read("rz1"), read("mir")
	for _, want := range []Property{
		{"virtio-zd07", "sit_out", "off", "-"},
		{"raidz1-0", "autosit", "off", "default"},
		{"root-0", "slow_io_events", "on", "default"},
		{"virtio-zd07", "slow_io_events", "on", "default"},
	} {
		if got := rz1[[2]string{want.Name, want.Property}]; got != want {
			t.Errorf("rz1: %s %s = %+v, want %+v", want.Name, want.Property, got, want)
		}
	}
	for _, absent := range [][2]string{{"virtio-zd01", "sit_out"}, {"mirror-0", "autosit"}} {
		if p, ok := mir[absent]; ok {
			t.Errorf("mir: %s %s listed: %+v", absent[0], absent[1], p)
		}
	}
	if got := mir[[2]string{"virtio-zd01", "slow_io_events"}]; got.Value != "on" {
		t.Errorf("mir: virtio-zd01 slow_io_events = %+v", got)
	}
}

// readVdevProperties reads the vdev properties of pool that a release's
// walk captured when it created its pools, by vdev and property.
func readVdevProperties(t *testing.T, release, pool string) map[[2]string]Property {
	t.Helper()
	f := sample.MustRead(t, "testdata/openzfs-"+release+"-guest/01-created__zpool_get_-Hp_all_"+pool+"_all-vdevs.txt")
	props, err := ParseGet(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	m := map[[2]string]Property{}
	for _, p := range props {
		m[[2]string{p.Name, p.Property}] = p
	}
	return m
}

// jsonDraid returns the dRAID vdev of pool dr from the JSON status that a
// release's walk captured when it created its pools.
func jsonDraid(t *testing.T, release string) *Vdev {
	t.Helper()
	f := sample.MustRead(t, "testdata/openzfs-"+release+"-guest/01-created__zpool_status_-j_--json-int.txt")
	st, err := ParseStatusJSON(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Pools {
		if p.Name == "dr" && p.Root != nil && len(p.Root.Children) > 0 && p.Root.Children[0].Name == "draid1:2d:5c:1s-0" {
			return p.Root.Children[0]
		}
	}
	t.Fatalf("no dRAID vdev draid1:2d:5c:1s-0 in pool dr")
	return nil
}

// What the leaves are doing reads the same from the JSON as from the
// text's notes: the new disk of a healing resilver is resilvering, and
// nothing else is noted, in the guest's resilver and spare scenarios.
func TestActivitiesOfJSONAsOfText(t *testing.T) {
	for _, release := range []string{"2.3", "2.4"} {
		dir := filepath.Join("testdata", "openzfs-"+release+"-guest")
		for _, scenario := range []string{"04-resilvering", "06-spare-inuse"} {
			t.Run(release+"/"+scenario, func(t *testing.T) {
				read := func(command string) []byte {
					return sample.MustRead(t, filepath.Join(dir, scenario+"__"+command+".txt")).Body
				}
				js, err := ParseStatusJSON(bytes.NewReader(read("zpool_status_-j_--json-int")))
				if err != nil {
					t.Fatal(err)
				}
				text, err := ParseStatus(bytes.NewReader(read("zpool_status_-p")), time.UTC)
				if err != nil {
					t.Fatal(err)
				}
				activities := func(st *Status) map[string][]string {
					out := map[string][]string{}
					for _, p := range st.Pools {
						p.Root.Walk(func(v *Vdev, _ string) {
							if len(v.Activities) > 0 {
								out[p.Name+"/"+v.Name] = v.Activities
							}
						})
					}
					return out
				}
				j, x := activities(js), activities(text)
				if diff := cmp.Diff(x, j); diff != "" {
					t.Errorf("JSON's activities differ from the text's (-text +json):\n%s", diff)
				}
				if scenario == "04-resilvering" && !slices.Equal(j["mir/virtio-zd18"], []string{ActivityResilvering}) {
					t.Errorf("mir/virtio-zd18: activities %v, want resilvering", j["mir/virtio-zd18"])
				}
			})
		}
	}
}

// A removed device leaves an indirect vdev that zpool iostat lists, idle,
// where zpool status shows nothing: its tables and rows are left out of
// the pairing, which otherwise fails for the whole host.
func TestIostatPairsAroundIndirectVdevs(t *testing.T) {
	for _, release := range []string{"2.1", "2.3", "2.4"} {
		t.Run(release, func(t *testing.T) {
			testIostatPairsAroundIndirectVdevs(t, filepath.Join("testdata", "openzfs-"+release+"-guest"))
		})
	}
}

func testIostatPairsAroundIndirectVdevs(t *testing.T, dir string) {
	st, err := guestStatus(t, dir, "16-removed")
	if err != nil {
		t.Fatal(err)
	}
	read := func(command string) []byte {
		return sample.MustRead(t, filepath.Join(dir, "16-removed__"+command+".txt")).Body
	}
	for flag, kind := range map[string]HistogramKind{"-w": LatencyHistogram, "-r": SizeHistogram} {
		tables, err := ParseHistograms(bytes.NewReader(read("zpool_iostat_-vHp_"+flag)), kind)
		if err != nil {
			t.Fatal(err)
		}
		names := tableNames(tables)
		if !slices.Contains(names, "indirect-1") {
			t.Fatalf("zpool iostat -vHp %s lists no indirect-1: %v", flag, names)
		}
		index, err := MatchIostatTables(st, names)
		if err != nil {
			t.Fatalf("zpool iostat -vHp %s: %v", flag, err)
		}
		vdevs := 0
		for _, p := range st.Pools {
			p.Root.Walk(func(v *Vdev, _ string) {
				if v.Class == ClassSpare && v.Type != "root" {
					return
				}
				vdevs++
				if i, ok := index[v]; !ok {
					t.Errorf("-w %s: %s/%s has no table", flag, p.Name, v.Name)
				} else if names[i] != v.PrintedName() && names[i] != p.Name && !strings.HasSuffix(v.Path, names[i]) && names[i] != v.Path {
					t.Errorf("%s: %s/%s paired with table %d, %s", flag, p.Name, v.Name, i, names[i])
				}
			})
		}
		if len(index) != len(names)-1 {
			t.Errorf("%s: %d of %d tables paired, want all but indirect-1's", flag, len(index), len(names))
		}
	}
	rows, err := ParseIostat(bytes.NewReader(read("zpool_iostat_-v")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := MatchIostatReport(st, rows[0].Rows); err != nil {
		t.Errorf("zpool iostat -v: %v", err)
	}
}
