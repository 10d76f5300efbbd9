package collector

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/collector/internal/zpool"
	"github.com/zpool-exporter/zpool_exporter/internal/sample"
)

// poolMetrics parses a status fixture and returns what collectPool sends.
func poolMetrics(t *testing.T, fixture string, json bool) []*dto.MetricFamily {
	t.Helper()
	f, err := sample.Read(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var st *zpool.Status
	if json {
		st, err = zpool.ParseStatusJSON(bytes.NewReader(f.Body))
	} else {
		st, err = zpool.ParseStatus(bytes.NewReader(f.Body), time.UTC)
	}
	if err != nil {
		t.Fatal(err)
	}
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
	fams := poolMetrics(t, "internal/zpool/testdata/status-scrub-in-progress-2.3.txt", false)
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
	fams := poolMetrics(t, "internal/zpool/testdata/json-draid-rebuild.txt", true)
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
