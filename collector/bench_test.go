package collector

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// One whole scrape over the zfs-fuse replay (two pools, a spare in use):
// what the exporter itself costs per scrape, zpool aside.
func BenchmarkScrape(b *testing.B) {
	replay, err := runner.NewReplay("testdata/replay/zfs-fuse")
	if err != nil {
		b.Fatal(err)
	}
	replay.Advance()
	replay.Advance()
	e, _ := replayExporter(b, replay, 0)
	b.ReportAllocs()
	for b.Loop() {
		reg := prometheus.NewRegistry()
		reg.MustRegister(e.Scraper(context.Background()))
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}
