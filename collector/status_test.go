package collector

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/zpooltest"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// parseStatusFixture parses a status fixture, JSON or text as its
// caller expects.
func parseStatusFixture(t *testing.T, fixture string, json bool) *zpool.Status {
	t.Helper()
	st, isJSON := zpooltest.ParseStatus(t, fixture)
	if isJSON != json {
		t.Fatalf("%s: JSON %v, want %v", fixture, isJSON, json)
	}
	return st
}

// poolMetrics parses a status fixture and returns what collectPool sends.
func poolMetrics(t *testing.T, fixture string, json bool) []*dto.MetricFamily {
	t.Helper()
	st := parseStatusFixture(t, fixture, json)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		for _, p := range st.Pools {
			collectPool(p, ch)
		}
	}))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

type collectorFunc func(chan<- prometheus.Metric)

func (collectorFunc) Describe(chan<- *prometheus.Desc)      {}
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// A running scrub gives progress, rate and time left as zpool prints them.
func TestRunningScrubMetrics(t *testing.T) {
	fams := poolMetrics(t, "../internal/zfs/zpool/testdata/status-scrub-in-progress-2.3.txt", false)
	scrub := map[string]string{"pool": "backup2", "function": "scrub", "vdev": ""}
	for _, c := range []struct {
		metric string
		want   float64
	}{
		{"zfs_scan_progress_ratio", 0.3479},
		{"zfs_scan_issue_rate_bytes_per_second", 3.23 * (1 << 30)},
		{"zfs_scan_remaining_seconds", 86400 + 18*3600 + 56*60 + 16},
		{"zfs_scan_examined_bytes", 266 * (1 << 40)},
		{"zfs_scan_issued_bytes", 260 * (1 << 40)},
		{"zfs_scan_total_bytes", 749 * (1 << 40)},
		{"zfs_scan_processed_bytes", 0},
		{"zfs_scan_start_time_seconds", float64(time.Date(2026, 1, 21, 13, 21, 33, 0, time.UTC).Unix())},
	} {
		if got, ok := value(fams, c.metric, scrub); !ok || !near(got, c.want) {
			t.Errorf("%s = %v (present %v), want %v", c.metric, got, ok, c.want)
		}
	}
	if v, _ := value(fams, "zfs_scan_state", map[string]string{"function": "scrub", "state": "scanning"}); v != 1 {
		t.Errorf("scrub not scanning")
	}
	if _, ok := value(fams, "zfs_scan_end_time_seconds", scrub); ok {
		t.Errorf("a running scrub has an end time")
	}
}

// A sequential rebuild of a dRAID vdev is its own scan, per top-level vdev,
// and the distributed spare stands in for the failed disk.
func TestDraidRebuildMetrics(t *testing.T) {
	fams := poolMetrics(t, "../internal/zfs/zpool/testdata/json-draid-rebuild.txt", true)
	var rebuilds int
	for _, mf := range fams {
		if mf.GetName() != "zfs_scan_state" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "function" && l.GetValue() == "rebuild" && m.GetGauge().GetValue() == 1 {
					rebuilds++
				}
			}
		}
	}
	if rebuilds != 1 {
		t.Errorf("%d rebuild scans in a state, want 1", rebuilds)
	}
	if v, _ := value(fams, "zfs_vdev_state", map[string]string{"vdev": "draid1-0-0", "state": "inuse"}); v != 1 {
		t.Errorf("distributed spare draid1-0-0 not inuse")
	}
}

// A pool whose health zpool prints as a word outside the known states
// still gets a series with that word.
func TestUnknownStateKept(t *testing.T) {
	ch := make(chan prometheus.Metric, 16)
	stateSet(ch, poolStateDesc, poolStates, "resilvering", "tank")
	close(ch)
	var states []string
	for m := range ch {
		var pb dto.Metric
		_ = m.Write(&pb)
		if pb.GetGauge().GetValue() == 1 {
			for _, l := range pb.GetLabel() {
				if l.GetName() == "state" {
					states = append(states, l.GetValue())
				}
			}
		}
	}
	if len(states) != 1 || states[0] != "resilvering" {
		t.Errorf("states set to 1: %v, want [resilvering]", states)
	}
}

