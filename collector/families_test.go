package collector

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// collected runs one scrape of e and keeps what it sends, so that the same
// metrics can be gathered twice.
func collected(e *Exporter) []prometheus.Metric {
	ch := make(chan prometheus.Metric)
	go func() {
		defer close(ch)
		e.Scraper(context.Background()).Collect(ch)
	}()
	var ms []prometheus.Metric
	for m := range ch {
		ms = append(ms, m)
	}
	return ms
}

// generatedExporter is every collector over a host that hostgen
// writes, wired as the exporter's main wires a replay: the runner replays
// the host's zpool outputs, and its kstat/, proc/, sys/ and dev/ stand for
// the system's.
func generatedExporter(tb testing.TB, s hostgen.Spec) (*Exporter, *runner.Replay) {
	tb.Helper()
	return hostExporter(tb, func(dir string) error { return hostgen.Write(dir, s) })
}

// capturesExporter is generatedExporter over the OpenZFS 2.3.2 guest's
// captures of its first scenario: four pools, one of each layout.
func capturesExporter(tb testing.TB) (*Exporter, *runner.Replay) {
	tb.Helper()
	return hostExporter(tb, func(dir string) error {
		return hostgen.WriteCaptures(dir, "01-created", "../internal/zfs/zpool/testdata/openzfs-2.3-guest", "testdata/openzfs-2.4-guest")
	})
}

// hostExporter is every collector over the host that write lays out.
func hostExporter(tb testing.TB, write func(dir string) error) (*Exporter, *runner.Replay) {
	tb.Helper()
	return hostExporterWith(tb, write, Config{}, nil)
}

// hostExporterWith is hostExporter with the settings of cfg and the
// collectors of enabled (nil: the defaults).
func hostExporterWith(tb testing.TB, write func(dir string) error, cfg Config, enabled map[string]bool) (*Exporter, *runner.Replay) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "host")
	if err := write(dir); err != nil {
		tb.Fatal(err)
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		tb.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	client := zfs.New(zfs.Config{Runner: replay, Kstat: os.DirFS(filepath.Join(dir, "kstat")), KstatOS: "linux"}, logger)
	cfg.ZFS, cfg.Runner, cfg.CPUOS, cfg.DiskOS = client, replay, "linux", "linux"
	cfg.ProcRoot, cfg.SysRoot, cfg.DevRoot = filepath.Join(dir, "proc"), filepath.Join(dir, "sys"), filepath.Join(dir, "dev")
	e, err := New(cfg, logger, enabled)
	if err != nil {
		tb.Fatal(err)
	}
	return e, replay
}

// The families of gatherFamilies are the registry's, family for family and
// metric for metric, for what every collector sends.
func TestGatherFamiliesAsTheRegistry(t *testing.T) {
	zfsFuse, err := runner.NewReplay("testdata/replay/zfs-fuse")
	if err != nil {
		t.Fatal(err)
	}
	fuse, _ := replayExporter(t, zfsFuse, 0)
	for name, e := range map[string]*Exporter{
		"zfs-fuse":            fuse,
		"generated 2x40, 2.3": exporterOf(generatedExporter(t, hostgen.Spec{Pools: 2, Leaves: 40, Version: "2.3"})),
		"generated 1x10, 2.4": exporterOf(generatedExporter(t, hostgen.Spec{Pools: 1, Leaves: 10, Version: "2.4"})),
	} {
		t.Run(name, func(t *testing.T) {
			metrics := collected(e)
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(resent(metrics))
			want, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			g, err := gatherSent(resent(metrics).Collect)
			if err != nil {
				t.Fatal(err)
			}
			got := g.metricFamilies()
			types := map[dto.MetricType]int{}
			for _, f := range got {
				types[f.GetType()]++
			}
			if len(got) < 20 || types[dto.MetricType_GAUGE] == 0 || types[dto.MetricType_COUNTER] == 0 {
				t.Fatalf("%d families, by type %v", len(got), types)
			}
			if strings.HasPrefix(name, "generated") && types[dto.MetricType_HISTOGRAM] == 0 {
				t.Errorf("no histogram among %d families", len(got))
			}
			w := string(exposition(t, want))
			if g := string(exposition(t, got)); g != w {
				t.Errorf("gatherFamilies differs from the registry:\n%s", firstLineDiff(w, g))
			}
			var text strings.Builder
			if err := WriteText(&text, expfmt.NewFormat(expfmt.TypeTextPlain), nil, Reading{gathered: g}); err != nil {
				t.Fatal(err)
			}
			if g := text.String(); g != w {
				t.Errorf("WriteText differs from the registry's exposition:\n%s", firstLineDiff(w, g))
			}
		})
	}
}

// gatherSent is gatherFamilies over what collect sends on a channel, as a
// prometheus.Collector does.
func gatherSent(collect func(chan<- prometheus.Metric)) (*gathered, error) {
	return gatherFamilies(func(sink func(prometheus.Metric), _ func(*prometheus.Desc, int)) {
		ch := make(chan prometheus.Metric, 256)
		go func() {
			defer close(ch)
			collect(ch)
		}()
		for m := range ch {
			sink(m)
		}
	})
}

// exporterOf drops the replay that generatedExporter returns beside it.
func exporterOf(e *Exporter, _ *runner.Replay) *Exporter { return e }

func firstLineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range min(len(w), len(g)) {
		if w[i] != g[i] {
			return "line " + w[i] + "\n got " + g[i]
		}
	}
	return "lengths differ"
}

// A metric of another type than its family is left out and named; so is
// a family sent under one name with both kinds of Desc. The rest is
// gathered, a metric of prometheus.NewDesc among it.
func TestGatherFamiliesRefusesWhatItCannotPlace(t *testing.T) {
	d := desc("test", "things", "Things.", "pool")
	foreign := prometheus.NewDesc("zfs_test_foreign", "Not made by desc.", []string{"pool"}, prometheus.Labels{"kind": "plain"})
	clash := prometheus.NewDesc("zfs_test_things", "Things.", []string{"pool"}, nil)
	g, err := gatherSent(func(ch chan<- prometheus.Metric) {
		gauge(ch, d, 1, "tank")
		counter(ch, d, 2, "backup")
		ch <- prometheus.MustNewConstMetric(foreign, prometheus.GaugeValue, 3, "tank")
		ch <- prometheus.MustNewConstMetric(clash, prometheus.GaugeValue, 4, "other")
	})
	var multi prometheus.MultiError
	if !errors.As(err, &multi) || len(multi) != 2 || !strings.Contains(err.Error(), "COUNTER") || !strings.Contains(err.Error(), "zfs_test_things is sent both") {
		t.Errorf("error %v, want the counter and the family of two kinds of Desc named", err)
	}
	var got strings.Builder
	if err := WriteText(&got, expfmt.NewFormat(expfmt.TypeTextPlain), nil, Reading{gathered: g}); err != nil {
		t.Fatal(err)
	}
	want := `# HELP zfs_test_foreign Not made by desc.
# TYPE zfs_test_foreign gauge
zfs_test_foreign{kind="plain",pool="tank"} 3
# HELP zfs_test_things Things.
# TYPE zfs_test_things gauge
zfs_test_things{pool="tank"} 1
`
	if got.String() != want {
		t.Errorf("exposition:\n%s\nwant:\n%s", got.String(), want)
	}
}
