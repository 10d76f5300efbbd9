package benchreport

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// WriteSVG writes a standalone SVG chart of the pool's read and write
// bandwidth over the run (MB/s between consecutive samples, against
// seconds since the start), titled with the run, the pool's configuration
// and the workload.
func WriteSVG(w io.Writer, r Report) error {
	c := chart{
		title:    []string{runTitle(r.Run) + ": pool " + r.Run.Pool + " read and write bandwidth", configLine(r.Run) + " | " + commandLine(r.Run.Command)},
		marks:    []chartMark{{x: 0, label: "start"}, {x: r.DurationSeconds, label: "end"}},
		subtitle: "MB/s (1 MB = 1e6 bytes) between consecutive samples; seconds since the start",
	}
	c.series = append(c.series,
		chartSeries{name: "read", color: palette[0], rates: r.Timeline.Pool.Read},
		chartSeries{name: "write", color: palette[1], rates: r.Timeline.Pool.Write})
	return c.write(w)
}

// configLine sums up a run's pool configuration in one line.
func configLine(run Run) string {
	cfg := run.Config
	if cfg == nil {
		return "configuration unknown"
	}
	parts := []string{}
	if cfg.Layout != "" {
		parts = append(parts, cfg.Layout)
	}
	if cfg.Ashift != 0 {
		parts = append(parts, "ashift="+strconv.Itoa(cfg.Ashift))
	}
	if cfg.Compression != "" {
		parts = append(parts, "compression="+cfg.Compression)
	}
	if rs := sizeOrEmpty(cfg.Recordsize); rs != "" {
		parts = append(parts, "recordsize="+rs)
	}
	if cfg.Version != "" {
		parts = append(parts, cfg.Version)
	}
	if len(parts) == 0 {
		return "configuration unknown"
	}
	return strings.Join(parts, ", ")
}

var palette = []string{"#1f77b4", "#d95f02", "#2ca02c", "#9467bd", "#e7298a", "#8c564b", "#17becf", "#7f7f7f"}

type chart struct {
	title    []string
	subtitle string
	series   []chartSeries
	marks    []chartMark // vertical lines
}

type chartSeries struct {
	name  string
	color string
	dash  bool
	rates []Rate
}

type chartMark struct {
	x     float64
	label string
}

// Chart geometry, in SVG user units.
const (
	chartW     = 900
	plotLeft   = 80
	plotRight  = chartW - 30
	plotTop    = 80
	plotBottom = 370
	legendTop  = plotBottom + 60
	legendRow  = 20
)

