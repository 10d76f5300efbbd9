package collector

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// libraryStyle is a collector written as node_exporter's are, with the
// client library alone: Descs of prometheus.NewDesc, one with a constant
// label, metrics of MustNewConstMetric and MustNewConstHistogram, and a
// GaugeVec that keeps its values between scrapes.
type libraryStyle struct {
	pools, poolInfo, wait *prometheus.Desc
	scrapes               *prometheus.GaugeVec
}

func newLibraryStyle() *libraryStyle {
	return &libraryStyle{
		pools: prometheus.NewDesc("zfs_library_style_pools", "Pools in zpool status.", nil, nil),
		poolInfo: prometheus.NewDesc("zfs_library_style_pool_info", "A pool and its state.",
			[]string{"pool", "state"}, prometheus.Labels{"source": "status"}),
		wait: prometheus.NewDesc("zfs_library_style_wait_seconds", "A made-up wait.", []string{"pool"}, nil),
		scrapes: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "zfs_library_style_scrapes", Help: "Scrapes this collector saw.",
		}, []string{"kind"}),
	}
}

func (c *libraryStyle) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	status, err := s.Status(ctx)
	if err != nil {
		return err
	}
	ch <- prometheus.MustNewConstMetric(c.pools, prometheus.GaugeValue, float64(len(status.Pools)))
	for _, p := range status.Pools {
		ch <- prometheus.MustNewConstMetric(c.poolInfo, prometheus.GaugeValue, 1, p.Name, p.State)
		ch <- prometheus.MustNewConstHistogram(c.wait, 3, 0.006, map[float64]uint64{0.001: 1, 0.01: 3}, p.Name)
	}
	c.scrapes.WithLabelValues("any").Inc()
	c.scrapes.Collect(ch)
	return nil
}

// A collector written the client library's way, with prometheus.NewDesc
// rather than this package's desc, has its metrics served beside the
// others, in the text exposition as in the families, and drops nothing.
func TestCollectorInTheClientLibrarysStyle(t *testing.T) {
	e, _ := capturesExporter(t)
	e.collectors["library_style"] = newLibraryStyle()
	r := e.Gather(context.Background())
	if r.Err != nil {
		t.Fatalf("the gather left metrics out: %v", r.Err)
	}
	var text strings.Builder
	if err := WriteText(&text, expfmt.NewFormat(expfmt.TypeTextPlain), nil, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE zfs_library_style_pools gauge\nzfs_library_style_pools 4\n",
		`zfs_library_style_pool_info{pool="r10",source="status",state="online"} 1`,
		`zfs_library_style_wait_seconds_bucket{pool="rz1",le="0.01"} 3`,
		`zfs_library_style_wait_seconds_count{pool="rz1"} 3`,
		`zfs_library_style_scrapes{kind="any"} 1`,
		`zfs_exporter_collector_success{collector="library_style"} 1`,
		`zfs_pool_state{pool="rz1",state="online"} 1`,
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(text.String(), "zfs_exporter_dropped_series_total") {
		t.Error("the exporter dropped series")
	}
	if v, ok := value(r.Families(), "zfs_library_style_pool_info", map[string]string{"pool": "mir", "source": "status"}); !ok || v != 1 {
		t.Errorf("the families give mir's info %v (present %v), want 1", v, ok)
	}
	if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}
