package benchmetrics

import (
	"os"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

func parse(t *testing.T, path string) []*dto.MetricFamily {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	byName, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []*dto.MetricFamily
	for _, mf := range byName {
		out = append(out, mf)
	}
	return out
}

// Pool rz1 of the OpenZFS 2.4 guest: its vdevs' places from the status
// collector, its histograms from the vdev_latency collector. The sampler
// keeps the latency of the pool, raidz1-0 and the log and cache devices,
// none of raidz1-0's disks, and every other family whole.
func TestTopLevelLatencyKeepsPoolsAndTopLevelVdevs(t *testing.T) {
	families := append(parse(t, "../../../collector/testdata/openzfs-2.4-guest-04-resilvering.prom"),
		parse(t, "../../../collector/testdata/vdev-latency-openzfs-2.4-rz1.prom")...)
	selected := TopLevelLatency(families)
	if selected == nil {
		t.Fatal("no selection over a reading with zfs_vdev_info")
	}
	want := map[string]bool{}
	for _, mf := range families {
		if mf.GetName() != "zfs_vdev_info" {
			continue
		}
		for _, m := range mf.GetMetric() {
			if e2e.Label(m, "pool") == "rz1" {
				want[e2e.Label(m, "vdev")] = e2e.Label(m, "parent") == "" || e2e.Label(m, "parent") == "rz1"
			}
		}
	}
	kept, dropped := map[string]bool{}, map[string]bool{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			vdev := e2e.Label(m, "vdev")
			switch mf.GetName() {
			case DiskWait, TotalWait:
				for _, series := range []string{"_bucket", "_sum", "_count"} {
					if selected(mf.GetName()+series, m.GetLabel()) {
						kept[vdev] = true
					} else {
						dropped[vdev] = true
					}
				}
			default:
				if !selected(mf.GetName(), m.GetLabel()) {
					t.Errorf("%s of %s dropped: only the latency families are selected from", mf.GetName(), vdev)
				}
				if mf.GetName() == "zfs_vdev_queue_wait_seconds" && !selected(mf.GetName()+"_bucket", m.GetLabel()) {
					t.Errorf("queue wait of %s dropped", vdev)
				}
			}
		}
	}
	seen := map[string]bool{}
	for vdev := range kept {
		seen[vdev] = true
	}
	for vdev := range dropped {
		seen[vdev] = true
	}
	leaves := 0
	for vdev := range seen {
		top, known := want[vdev]
		switch {
		case !known:
			t.Errorf("latency of %s, which zfs_vdev_info does not list", vdev)
		case top && (!kept[vdev] || dropped[vdev]):
			t.Errorf("latency of %s (the pool or a top-level vdev): kept %v, dropped %v", vdev, kept[vdev], dropped[vdev])
		case !top:
			leaves++
			if kept[vdev] || !dropped[vdev] {
				t.Errorf("latency of the leaf %s: kept %v, dropped %v", vdev, kept[vdev], dropped[vdev])
			}
		}
	}
	if leaves == 0 || !kept["rz1"] || !kept["raidz1-0"] {
		t.Errorf("rz1 has %d leaves with latency, kept %v: the fixtures no longer hold the layout", leaves, kept)
	}

	if TopLevelLatency(parse(t, "../../../collector/testdata/vdev-latency-openzfs-2.4-rz1.prom")) != nil {
		t.Error("a reading without zfs_vdev_info selects: it should keep everything")
	}
}
