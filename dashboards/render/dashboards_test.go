package render

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// committed are the generated dashboards the pictures are drawn from.
const committed = "../out/dashboards"

// everyLabel answers every query with two series that carry every label
// the dashboards' legends and tables read.
func everyLabel(expr string, instant bool) (int, string) {
	s := []testSeries{
		{labels("instance", "host:9134", "job", "zfs", "pool", "tank", "vdev", "mirror-0", "parent", "tank", "class", "normal",
			"vdev_type", "mirror", "device", "sda", "queue", "wait", "path", "zvol", "mode", "user", "family", "zio",
			"kind", "data", "result", "dirty_delay", "function", "scrub", "state", "online", "dataset", "tank/home", "le", "0.001"),
			func(i int) float64 { return float64(i) }},
		{labels("instance", "host:9134", "job", "zfs", "pool", "backup", "vdev", "raidz1-0", "parent", "backup", "class", "normal",
			"vdev_type", "raidz1", "device", "sdb", "queue", "sync", "path", "zpl", "mode", "system", "family", "arc",
			"kind", "metadata", "result", "wrlog_delay", "function", "resilver", "state", "degraded", "dataset", "backup/db", "le", "+Inf"),
			constant(0.5)},
	}
	if instant {
		return http.StatusOK, vector(s...)
	}
	return http.StatusOK, matrix(s...)
}

// Every panel of the committed dashboards is drawn, from queries whose
// variables are all replaced.
func TestCommittedDashboardsDraw(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(committed, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in %s: %v", committed, err)
	}
	leftover := regexp.MustCompile(`\$[^1]|\[\[`)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			prom := newFakePrometheus(t, everyLabel)
			d := loadDashboard(t, file)
			svg, report, err := Render(context.Background(), d, testOptions(prom.URL))
			if err != nil {
				t.Fatal(err)
			}
			if len(report.Problems) > 0 || len(report.NotDrawn) > 0 {
				t.Errorf("problems %v, not drawn %v", report.Problems, report.NotDrawn)
			}
			for _, q := range prom.received() {
				if leftover.MatchString(q) {
					t.Errorf("variable left in %s", q)
				}
			}
			root := parseSVG(t, svg)
			drawn := map[string]int{}
			for _, s := range root.texts("panel-title") {
				drawn[s]++
			}
			want := map[string]int{}
			for _, p := range d.Panels {
				if p.Type != "row" {
					want[p.Title]++
				}
			}
			for title, n := range want {
				if drawn[title] != n {
					t.Errorf("%q drawn %d times, want %d", title, drawn[title], n)
				}
			}
			for _, g := range root.all(withClass("panel")) {
				class := map[string]string{"panel-timeseries": "series", "panel-stat": "stat-value", "panel-table": "table-row", "panel-heatmap": "heatmap-cell"}
				for panelClass, content := range class {
					if g.hasClass(panelClass) && len(g.all(withClass(content))) == 0 {
						t.Errorf("%s panel %q has no %s", strings.TrimPrefix(panelClass, "panel-"), g.texts("panel-title"), content)
					}
				}
			}
		})
	}
}
