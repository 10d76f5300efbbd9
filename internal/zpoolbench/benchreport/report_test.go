package benchreport

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/poolconfig"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

var t0 = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// at is a time in seconds from t0.
func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// sampleTimes are the sample times of the mirror case: a baseline 1 s
// before the start, every 2 s, and 2 s of settling after the 10 s run.
var sampleTimes = []float64{-1, 2, 4, 6, 8, 10, 12}

func series(metric string, labels map[string]string, values ...float64) Series {
	if len(values) != len(sampleTimes) {
		panic(metric)
	}
	s := Series{Metric: metric, Labels: labels}
	for i, v := range values {
		s.Samples = append(s.Samples, Sample{Time: at(sampleTimes[i]), Value: v})
	}
	return s
}

func lbl(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func vdevInfo(vdev, typ, class, parent string) Series {
	return series("zfs_vdev_info", lbl("pool", "tank", "vdev", vdev, "vdev_type", typ, "class", class, "parent", parent), 1, 1, 1, 1, 1, 1, 1)
}

func vdevCounter(metric, vdev string, values ...float64) Series {
	return series(metric, lbl("pool", "tank", "vdev", vdev), values...)
}

func mirrorRun() Run {
	return Run{
		ID: "3f9a1c07", Name: "mirror ashift=12 lz4", Pool: "tank",
		Command: []string{"dd", "if=/dev/zero", "of=/tank/f", "bs=1M", "count=200"},
		Host:    "nas", Start: t0, End: at(10), ExitStatus: 0,
		Config: &poolconfig.Config{
			Pool: "tank", Layout: "mirror of 2", Ashift: 12, Compression: "lz4", Recordsize: 128 << 10,
			State: "online", Version: "OpenZFS 2.3.2",
			Vdevs: []poolconfig.Vdev{{Name: "mirror-0", Type: "mirror", Class: "normal", Width: 2, State: "online", Ashift: 12}},
		},
		Workload: &workload.Summary{Tool: workload.DD, Headline: "110 MB/s", Results: []workload.Result{{
			Name: "copied", Run: 1, Bytes: ptr(209715200.0), Seconds: ptr(1.9), BytesPerSecond: ptr(110e6), Printed: "110 MB/s",
		}}},
		Source: "exporter http://nas:9134",
	}
}

func ptr[T any](v T) *T { return &v }

// mirrorSeries is a two-way mirror that wrote 1000 MB (peak 150 MB/s
// between 2 and 4 s), read 4 MB, whose pool read operations counter was
// reset once, whose second leaf went offline at 6 s, on a 2-CPU host.
func mirrorSeries() []Series {
	const w, r, wo, ro = "zfs_vdev_write_bytes_total", "zfs_vdev_read_bytes_total", "zfs_vdev_write_operations_total", "zfs_vdev_read_operations_total"
	cpu := func(mode string, perSecond float64) Series {
		vals := make([]float64, len(sampleTimes))
		for i, s := range sampleTimes {
			vals[i] = 5000 + perSecond*(s+1)
		}
		return series("zfs_host_cpu_seconds_total", lbl("mode", mode), vals...)
	}
	engine := func(family, mode string, total float64) Series {
		vals := make([]float64, len(sampleTimes))
		for i, s := range sampleTimes {
			vals[i] = 100 + total*(s+1)/13
		}
		return series("zfs_engine_cpu_seconds_total", lbl("family", family, "mode", mode), vals...)
	}
	state := func(metric, vdev, st string, values ...float64) Series {
		l := lbl("pool", "tank", "state", st)
		if vdev != "" {
			l["vdev"] = vdev
		}
		return series(metric, l, values...)
	}
	return []Series{
		// Info in the label order an exposition has, not tree order.
		vdevInfo("/dev/sda", "disk", "normal", "mirror-0"),
		vdevInfo("/dev/sdb", "disk", "normal", "mirror-0"),
		vdevInfo("mirror-0", "mirror", "normal", "tank"),
		vdevInfo("tank", "root", "normal", ""),
		vdevCounter(w, "tank", 1000e6, 1100e6, 1400e6, 1600e6, 1800e6, 1950e6, 2000e6),
		vdevCounter(w, "mirror-0", 1000e6, 1100e6, 1400e6, 1600e6, 1800e6, 1950e6, 2000e6),
		vdevCounter(w, "/dev/sda", 500e6, 550e6, 700e6, 800e6, 900e6, 975e6, 1000e6),
		vdevCounter(w, "/dev/sdb", 500e6, 550e6, 700e6, 800e6, 800e6, 800e6, 800e6),
		vdevCounter(r, "tank", 10e6, 11e6, 12e6, 13e6, 14e6, 14e6, 14e6),
		vdevCounter(r, "mirror-0", 10e6, 11e6, 12e6, 13e6, 14e6, 14e6, 14e6),
		vdevCounter(r, "/dev/sda", 5e6, 6e6, 7e6, 8e6, 9e6, 9e6, 9e6),
		vdevCounter(r, "/dev/sdb", 5e6, 5e6, 5e6, 5e6, 5e6, 5e6, 5e6),
		vdevCounter(wo, "tank", 0, 800, 3200, 4800, 6400, 7600, 8000),
		vdevCounter(wo, "mirror-0", 0, 800, 3200, 4800, 6400, 7600, 8000),
		vdevCounter(wo, "/dev/sda", 0, 400, 1600, 2400, 3200, 3800, 4000),
		vdevCounter(wo, "/dev/sdb", 0, 400, 1600, 2400, 2400, 2400, 2400),
		// Reset between 4 and 6 s: 10 + 5 + 20 + 0 + 0 + 0 = 35.
		vdevCounter(ro, "tank", 500, 505, 510, 5, 25, 25, 25),
		vdevCounter(ro, "mirror-0", 500, 505, 510, 515, 535, 535, 535),
		vdevCounter(ro, "/dev/sda", 250, 255, 260, 265, 285, 285, 285),
		vdevCounter(ro, "/dev/sdb", 250, 250, 250, 250, 250, 250, 250),
		state("zfs_pool_state", "", "online", 1, 1, 1, 0, 0, 0, 0),
		state("zfs_pool_state", "", "degraded", 0, 0, 0, 1, 1, 1, 1),
		state("zfs_vdev_state", "/dev/sdb", "online", 1, 1, 1, 0, 0, 0, 0),
		state("zfs_vdev_state", "/dev/sdb", "offline", 0, 0, 0, 1, 1, 1, 1),
		state("zfs_vdev_state", "/dev/sda", "online", 1, 1, 1, 1, 1, 1, 1),
		state("zfs_vdev_state", "/dev/sda", "avail", 0, 0, 0, 0, 0, 0, 0),
		// 2 CPUs over 13 s: 26 s, of which idle 13 and iowait 2.6.
		cpu("idle", 1.0), cpu("iowait", 0.2), cpu("user", 0.5), cpu("system", 0.3),
		engine("z_wr_iss", "system", 2.0), engine("z_wr_iss", "user", 0.6), engine("txg_sync", "system", 1.3),
		series("zfs_arc_hits_total", lbl("kind", "demand_data"), 1000, 1020, 1040, 1060, 1080, 1090, 1090),
		series("zfs_arc_hits_total", lbl("kind", "prefetch_data"), 50, 51, 52, 53, 54, 56, 56),
		series("zfs_arc_misses_total", lbl("kind", "demand_data"), 7, 8, 9, 10, 11, 11, 11),
		// Another pool: never read into this report.
		series(w, lbl("pool", "other", "vdev", "other"), 0, 1e9, 2e9, 3e9, 4e9, 5e9, 6e9),
	}
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestComputeMirror(t *testing.T) {
	r, err := Compute(mirrorRun(), mirrorSeries())
	if err != nil {
		t.Fatal(err)
	}
	near(t, "duration", r.DurationSeconds, 10)
	p := r.Pool
	if p.Name != "tank" || p.Type != "root" || p.Depth != 0 {
		t.Errorf("pool row = %+v", p)
	}
	near(t, "pool write bytes", p.WriteBytes.Increase, 1000e6)
	near(t, "pool write bytes/s", p.WriteBytes.PerSecond, 100e6)
	near(t, "pool write peak", p.WriteBytes.PeakPerSecond, 150e6)
	near(t, "pool write peak from", p.WriteBytes.PeakFromSeconds, 2)
	near(t, "pool write peak to", p.WriteBytes.PeakToSeconds, 4)
	near(t, "pool read bytes", p.ReadBytes.Increase, 4e6)
	near(t, "pool read bytes/s", p.ReadBytes.PerSecond, 0.4e6)
	// The first interval (-1 to 2 s) and the next two read 1 MB each:
	// 1/3 MB/s, then 0.5 MB/s from 2 to 4 s, the first of the ties.
	near(t, "pool read peak", p.ReadBytes.PeakPerSecond, 0.5e6)
	near(t, "pool read peak from", p.ReadBytes.PeakFromSeconds, 2)
	near(t, "pool write ops", p.WriteOps.Increase, 8000)
	near(t, "pool read ops across the reset", p.ReadOps.Increase, 35)
	near(t, "pool write ops/s", p.WriteOps.PerSecond, 800)
	if share, ok := p.ReadShare(); !ok {
		t.Error("no read share")
	} else {
		near(t, "read share", share, 4e6/1004e6)
	}
	if p.WriteBytes.Samples != 7 {
		t.Errorf("samples = %d, want 7", p.WriteBytes.Samples)
	}

	var names []string
	var depths []int
	for _, v := range r.Vdevs {
		names = append(names, v.Name)
		depths = append(depths, v.Depth)
	}
	if want := []string{"mirror-0", "/dev/sda", "/dev/sdb"}; !slices.Equal(names, want) {
		t.Errorf("vdevs = %q, want %q", names, want)
	}
	if want := []int{1, 2, 2}; !slices.Equal(depths, want) {
		t.Errorf("depths = %v, want %v", depths, want)
	}
	near(t, "sdb write bytes", r.Vdevs[2].WriteBytes.Increase, 300e6)
	near(t, "sda write bytes", r.Vdevs[1].WriteBytes.Increase, 500e6)
	if r.Vdevs[2].Parent != "mirror-0" || r.Vdevs[0].Parent != "tank" {
		t.Errorf("parents = %q, %q", r.Vdevs[0].Parent, r.Vdevs[2].Parent)
	}

	if r.CPU == nil {
		t.Fatal("no CPU figures")
	}
	near(t, "CPU seconds", r.CPU.Seconds, 26)
	near(t, "CPUs", r.CPU.CPUs, 2)
	near(t, "busy ratio", r.CPU.BusyRatio, 1-15.6/26)
	if r.CPU.Engine == nil {
		t.Fatal("no engine CPU")
	}
	near(t, "engine ratio", r.CPU.Engine.Ratio, 3.9/26)
	if len(r.CPU.Engine.Families) != 2 || r.CPU.Engine.Families[0].Family != "z_wr_iss" {
		t.Fatalf("families = %+v", r.CPU.Engine.Families)
	}
	near(t, "z_wr_iss ratio (both modes)", r.CPU.Engine.Families[0].Ratio, 2.6/26)
	near(t, "txg_sync ratio", r.CPU.Engine.Families[1].Ratio, 1.3/26)

	if r.ARC == nil {
		t.Fatal("no ARC figures")
	}
	near(t, "ARC hits", r.ARC.Hits, 96)
	near(t, "ARC hit ratio", r.ARC.HitRatio, 0.96)

	if want := []string{"online", "degraded"}; !slices.Equal(r.PoolStates, want) {
		t.Errorf("pool states = %q, want %q", r.PoolStates, want)
	}
	if len(r.NotOnline) != 1 || r.NotOnline[0].Vdev != "/dev/sdb" || !slices.Equal(r.NotOnline[0].States, []string{"offline"}) {
		t.Errorf("not online = %+v, want /dev/sdb offline only (avail is no fault)", r.NotOnline)
	}

	if len(r.Timeline.Pool.Write) != 6 {
		t.Fatalf("pool write timeline has %d rates, want 6", len(r.Timeline.Pool.Write))
	}
	w1 := r.Timeline.Pool.Write[1]
	if w1.From != 2 || w1.To != 4 || w1.PerSecond != 150e6 {
		t.Errorf("second write rate = %+v", w1)
	}
	if first := r.Timeline.Pool.Write[0]; first.From != -1 {
		t.Errorf("first rate starts at %v, want the baseline at -1", first.From)
	}
	if len(r.Timeline.Vdevs) != 1 || r.Timeline.Vdevs[0].Vdev != "mirror-0" {
		t.Errorf("top-level timelines = %+v", r.Timeline.Vdevs)
	}
	if !r.Samples.From.Equal(at(-1)) || !r.Samples.To.Equal(at(12)) || r.Samples.SettleSeconds != 2 {
		t.Errorf("sample span = %+v", r.Samples)
	}
	if len(r.Missing) != 0 {
		t.Errorf("missing = %q, want nothing", r.Missing)
	}
}

func TestComputeIgnoresSamplesBeforeBaseline(t *testing.T) {
	ss := mirrorSeries()
	for i := range ss {
		if ss[i].Metric == "zfs_vdev_write_bytes_total" && ss[i].Labels["vdev"] == "tank" {
			// Two older samples, far lower, and a huge rate between them.
			old := []Sample{{Time: at(-120), Value: 0}, {Time: at(-60), Value: 900e6}}
			ss[i].Samples = append(old, ss[i].Samples...)
		}
	}
	r, err := Compute(mirrorRun(), ss)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "pool write bytes", r.Pool.WriteBytes.Increase, 1000e6)
	near(t, "pool write peak", r.Pool.WriteBytes.PeakPerSecond, 150e6)
	if !r.Samples.From.Equal(at(-1)) {
		t.Errorf("samples from %v, want the baseline", r.Samples.From)
	}
}

func TestIncreaseWithResets(t *testing.T) {
	cases := []struct {
		values []float64
		want   float64
	}{
		{[]float64{100, 200, 50, 80}, 180},  // restart to 50 counts 50
		{[]float64{100, 100, 0, 0, 30}, 30}, // restart to 0
		{[]float64{5}, 0},
		{[]float64{10, 20, 5, 1, 2}, 10 + 5 + 1 + 1},
	}
	for _, c := range cases {
		var ss []Sample
		for i, v := range c.values {
			ss = append(ss, Sample{Time: at(float64(i)), Value: v})
		}
		if got := increase(ss); got != c.want {
			t.Errorf("increase(%v) = %v, want %v", c.values, got, c.want)
		}
	}
}

func TestComputeMissingCPUAndARC(t *testing.T) {
	var ss []Series
	for _, s := range mirrorSeries() {
		if !strings.HasPrefix(s.Metric, "zfs_host_cpu") && !strings.HasPrefix(s.Metric, "zfs_engine_cpu") &&
			!strings.HasPrefix(s.Metric, "zfs_arc") && s.Metric != "zfs_vdev_read_operations_total" {
			ss = append(ss, s)
		}
	}
	r, err := Compute(mirrorRun(), ss)
	if err != nil {
		t.Fatal(err)
	}
	if r.CPU != nil || r.ARC != nil {
		t.Errorf("CPU = %+v, ARC = %+v; want none", r.CPU, r.ARC)
	}
	near(t, "pool write bytes", r.Pool.WriteBytes.Increase, 1000e6)
	if r.Pool.ReadOps.Samples != 0 {
		t.Errorf("read ops samples = %d, want 0", r.Pool.ReadOps.Samples)
	}
	all := strings.Join(r.Missing, "\n")
	for _, want := range []string{
		"no zfs_host_cpu_seconds_total",
		"no zfs_arc_hits_total",
		`no zfs_vdev_read_operations_total samples for 4 vdevs: "tank", "mirror-0", "/dev/sda", "/dev/sdb"`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("missing notes lack %q:\n%s", want, all)
		}
	}
	var b strings.Builder
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "no zfs_host_cpu_seconds_total") || strings.Contains(b.String(), "host CPU busy") {
		t.Errorf("the table should list the missing CPU and show no CPU figure:\n%s", b.String())
	}
}

