package render

import (
	"context"
	"math"
)

// plotLine is one series of a time series panel as drawn: its samples,
// and where stacked the sum of the series below it.
type plotLine struct {
	name  string
	color string
	raw   []point
	base  []float64
	top   []float64
}

// timeseries draws a graph: axes, one line (or bars) per series, filled
// areas, threshold lines, annotations and a legend with its calculations.
func (r *renderer) timeseries(ctx context.Context, p *Panel, b box) {
	results, ok := r.rangeData(ctx, p, b)
	if !ok {
		return
	}
	custom := p.FieldConfig.Defaults.Custom
	lines := plotLines(results, custom.Stacking != nil && custom.Stacking.Mode == "normal")
	style := p.style("")

	legendH := 0.0
	var lg legendLayout
	if p.Options.Legend == nil || p.Options.Legend.ShowLegend {
		lg = newLegendLayout(len(lines), calcNames(p), b)
		legendH = lg.height()
	}
	plotArea := box{b.x, b.y, b.w, b.h - legendH}
	plot, lo, hi := r.axes(plotArea, lines, style)
	r.fills(plot, lines, lo, hi, custom)
	r.seriesLines(plot, lines, lo, hi, custom.DrawStyle == "bars")
	if ts := custom.ThresholdsStyle; ts != nil && (ts.Mode == "line" || ts.Mode == "dashed" || ts.Mode == "line+area" || ts.Mode == "dashed+area") {
		r.thresholdLines(plot, style.thresholds, lo, hi)
	}
	r.annotationLines(plot)
	if legendH > 0 {
		r.legend(box{b.x, b.y + b.h - legendH + 4, b.w, legendH - 4}, lg, lines, calcNames(p), style.unit)
	}
}

