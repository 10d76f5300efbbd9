package collector

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The ashift of the vdevs is what zpool printed in `zpool get -Hp all POOL
// all-vdevs` of the same moment, for every vdev that has one; vdev_io
// sends no space of vdevs, which comes from zpool list -v alone.
func TestVdevAshiftAsZpoolPrinted(t *testing.T) {
	guestScenarios := []string{"01-created", "02-offline", "03-scrub-paused", "04-resilvering", "05-rebuilding", "06-spare-inuse", "07-data-errors", "10-duplicate-names"}
	sets := []struct {
		name      string
		dir       func(t *testing.T) string
		scenarios []string
	}{
		{"openzfs-2.3-guest", func(*testing.T) string { return guestDir("2.3") }, guestScenarios},
		{"openzfs-2.4-guest", func(*testing.T) string { return guestDir("2.4") }, append(slices.Clone(guestScenarios), "12-slow-disk")},
		{"openzfs-2.3-captures", func(t *testing.T) string { return sample.Dir(t, "captures/openzfs-2.3") },
			[]string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"}},
	}
	for _, set := range sets {
		t.Run(set.name, func(t *testing.T) {
			dir := set.dir(t)
			for _, scenario := range set.scenarios {
				t.Run(scenario, func(t *testing.T) { testVdevAshiftAsPrinted(t, dir, set.scenarios[0], scenario) })
			}
		})
	}
}

// testVdevAshiftAsPrinted scrapes scenario after first, where every
// pool's vdev properties were captured: some scenarios of the guests hold
// a few pools' only, and the first pool read tells whether zpool has vdev
// properties.
func testVdevAshiftAsPrinted(t *testing.T, dir, first, scenario string) {
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

	want := map[string]float64{} // {pool,vdev} -> ashift
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
		for name, ashift := range capturedAshift(t, pool, props) {
			want["{"+pool+","+name+"}"] = ashift
		}
	}
	if pools == 0 || len(want) == 0 {
		t.Fatalf("no vdev properties captured in %s for %s", dir, scenario)
	}

	got := map[string]float64{}
	for _, s := range series(fams, "zfs_vdev_ashift", nil) {
		v, _ := value(fams, "zfs_vdev_ashift", s)
		got["{"+s["pool"]+","+s["vdev"]+"}"] = v
	}
	for key, w := range want {
		if g, ok := got[key]; !ok {
			t.Errorf("ashift%s missing, zpool printed %v", key, w)
		} else if g != w {
			t.Errorf("ashift%s = %v, zpool printed %v", key, g, w)
		}
	}
	for key, g := range got {
		if _, ok := want[key]; !ok {
			t.Errorf("ashift%s = %v, which zpool did not print for it", key, g)
		}
	}
	for _, name := range []string{"zfs_vdev_size_bytes", "zfs_vdev_allocated_bytes", "zfs_vdev_free_bytes"} {
		if s := series(fams, name, nil); len(s) > 0 {
			t.Errorf("vdev_io sent %d series of %s", len(s), name)
		}
	}
	if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

// capturedAshift reads off one pool's vdev properties the ashift the
// gauges must have, by vdev as the gauges name it: none for the root,
// whose 0 is no sector size. A vdev listed twice with different values
// (none is, in the captures) would be left out.
func capturedAshift(t *testing.T, pool string, props []zpool.Property) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	conflict := map[string]bool{}
	for _, p := range props {
		if p.Property != "ashift" || p.Value == "-" {
			continue
		}
		v, err := strconv.ParseUint(p.Value, 10, 64)
		if err != nil {
			t.Fatalf("%s %s ashift = %q: not a -p number", pool, p.Name, p.Value)
		}
		if strings.HasPrefix(p.Name, "root-") {
			if v != 0 {
				t.Errorf("%s: the root's ashift is %d", pool, v)
			}
			continue
		}
		if old, ok := out[p.Name]; ok && old != float64(v) {
			conflict[p.Name] = true
		}
		out[p.Name] = float64(v)
	}
	for name := range conflict {
		delete(out, name)
	}
	return out
}