func TestComputeNoPoolSamples(t *testing.T) {
	var ss []Series
	for _, s := range mirrorSeries() {
		if !strings.HasPrefix(s.Metric, "zfs_vdev_") || s.Labels["pool"] == "other" {
			ss = append(ss, s)
		}
	}
	_, err := Compute(mirrorRun(), ss)
	if err == nil {
		t.Fatal("no error without any I/O sample of the pool")
	}
	for _, want := range []string{`pool "tank"`, "2025-03-14T09:00:00Z", "2025-03-14T09:00:10Z"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	run := mirrorRun()
	run.End = run.Start
	if _, err := Compute(run, mirrorSeries()); err == nil || !strings.Contains(err.Error(), "no later than") {
		t.Errorf("zero-length run: err = %v", err)
	}
}

func TestComputeCounterAppearsDuringRun(t *testing.T) {
	ss := mirrorSeries()
	for i := range ss {
		if ss[i].Metric == "zfs_vdev_write_bytes_total" && ss[i].Labels["vdev"] == "tank" {
			ss[i].Samples = ss[i].Samples[2:] // first sample at 4 s
		}
	}
	r, err := Compute(mirrorRun(), ss)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "pool write bytes from 4 s", r.Pool.WriteBytes.Increase, 600e6)
	if !strings.Contains(strings.Join(r.Missing, "\n"), `vdev "tank" has no sample at or before the start`) {
		t.Errorf("missing = %q", r.Missing)
	}
}