// plotLines names and colours the series, target by target, and stacks
// them if asked: each series then starts where the ones before it end
// at the same time.
func plotLines(results []result, stacked bool) []plotLine {
	var lines []plotLine
	sums := map[int64]float64{}
	for _, res := range results {
		for _, s := range res.series {
			l := plotLine{name: legend(res.target.LegendFormat, s.labels, res.target.Expr), color: seriesColor(len(lines)), raw: s.points}
			for _, pt := range s.points {
				base := 0.0
				if stacked && finite(pt.value) {
					base = sums[pt.ms]
					sums[pt.ms] += pt.value
				}
				l.base = append(l.base, base)
				l.top = append(l.top, base+pt.value)
			}
			lines = append(lines, l)
		}
	}
	return lines
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// axes draws the grid and tick labels and returns the plot's box and its
// value range: from zero or the lowest value to the highest, rounded to
// ticks, unless the panel fixes a minimum or maximum.
func (r *renderer) axes(area box, lines []plotLine, style fieldStyle) (box, float64, float64) {
	lo, hi := 0.0, 0.0
	for _, l := range lines {
		for i := range l.top {
			if finite(l.top[i]) {
				lo, hi = math.Min(lo, l.top[i]), math.Max(hi, l.top[i])
			}
		}
	}
	if style.min != nil {
		lo = *style.min
	}
	if style.max != nil {
		hi = *style.max
	}
	if hi <= lo {
		hi = lo + math.Max(1, math.Abs(lo)*0.1)
	}
	n := max(2, int(area.h/45))
	ticks := valueTicks(lo, hi, n, style.unit)
	if len(ticks) > 1 {
		step := ticks[1] - ticks[0]
		if style.min == nil && ticks[0] > lo {
			lo = ticks[0] - step
			ticks = append([]float64{lo}, ticks...)
		}
		if style.max == nil && ticks[len(ticks)-1] < hi {
			hi = ticks[len(ticks)-1] + step
			ticks = append(ticks, hi)
		}
	}
	labelW := 0.0
	labels := make([]string, len(ticks))
	for i, t := range ticks {
		labels[i] = formatValue(style.unit, t)
		labelW = math.Max(labelW, textWidth(labels[i], 10))
	}
	plot := box{area.x + labelW + 6, area.y + 4, area.w - labelW - 10, area.h - 22}
	r.c.rect(plot.x, plot.y, plot.w, plot.h, "class", "plot", "fill", "none")
	y := scaleY(plot, lo, hi)
	for i, t := range ticks {
		r.c.line(plot.x, y(t), plot.x+plot.w, y(t), "stroke", r.theme.Grid)
		r.c.text(plot.x-5, y(t)+3.5, labels[i], "font-size", "10", "text-anchor", "end", "fill", r.theme.Secondary)
	}
	r.timeAxis(plot)
	return plot, lo, hi
}

// timeAxis draws the vertical grid lines and time labels under a plot.
func (r *renderer) timeAxis(plot box) {
	ticks, layout := timeTicks(r.from, r.to, int(plot.w/90))
	x := r.scaleX(plot)
	for _, t := range ticks {
		tx := x(t.UnixMilli())
		label := t.Format(layout)
		// Labels at the ends stay within the plot's width.
		anchor, half := "middle", textWidth(label, 10)/2
		switch {
		case tx-half < plot.x:
			anchor = "start"
		case tx+half > plot.x+plot.w:
			anchor = "end"
		}
		r.c.line(tx, plot.y, tx, plot.y+plot.h, "stroke", r.theme.Grid)
		r.c.text(tx, plot.y+plot.h+13, label, "font-size", "10", "text-anchor", anchor, "fill", r.theme.Secondary)
	}
}

// scaleX maps a time in Unix milliseconds into the plot.
func (r *renderer) scaleX(plot box) func(int64) float64 {
	from, span := r.from.UnixMilli(), float64(r.to.Sub(r.from).Milliseconds())
	return func(ms int64) float64 {
		return plot.x + clamp(float64(ms-from)/span, 0, 1)*plot.w
	}
}

// scaleY maps a value into the plot; values beyond its range stay on
// its edge.
func scaleY(plot box, lo, hi float64) func(float64) float64 {
	return func(v float64) float64 {
		return plot.y + plot.h - clamp((v-lo)/(hi-lo), 0, 1)*plot.h
	}
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// segments splits a line where samples are missing: a gap longer than
// one and a half steps, or a value that is not a number.
func (r *renderer) segments(l plotLine) [][]int {
	var segs [][]int
	var cur []int
	limit := r.step.Milliseconds() * 3 / 2
	for i, pt := range l.raw {
		if !finite(pt.value) {
			segs, cur = appendSeg(segs, cur), nil
			continue
		}
		if len(cur) > 0 && pt.ms-l.raw[cur[len(cur)-1]].ms > limit {
			segs, cur = appendSeg(segs, cur), nil
		}
		cur = append(cur, i)
	}
	return appendSeg(segs, cur)
}

func appendSeg(segs [][]int, cur []int) [][]int {
	if len(cur) == 0 {
		return segs
	}
	return append(segs, cur)
}

// fills shades the area under each line, or between a stacked line and
// the one below it.
func (r *renderer) fills(plot box, lines []plotLine, lo, hi float64, custom Custom) {
	if custom.FillOpacity == nil || *custom.FillOpacity <= 0 || custom.DrawStyle == "bars" {
		return
	}
	x, y := r.scaleX(plot), scaleY(plot, lo, hi)
	opacity := num(*custom.FillOpacity / 100)
	for _, l := range lines {
		var d pathBuilder
		for _, seg := range r.segments(l) {
			for k, i := range seg {
				if k == 0 {
					d.move(x(l.raw[i].ms), y(l.top[i]))
				} else {
					d.to(x(l.raw[i].ms), y(l.top[i]))
				}
			}
			for k := len(seg) - 1; k >= 0; k-- {
				i := seg[k]
				d.to(x(l.raw[i].ms), y(l.base[i]))
			}
			d.closePath()
		}
		if !d.empty() {
			r.c.path(d.String(), "class", "area", "fill", l.color, "fill-opacity", opacity, "stroke", "none")
		}
	}
}

// seriesLines draws one path per series: a line broken at gaps, or a
// bar per sample.
func (r *renderer) seriesLines(plot box, lines []plotLine, lo, hi float64, bars bool) {
	x, y := r.scaleX(plot), scaleY(plot, lo, hi)
	width := "1.5"
	if bars {
		steps := float64(r.to.Sub(r.from)) / float64(r.step)
		width = num(clamp(plot.w/steps*0.7, 1, 12))
	}
	for _, l := range lines {
		var d pathBuilder
		for _, seg := range r.segments(l) {
			for k, i := range seg {
				px, py := x(l.raw[i].ms), y(l.top[i])
				switch {
				case bars:
					d.move(px, y(l.base[i]))
					d.to(px, py)
				case k == 0 && len(seg) == 1:
					// A lone sample is a short dash, so it shows.
					d.move(px-1.5, py)
					d.to(px+1.5, py)
				case k == 0:
					d.move(px, py)
				default:
					d.to(px, py)
				}
			}
		}
		if !d.empty() {
			r.c.path(d.String(), "class", "series", "fill", "none", "stroke", l.color, "stroke-width", width, "stroke-linejoin", "round")
		}
	}
}

// thresholdLines draws the panel's threshold steps as dashed lines.
func (r *renderer) thresholdLines(plot box, t *Thresholds, lo, hi float64) {
	if t == nil {
		return
	}
	y := scaleY(plot, lo, hi)
	for _, s := range t.Steps {
		if s.Value == nil || *s.Value < lo || *s.Value > hi {
			continue
		}
		r.c.line(plot.x, y(*s.Value), plot.x+plot.w, y(*s.Value), "class", "threshold", "stroke", r.theme.color(s.Color), "stroke-dasharray", "6 4")
	}
}

// annotationLines marks the dashboard's annotation events.
func (r *renderer) annotationLines(plot box) {
	x := r.scaleX(plot)
	for _, a := range r.annotations {
		if a.ms < r.from.UnixMilli() || a.ms > r.to.UnixMilli() {
			continue
		}
		r.c.line(x(a.ms), plot.y, x(a.ms), plot.y+plot.h, "class", "annotation", "stroke", a.color, "stroke-dasharray", "3 3")
	}
}
