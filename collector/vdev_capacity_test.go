package collector

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// vdevCapacityMetrics are the gauges of vdev_capacity.go by the vdev
// property each is read from.
var vdevCapacityMetrics = map[string]string{
	"size":      "zfs_vdev_size_bytes",
	"allocated": "zfs_vdev_allocated_bytes",
	"free":      "zfs_vdev_free_bytes",
	"ashift":    "zfs_vdev_ashift",
}

// The space of the vdevs is what zpool printed in `zpool get -Hp all POOL
// all-vdevs` of the same moment: size, allocated and free of the pool's
// root and of its top-level vdevs (whose parent property is the pool),
// ashift of every vdev that has one; nothing else.
func TestVdevCapacityAsZpoolPrinted(t *testing.T) {
	guestScenarios := []string{"01-created", "02-offline", "03-scrub-paused", "04-resilvering", "05-rebuilding", "06-spare-inuse", "07-data-errors", "10-duplicate-names"}
	sets := []struct {
		name      string
		dir       func(t *testing.T) string
		scenarios []string
	}{
		{"openzfs-2.3-captures", func(t *testing.T) string { return sample.Dir(t, "captures/openzfs-2.3") },
			[]string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"}},
		{"openzfs-2.3-guest", func(*testing.T) string { return guestDir("2.3") }, guestScenarios},
		{"openzfs-2.4-guest", func(*testing.T) string { return guestDir("2.4") }, append(slices.Clone(guestScenarios), "12-slow-disk")},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			dir := set.dir(t)
			for _, scenario := range set.scenarios {
				t.Run(scenario, func(t *testing.T) { testVdevCapacityAsPrinted(t, dir, set.scenarios[0], scenario) })
			}
		})
	}
}

// testVdevCapacityAsPrinted scrapes scenario after first, where every
// pool's vdev properties were captured: some scenarios of the guests hold
// a few pools' only, and the first pool read tells whether zpool has vdev
// properties.
func testVdevCapacityAsPrinted(t *testing.T, dir, first, scenario string) {
	replay, err := runner.NewReplayWithOptions(dir, runner.ReplayOptions{Scenarios: slices.Compact([]string{first, scenario})})
	if err != nil {
		t.Fatal(err)
	}
	e := vdevIOExporter(t, replay)
	fams := gatherFrom(t, e.Scraper(context.Background()))
	if v, _ := value(fams, "zfs_exporter_capabilities_info", map[string]string{"vdev_io": "vdev_properties"}); v != 1 {
		t.Fatalf("vdev properties not detected in %s", first)
	}
	if scenario != first {
		replay.Advance()
		fams = gatherFrom(t, e.Scraper(context.Background()))
	}

	want := map[string]float64{} // metric{pool,vdev} -> value
	pools := 0
	for _, f := range sample.Glob(t, dir, scenario+"__*all-vdevs.txt") {
		args := strings.Fields(f.Header["command"])
		if len(args) != 6 || args[2] != "-Hp" || args[3] != "all" || f.Header["exit"] != "" && f.Header["exit"] != "0" {
			continue // zpool get -j, or the table
		}
		pool := args[4]
		props, err := zpool.ParseGet(bytes.NewReader(f.Body))
		if err != nil {
			t.Fatalf("%s: %v", f.Path, err)
		}
		pools++
		for name, values := range capturedCapacity(t, pool, props) {
			for prop, printed := range values {
				want[vdevCapacityMetrics[prop]+"{"+pool+","+name+"}"] = printed
			}
		}
	}
	if pools == 0 || len(want) == 0 {
		t.Fatalf("no vdev properties captured in %s for %s", dir, scenario)
	}

	got := map[string]float64{}
	for _, metric := range vdevCapacityMetrics {
		for _, s := range series(fams, metric, nil) {
			v, _ := value(fams, metric, s)
			got[metric+"{"+s["pool"]+","+s["vdev"]+"}"] = v
		}
	}
	for key, w := range want {
		if g, ok := got[key]; !ok {
			t.Errorf("%s missing, zpool printed %v", key, w)
		} else if g != w {
			t.Errorf("%s = %v, zpool printed %v", key, g, w)
		}
	}
	for key, g := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("%s = %v, which zpool did not print for it", key, g)
		}
	}
	if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

// capturedCapacity reads off one pool's vdev properties the values the
// gauges must have, by vdev as the gauges name it: the root (root-0) by
// the pool's name. A vdev listed twice with different values (none is, in
// the captures) would be left out.
func capturedCapacity(t *testing.T, pool string, props []zpool.Property) map[string]map[string]float64 {
	t.Helper()
	byVdev := map[string]map[string]string{}
	conflict := map[string]bool{}
	for _, p := range props {
		if byVdev[p.Name] == nil {
			byVdev[p.Name] = map[string]string{}
		}
		if old, ok := byVdev[p.Name][p.Property]; ok && old != p.Value {
			conflict[p.Name] = true
		}
		byVdev[p.Name][p.Property] = p.Value
	}
	out := map[string]map[string]float64{}
	for name, m := range byVdev {
		if conflict[name] {
			continue
		}
		root := strings.HasPrefix(name, "root-")
		top := m["parent"] == pool
		label := name
		if root {
			label = pool
		}
		for _, prop := range []string{"size", "allocated", "free", "ashift"} {
			s, ok := m[prop]
			if !ok || s == "-" {
				continue
			}
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				t.Fatalf("%s %s %s = %q: not a -p number", pool, name, prop, s)
			}
			switch {
			case prop == "ashift" && v == 0: // the root's
				continue
			case prop != "ashift" && !root && !top: // a disk's 0
				if v != 0 {
					t.Errorf("%s %s %s = %d below a top-level vdev", pool, name, prop, v)
				}
				continue
			}
			if out[label] == nil {
				out[label] = map[string]float64{}
			}
			out[label][prop] = float64(v)
		}
	}
	return out
}

