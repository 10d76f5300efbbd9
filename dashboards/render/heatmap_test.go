package render

import (
	"context"
	"math"
	"net/http"
	"reflect"
	"testing"
)

// The cumulative buckets come back one bucket each, in le order, with
// a count that falls (a counter reset under the sum) read as zero.
func TestHeatmapBuckets(t *testing.T) {
	res := []result{{series: []series{
		{labels: labels("le", "+Inf"), points: []point{{0, 10}, {1000, 12}}},
		{labels: labels("le", "0.001"), points: []point{{0, 3}, {1000, 5}}},
		{labels: labels("le", "0.004"), points: []point{{0, 7}, {1000, 4}}},
		{labels: labels("pool", "tank"), points: []point{{0, 99}}},
	}}}
	got := heatmapBuckets(res)
	want := []struct {
		le     float64
		values []float64
	}{
		{0.001, []float64{3, 5}},
		{0.004, []float64{4, 0}},
		{math.Inf(1), []float64{3, 8}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d buckets, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].le != w.le || len(got[i].points) != len(w.values) {
			t.Errorf("bucket %d: le %g with %d points, want le %g with %d", i, got[i].le, len(got[i].points), w.le, len(w.values))
			continue
		}
		for j, v := range w.values {
			if got[i].points[j].value != v {
				t.Errorf("bucket le=%g at %d: %g, want %g", w.le, got[i].points[j].ms, got[i].points[j].value, v)
			}
		}
	}
}

// A heatmap panel draws a cell for each non-empty bucket at each step,
// and labels its rows with the bucket bounds in the y axis' unit.
func TestHeatmapDrawn(t *testing.T) {
	d, err := Parse([]byte(`{"uid": "h", "title": "H", "panels": [{"type": "heatmap", "title": "Wait",
		"gridPos": {"x": 0, "y": 0, "w": 12, "h": 8}, "options": {"yAxis": {"unit": "s"}},
		"targets": [{"refId": "A", "expr": "sum by (le) (rate(w_bucket[5m]))", "format": "heatmap"}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	prom := newFakePrometheus(t, func(string, bool) (int, string) {
		// Everything at or under 1 ms; nothing between 1 ms and 4 ms.
		return http.StatusOK, matrix(
			testSeries{labels("le", "0.001"), constant(2)},
			testSeries{labels("le", "0.004"), constant(2)},
			testSeries{labels("le", "+Inf"), constant(2)},
		)
	})
	svg, report, err := Render(context.Background(), d, testOptions(prom.URL))
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Problems) > 0 || len(report.NotDrawn) > 0 {
		t.Fatalf("problems %v, not drawn %v", report.Problems, report.NotDrawn)
	}
	p := panelNamed(t, parseSVG(t, svg), "Wait")
	steps := int(testTo.Sub(testFrom)/testStep) + 1
	if got := len(p.all(withClass("heatmap-cell"))); got != steps {
		t.Errorf("%d cells, want %d: one a step, in the lowest bucket", got, steps)
	}
	want := []string{formatValue("s", 0.001), formatValue("s", 0.004), "+Inf"}
	if got := p.texts("heatmap-bucket"); !reflect.DeepEqual(got, want) {
		t.Errorf("rows labelled %q, want %q", got, want)
	}
}
