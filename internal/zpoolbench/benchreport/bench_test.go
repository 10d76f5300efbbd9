package benchreport

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkCompute is an hour at 1 s of a pool of 20 vdevs (4 raidz2 of
// 4 disks, with the host's CPU and ARC counters beside them).
func BenchmarkCompute(b *testing.B) {
	const n = 3600
	run := Run{Name: "bench", Pool: "tank", Start: t0, End: t0.Add((n - 10) * time.Second)}
	var ss []Series
	counter := func(metric string, labels map[string]string, perSecond float64) {
		s := Series{Metric: metric, Labels: labels, Samples: make([]Sample, n)}
		for i := range s.Samples {
			s.Samples[i] = Sample{Time: t0.Add(time.Duration(i-1) * time.Second), Value: perSecond * float64(i+i%7)}
		}
		ss = append(ss, s)
	}
	info := func(vdev, typ, parent string) {
		ss = append(ss, Series{Metric: "zfs_vdev_info", Labels: lbl("pool", "tank", "vdev", vdev, "vdev_type", typ, "class", "normal", "parent", parent),
			Samples: []Sample{{Time: t0.Add(-time.Second), Value: 1}}})
	}
	vdevs := []string{"tank"}
	info("tank", "root", "")
	for t := range 4 {
		top := fmt.Sprintf("raidz2-%d", t)
		info(top, "raidz2", "tank")
		vdevs = append(vdevs, top)
		for d := range 4 {
			leaf := fmt.Sprintf("/dev/disk/by-id/ata-disk%d", t*4+d)
			info(leaf, "disk", top)
			vdevs = append(vdevs, leaf)
		}
	}
	for _, v := range vdevs[:20] {
		for _, m := range ioCounters {
			counter(m, lbl("pool", "tank", "vdev", v), 1e8)
		}
	}
	for _, mode := range []string{"user", "system", "idle", "iowait"} {
		counter("zfs_host_cpu_seconds_total", lbl("mode", mode), 0.5)
	}
	counter("zfs_engine_cpu_seconds_total", lbl("family", "z_wr_iss", "mode", "system"), 0.2)
	counter("zfs_arc_hits_total", lbl("kind", "demand_data"), 1000)
	counter("zfs_arc_misses_total", lbl("kind", "demand_data"), 10)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Compute(run, ss); err != nil {
			b.Fatal(err)
		}
	}
}