// The JSON and the text status of the same pools, captured from OpenZFS
// 2.3.2 a moment apart, must give the same facts: states, error counters,
// the vdev tree and the scans.
func TestTextAndJSONStatusAgree(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	compared := []string{
		"zfs_pool_state", "zfs_pool_data_errors", "zfs_vdev_state",
		"zfs_vdev_read_errors_total", "zfs_vdev_write_errors_total", "zfs_vdev_checksum_errors_total",
		"zfs_scan_state", "zfs_scan_start_time_seconds", "zfs_scan_end_time_seconds",
	}
	// Not 11-cleared: its JSON was captured after `zpool clear` had started
	// a small resilver, which the text captured before it does not show.
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired"} {
		t.Run(scenario, func(t *testing.T) {
			text := flatten(poolMetrics(t, dir+"/"+scenario+"__zpool-status-v-p.txt", false), compared, nil)
			json := flatten(poolMetrics(t, dir+"/"+scenario+"__zpool-status-j-json-int.txt", true), compared, nil)
			if len(text) < 50 {
				t.Fatalf("only %d series from the text status", len(text))
			}
			for series, v := range text {
				if jv, ok := json[series]; !ok {
					t.Errorf("%s = %v from text, missing from JSON", series, v)
				} else if jv != v {
					t.Errorf("%s = %v from text, %v from JSON", series, v, jv)
				}
			}
			for series, v := range json {
				// Text prints no start time for a finished scan, only its
				// end and how long it ran (for a rebuild, without pauses):
				// the start is not derived, so JSON alone has it.
				if _, ok := text[series]; !ok && !strings.HasPrefix(series, "zfs_scan_start_time_seconds") {
					t.Errorf("%s = %v from JSON, missing from text", series, v)
				}
			}
			// The tree: same vdevs, types, classes and parents (JSON also
			// knows paths and GUIDs).
			textInfo := flatten(poolMetrics(t, dir+"/"+scenario+"__zpool-status-v-p.txt", false), []string{"zfs_vdev_info"}, []string{"path", "guid"})
			jsonInfo := flatten(poolMetrics(t, dir+"/"+scenario+"__zpool-status-j-json-int.txt", true), []string{"zfs_vdev_info"}, []string{"path", "guid"})
			for series := range textInfo {
				if _, ok := jsonInfo[series]; !ok {
					t.Errorf("vdev %s from text has no twin in JSON", series)
				}
			}
			if len(textInfo) != len(jsonInfo) {
				t.Errorf("%d vdevs from text, %d from JSON", len(textInfo), len(jsonInfo))
			}
		})
	}
}

// flatten turns families into "name{label=value,...}" -> value, for the
// names given, leaving out the labels dropped.
func flatten(fams []*dto.MetricFamily, names, dropped []string) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range fams {
		if !slices.Contains(names, mf.GetName()) {
			continue
		}
		for _, m := range mf.GetMetric() {
			var b strings.Builder
			b.WriteString(mf.GetName() + "{")
			for _, l := range m.GetLabel() {
				if !slices.Contains(dropped, l.GetName()) {
					fmt.Fprintf(&b, "%s=%q,", l.GetName(), l.GetValue())
				}
			}
			b.WriteString("}")
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[b.String()] = v
		}
	}
	return out
}

// A hot spare in use appears twice in a pool; JSON may give both copies
// the class "spare". It is reported once, as inuse, in the tree.
func TestActiveSpareReportedOnce(t *testing.T) {
	leaf := func(name, state, class string) *zpool.Vdev {
		return &zpool.Vdev{Name: name, Type: "disk", State: state, Class: class}
	}
	root := &zpool.Vdev{Name: "tank", Type: "root", State: "degraded", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
		{Name: "raidz1-0", Type: "raidz1", State: "degraded", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
			leaf("sda", "online", zpool.ClassNormal),
			{Name: "spare-1", Type: "spare", State: "degraded", Class: zpool.ClassNormal, Children: []*zpool.Vdev{
				leaf("sdb", "faulted", zpool.ClassNormal),
				leaf("sdd", "online", zpool.ClassSpare),
			}},
			leaf("sdc", "online", zpool.ClassNormal),
		}},
		leaf("sdd", "inuse", zpool.ClassSpare),
	}}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		collectPool(&zpool.Pool{Name: "tank", State: "degraded", Root: root}, ch)
	}))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("duplicate series: %v", err)
	}
	if v, _ := value(fams, "zfs_vdev_state", map[string]string{"vdev": "sdd", "state": "inuse"}); v != 1 {
		t.Errorf("spare sdd not inuse")
	}
	if v, _ := value(fams, "zfs_vdev_info", map[string]string{"vdev": "sdd", "parent": "spare-1"}); v != 1 {
		t.Errorf("spare sdd not reported where it stands in (parent spare-1)")
	}
}

// A pool whose status asks for zpool upgrade says so in a series of its
// own, 1 for the zfs-fuse pool at on-disk version 22 and 0 for a healthy
// one: its status_info has no message ID to tell it from a fault.
func TestUpgradeAvailable(t *testing.T) {
	for fixture, want := range map[string]float64{
		"../internal/zfs/zpool/testdata/zfs-fuse/old-version__status.txt": 1,
		"../internal/zfs/zpool/testdata/zfs-fuse/mirror__status.txt":      0,
	} {
		var got []float64
		for _, mf := range poolMetrics(t, fixture, false) {
			if mf.GetName() == "zfs_pool_upgrade_available" {
				for _, m := range mf.GetMetric() {
					got = append(got, m.GetGauge().GetValue())
				}
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s: zfs_pool_upgrade_available %v, want [%v]", fixture, got, want)
		}
	}
}

// The feature-flag wording, from real outputs of FreeBSD and OpenZFS 2.1.
func TestUpgradeAvailableCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-status")
	for _, name := range []string{"fbsd-handbook-features-not-enabled.txt", "openzfs21-two-mirrors-features-tabs.txt"} {
		seen := 0
		for _, mf := range poolMetrics(t, filepath.Join(dir, name), false) {
			if mf.GetName() != "zfs_pool_upgrade_available" {
				continue
			}
			for _, m := range mf.GetMetric() {
				seen++
				if m.GetGauge().GetValue() != 1 {
					t.Errorf("%s: zfs_pool_upgrade_available %v for %v, want 1", name, m.GetGauge().GetValue(), m.GetLabel())
				}
			}
		}
		if seen == 0 {
			t.Errorf("%s: no zfs_pool_upgrade_available", name)
		}
	}
}
