package prometheus3

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// The shipped Prometheus configurations carry the 3.x histogram settings
// as comments, since Debian's Prometheus 2.42 refuses them (tests/deploy
// checks the files as they are with its promtool). Uncommented, each
// file loads in Prometheus 3.16.
func TestShippedConfigsTake3xHistogramSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prometheus 3.16 (minutes the first time)")
	}
	prom := prometheusBinary(t)
	for _, path := range [][]string{
		{"deploy", "prometheus", "prometheus-single.yml"},
		{"deploy", "prometheus", "prometheus-fleet.yml"},
		{"deploy", "compose", "prometheus.yml"},
	} {
		t.Run(path[len(path)-1], func(t *testing.T) {
			data, err := os.ReadFile(repotest.Path(path...))
			if err != nil {
				t.Fatal(err)
			}
			config := string(data)
			for _, key := range []string{"scrape_native_histograms: true", "convert_classic_histograms_to_nhcb: true"} {
				if strings.Count(config, "    #"+key+"\n") != 1 {
					t.Fatalf("%s: no commented-out %q in the zfs job", filepath.Join(path...), key)
				}
				config = strings.Replace(config, "    #"+key+"\n", "    "+key+"\n", 1)
			}
			// Prometheus fails to start on a configuration it cannot load:
			// one that is ready has taken it, rule files included.
			startPrometheusIn(t, prom, config, repotest.Path("dashboards", "out", "rules"))
		})
	}
}
