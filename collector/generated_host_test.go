package collector_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/gzipresponse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
)

// metricsOver serves /metrics over a host that hostgen writes (see
// collector.GeneratedExporter): the Go and process metrics of the base
// registry are merged with the collectors' shared gather.
func metricsOver(tb testing.TB, s hostgen.Spec) (http.Handler, *runner.Replay) {
	tb.Helper()
	return metricsOf(collector.GeneratedExporter(tb, s))
}

// metricsOf serves /metrics of e.
func metricsOf(e *collector.Exporter, replay *runner.Replay) (http.Handler, *runner.Replay) {
	base := prometheus.NewRegistry()
	base.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	shared := collector.NewShared(e.Gather)
	// Served as zpool_exporter serves /metrics.
	return gzipresponse.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
		defer cancel()
		shared.ServeMetrics(ctx, w, r, base, slog.New(slog.DiscardHandler))
	}), 1), replay
}

// The collectors read every source of a generated host: each succeeds,
// every command they run is answered, and every vdev has its I/O counters
// and its size, and every leaf its disk.
func TestGeneratedHostScrape(t *testing.T) {
	for _, s := range []hostgen.Spec{{Pools: 2, Leaves: 6, Version: "2.3"}, {Pools: 1, Leaves: 4, Version: "2.4"}} {
		t.Run(s.Name()+"-"+s.Version, func(t *testing.T) {
			h, replay := metricsOver(t, s)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			parser := expfmt.NewTextParser(model.UTF8Validation)
			fams, err := parser.TextToMetricFamilies(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range fams["zfs_exporter_collector_success"].GetMetric() {
				if m.GetGauge().GetValue() != 1 {
					t.Errorf("collector %s failed", label(m, "collector"))
				}
			}
			for line, st := range replay.Stats() {
				if st.Failures > 0 {
					t.Errorf("%s: %d of %d runs failed", line, st.Failures, st.Runs)
				}
			}
			vdevs := s.Pools * (1 + s.Leaves/2 + s.Leaves)
			for family, want := range map[string]int{
				"zfs_vdev_read_bytes_total":     vdevs,
				"zfs_vdev_size_bytes":           vdevs,
				"zfs_disk_read_bytes_total":     s.Pools * s.Leaves,
				"zfs_dataset_write_bytes_total": s.Pools,
				"zfs_pool_size_bytes":           s.Pools,
			} {
				if got := len(fams[family].GetMetric()); got != want {
					t.Errorf("%s: %d series, want %d", family, got, want)
				}
			}
			for _, m := range fams["zfs_disk_read_bytes_total"].GetMetric() {
				if !strings.HasPrefix(label(m, "vdev"), "virtio-zd") {
					t.Errorf("disk %s joined to vdev %q", label(m, "device"), label(m, "vdev"))
				}
			}
		})
	}
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// One scrape of /metrics, gzipped as Prometheus asks for it, over one pool
// of 100 and of 1,000 leaves in 2-way mirrors: what the exporter costs at
// scale, replay included. make bench-profile profiles the 1,000.
func BenchmarkGeneratedHost(b *testing.B) {
	for _, leaves := range []int{100, 1000} {
		b.Run(fmt.Sprintf("leaves=%d", leaves), func(b *testing.B) {
			h, _ := metricsOver(b, hostgen.Spec{Pools: 1, Leaves: leaves, Version: "2.3"})
			benchmarkMetrics(b, h)
		})
	}
}

// BenchmarkVdevLatency is a scrape of every collector at 10, 100 and
// 1,000 vdevs (a pool, its mirrors and their leaves) at each level of the
// vdev_latency collector's detail: off, its default, and each flag alone
// and all together, with the series of one scrape. docs/metrics.md's table of
// what each flag costs per vdev comes from it.
func BenchmarkVdevLatency(b *testing.B) {
	levels := []struct {
		name   string
		on     bool
		detail collector.LatencyDetail
	}{
		{"off", false, collector.LatencyDetail{}},
		{"default", true, collector.LatencyDetail{}},
		{"full-resolution", true, collector.LatencyDetail{FullResolution: true}},
		{"queue-wait", true, collector.LatencyDetail{QueueWait: true}},
		{"request-sizes", true, collector.LatencyDetail{RequestSizes: true}},
		{"queue-lengths", true, collector.LatencyDetail{QueueLengths: true}},
		{"all", true, collector.LatencyDetail{FullResolution: true, QueueWait: true, RequestSizes: true, QueueLengths: true}},
	}
	for _, leaves := range []int{6, 66, 666} {
		for _, l := range levels {
			spec := hostgen.Spec{Pools: 1, Leaves: leaves, Version: "2.3"}
			b.Run(fmt.Sprintf("vdevs=%d/%s", 1+leaves/2+leaves, l.name), func(b *testing.B) {
				h, _ := metricsOf(collector.GeneratedExporterWithLatency(b, spec, l.on, l.detail))
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				series := 0
				for line := range strings.Lines(rec.Body.String()) {
					if !strings.HasPrefix(line, "#") {
						series++
					}
				}
				benchmarkMetrics(b, h)
				b.ReportMetric(float64(series), "series")
			})
		}
	}
}

// The same over the small host of make bench, the OpenZFS 2.3.2 guest's
// captures: what a scrape costs beside the zpool runs on a host like most.
func BenchmarkSmallHost(b *testing.B) {
	h, _ := metricsOf(collector.CapturesExporter(b))
	benchmarkMetrics(b, h)
}

func benchmarkMetrics(b *testing.B, h http.Handler) {
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	h.ServeHTTP(discard{}, req) // detects what zpool can do
	b.ReportAllocs()
	before := ownCPU(b)
	for b.Loop() {
		h.ServeHTTP(discard{}, req)
	}
	b.ReportMetric(float64((ownCPU(b)-before).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// ownCPU is the user and system time of the process so far: with the
// garbage collector's work on the other cores, which ns/op leaves out.
func ownCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(p []byte) (int, error) { return io.Discard.Write(p) }
func (discard) WriteHeader(int)             {}

// /metrics serves the same families in the text format, which the
// exporter writes itself, and in protobuf, which promhttp writes, with
// the content types promhttp negotiates.
func TestMetricsTextAndProtobufAgree(t *testing.T) {
	h, _ := metricsOver(t, hostgen.Spec{Pools: 2, Leaves: 6, Version: "2.3"})
	get := func(accept string) (*httptest.ResponseRecorder, map[string]*dto.MetricFamily) {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept", accept)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		format := expfmt.NewFormat(expfmt.TypeTextPlain)
		if strings.Contains(accept, "protobuf") {
			format = expfmt.NewFormat(expfmt.TypeProtoDelim)
		}
		fams := map[string]*dto.MetricFamily{}
		dec := expfmt.NewDecoder(rec.Body, format)
		for {
			var mf dto.MetricFamily
			if err := dec.Decode(&mf); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("Accept %q: %v", accept, err)
			}
			fams[mf.GetName()] = &mf
		}
		return rec, fams
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/metrics", nil)) // detects what zpool can do
	text, fromText := get("text/plain;version=0.0.4;q=0.3,*/*;q=0.2")
	proto, fromProto := get("application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3")
	if ct := text.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("text served as %q", ct)
	}
	if ct := proto.Header().Get("Content-Type"); !strings.Contains(ct, "encoding=delimited") {
		t.Errorf("protobuf served as %q", ct)
	}
	if len(fromText) < 50 || len(fromText) != len(fromProto) {
		t.Fatalf("%d families in text, %d in protobuf", len(fromText), len(fromProto))
	}
	for name, want := range fromProto {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue // read at another moment
		}
		got := fromText[name]
		if got == nil || len(got.GetMetric()) != len(want.GetMetric()) || got.GetType() != want.GetType() || got.GetHelp() != want.GetHelp() {
			t.Errorf("%s: text %v, protobuf %v", name, got, want)
			continue
		}
		for i, m := range want.GetMetric() {
			if g := got.GetMetric()[i]; fmt.Sprint(g.GetLabel()) != fmt.Sprint(m.GetLabel()) {
				t.Errorf("%s metric %d: text %v, protobuf %v", name, i, g.GetLabel(), m.GetLabel())
				break
			}
		}
	}
}