// A raidz vdev allocated beyond its size, parity counted: its free, two
// unsigned numbers subtracted, wraps around and is not sent; size and
// allocated are, and neither is summed from the leaves, which read 0.
func TestVdevFreeWrappedAroundNotSent(t *testing.T) {
	pool := &zpool.Pool{Name: "tank", Root: &zpool.Vdev{Name: "tank", Type: "root", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
		{Name: "raidz1-0", Type: "raidz1", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
			{Name: "sda", Type: "disk", Class: zpool.ClassNormal},
			{Name: "sdb", Type: "disk", Class: zpool.ClassNormal},
			{Name: "sdc", Type: "disk", Class: zpool.ClassNormal},
		}},
	}}}
	wrapped := strconv.FormatUint(1000-1200+math.MaxUint64+1, 10) // uint64(1000 - 1200)
	var props []zpool.Property
	row := func(vdev, prop, value string) {
		props = append(props, zpool.Property{Name: vdev, Property: prop, Value: value, Source: "-"})
	}
	for _, v := range []string{"root-0", "raidz1-0"} {
		row(v, "size", "1000")
		row(v, "allocated", "1200")
		row(v, "free", wrapped)
	}
	row("root-0", "ashift", "0")
	row("raidz1-0", "ashift", "12")
	for _, leaf := range []string{"sda", "sdb", "sdc"} {
		row(leaf, "size", "0")
		row(leaf, "allocated", "0")
		row(leaf, "free", "0")
		row(leaf, "ashift", "12")
	}
	got := capacitySeries(t, pool, props)
	want := []string{
		"zfs_vdev_allocated_bytes tank 1200", "zfs_vdev_size_bytes tank 1000",
		"zfs_vdev_allocated_bytes raidz1-0 1200", "zfs_vdev_ashift raidz1-0 12", "zfs_vdev_size_bytes raidz1-0 1000",
		"zfs_vdev_ashift sda 12", "zfs_vdev_ashift sdb 12", "zfs_vdev_ashift sdc 12",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A value that is not a number costs that value only, and says which.
func TestVdevCapacityUnreadableValue(t *testing.T) {
	pool := &zpool.Pool{Name: "tank", Root: &zpool.Vdev{Name: "tank", Type: "root", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
		{Name: "sda", Type: "disk", Class: zpool.ClassNormal},
	}}}
	props := []zpool.Property{
		{Name: "sda", Property: "size", Value: "lots", Source: "-"},
		{Name: "sda", Property: "allocated", Value: "10", Source: "-"},
	}
	ch := make(chan prometheus.Metric, 10)
	err := collectVdevCapacity(pool, props, ch)
	close(ch)
	if err == nil || !strings.Contains(err.Error(), "sda") || !strings.Contains(err.Error(), "size") {
		t.Errorf("error = %v, want one naming sda and size", err)
	}
	if n := len(ch); n != 1 {
		t.Errorf("%d series sent, want allocated's alone", n)
	}
}

// capacitySeries runs collectVdevCapacity and lists what it sent as
// "metric vdev value", in the order sent.
func capacitySeries(t *testing.T, p *zpool.Pool, props []zpool.Property) []string {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	if err := collectVdevCapacity(p, props, ch); err != nil {
		t.Fatal(err)
	}
	close(ch)
	var out []string
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range pb.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		name := infoOf(m.Desc()).name
		out = append(out, name+" "+labels["vdev"]+" "+strconv.FormatFloat(pb.GetGauge().GetValue(), 'f', -1, 64))
	}
	return out
}

// The vdev properties fragmentation and expandsize read 0% and "-" on
// every vdev (openzfs/zfs#16459): the 2.3.2 captures show 0% for tank's
// mirror-0 where zpool list -v of the same moment shows 19%. They are not
// asked for.
func TestVdevFragmentationPropertyNotAsked(t *testing.T) {
	for _, p := range []string{"fragmentation", "expandsize"} {
		if slices.Contains(vdevAskedProperties, p) {
			t.Errorf("vdev property %s asked for", p)
		}
	}
	dir := sample.Dir(t, "captures/openzfs-2.3")
	get := sample.MustRead(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-get-Hp-all-tank-all-vdevs.txt"))
	props, err := zpool.ParseGet(bytes.NewReader(get.Body))
	if err != nil {
		t.Fatal(err)
	}
	property := ""
	for _, p := range props {
		if p.Name == "mirror-0" && p.Property == "fragmentation" {
			property = p.Value
		}
	}
	list := sample.MustRead(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-list-v-Hp.txt"))
	listed := ""
	pool := ""
	for line := range strings.Lines(string(list.Body)) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if !strings.HasPrefix(line, "\t") {
			pool = f[0]
		} else if pool == "tank" && len(f) > 7 && f[1] == "mirror-0" {
			listed = f[7] // NAME SIZE ALLOC FREE CKPOINT EXPANDSZ FRAG, after the indent
		}
	}
	if property != "0%" || listed == "" || listed == "0" {
		t.Errorf("tank mirror-0: vdev property fragmentation %q, zpool list -v %q: the captures no longer show the property stuck at 0%%", property, listed)
	}
}