// The vdev properties size, allocated and free, read or not, give no
// series: the space of vdevs is zpool list -v's alone.
func TestVdevPropertiesGiveNoSpace(t *testing.T) {
	pool := &zpool.Pool{Name: "tank", Root: &zpool.Vdev{Name: "tank", Type: "root", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
		{Name: "raidz1-0", Type: "raidz1", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
			{Name: "sda", Type: "disk", Class: zpool.ClassNormal},
			{Name: "sdb", Type: "disk", Class: zpool.ClassNormal},
			{Name: "sdc", Type: "disk", Class: zpool.ClassNormal},
		}},
	}}}
	var props []zpool.Property
	row := func(vdev, prop, value string) {
		props = append(props, zpool.Property{Name: vdev, Property: prop, Value: value, Source: "-"})
	}
	for _, v := range []string{"root-0", "raidz1-0"} {
		row(v, "size", "1000")
		row(v, "allocated", "1200")
		row(v, "free", "18446744073709551416") // 1000 - 1200, wrapped
	}
	row("root-0", "ashift", "0")
	row("raidz1-0", "ashift", "12")
	for _, leaf := range []string{"sda", "sdb", "sdc"} {
		row(leaf, "size", "0")
		row(leaf, "ashift", "12")
	}
	got := capacitySeries(t, pool, props)
	want := []string{"zfs_vdev_ashift raidz1-0 12", "zfs_vdev_ashift sda 12", "zfs_vdev_ashift sdb 12", "zfs_vdev_ashift sdc 12"}
	if !slices.Equal(got, want) {
		t.Errorf("sent:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range []string{"size", "allocated", "free", "fragmentation", "expandsize"} {
		if slices.Contains(vdevAskedProperties, p) {
			t.Errorf("vdev property %s asked for", p)
		}
	}
}

// A value that is not a number costs that value only, and says which.
func TestVdevAshiftUnreadableValue(t *testing.T) {
	pool := &zpool.Pool{Name: "tank", Root: &zpool.Vdev{Name: "tank", Type: "root", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
		{Name: "sda", Type: "disk", Class: zpool.ClassNormal},
		{Name: "sdb", Type: "disk", Class: zpool.ClassNormal},
	}}}
	props := []zpool.Property{
		{Name: "sda", Property: "ashift", Value: "lots", Source: "-"},
		{Name: "sdb", Property: "ashift", Value: "12", Source: "-"},
	}
	ch := make(chan prometheus.Metric, 10)
	err := collectVdevIOProperties(pool, props, ch)
	close(ch)
	if err == nil || !strings.Contains(err.Error(), "sda") || !strings.Contains(err.Error(), "ashift") {
		t.Errorf("error = %v, want one naming sda and ashift", err)
	}
	if n := len(ch); n != 1 {
		t.Errorf("%d series sent, want sdb's alone", n)
	}
}

// capacitySeries runs collectVdevIOProperties and lists the ashift it
// sent as "metric vdev value", in the order sent.
func capacitySeries(t *testing.T, p *zpool.Pool, props []zpool.Property) []string {
	t.Helper()
	ch := make(chan prometheus.Metric, 100)
	if err := collectVdevIOProperties(p, props, ch); err != nil {
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
		if name != "zfs_vdev_ashift" {
			continue
		}
		out = append(out, name+" "+labels["vdev"]+" "+strconv.FormatFloat(pb.GetGauge().GetValue(), 'f', -1, 64))
	}
	return out
}

// The vdev properties fragmentation and expandsize read 0% and "-" on
// every vdev (openzfs/zfs#16459), in the guest's captures as in the
// 2.3.2 captures, where zpool list -v of the same moment shows 19% for
// tank's mirror-0: zpool list -v is where they come from.
func TestVdevFragmentationPropertyStuck(t *testing.T) {
	fragmentation := func(t *testing.T, path, vdev string) string {
		props, err := zpool.ParseGet(bytes.NewReader(sample.MustRead(t, path).Body))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range props {
			if p.Name == vdev && p.Property == "fragmentation" {
				return p.Value
			}
		}
		t.Fatalf("%s: no fragmentation of %s", path, vdev)
		return ""
	}
	t.Run("guest", func(t *testing.T) {
		dir := guestDir("2.3")
		if v := fragmentation(t, filepath.Join(dir, "10-duplicate-names__zpool_get_-Hp_all_dupr_all-vdevs.txt"), "raidz1-0"); v != "0%" {
			t.Errorf("dupr raidz1-0: vdev property fragmentation %q, no longer stuck at 0%%", v)
		}
	})
	t.Run("openzfs-2.3-captures", func(t *testing.T) {
		dir := sample.Dir(t, "captures/openzfs-2.3")
		property := fragmentation(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-get-Hp-all-tank-all-vdevs.txt"), "mirror-0")
		rows, err := zpool.ParseListVerbose(bytes.NewReader(sample.MustRead(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-list-v-Hp.txt")).Body))
		if err != nil {
			t.Fatal(err)
		}
		var listed *float64
		for _, r := range rows {
			if r.Pool == "tank" && r.Name == "mirror-0" {
				listed = r.Fragmentation
			}
		}
		if property != "0%" || listed == nil || *listed == 0 {
			t.Errorf("tank mirror-0: vdev property fragmentation %q, zpool list -v %v: the captures no longer show the property stuck at 0%%", property, listed)
		}
	})
}
