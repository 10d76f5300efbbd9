package collector

import (
	"bytes"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// Text written by WriteText is what expfmt writes for the families a
// registry gathers from the same metrics, in every text format Prometheus
// may ask for: labels out of the order of their names, values to escape,
// numbers expfmt writes its own way, a histogram, and families of the
// exporter's own registry before, between and after the collectors'.
func TestWriteTextAsExpfmt(t *testing.T) {
	state := desc("text", "state", "A help with a \\ and a\nnewline.", "vdev", "pool", "state")
	bytes_ := desc("text", "bytes_total", `Bytes "read".`, "pool")
	bare := desc("text", "bare", "No labels.")
	hist := prometheus.NewDesc("zfs_text_latency_seconds", "A histogram.", []string{"pool"}, nil)
	descInfos.Store(hist, newDescInfo("zfs_text_latency_seconds", "A histogram.", []string{"pool"}))
	wait := desc("text", "wait_seconds", "Histograms written without expfmt.", "vdev", "pool")
	bareHist := desc("text", "bare_seconds", "A histogram without labels.")
	latency := desc("text", "disk_wait_seconds", "Histograms of their own kind.", "pool", "vdev", "type")
	bareLatency := desc("text", "bare_wait_seconds", "A histogram of its own kind without labels.")
	collect := func(ch chan<- prometheus.Metric) {
		for i, v := range []float64{0, 1, -1, 0.5, 1e-300, 1.7e308, math.NaN(), math.Inf(1), math.Inf(-1), 12345678901234567890} {
			gauge(ch, state, v, "mirror-"+string(rune('0'+i)), "tank", "online")
		}
		gauge(ch, state, 1, `a "quoted" \ vdev`, "tank", "degraded")
		gauge(ch, state, 1, "bad\nbyte\xff", "tank", "faulted")
		gauge(ch, state, 1, "mirror-1", "", "online")
		counter(ch, bytes_, 3, "tank")
		counter(ch, bytes_, 4, "backup")
		gauge(ch, bare, 2)
		ch <- keyed{prometheus.MustNewConstHistogram(hist, 3, 1.5, map[float64]uint64{1: 1, 2: 3}, "tank"), "tank"}
		ch <- keyed{prometheus.MustNewConstHistogram(hist, 1, 0.5, map[float64]uint64{1: 1, 2: 1}, "backup"), "backup"}
		ch <- keyed{prometheus.MustNewConstHistogram(wait, 1500000, 12345.678, map[float64]uint64{1.6383e-05: 0, 1: 1234567, 17.179869183: 1500000}, "mirror-0", "tank"), "mirror-0\x00tank"}
		ch <- keyed{prometheus.MustNewConstHistogram(wait, 3, math.NaN(), map[float64]uint64{1: 1, math.Inf(1): 3}, `a "quoted" \ vdev`, "tank"), "a\x00tank"}
		ch <- keyed{prometheus.MustNewConstHistogram(bareHist, 0, 0, map[float64]uint64{0.5: 0}), ""}
		// histogramMetric, sent out of order, with a value to escape.
		for _, vdev := range []string{"sdb", `a "quoted" \ vdev`, "mirror-0", "bad\nbyte\xff"} {
			ch <- classicHistogram(latency, []float64{1.6383e-05, 0.000262143, 17.179869183}, []uint64{0, 1500000, 1500001}, 1500002, 1234.5, []string{"tank", vdev, "read"})
		}
		ch <- classicHistogram(latency, []float64{1}, []uint64{1}, 1, math.NaN(), []string{"backup", "sda", "write"})
		ch <- classicHistogram(bareLatency, nil, nil, 0, 0, nil)
	}
	own := prometheus.NewRegistry()
	for _, name := range []string{"go_things", "zfs_text_between", "zzz_last"} {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: "Own."})
		g.Set(7)
		own.MustRegister(g)
	}
	base, err := own.Gather()
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(resent(collectedFrom(collect)))
	theirs, err := prometheus.Gatherers{own, reg}.Gather()
	if err != nil {
		t.Fatal(err)
	}
	g, err := gatherSent(collect)
	if err != nil {
		t.Fatal(err)
	}
	for _, accept := range []string{
		"", // curl
		// Prometheus 2 and 3 by default.
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		"application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
		"text/plain;version=0.0.4;escaping=underscores",
	} {
		format := expfmt.NegotiateAccept(http.Header{"Accept": {accept}}, expfmt.DefaultAcceptedFormats()...)
		if format.FormatType() != expfmt.TypeTextPlain {
			t.Fatalf("Accept %q gives %s", accept, format)
		}
		var want bytes.Buffer
		enc := expfmt.NewEncoder(&want, format)
		for _, f := range theirs {
			if err := enc.Encode(f); err != nil {
				t.Fatal(err)
			}
		}
		var got bytes.Buffer
		if err := WriteText(&got, format, base, Reading{gathered: g}); err != nil {
			t.Fatal(err)
		}
		if w, g := want.String(), got.String(); g != w {
			t.Errorf("%s: WriteText differs from expfmt:\n%s", format, firstLineDiff(w, g))
		}
	}
	if !strings.Contains(want(t, g), `zfs_text_state{pool="tank",state="degraded",vdev="a \"quoted\" \\ vdev"} 1`) {
		t.Errorf("no escaped vdev in\n%s", want(t, g))
	}
}

// want is the text of g alone.
func want(t *testing.T, g *gathered) string {
	t.Helper()
	var b strings.Builder
	if err := WriteText(&b, expfmt.NewFormat(expfmt.TypeTextPlain), nil, Reading{gathered: g}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// A family of the exporter's registry that has a name of the collectors'
// is merged with it, as promhttp over prometheus.Gatherers would; a
// reading that never came leaves the exporter's own families.
func TestWriteTextMergesSharedNames(t *testing.T) {
	d := desc("text", "shared", "Shared.", "pool")
	g, err := gatherSent(func(ch chan<- prometheus.Metric) { gauge(ch, d, 1, "tank") })
	if err != nil {
		t.Fatal(err)
	}
	own := prometheus.NewRegistry()
	own.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "zfs_text_shared", Help: "Shared.", ConstLabels: prometheus.Labels{"pool": "backup"}}, func() float64 { return 2 }))
	base, err := own.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	if err := WriteText(&got, expfmt.NewFormat(expfmt.TypeTextPlain), base, Reading{gathered: g}); err != nil {
		t.Fatal(err)
	}
	want := "# HELP zfs_text_shared Shared.\n# TYPE zfs_text_shared gauge\nzfs_text_shared{pool=\"backup\"} 2\nzfs_text_shared{pool=\"tank\"} 1\n"
	if got.String() != want {
		t.Errorf("got\n%s\nwant\n%s", got.String(), want)
	}
	got.Reset()
	if err := WriteText(&got, expfmt.NewFormat(expfmt.TypeTextPlain), base, Reading{}); err != nil {
		t.Fatal(err)
	}
	if want := "# HELP zfs_text_shared Shared.\n# TYPE zfs_text_shared gauge\nzfs_text_shared{pool=\"backup\"} 2\n"; got.String() != want {
		t.Errorf("without a reading, got\n%s", got.String())
	}
}

// collectedFrom keeps what collect sends.
func collectedFrom(collect func(chan<- prometheus.Metric)) []prometheus.Metric {
	ch := make(chan prometheus.Metric)
	go func() {
		defer close(ch)
		collect(ch)
	}()
	var ms []prometheus.Metric
	for m := range ch {
		ms = append(ms, m)
	}
	return ms
}
