package collector

import (
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
)

// GeneratedExporter is generatedExporter for the tests of package
// collector_test.
var GeneratedExporter = generatedExporter

// CapturesExporter is capturesExporter for the tests of package
// collector_test.
var CapturesExporter = capturesExporter

// GeneratedExporterWithout is generatedExporter with the default
// collectors, the vdev_latency collector only when latency is true.
func GeneratedExporterWithout(tb testing.TB, s hostgen.Spec, latency bool) (*Exporter, *runner.Replay) {
	return GeneratedExporterWithLatency(tb, s, latency, LatencyDetail{})
}

// GeneratedExporterWithLatency is GeneratedExporterWithout with the
// vdev_latency collector's detail.
func GeneratedExporterWithLatency(tb testing.TB, s hostgen.Spec, latency bool, detail LatencyDetail) (*Exporter, *runner.Replay) {
	on := map[string]bool{}
	for name, f := range factories {
		on[name] = f.defaultEnabled
	}
	on["vdev_latency"] = latency
	return hostExporterWith(tb, func(dir string) error { return hostgen.Write(dir, s) }, Config{Latency: detail}, on)
}
