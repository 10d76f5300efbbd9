package benchreport

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
)

// scrapeSeries appends the samples of one exposition, taken at t, to the
// series of the families a report reads (benchmetrics.Families).
func scrapeSeries(t *testing.T, text string, at time.Time, series map[string]*Series, order *[]string) {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing the exposition: %v", err)
	}
	for _, name := range benchmetrics.Families {
		mf := families[name]
		if mf == nil {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := name + fmt.Sprint(model.LabelsToSignature(labels))
			var v float64
			switch {
			case m.GetCounter() != nil:
				v = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				v = m.GetGauge().GetValue()
			default:
				v = m.GetUntyped().GetValue()
			}
			s := series[key]
			if s == nil {
				s = &Series{Metric: name, Labels: labels}
				series[key] = s
				*order = append(*order, key)
			}
			s.Samples = append(s.Samples, Sample{Time: at, Value: v})
		}
	}
}

// TestComputeFromExporter runs the exporter over the demo replay (real
// zfs-fuse outputs: a raidz1 of three file vdevs, its zpool iostat stream
// at 1 s) and computes a report from its own expositions.
func TestComputeFromExporter(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the exporter")
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := e2e.BuildExporter(root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exp := e2e.Start(t, bin, nil, "--zpool.replay-dir="+filepath.Join(root, "internal/demo/replay"), "--zpool.iostat-interval=1s")
	// The iostat stream's counters appear once its second report is in.
	exp.WaitFor(t, 30*time.Second, "per-vdev write counters", func(m e2e.Metrics) bool {
		v, ok := m.Get("zfs_vdev_write_bytes_total", map[string]string{"pool": "tank", "vdev": "tank"})
		return ok && v > 0
	})

	series := map[string]*Series{}
	var order []string
	var times []time.Time
	for i := range 6 {
		if i > 0 {
			time.Sleep(1100 * time.Millisecond)
		}
		at := time.Now()
		scrapeSeries(t, exp.ScrapeText(t), at, series, &order)
		times = append(times, at)
	}
	var ss []Series
	for _, k := range order {
		ss = append(ss, *series[k])
	}
	run := Run{Name: "demo replay", Pool: "tank", Start: times[0], End: times[4], Source: "exporter " + exp.URL}
	r, err := Compute(run, ss)
	if err != nil {
		t.Fatal(err)
	}

	// The pool's figures are those of its own counters, first to last.
	poolWrite := series["zfs_vdev_write_bytes_total"+fmt.Sprint(model.LabelsToSignature(map[string]string{"pool": "tank", "vdev": "tank"}))]
	want := poolWrite.Samples[5].Value - poolWrite.Samples[0].Value
	if want <= 0 {
		t.Fatalf("the replay's pool write counter did not move: %v", poolWrite.Samples)
	}
	near(t, "pool write bytes", r.Pool.WriteBytes.Increase, want)
	near(t, "pool write bytes/s", r.Pool.WriteBytes.PerSecond, want/times[4].Sub(times[0]).Seconds())
	if r.Pool.WriteBytes.PeakPerSecond < r.Pool.WriteBytes.Increase/times[5].Sub(times[0]).Seconds()-1e-6 {
		t.Errorf("peak %v below the average over the samples", r.Pool.WriteBytes.PeakPerSecond)
	}
	if r.Pool.Type != "root" || r.Pool.Name != "tank" {
		t.Errorf("pool row = %s %s", r.Pool.Name, r.Pool.Type)
	}
	var tree []string
	for _, v := range r.Vdevs {
		tree = append(tree, strings.Repeat(" ", v.Depth)+v.Name+" "+v.Type)
	}
	wantTree := " raidz1-0 raidz1\n  /var/tmp/zfs-demo/disk1 file\n  /var/tmp/zfs-demo/disk2 file\n  /var/tmp/zfs-demo/disk3 file"
	if got := strings.Join(tree, "\n"); got != wantTree {
		t.Errorf("vdev tree:\n%s\nwant:\n%s", got, wantTree)
	}
	if len(r.PoolStates) == 0 || r.PoolStates[0] != "online" {
		t.Errorf("pool states = %q, want online first", r.PoolStates)
	}
	// CPU figures exist where the exporter gives them; otherwise the
	// report says they are missing.
	if r.CPU == nil {
		if !strings.Contains(strings.Join(r.Missing, "\n"), "zfs_host_cpu_seconds_total") {
			t.Errorf("no CPU figures and no note: %q", r.Missing)
		}
	} else if r.CPU.BusyRatio < 0 || r.CPU.BusyRatio > 1 {
		t.Errorf("CPU busy ratio = %v", r.CPU.BusyRatio)
	}
	svg := render(t, func(w io.Writer) error { return WriteSVG(w, r) })
	if n := checkXML(t, svg)["polyline"]; n != 2 {
		t.Errorf("%d polylines, want 2", n)
	}
	table := render(t, func(w io.Writer) error { return WriteTable(w, r) })
	t.Logf("report from the demo replay:\n%s", table)
}
