package collector

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

func registryWith(t *testing.T, names ...string) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewRegistry()
	for _, n := range names {
		g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: n, Help: "A gauge."}, []string{"l"})
		g.WithLabelValues("a").Set(1)
		g.WithLabelValues("b").Set(2)
		reg.MustRegister(g)
	}
	return reg
}

// Merge gives what prometheus.Gatherers gives, for disjoint registries and
// for registries that share a family.
func TestMergeAsGatherers(t *testing.T) {
	for name, gs := range map[string][]prometheus.Gatherer{
		"disjoint": {registryWith(t, "go_x", "process_y"), registryWith(t, "zfs_a", "a_first", "zfs_b")},
		"shared":   {registryWith(t, "go_x", "zfs_a"), registryWith(t, "zfs_a", "zfs_b")},
	} {
		want, wantErr := prometheus.Gatherers(gs).Gather()
		got, err := Merge(gs...).Gather()
		if (err == nil) != (wantErr == nil) {
			t.Errorf("%s: error %v, prometheus.Gatherers gives %v", name, err, wantErr)
		}
		if w, g := string(exposition(t, want)), string(exposition(t, got)); g != w {
			t.Errorf("%s: got\n%s\nprometheus.Gatherers gives\n%s", name, g, w)
		}
	}
}

// A gatherer's error comes back with every family gathered.
func TestMergeKeepsErrors(t *testing.T) {
	broken := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		fams, _ := registryWith(t, "zfs_a").Gather()
		return fams, errors.New("a metric was refused")
	})
	fams, err := Merge(registryWith(t, "go_x"), broken).Gather()
	if err == nil || len(fams) != 2 || fams[0].GetName() != "go_x" || fams[1].GetName() != "zfs_a" {
		t.Errorf("got %d families and %v, want go_x, zfs_a and the error", len(fams), err)
	}
}
