package collector

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// One concept has one metric name, with the same type and labels, on
// Linux, FreeBSD and illumos: a dashboard or alert written on one works on
// the others. Each OS's families come from its fixture sets run through
// the kstat, disk and cpu collectors: the goldens those collectors' tests
// compare against on every run, and, for illumos's host CPU, the cpu
// collector over a sampler fed with an illumos iostat stream.
func TestSameNamesOnEveryOS(t *testing.T) {
	families := map[string]map[string]*dto.MetricFamily{
		"linux":   readGoldens(t, "kstat-linux-openzfs23.prom", "disk-linux.prom", "cpu-linux-openzfs.prom"),
		"freebsd": readGoldens(t, "kstat-freebsd.prom", "disk-freebsd.prom", "cpu-freebsd.prom"),
		"illumos": readGoldens(t, "kstat-illumos.prom", "disk-illumos.prom", "cpu-illumos.prom"),
	}
	for _, mf := range illumosHostCPU(t) {
		families["illumos"][mf.GetName()] = mf
	}

	everywhere := []string{
		"zfs_arc_size_bytes", "zfs_arc_target_size_bytes", "zfs_arc_min_size_bytes", "zfs_arc_max_size_bytes",
		"zfs_arc_hits_total", "zfs_arc_misses_total", "zfs_l2arc_size_bytes", "zfs_l2arc_hits_total",
		"zfs_abd_buffers", "zfs_prefetch_hits_total", "zfs_prefetch_misses_total",
		"zfs_disk_read_bytes_total", "zfs_disk_write_bytes_total", "zfs_disk_read_operations_total",
		"zfs_disk_write_operations_total", "zfs_disk_io_time_seconds_total",
		"zfs_host_cpu_seconds_total", "zfs_engine_cpu_seconds_total",
	}
	linuxAndFreeBSD := []string{
		"zfs_dataset_read_bytes_total", "zfs_dataset_write_bytes_total", "zfs_zil_commits_total",
		"zfs_dmu_tx_total", "zfs_pool_trim_bytes_total",
	}
	iostatOnly := []string{"zfs_disk_busy_ratio", "zfs_disk_active_queue_length"}
	for _, c := range []struct {
		names []string
		oses  []string
	}{
		{everywhere, []string{"linux", "freebsd", "illumos"}},
		{linuxAndFreeBSD, []string{"linux", "freebsd"}},
		{iostatOnly, []string{"freebsd", "illumos"}},
	} {
		for _, name := range c.names {
			for _, goos := range c.oses {
				if _, ok := families[goos][name]; !ok {
					t.Errorf("%s: no %s", goos, name)
				}
			}
		}
	}

	// Whatever two OSes both export agrees in type and label names.
	oses := slices.Sorted(maps.Keys(families))
	for i, a := range oses {
		for _, b := range oses[i+1:] {
			for name, fa := range families[a] {
				fb, ok := families[b][name]
				if !ok {
					continue
				}
				if fa.GetType() != fb.GetType() {
					t.Errorf("%s is a %s on %s and a %s on %s", name, fa.GetType(), a, fb.GetType(), b)
				}
				if la, lb := labelNames(fa), labelNames(fb); la != lb {
					t.Errorf("%s has labels {%s} on %s and {%s} on %s", name, la, a, lb, b)
				}
			}
		}
	}
}

func readGoldens(t *testing.T, names ...string) map[string]*dto.MetricFamily {
	t.Helper()
	out := map[string]*dto.MetricFamily{}
	for _, name := range names {
		f, err := os.Open(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		parsed, err := parser.TextToMetricFamilies(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		maps.Copy(out, parsed)
	}
	return out
}

// illumosHostCPU runs the cpu collector as on illumos: host CPU from the
// disk collector's iostat stream, here fed with an illumos fixture.
func illumosHostCPU(t *testing.T) []*dto.MetricFamily {
	t.Helper()
	sampler := newTestOSSampler("illumos", 10*time.Second)
	consumeAll(t, sampler, fixture(t, "illumos-iostat-xnc-10.txt"))
	e := cpuExporter(t, Config{Runner: cpuReplay(t, "testdata/cpu-illumos"), CPUOS: "illumos", DiskSampler: sampler}, nil)
	fams := gather(t, e)
	if n := seriesCount(fams, "zfs_host_cpu_seconds_total"); n == 0 {
		t.Error("illumos: no host CPU from the iostat stream")
	}
	return fams
}

// labelNames lists the label names of a family's series, sorted.
func labelNames(mf *dto.MetricFamily) string {
	seen := map[string]bool{}
	for _, m := range mf.GetMetric() {
		for _, l := range m.GetLabel() {
			seen[l.GetName()] = true
		}
	}
	return strings.Join(slices.Sorted(maps.Keys(seen)), ",")
}
