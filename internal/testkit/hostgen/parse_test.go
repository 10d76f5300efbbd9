package hostgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// writeHost writes the host of s into a temporary directory.
func writeHost(t *testing.T, s Spec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "host")
	if err := Write(dir, s); err != nil {
		t.Fatal(err)
	}
	return dir
}

// readCapture reads the output a command line has on the host.
func readCapture(t *testing.T, dir, line string) []byte {
	t.Helper()
	out, err := os.ReadFile(filepath.Join(dir, runner.CaptureFileName(line)))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The project's parsers read every output of a generated host, and the
// JSON and text status give the same tree.
func TestParsersReadGeneratedHost(t *testing.T) {
	for _, version := range Versions {
		t.Run(version, func(t *testing.T) {
			s := Spec{Pools: 3, Leaves: 6, Version: version}
			dir := writeHost(t, s)
			js, err := zpool.ParseStatusJSON(bytes.NewReader(readCapture(t, dir, "zpool status -j --json-int")))
			if err != nil {
				t.Fatal(err)
			}
			want := treeOf(t, js, s)
			for _, line := range []string{"zpool status", "zpool status -p", "zpool status -s -p"} {
				st, err := zpool.ParseStatus(bytes.NewReader(readCapture(t, dir, line)), time.UTC)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				if got := treeOf(t, st, s); got != want {
					t.Errorf("%s gives the tree\n%s\nJSON gives\n%s", line, got, want)
				}
			}
			props, err := zpool.ParseGet(bytes.NewReader(readCapture(t, dir, "zpool get -Hp all")))
			if err != nil {
				t.Fatal(err)
			}
			if perPool := len(poolRows) + map[string]int{"2.3": 0, "2.4": len(poolRows24)}[version]; len(props) != s.Pools*perPool {
				t.Errorf("zpool get -Hp all: %d rows, want %d pools of %d", len(props), s.Pools, perPool)
			}
			for _, p := range js.Pools {
				props, err := zpool.ParseGet(bytes.NewReader(readCapture(t, dir, "zpool get -Hp all "+p.Name+" all-vdevs")))
				if err != nil {
					t.Fatal(err)
				}
				vdevs := 1 + s.Leaves/2 + s.Leaves
				perVdev := len(leafVdevRows) + map[string]int{"2.3": 0, "2.4": 1}[version]
				if len(props) != vdevs*perVdev {
					t.Errorf("pool %s: %d vdev properties, want %d vdevs of %d", p.Name, len(props), vdevs, perVdev)
				}
			}
			checkKstats(t, filepath.Join(dir, "kstat"), js)
		})
	}
}

// treeOf prints a status's pools and vdevs, checking that it has s's
// layout, every vdev online.
func treeOf(t *testing.T, st *zpool.Status, s Spec) string {
	t.Helper()
	if len(st.Pools) != s.Pools {
		t.Fatalf("%d pools, want %d", len(st.Pools), s.Pools)
	}
	var b strings.Builder
	for _, p := range st.Pools {
		if p.State != "online" || p.Root == nil || len(p.Root.Children) != s.Leaves/2 {
			t.Fatalf("pool %s: state %q, root %v", p.Name, p.State, p.Root)
		}
		p.Root.Walk(func(v *zpool.Vdev, parent string) {
			if v.State != "online" {
				t.Errorf("pool %s: vdev %s is %q", p.Name, v.Name, v.State)
			}
			fmt.Fprintf(&b, "%s %s<%s %s\n", p.Name, v.Name, parent, v.Type)
		})
	}
	return b.String()
}

func checkKstats(t *testing.T, dir string, st *zpool.Status) {
	t.Helper()
	for _, name := range append([]string{"arcstats"}, kstat.MiscKstats...) {
		if _, err := kstat.ParseNamed(bytes.NewReader(readFile(t, dir, name))); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, p := range st.Pools {
		if state, err := kstat.ParsePoolState(bytes.NewReader(readFile(t, dir, p.Name, "state"))); err != nil || state != "online" {
			t.Errorf("%s/state: %q, %v", p.Name, state, err)
		}
		if _, err := kstat.ParseNamed(bytes.NewReader(readFile(t, dir, p.Name, "iostats"))); err != nil {
			t.Errorf("%s/iostats: %v", p.Name, err)
		}
		if _, err := kstat.ParseTxgs(bytes.NewReader(readFile(t, dir, p.Name, "txgs"))); err != nil {
			t.Errorf("%s/txgs: %v", p.Name, err)
		}
		n, err := kstat.ParseNamed(bytes.NewReader(readFile(t, dir, p.Name, "objset-0x36")))
		if err != nil {
			t.Fatalf("%s/objset-0x36: %v", p.Name, err)
		}
		if d, err := kstat.DatasetFromNamed(n); err != nil || d.Name != p.Name {
			t.Errorf("%s/objset-0x36: dataset %q, %v", p.Name, d.Name, err)
		}
	}
}

func readFile(t *testing.T, elem ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(elem...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestSpecs(t *testing.T) {
	for _, bad := range []Spec{{Pools: 0, Leaves: 4, Version: "2.3"}, {Pools: 1, Leaves: 3, Version: "2.3"}, {Pools: 1, Leaves: 0, Version: "2.3"}, {Pools: 1, Leaves: 4, Version: "2.2"}} {
		if err := Write(filepath.Join(t.TempDir(), "host"), bad); err == nil {
			t.Errorf("%+v: written", bad)
		}
	}
	s, err := ParseName("10x1000", "2.4")
	if err != nil || s != (Spec{Pools: 10, Leaves: 1000, Version: "2.4"}) || s.Name() != "10x1000" {
		t.Errorf(`ParseName("10x1000") = %+v, %v`, s, err)
	}
	for _, bad := range []string{"10", "x10", "1x", "1x3", "ax10"} {
		if _, err := ParseName(bad, "2.3"); err == nil {
			t.Errorf("ParseName(%q) accepted", bad)
		}
	}
}

func TestNames(t *testing.T) {
	for n, want := range map[int]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 701: "zz", 702: "aaa"} {
		if got := diskLetters(n); got != want {
			t.Errorf("diskLetters(%d) = %q, want %q", n, got, want)
		}
	}
	h := layout(Spec{Pools: 10, Leaves: 1000, Version: "2.3"})
	first, last := h.pools[0].mirrors[0].leaves[0], h.pools[9].mirrors[499].leaves[1]
	if h.pools[0].name != "tank0" || h.pools[9].name != "tank9" || first.name != "virtio-zd00001" || last.name != "virtio-zd10000" || first.disk != "vdb" {
		t.Errorf("pools %s..%s, leaves %s (%s)..%s", h.pools[0].name, h.pools[9].name, first.name, first.disk, last.name)
	}
	seen := map[uint64]bool{}
	for _, p := range h.pools {
		seen[p.guid] = true
		for _, m := range p.mirrors {
			seen[m.guid] = true
			for _, l := range m.leaves {
				seen[l.guid] = true
			}
		}
	}
	if len(seen) != 10+10*500+10*1000 {
		t.Errorf("%d distinct GUIDs for %d vdevs", len(seen), 10+10*500+10*1000)
	}
}
