package poolconfig

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// exposition parses a golden exposition of the collector package.
func exposition(t *testing.T, name string) map[string]*dto.MetricFamily {
	t.Helper()
	f, err := os.Open("../../../collector/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// From the exporter's metrics, a pool's configuration is what zpool
// gives on the host itself, but for the order of the vdevs (zpool
// status's, which the metrics do not keep) and compression and recordsize
// (which neither has here): the golden expositions of two scenarios of
// the OpenZFS 2.3.2 captures beside Read over the same captures, healthy
// and with errors repaired.
func TestFromMetricsAgreesWithZpool(t *testing.T) {
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired"} {
		fams := exposition(t, "openzfs-2.3-"+scenario+".prom")
		if fams["zfs_version_info"] != nil {
			t.Fatal("the golden now holds zfs_version_info: take it from there")
		}
		// The version collector's series on this host, whose golden holds
		// them apart.
		fams["zfs_version_info"] = exposition(t, "version-openzfs-2.3.prom")["zfs_version_info"]
		r := Reader{Runner: openZFSCaptures(t, scenario), SysRoot: t.TempDir(), ProcRoot: t.TempDir(), OS: "linux"}
		pools := 0
		for _, m := range fams["zfs_pool_state"].GetMetric() {
			if m.GetGauge().GetValue() != 1 {
				continue
			}
			pool := labels(m)["pool"]
			pools++
			t.Run(scenario+"/"+pool, func(t *testing.T) {
				want, err := Read(context.Background(), r, pool)
				if err != nil {
					t.Fatal(err)
				}
				got, err := FromMetrics(fams, pool)
				if err != nil {
					t.Fatal(err)
				}
				byName := func(a, b Vdev) int { return strings.Compare(a.Name, b.Name) }
				slices.SortFunc(want.Vdevs, byName)
				gotVdevs := slices.Clone(got.Vdevs)
				slices.SortFunc(gotVdevs, byName)
				if got.Layout != want.Layout || got.State != want.State || got.Ashift != want.Ashift || got.Version != want.Version || !slices.Equal(gotVdevs, want.Vdevs) {
					t.Errorf("from the metrics: layout %q state %q ashift %d version %q vdevs %+v\nfrom zpool:       layout %q state %q ashift %d version %q vdevs %+v",
						got.Layout, got.State, got.Ashift, got.Version, gotVdevs, want.Layout, want.State, want.Ashift, want.Version, want.Vdevs)
				}
				for _, field := range []string{"compression: ", "recordsize: "} {
					if !slices.ContainsFunc(got.Missing, func(m string) bool { return strings.HasPrefix(m, field) }) {
						t.Errorf("%s not said missing: %q", field, got.Missing)
					}
				}
			})
		}
		if pools < 3 {
			t.Fatalf("%s: %d pools in the exposition", scenario, pools)
		}
	}
}

// The root dataset's compression and block size, where the dataset
// collector serves them.
func TestFromMetricsReadsTheRootDataset(t *testing.T) {
	fams := exposition(t, "dataset-openzfs-2.3.prom")
	var pool string
	for _, m := range fams["zfs_dataset_info"].GetMetric() {
		if l := labels(m); l["dataset"] == l["pool"] {
			pool = l["pool"]
		}
	}
	if pool == "" {
		t.Fatal("no root dataset in the exposition")
	}
	// Only the dataset families: the vdev tree of a one-vdev pool.
	fams["zfs_vdev_info"] = &dto.MetricFamily{Metric: []*dto.Metric{{
		Label: []*dto.LabelPair{lp("pool", pool), lp("vdev", "sda"), lp("vdev_type", "disk"), lp("class", "normal"), lp("parent", pool)},
	}}}
	got, err := FromMetrics(fams, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Pool != pool || got.Compression == "" || got.Recordsize != 131072 || got.Layout != "stripe of 1" {
		t.Errorf("got pool %q compression %q recordsize %d layout %q", got.Pool, got.Compression, got.Recordsize, got.Layout)
	}
}

func lp(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

func TestFromMetricsNamesThePools(t *testing.T) {
	fams := exposition(t, "openzfs-2.3-04-scrubbed-healthy.prom")
	if _, err := FromMetrics(fams, ""); err == nil || !strings.Contains(err.Error(), "several: r10, rz1, scratch, tank") {
		t.Errorf("no pool named: %v", err)
	}
	if _, err := FromMetrics(fams, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "r10, rz1, scratch, tank") {
		t.Errorf("an unknown pool: %v", err)
	}
	if _, err := FromMetrics(map[string]*dto.MetricFamily{}, "tank"); err == nil || !strings.Contains(err.Error(), "no zfs_vdev_info") {
		t.Errorf("no vdevs: %v", err)
	}
}