func TestTreeOrder(t *testing.T) {
	info := func(vdev, typ, class, parent string) Series {
		return Series{Metric: "zfs_vdev_info", Labels: lbl("pool", "tank", "vdev", vdev, "vdev_type", typ, "class", class, "parent", parent),
			Samples: []Sample{{Time: at(-1), Value: 1}}}
	}
	ss := []Series{
		info("sdz", "disk", "cache", "tank"),
		info("mirror-10", "mirror", "normal", "tank"),
		info("disk10", "file", "normal", "mirror-10"),
		info("disk2", "file", "normal", "mirror-10"),
		info("mirror-2", "mirror", "log", "tank"),
		info("log1", "disk", "log", "mirror-2"),
		info("raidz1-1", "raidz1", "normal", "tank"),
		info("replacing-0", "replacing", "normal", "raidz1-1"),
		info("old", "disk", "normal", "replacing-0"),
		info("new", "disk", "normal", "replacing-0"),
		info("tank", "root", "normal", ""),
		info("spare1", "disk", "spare", "tank"),
		info("mirror-0", "mirror", "normal", "tank"),
		info("a", "disk", "normal", "mirror-0"),
		{Metric: "zfs_vdev_write_bytes_total", Labels: lbl("pool", "tank", "vdev", "tank"), Samples: []Sample{{Time: at(-1)}, {Time: at(1), Value: 1}}},
	}
	r, err := Compute(Run{Name: "tree", Pool: "tank", Start: t0, End: at(1)}, ss)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range r.Vdevs {
		got = append(got, strings.Repeat(" ", v.Depth)+v.Name)
	}
	want := []string{" mirror-0", "  a", " raidz1-1", "  replacing-0", "   new", "   old", " mirror-10", "  disk2", "  disk10", " mirror-2", "  log1", " sdz", " spare1"}
	if !slices.Equal(got, want) {
		t.Errorf("tree order:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestNatLess(t *testing.T) {
	names := []string{"disk10", "disk2", "disk1", "sdb", "sda", "disk02a"}
	slices.SortFunc(names, func(a, b string) int {
		if natLess(a, b) {
			return -1
		}
		if natLess(b, a) {
			return 1
		}
		return 0
	})
	if want := []string{"disk1", "disk2", "disk02a", "disk10", "sda", "sdb"}; !slices.Equal(names, want) {
		t.Errorf("sorted = %q, want %q", names, want)
	}
}

// A zpool iostat stream that reports every second, scraped every second:
// reports a hundredth of a second off the scrapes land two in one scrape
// interval and none in the next. Timed by the scrapes, the peak reads
// double; timed by the reports, as the exporter's source times tell, it is
// the real 100 MB/s.
func TestIOCountersAreTimedByTheirSource(t *testing.T) {
	scrapes := []float64{0, 1, 2, 3, 4, 5}
	reports := []float64{-0.01, 0.99, 2.01, 2.99, 4.01} // each adds 100 MB
	var counter, source Series
	counter = Series{Metric: "zfs_vdev_write_bytes_total", Labels: lbl("pool", "tank", "vdev", "tank")}
	source = Series{Metric: benchmetrics.SourceTime, Labels: lbl("source", "zpool_iostat_stream")}
	other := Series{Metric: benchmetrics.SourceTime, Labels: lbl("source", "zpool_status")}
	for _, s := range scrapes {
		seen, last := 0.0, 0.0
		for _, r := range reports {
			if r <= s {
				seen += 100e6
				last = r
			}
		}
		counter.Samples = append(counter.Samples, Sample{Time: at(s), Value: seen})
		source.Samples = append(source.Samples, Sample{Time: at(s), Value: float64(at(last).UnixMilli()) / 1e3})
		// Another source's later answers must not move the counters.
		other.Samples = append(other.Samples, Sample{Time: at(s), Value: float64(at(s).UnixMilli()) / 1e3})
	}
	run := Run{ID: "1", Name: "jitter", Pool: "tank", Start: at(0), End: at(4)}

	scraped, err := Compute(run, []Series{counter})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "peak timed by scrapes", scraped.Pool.WriteBytes.PeakPerSecond, 200e6)

	r, err := Compute(run, []Series{counter, source, other})
	if err != nil {
		t.Fatal(err)
	}
	if peak := r.Pool.WriteBytes.PeakPerSecond; peak < 95e6 || peak > 105e6 {
		t.Errorf("peak timed by the reports %.1f MB/s, want about 100", peak/1e6)
	}
	near(t, "bytes", r.Pool.WriteBytes.Increase, 400e6)
	if n := r.Pool.WriteBytes.Samples; n != 4 {
		t.Errorf("%d samples, want 4: one per report seen (baseline, 0.99, 2.99, 4.01)", n)
	}
}

func TestShortRunsAreNotedAsCoarse(t *testing.T) {
	// The mirror case: 10 s run, samples every 2 s.
	r, err := Compute(mirrorRun(), mirrorSeries())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range r.Missing {
		if strings.Contains(m, "peaks are over whole intervals") {
			t.Errorf("a 10 s run sampled every 2 s noted as coarse: %q", m)
		}
	}
	short := mirrorRun()
	short.End = at(6) // 6 s: under five 2 s intervals
	if r, err = Compute(short, mirrorSeries()); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Missing, func(m string) bool { return strings.Contains(m, "moved every 2 s") }) {
		t.Errorf("a 6 s run sampled every 2 s not noted as coarse: %q", r.Missing)
	}
}

