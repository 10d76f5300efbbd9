package prometheus3

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// The shipped Prometheus configurations for any Prometheus carry the 3.x
// histogram settings as comments, since Debian's Prometheus 2.42 refuses
// them (tests/deploy checks the files as they are with its promtool);
// compose's, whose image is 3.16, has them on. Uncommented, each file
// loads in Prometheus 3.16.
func TestShippedConfigsTake3xHistogramSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prometheus 3.16 (minutes the first time)")
	}
	prom := prometheusBinary(t)
	for _, c := range []struct {
		path []string
		on   bool
	}{
		{[]string{"deploy", "prometheus", "prometheus-single.yml"}, false},
		{[]string{"deploy", "prometheus", "prometheus-fleet.yml"}, false},
		{[]string{"deploy", "compose", "prometheus.yml"}, true},
	} {
		t.Run(c.path[len(c.path)-1], func(t *testing.T) {
			data, err := os.ReadFile(repotest.Path(c.path...))
			if err != nil {
				t.Fatal(err)
			}
			config := string(data)
			for _, key := range []string{"scrape_native_histograms: true", "convert_classic_histograms_to_nhcb: true"} {
				line := "    " + key + "\n"
				if !c.on {
					line = "    #" + key + "\n"
				}
				if strings.Count(config, line) != 1 {
					t.Fatalf("%s: no line %q in the zfs job", filepath.Join(c.path...), line)
				}
				config = strings.Replace(config, line, "    "+key+"\n", 1)
			}
			// Prometheus fails to start on a configuration it cannot load:
			// one that is ready has taken it, rule files included.
			startPrometheusIn(t, prom, config, repotest.Path("dashboards", "out", "rules"))
		})
	}
}