func (c chart) write(w io.Writer) error {
	xmin, xmax, ymax := 0.0, 0.0, 0.0
	for _, m := range c.marks {
		xmin, xmax = math.Min(xmin, m.x), math.Max(xmax, m.x)
	}
	for _, s := range c.series {
		for _, r := range s.rates {
			xmin, xmax = math.Min(xmin, r.From), math.Max(xmax, r.To)
			ymax = math.Max(ymax, r.PerSecond/mega)
		}
	}
	if xmax <= xmin {
		xmax = xmin + 1
	}
	// The time axis spans the samples exactly; ticks fall on multiples
	// of a nice step inside it.
	xstep := niceStep(xmax - xmin)
	xlo, xhi := xmin, xmax
	if ymax <= 0 {
		ymax = 1
	}
	ystep := niceStep(ymax)
	yhi := math.Ceil(ymax/ystep) * ystep
	px := func(x float64) float64 { return plotLeft + (x-xlo)/(xhi-xlo)*(plotRight-plotLeft) }
	py := func(y float64) float64 { return plotBottom - y/yhi*(plotBottom-plotTop) }

	// Legend entries, wrapped to the plot's width.
	type entry struct {
		s     chartSeries
		label string
		x, y  int
	}
	var legend []entry
	lx, ly := plotLeft, legendTop
	for _, s := range c.series {
		label := s.name
		if len(s.rates) == 0 {
			label += " (no samples)"
		}
		width := 40 + 7*len([]rune(label))
		if lx > plotLeft && lx+width > plotRight {
			lx, ly = plotLeft, ly+legendRow
		}
		legend = append(legend, entry{s, label, lx, ly})
		lx += width
	}
	chartH := ly + 20

	var b bytes.Buffer
	f := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	f(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	f(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH, chartW, chartH)
	f(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	for i, t := range c.title {
		size, weight := 13, "normal"
		if i == 0 {
			size, weight = 16, "bold"
		}
		if r := []rune(t); len(r) > 120 {
			t = string(r[:119]) + "…"
		}
		f(`<text x="%d" y="%d" font-size="%d" font-weight="%s">%s</text>`+"\n", plotLeft, 24+20*i, size, weight, esc(t))
	}
	// Axes and grid.
	for i := 0; float64(i)*ystep <= yhi+ystep/2; i++ {
		y := float64(i) * ystep
		f(`<line x1="%d" y1="%s" x2="%d" y2="%s" stroke="#dddddd"/>`+"\n", plotLeft, num(py(y)), plotRight, num(py(y)))
		f(`<text x="%d" y="%s" text-anchor="end">%s</text>`+"\n", plotLeft-6, num(py(y)+4), tick(y))
	}
	for i := math.Ceil(xlo/xstep - 1e-9); i*xstep <= xhi+xstep*1e-9; i++ {
		x := i * xstep
		f(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#333333"/>`+"\n", num(px(x)), plotBottom, num(px(x)), plotBottom+5)
		f(`<text x="%s" y="%d" text-anchor="middle">%s</text>`+"\n", num(px(x)), plotBottom+18, tick(x))
	}
	f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", plotLeft, plotBottom, plotRight, plotBottom)
	f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333333"/>`+"\n", plotLeft, plotTop, plotLeft, plotBottom)
	f(`<text x="%d" y="%d" text-anchor="middle">seconds since the start</text>`+"\n", (plotLeft+plotRight)/2, plotBottom+36)
	f(`<text transform="translate(20 %d) rotate(-90)" text-anchor="middle">MB/s</text>`+"\n", (plotTop+plotBottom)/2)
	if c.subtitle != "" {
		f(`<text x="%d" y="%d" font-size="11" fill="#555555">%s</text>`+"\n", plotLeft, plotTop-18, esc(c.subtitle))
	}
	for _, m := range c.marks {
		f(`<line x1="%s" y1="%d" x2="%s" y2="%d" stroke="#888888" stroke-dasharray="4 3"/>`+"\n", num(px(m.x)), plotTop, num(px(m.x)), plotBottom)
		f(`<text x="%s" y="%d" font-size="10" fill="#555555" text-anchor="middle">%s</text>`+"\n", num(px(m.x)), plotTop-3, esc(m.label))
	}
	// Series as steps: each rate holds over its interval.
	for _, s := range c.series {
		if len(s.rates) == 0 {
			continue
		}
		var pts []string
		for _, r := range s.rates {
			y := num(py(r.PerSecond / mega))
			pts = append(pts, num(px(r.From))+","+y, num(px(r.To))+","+y)
		}
		dash := ""
		if s.dash {
			dash = ` stroke-dasharray="6 3"`
		}
		f(`<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"><title>%s</title></polyline>`+"\n", s.color, dash, strings.Join(pts, " "), esc(s.name))
	}
	// Legend, below the axis title.
	for _, e := range legend {
		dash := ""
		if e.s.dash {
			dash = ` stroke-dasharray="6 3"`
		}
		f(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", e.x, e.y, e.x+24, e.y, e.s.color, dash)
		f(`<text x="%d" y="%d">%s</text>`+"\n", e.x+30, e.y+4, esc(e.label))
	}
	f("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// niceStep is a step of 1, 2 or 5 times a power of ten that cuts span into
// about five intervals.
func niceStep(span float64) float64 {
	raw := span / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// tick formats an axis label, rounding away the float error of repeated
// additions.
func tick(v float64) string {
	v = math.Round(v*1e6) / 1e6
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