// A slow scrape, timed when it began, reads a report that came after:
// timed by the scrape, the bytes of a whole second would land in a few
// hundredths of one.
func TestSlowScrapeIsTimedByItsReport(t *testing.T) {
	counter := Series{Metric: "zfs_vdev_write_bytes_total", Labels: lbl("pool", "tank", "vdev", "tank")}
	source := Series{Metric: benchmetrics.SourceTime, Labels: lbl("source", "zpool_iostat_stream")}
	// scrape time, report time seen, bytes so far
	for _, s := range [][3]float64{{0, -0.5, 0}, {1, 0.5, 100e6}, {1.55, 1.5, 200e6}, {1.6, 2.5, 300e6}, {3, 2.5, 300e6}, {4, 3.5, 400e6}} {
		counter.Samples = append(counter.Samples, Sample{Time: at(s[0]), Value: s[2]})
		source.Samples = append(source.Samples, Sample{Time: at(s[0]), Value: float64(at(s[1]).UnixMilli()) / 1e3})
	}
	r, err := Compute(Run{ID: "1", Name: "slow", Pool: "tank", Start: at(0), End: at(3.5)}, []Series{counter, source})
	if err != nil {
		t.Fatal(err)
	}
	highest := 0.0
	for _, w := range r.Timeline.Pool.Write {
		highest = max(highest, w.PerSecond)
	}
	near(t, "highest rate between samples", highest, 100e6)
	// The average, 400 MB over the 3.5 s run, counts the 100 MB of the
	// second around the start: no rate over a whole second inside the
	// run reaches it, and there is no peak.
	if w := r.Pool.WriteBytes; w.PeakUnavailable != peakBelowAverage || w.PeakPerSecond != 0 {
		t.Errorf("peak %.1f MB/s (%q), want none below the average of %.1f MB/s", w.PeakPerSecond/1e6, w.PeakUnavailable, w.PerSecond/1e6)
	}
}
