package render

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/small.svg")

// The small dashboard draws exactly as testdata/small.svg; look at that
// file after a change, then rewrite it with go test ./render/ -update.
func TestSmallDashboardGolden(t *testing.T) {
	svg, _, _ := renderSmall(t, false)
	golden := filepath.Join("testdata", "small.svg")
	if *update {
		if err := os.WriteFile(golden, svg, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(svg, want) {
		t.Errorf("the picture differs from %s; if the change is meant, rerun with -update and look at it", golden)
	}
}

// Answers in another order draw the same bytes.
func TestDeterministic(t *testing.T) {
	a, _, _ := renderSmall(t, false)
	b, _, _ := renderSmall(t, true)
	if !bytes.Equal(a, b) {
		t.Error("the picture depends on the order of the series in the answers")
	}
}

func TestWellFormedWithEveryTitleOnce(t *testing.T) {
	svg, report, _ := renderSmall(t, false)
	root := parseSVG(t, svg)
	if got := root.texts("dashboard-title"); !reflect.DeepEqual(got, []string{"Small board"}) {
		t.Errorf("dashboard title: %q", got)
	}
	d := loadDashboard(t, "testdata/small.json")
	count := map[string]int{}
	for _, s := range root.texts("panel-title") {
		count[s]++
	}
	var panels []Panel
	for _, p := range d.Panels {
		panels = append(panels, p)
		panels = append(panels, p.Panels...)
	}
	for _, p := range panels {
		if p.Type == "row" {
			continue
		}
		if count[p.Title] != 1 {
			t.Errorf("panel %q: title drawn %d times", p.Title, count[p.Title])
		}
	}
	if got, want := root.texts("row-title"), []string{"Overview", "Details"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rows: %q, want %q", got, want)
	}
	if report.Panels != 9 {
		t.Errorf("report counts %d panels, want 9", report.Panels)
	}
}

func TestTimeseriesLinesAndLegend(t *testing.T) {
	svg, _, _ := renderSmall(t, true)
	p := panelNamed(t, parseSVG(t, svg), "Read bandwidth")
	if n := len(p.all(withClass("series"))); n != 3 {
		t.Errorf("%d series lines, want 3", n)
	}
	var names [][]string
	for _, e := range p.all(withClass("legend-entry")) {
		var texts []string
		for _, c := range e.children {
			if c.name == "text" {
				texts = append(texts, c.text)
			}
		}
		names = append(names, texts)
	}
	// Name, mean, max and last of each series, sorted by name.
	want := [][]string{
		{"tank b1", "10 kB/s", "20 kB/s", "20 kB/s"},
		{"tank b2", "15 kB/s", "20 kB/s", "10 kB/s"},
		{"tank b3", "5 kB/s", "5 kB/s", "5 kB/s"},
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("legend:\n got %q\nwant %q", names, want)
	}
}

// Leaves of a dRAID in a half-width panel's legend, in two columns: the
// first calculations give way so that every name is whole, the last stays.
func TestLegendKeepsLongNamesWhole(t *testing.T) {
	d, err := Parse([]byte(`{"uid": "leaves", "title": "Leaves", "panels": [{
		"type": "timeseries", "title": "Read bandwidth per leaf vdev", "gridPos": {"x": 0, "y": 0, "w": 12, "h": 8},
		"targets": [{"refId": "A", "expr": "leaves", "legendFormat": "{{pool}} {{parent}}/{{vdev}}"}],
		"options": {"legend": {"showLegend": true, "displayMode": "table", "placement": "bottom", "calcs": ["mean", "max", "lastNotNull"]}},
		"fieldConfig": {"defaults": {"unit": "Bps"}}
	}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var series []testSeries
	var want []string
	for i := range 6 {
		l := labels("pool", "dr", "parent", "draid1:2d:5c:1s-0", "vdev", fmt.Sprintf("virtio-zd%d", 13+i))
		series = append(series, testSeries{l, constant(1.5e6 * float64(i))})
		want = append(want, "dr draid1:2d:5c:1s-0/"+l["vdev"])
	}
	prom := newFakePrometheus(t, func(string, bool) (int, string) { return 200, matrix(series...) })
	svg, _, err := Render(context.Background(), d, testOptions(prom.URL))
	if err != nil {
		t.Fatal(err)
	}
	p := panelNamed(t, parseSVG(t, svg), "Read bandwidth per leaf vdev")
	var names []string
	for _, e := range p.all(withClass("legend-entry")) {
		var texts []string
		for _, c := range e.children {
			if c.name == "text" {
				texts = append(texts, c.text)
			}
		}
		names = append(names, texts[0])
		if len(texts) < 2 || len(texts) == 4 {
			t.Errorf("legend entry %q: want its name and the last calculations, not all three", texts)
		}
	}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("legend names:\n got %q\nwant %q", names, want)
	}
}

// Every point of every line and area lies in its plot, also the values
// above the maximum the "Capacity used" panel fixes.
func TestPointsInsidePlot(t *testing.T) {
	svg, _, _ := renderSmall(t, false)
	root := parseSVG(t, svg)
	for _, title := range []string{"Read bandwidth", "Operations, stacked", "Capacity used"} {
		p := panelNamed(t, root, title)
		plots := p.all(withClass("plot"))
		if len(plots) != 1 {
			t.Fatalf("%s: %d plots", title, len(plots))
		}
		plot := rectOf(t, plots[0])
		paths := append(p.all(withClass("series")), p.all(withClass("area"))...)
		if len(paths) == 0 {
			t.Fatalf("%s: nothing drawn", title)
		}
		for _, path := range paths {
			for _, pt := range pathPoints(t, path.attr["d"]) {
				if pt[0] < plot.x-0.05 || pt[0] > plot.x+plot.w+0.05 || pt[1] < plot.y-0.05 || pt[1] > plot.y+plot.h+0.05 {
					t.Errorf("%s: point %v outside the plot %s", title, pt, describe(plot))
				}
			}
		}
	}
}

// The stacked write line is drawn at read + write: its points are above
// the read line by the write rate, the same in every sample.
func TestStackedLinesAddUp(t *testing.T) {
	svg, _, _ := renderSmall(t, false)
	p := panelNamed(t, parseSVG(t, svg), "Operations, stacked")
	lines := p.all(withClass("series"))
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	read, write := pathPoints(t, lines[0].attr["d"]), pathPoints(t, lines[1].attr["d"])
	plot := rectOf(t, p.all(withClass("plot"))[0])
	bottom := plot.y + plot.h
	for i := range read {
		r, w := bottom-read[i][1], bottom-write[i][1]
		if d := w - 1.5*r; d > 0.2 || d < -0.2 {
			t.Fatalf("sample %d: read at %.1f px, read+write at %.1f px, want 1.5 times", i, r, w)
		}
	}
}

func TestQueriesGetVariables(t *testing.T) {
	_, _, prom := renderSmall(t, false)
	queries := strings.Join(prom.received(), "\n")
	for _, want := range []string{
		`pool=~".*"`,     // no allValue: any value
		`instance=~".+"`, // the variable's allValue
		`[1m]`,           // $__rate_interval at a 30s step and 15s scrapes
		`rate(zfs_vdev_read_bytes_total{instance=~".+", pool=~".*"}[1m])`,
	} {
		if !strings.Contains(queries, want) {
			t.Errorf("no query has %s:\n%s", want, queries)
		}
	}
	if strings.Contains(queries, "$") {
		t.Errorf("a variable was left in a query:\n%s", queries)
	}
}

func TestGivenVariables(t *testing.T) {
	prom := newFakePrometheus(t, smallAnswers(false))
	opt := testOptions(prom.URL)
	opt.Vars = map[string][]string{"pool": {"tank", "backup"}, "instance": {"host:9134"}}
	if _, _, err := Render(context.Background(), loadDashboard(t, "testdata/small.json"), opt); err != nil {
		t.Fatal(err)
	}
	queries := strings.Join(prom.received(), "\n")
	if !strings.Contains(queries, `{instance=~"host:9134", pool=~"(tank|backup)"}`) {
		t.Errorf("given variables not used:\n%s", queries)
	}
}

func TestNoData(t *testing.T) {
	svg, _, _ := renderSmall(t, false)
	p := panelNamed(t, parseSVG(t, svg), "Slow I/Os")
	if got := p.texts("no-data"); !reflect.DeepEqual(got, []string{"No data"}) {
		t.Errorf("empty panel shows %q", got)
	}
	if n := len(p.all(withClass("series"))); n != 0 {
		t.Errorf("empty panel draws %d lines", n)
	}
}

func TestQueryErrorReportedWithPanel(t *testing.T) {
	svg, report, _ := renderSmall(t, false)
	if len(report.Problems) != 1 {
		t.Fatalf("problems: %v", report.Problems)
	}
	msg := report.Problems[0].Error()
	for _, want := range []string{`"Broken query"`, "query A", "bad_data", "unclosed left parenthesis"} {
		if !strings.Contains(msg, want) {
			t.Errorf("problem %q does not say %s", msg, want)
		}
	}
	p := panelNamed(t, parseSVG(t, svg), "Broken query")
	if got := p.texts("error"); len(got) != 1 || !strings.Contains(got[0], "unclosed left parenthesis") {
		t.Errorf("the panel shows %q", got)
	}
}

func TestNotDrawnPanelType(t *testing.T) {
	svg, report, _ := renderSmall(t, false)
	if want := []string{`"Dedup" (type gauge)`}; !reflect.DeepEqual(report.NotDrawn, want) {
		t.Errorf("not drawn: %q, want %q", report.NotDrawn, want)
	}
	p := panelNamed(t, parseSVG(t, svg), "Dedup")
	if got := p.texts("not-drawn"); !reflect.DeepEqual(got, []string{"(panel type gauge not drawn)"}) {
		t.Errorf("gauge panel shows %q", got)
	}
}

func TestStatColoursAndMappings(t *testing.T) {
	svg, _, _ := renderSmall(t, false)
	root := parseSVG(t, svg)
	for _, c := range []struct{ title, text, fill string }{
		{"Pools not online", "2", namedColors["red"]},
		{"Exporter", "UP", namedColors["green"]},
	} {
		p := panelNamed(t, root, c.title)
		if got := p.texts("stat-value"); !reflect.DeepEqual(got, []string{c.text}) {
			t.Errorf("%s: value %q, want %q", c.title, got, c.text)
		}
		bg := p.all(withClass("stat-background"))
		if len(bg) != 1 || bg[0].attr["fill"] != c.fill {
			t.Errorf("%s: background %v, want %s", c.title, bg, c.fill)
		}
	}
}

// Rows of both queries merge on their labels, the organize transformation
// picks and orders the columns, the state is mapped and coloured, and the
// rows are sorted by pool.
func TestTableMergedOrganizedSorted(t *testing.T) {
	svg, _, _ := renderSmall(t, true)
	p := panelNamed(t, parseSVG(t, svg), "Pools")
	var rows [][]string
	var stateFills []string
	for _, r := range p.all(withClass("table-row")) {
		var cells []string
		for _, c := range r.children {
			switch c.name {
			case "text":
				cells = append(cells, c.text)
			case "rect":
				stateFills = append(stateFills, c.attr["fill"])
			}
		}
		rows = append(rows, cells)
	}
	want := [][]string{
		{"host:9134", "backup", "DEGRADED", "1 TiB"},
		{"host:9134", "tank", "ONLINE", "1.5 KiB"},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("rows:\n got %q\nwant %q", rows, want)
	}
	if want := []string{namedColors["orange"], namedColors["green"]}; !reflect.DeepEqual(stateFills, want) {
		t.Errorf("state backgrounds %q, want %q", stateFills, want)
	}
}

func TestAnnotationsDrawn(t *testing.T) {
	svg, _, _ := renderSmall(t, false)
	p := panelNamed(t, parseSVG(t, svg), "Read bandwidth")
	marks := p.all(withClass("annotation"))
	if len(marks) != 1 || marks[0].attr["stroke"] != namedColors["blue"] {
		t.Fatalf("annotations: %d", len(marks))
	}
	// The scrub started half way through the range.
	plot := rectOf(t, p.all(withClass("plot"))[0])
	if x := marks[0].attr["x1"]; x != num(plot.x+plot.w/2) {
		t.Errorf("annotation at x=%s, want %s", x, num(plot.x+plot.w/2))
	}
}

func TestThresholdLines(t *testing.T) {
	svg, _, _ := renderSmall(t, false)
	p := panelNamed(t, parseSVG(t, svg), "Capacity used")
	lines := p.all(withClass("threshold"))
	if len(lines) != 1 || lines[0].attr["stroke"] != namedColors["orange"] {
		t.Fatalf("threshold lines: %d", len(lines))
	}
	plot := rectOf(t, p.all(withClass("plot"))[0])
	if y := lines[0].attr["y1"]; y != num(plot.y+plot.h*0.2) {
		t.Errorf("80%% line at y=%s, want %s", y, num(plot.y+plot.h*0.2))
	}
}

func TestLayoutOpensCollapsedRows(t *testing.T) {
	d := loadDashboard(t, "testdata/small.json")
	var got []string
	for _, p := range layout(d.Panels) {
		got = append(got, p.panel.Title+" "+formatPos(p.pos))
	}
	want := []string{
		"Overview 0,0 24x1",
		"Pools not online 0,1 6x4",
		"Exporter 6,1 6x4",
		"Pools 12,1 12x4",
		"Read bandwidth 0,5 12x8",
		"Operations, stacked 12,5 12x8",
		"Details 0,13 24x1",
		"Capacity used 0,14 12x6",
		"Dedup 12,14 12x6",
		// Below the opened row.
		"Slow I/Os 0,20 12x6",
		"Broken query 12,20 12x6",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("layout:\n got %q\nwant %q", got, want)
	}
}

func formatPos(p GridPos) string {
	return strings.Join([]string{itoa(p.X) + "," + itoa(p.Y), itoa(p.W) + "x" + itoa(p.H)}, " ")
}

func itoa(i int) string { return formatNumber(float64(i)) }

func TestEmptyRangeRefused(t *testing.T) {
	d := loadDashboard(t, "testdata/small.json")
	if _, _, err := Render(context.Background(), d, Options{Prometheus: "http://127.0.0.1:1", From: testTo, To: testFrom}); err == nil {
		t.Error("a range ending before it starts was accepted")
	}
}

func TestFitWidths(t *testing.T) {
	for _, c := range []struct {
		natural []float64
		width   float64
		want    []float64
	}{
		{[]float64{10, 30}, 80, []float64{20, 60}},
		// The widest column gives up what is missing.
		{[]float64{50, 300, 40}, 190, []float64{50, 100, 40}},
		// Two wide columns share what the short one leaves.
		{[]float64{200, 20, 300}, 220, []float64{100, 20, 100}},
	} {
		if got := fitWidths(c.natural, c.width); !reflect.DeepEqual(got, c.want) {
			t.Errorf("fitWidths(%v, %v) = %v, want %v", c.natural, c.width, got, c.want)
		}
	}
}

func TestAnnotationErrorReported(t *testing.T) {
	prom := newFakePrometheus(t, func(expr string, instant bool) (int, string) {
		if strings.HasPrefix(expr, "changes(") {
			return 422, apiError("execution", "many-to-many matching not allowed")
		}
		return smallAnswers(false)(expr, instant)
	})
	_, report, err := Render(context.Background(), loadDashboard(t, "testdata/small.json"), testOptions(prom.URL))
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, p := range report.Problems {
		msgs = append(msgs, p.Error())
	}
	if want := `annotation "Scan started": execution: many-to-many matching not allowed`; len(msgs) != 2 || msgs[0] != want {
		t.Errorf("problems %q, want %q first", msgs, want)
	}
}

// A state timeline draws a bar per run of equal values, mapped to text
// and colour.
func TestStateTimeline(t *testing.T) {
	d, err := Parse([]byte(`{"uid": "states", "title": "States", "panels": [{
		"type": "state-timeline", "title": "Exporter up", "gridPos": {"x": 0, "y": 0, "w": 24, "h": 4},
		"targets": [{"refId": "A", "expr": "up", "legendFormat": "{{instance}}"}],
		"fieldConfig": {"defaults": {"mappings": [{"type": "value", "options": {"0": {"text": "DOWN", "color": "red"}, "1": {"text": "UP", "color": "green"}}}]}}
	}]}`))
	if err != nil {
		t.Fatal(err)
	}
	prom := newFakePrometheus(t, func(string, bool) (int, string) {
		return 200, matrix(testSeries{labels("instance", "a:1"), func(i int) float64 {
			if i < 6 {
				return 1
			}
			return 0
		}})
	})
	svg, _, err := Render(context.Background(), d, testOptions(prom.URL))
	if err != nil {
		t.Fatal(err)
	}
	p := panelNamed(t, parseSVG(t, svg), "Exporter up")
	var fills []string
	var widths []float64
	for _, s := range p.all(withClass("state")) {
		fills = append(fills, s.attr["fill"])
		widths = append(widths, rectOf(t, s).w)
	}
	if want := []string{namedColors["green"], namedColors["red"]}; !reflect.DeepEqual(fills, want) {
		t.Fatalf("bars %q, want %q", fills, want)
	}
	// Up for 3 of the 10 minutes; the last sample holds to the end.
	if math.Abs(widths[0]/(widths[0]+widths[1])-0.3) > 0.005 {
		t.Errorf("bar widths %v, want 3:7", widths)
	}
}
