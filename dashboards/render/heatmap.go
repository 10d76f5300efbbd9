package render

import (
	"context"
	"math"
	"sort"
	"strconv"
)

// heatmapBucket is one row of a heatmap: a bucket's upper bound and what
// fell in it alone at each step.
type heatmapBucket struct {
	le     float64
	points []point
}

// heatmap draws a histogram over time from its cumulative le buckets,
// as Grafana's heatmap panel does with a Prometheus target in heatmap
// format: one row of cells per bucket, lowest at the bottom, each cell
// shaded by its count against the largest (on a square-root scale, the
// panel's default exponent of 0.5), empty cells left blank.
func (r *renderer) heatmap(ctx context.Context, p *Panel, b box) {
	results, ok := r.rangeData(ctx, p, b)
	if !ok {
		return
	}
	buckets := heatmapBuckets(results)
	if len(buckets) == 0 {
		r.noData(b)
		return
	}
	unit := ""
	if p.Options.YAxis != nil {
		unit = p.Options.YAxis.Unit
	}
	labels := make([]string, len(buckets))
	labelW := 0.0
	top := 0.0
	for i, bk := range buckets {
		labels[i] = formatValue(unit, bk.le)
		labelW = math.Max(labelW, textWidth(labels[i], 10))
		for _, pt := range bk.points {
			if finite(pt.value) {
				top = math.Max(top, pt.value)
			}
		}
	}
	plot := box{b.x + labelW + 6, b.y + 4, b.w - labelW - 10, b.h - 22}
	r.c.rect(plot.x, plot.y, plot.w, plot.h, "class", "plot", "fill", "none")
	r.timeAxis(plot)
	rowH := plot.h / float64(len(buckets))
	// Labels are thinned out to one every 14 pixels at least.
	every := max(1, int(math.Ceil(14/rowH)))
	x := r.scaleX(plot)
	stepMs := r.step.Milliseconds()
	fill := namedColors["dark-orange"]
	for i, bk := range buckets {
		y := plot.y + plot.h - rowH*float64(i+1)
		if i%every == 0 {
			r.c.text(plot.x-5, y+rowH/2+3.5, labels[i], "class", "heatmap-bucket", "font-size", "10", "text-anchor", "end", "fill", r.theme.Secondary)
		}
		for _, pt := range bk.points {
			if !finite(pt.value) || pt.value <= 1e-9 || top <= 0 {
				continue
			}
			x0, x1 := x(pt.ms-stepMs), x(pt.ms)
			r.c.rect(x0, y, math.Max(x1-x0, 0.5), math.Max(rowH-1, 0.5), "class", "heatmap-cell", "fill", fill,
				"fill-opacity", num(0.1+0.9*math.Sqrt(pt.value/top)))
		}
	}
	r.annotationLines(plot)
}

// heatmapBuckets turns the series of cumulative buckets (labelled le)
// into the buckets alone, sorted by le: at each step a bucket's value
// less the one below it, as Grafana's data source does for the heatmap
// format. Series of one le are added up; those without a number in le
// are left out.
func heatmapBuckets(results []result) []heatmapBucket {
	byLe := map[float64]map[int64]float64{}
	for _, res := range results {
		for _, s := range res.series {
			le, err := strconv.ParseFloat(s.labels["le"], 64)
			if err != nil {
				continue
			}
			if byLe[le] == nil {
				byLe[le] = map[int64]float64{}
			}
			for _, pt := range s.points {
				byLe[le][pt.ms] += pt.value
			}
		}
	}
	les := make([]float64, 0, len(byLe))
	for le := range byLe {
		les = append(les, le)
	}
	sort.Float64s(les)
	out := make([]heatmapBucket, len(les))
	for i, le := range les {
		bk := heatmapBucket{le: le}
		for ms, v := range byLe[le] {
			if i > 0 {
				v = math.Max(v-byLe[les[i-1]][ms], 0)
			}
			bk.points = append(bk.points, point{ms: ms, value: v})
		}
		sort.Slice(bk.points, func(a, b int) bool { return bk.points[a].ms < bk.points[b].ms })
		out[i] = bk
	}
	return out
}
