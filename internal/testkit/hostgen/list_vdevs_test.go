package hostgen

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// vdevList is a host's `zpool list -v -Hp`.
func vdevList(s Spec) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	writeVdevList(w, layout(s))
	w.Flush()
	return b.Bytes()
}

var figure = regexp.MustCompile(`^[0-9]+$`)

// listShapes are the rows of a zpool list -v -Hp output as their kind (a
// pool's row, or a vdev's after a tab) and their fields, with every name
// as "name" and every figure as "#": what must not differ between a
// generated host and a real one.
func listShapes(out []byte) []string {
	var shapes []string
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSuffix(line, "\n")
		kind := "pool"
		if rest, ok := strings.CutPrefix(line, "\t"); ok {
			kind, line = "vdev", rest
		}
		fields := strings.Split(line, "\t")
		fields[0] = "name"
		for i, f := range fields {
			if figure.MatchString(f) {
				fields[i] = "#"
			}
		}
		shapes = append(shapes, kind+" "+strings.Join(fields, " "))
	}
	return shapes
}

// A generated pool's rows are those of a stripe of mirrors as zpool
// prints them: the shapes of the normal section of the zpool package's
// outputs of 2.3 and 2.4.1+, and of r10 in the guest's captures of the
// release and in the shared OpenZFS 2.3.2 captures, where they are.
func TestVdevListIsLikeCapture(t *testing.T) {
	// A pool, a mirror, a disk: the normal section of the fixtures.
	fixture := func(t *testing.T, name string) []string {
		f := sample.MustRead(t, filepath.Join("../../zfs/zpool/testdata", name))
		return listShapes(f.Body)[:3]
	}
	for _, version := range Versions {
		t.Run(version, func(t *testing.T) {
			got := listShapes(vdevList(Spec{Pools: 1, Leaves: 4, Version: version}))
			if len(got) != 7 {
				t.Fatalf("%d rows, want the pool's, 2 mirrors' and 4 disks'", len(got))
			}
			model := map[string]string{"2.3": "list-v-Hp-classes.txt", "2.4": "list-v-Hp-classes-2.4.txt"}[version]
			want := fixture(t, model)
			for i, kind := range []int{0, 1, 2, 2, 1, 2, 2} { // pool, mirror, its disks, mirror, its disks
				if got[i] != want[kind] {
					t.Errorf("row %d: %q, the fixture %s has %q", i+1, got[i], model, want[kind])
				}
			}
			// The guest's own capture of the release, where it has one.
			guest := filepath.Join(fmt.Sprintf(zpoolCaptures, version), modelScenario+"__"+runner.CaptureFileName("zpool list -v -Hp"))
			if _, err := os.Stat(guest); err == nil {
				t.Run("guest", func(t *testing.T) {
					compareWithModel(t, got, captured(t, fmt.Sprintf(zpoolCaptures, version), "zpool list -v -Hp"))
				})
			}
			if version == "2.3" {
				t.Run("openzfs-2.3-captures", func(t *testing.T) {
					capture := sample.MustRead(t, filepath.Join(sample.Dir(t, "captures/openzfs-2.3"), "04-scrubbed-healthy__zpool-list-v-Hp.txt"))
					compareWithModel(t, got, capture.Body)
				})
			}
		})
	}
}

// compareWithModel compares the shapes of a generated pool's rows with
// those of r10 in a capture.
func compareWithModel(t *testing.T, got []string, capture []byte) {
	t.Helper()
	all := listShapes(capture)
	lines := strings.Split(string(capture), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, modelPool+"\t") })
	if start < 0 || start+len(got) > len(all) {
		t.Fatalf("no %s of %d rows in the capture", modelPool, len(got))
	}
	if r10 := all[start : start+len(got)]; !slices.Equal(got, r10) {
		t.Errorf("rows:\n%s\nr10 of the capture:\n%s", strings.Join(got, "\n"), strings.Join(r10, "\n"))
	}
}

// The exporter reads a host's list as it reads zpool's: every row pairs
// with a vdev of the host's status, and the mirrors add up to the pool's
// size, which zpool get says too.
func TestVdevListReadsAsTheHost(t *testing.T) {
	for _, version := range Versions {
		t.Run(version, func(t *testing.T) {
			s := Spec{Pools: 3, Leaves: 6, Version: version}
			dir := writeHost(t, s)
			st, err := zpool.ParseStatusJSON(bytes.NewReader(readCapture(t, dir, "zpool status -j --json-int")))
			if err != nil {
				t.Fatal(err)
			}
			rows, err := zpool.ParseListVerbose(bytes.NewReader(vdevList(s)))
			if err != nil {
				t.Fatal(err)
			}
			paired, warnings := zpool.MatchList(st, rows)
			if len(warnings) > 0 || len(paired) != len(rows) || len(rows) != s.Pools*(1+s.Leaves/2+s.Leaves) {
				t.Errorf("%d of %d rows paired, warnings %q", len(paired), len(rows), warnings)
			}
			props, err := zpool.ParseGet(bytes.NewReader(readCapture(t, dir, "zpool get -Hp all")))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range st.Pools {
				sum := 0.0
				for _, m := range p.Root.Children {
					sum += *paired[m].Size
				}
				size := *paired[p.Root].Size
				i := slices.IndexFunc(props, func(q zpool.Property) bool { return q.Name == p.Name && q.Property == "size" })
				if i < 0 || sum != size || props[i].Value != strconv.FormatFloat(size, 'f', -1, 64) {
					t.Errorf("%s: mirrors add up to %v, the pool's row says %v, zpool get %+v", p.Name, sum, size, props[max(i, 0)])
				}
			}
		})
	}
}
