package render

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
	"time"
)

var legendRef = regexp.MustCompile(`\{\{\s*([^{}\s]+)\s*\}\}`)

// legend names a series as Grafana does: the legend format with
// {{label}} replaced, or else the series' metric and labels, or else
// the query itself.
func legend(format string, labels map[string]string, expr string) string {
	if format != "" && format != "__auto" {
		return strings.TrimSpace(legendRef.ReplaceAllStringFunc(format, func(ref string) string {
			return labels[legendRef.FindStringSubmatch(ref)[1]]
		}))
	}
	if len(labels) == 0 {
		return expr
	}
	return labelString(labels)
}

// labelString writes labels as metric{a="1", b="2"}.
func labelString(labels map[string]string) string {
	var keys []string
	for k := range labels {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	return labels["__name__"] + "{" + strings.Join(parts, ", ") + "}"
}

// annotationEvent is a moment an annotation query marks.
type annotationEvent struct {
	ms    int64
	color string
}

// loadAnnotations runs the dashboard's enabled annotation queries. As in
// Grafana, each run of samples of a series is one event at its start.
// Grafana's own annotations (tag queries of its built-in data source,
// such as the regions zpool_bench posts) have no expression and are left
// out: Prometheus does not have them.
func (r *renderer) loadAnnotations(ctx context.Context, list []Annotation) {
	for _, a := range list {
		if !a.Enable || strings.TrimSpace(a.Expr) == "" {
			continue
		}
		step := r.step
		if d, err := time.ParseDuration(Interpolate(a.Step, r.vars)); err == nil && d > 0 {
			step = d
		}
		s, err := r.prom.queryRange(ctx, Interpolate(a.Expr, r.vars), r.from, r.to, step)
		if err != nil {
			r.report.Problems = append(r.report.Problems, Problem{Annotation: a.Name, Err: err})
			continue
		}
		for _, ser := range s {
			for i, pt := range ser.points {
				if i == 0 || pt.ms-ser.points[i-1].ms > step.Milliseconds() {
					r.annotations = append(r.annotations, annotationEvent{ms: pt.ms, color: r.theme.color(a.IconColor)})
				}
			}
		}
	}
	sort.SliceStable(r.annotations, func(i, j int) bool {
		a, b := r.annotations[i], r.annotations[j]
		return a.ms < b.ms || a.ms == b.ms && a.color < b.color
	})
}

// calcTitles are the legend calculations the renderer knows, with the
// headings Grafana gives them.
var calcTitles = map[string]string{
	"mean":         "Mean",
	"max":          "Max",
	"min":          "Min",
	"last":         "Last",
	"lastNotNull":  "Last *",
	"first":        "First",
	"firstNotNull": "First *",
	"sum":          "Total",
}

// calcNames are the panel's legend calculations that can be drawn.
func calcNames(p *Panel) []string {
	if p.Options.Legend == nil {
		return nil
	}
	var names []string
	for _, c := range p.Options.Legend.Calcs {
		if _, ok := calcTitles[c]; ok {
			names = append(names, c)
		}
	}
	return names
}

// calc reduces a series' samples as Grafana's legend does; NaN means
// there is nothing to show.
func calc(name string, pts []point) float64 {
	var vals []float64
	for _, p := range pts {
		if finite(p.value) {
			vals = append(vals, p.value)
		}
	}
	switch name {
	case "last":
		if len(pts) > 0 {
			return pts[len(pts)-1].value
		}
	case "first":
		if len(pts) > 0 {
			return pts[0].value
		}
	}
	if len(vals) == 0 {
		return math.NaN()
	}
	switch name {
	case "lastNotNull":
		return vals[len(vals)-1]
	case "firstNotNull":
		return vals[0]
	}
	sum, lo, hi := 0.0, vals[0], vals[0]
	for _, v := range vals {
		sum += v
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	switch name {
	case "mean":
		return sum / float64(len(vals))
	case "max":
		return hi
	case "min":
		return lo
	case "sum":
		return sum
	}
	return math.NaN()
}

// legendLayout places legend entries: in one or two columns under the
// plot, leaving the plot more than half of the panel. Entries that
// do not fit are counted on a last "+N more" line.
type legendLayout struct {
	cols, rows int
	header     bool
	shown      int
	more       int
}

const legendRowH = 15.0

func newLegendLayout(n int, calcs []string, b box) legendLayout {
	header := 0
	if len(calcs) > 0 {
		header = 1
	}
	minPlot := math.Max(100, b.h*0.55)
	perCol := int((b.h-minPlot-4)/legendRowH) - header
	if perCol < 1 || n == 0 {
		return legendLayout{}
	}
	cols := 1
	if n > perCol && b.w >= 560 {
		cols = 2
	}
	lg := legendLayout{cols: cols, header: header == 1, shown: n}
	if n > perCol*cols {
		lg.shown = perCol*cols - 1
		lg.more = n - lg.shown
	}
	slots := lg.shown
	if lg.more > 0 {
		slots++
	}
	lg.rows = (slots + cols - 1) / cols
	return lg
}

func (lg legendLayout) height() float64 {
	if lg.rows == 0 {
		return 0
	}
	rows := lg.rows
	if lg.header {
		rows++
	}
	return float64(rows)*legendRowH + 4
}

// legend draws the entries: colour, name and the calculations.
func (r *renderer) legend(b box, lg legendLayout, lines []plotLine, calcs []string, unit string) {
	const font = 10.5
	values := make([][]string, lg.shown)
	calcW := 0.0
	for _, name := range calcs {
		calcW = math.Max(calcW, textWidth(calcTitles[name], font))
	}
	for k := range values {
		for _, name := range calcs {
			v := formatValue(unit, calc(name, lines[k].raw))
			values[k] = append(values[k], v)
			calcW = math.Max(calcW, textWidth(v, font))
		}
	}
	calcW += 10
	colW := b.w / float64(lg.cols)
	longest := 0.0
	for _, l := range lines[:lg.shown] {
		longest = math.Max(longest, textWidth(l.name, font))
	}
	// Names come before calculations, as in Grafana's legend table,
	// which is as wide as its longest name: the first calculations give
	// way until the names fit, the last only to leave names 90 px.
	nameRoom := func(calcs int) float64 { return colW - 22 - calcW*float64(calcs) }
	for len(calcs) > 0 && (nameRoom(len(calcs)) < 90 || len(calcs) > 1 && nameRoom(len(calcs)) < longest) {
		calcs = calcs[1:]
		for k := range values {
			values[k] = values[k][1:]
		}
	}
	top := b.y
	if lg.header {
		for c := 0; c < lg.cols; c++ {
			right := b.x + colW*float64(c+1) - 8
			for k := len(calcs) - 1; k >= 0; k-- {
				r.c.text(right-calcW*float64(len(calcs)-1-k), top+11, calcTitles[calcs[k]], "font-size", num(font), "text-anchor", "end", "fill", r.theme.Secondary)
			}
		}
		top += legendRowH
	}
	nameW := colW - 22 - calcW*float64(len(calcs))
	for k := 0; k < lg.shown; k++ {
		l := lines[k]
		x := b.x + colW*float64(k/lg.rows)
		y := top + legendRowH*float64(k%lg.rows) + 11
		r.c.open("g", "class", "legend-entry")
		r.c.rect(x, y-5, 10, 3, "fill", l.color)
		r.c.text(x+14, y, fit(l.name, font, nameW), "font-size", num(font), "fill", r.theme.Text)
		for i, v := range values[k] {
			right := x + colW - 8 - calcW*float64(len(calcs)-1-i)
			r.c.text(right, y, v, "font-size", num(font), "text-anchor", "end", "fill", r.theme.Text)
		}
		r.c.close("g")
	}
	if lg.more > 0 {
		x := b.x + colW*float64(lg.shown/lg.rows)
		y := top + legendRowH*float64(lg.shown%lg.rows) + 11
		r.c.text(x+14, y, fmt.Sprintf("+%d more series", lg.more), "class", "legend-more", "font-size", num(font), "fill", r.theme.Secondary)
	}
}
