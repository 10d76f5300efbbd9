package render

import (
	"context"
	"fmt"
	"math"
)

// stateTimeline draws each series as a lane of coloured bars, one bar per
// run of equal values, coloured and named by the panel's mappings or
// thresholds (status-history panels are drawn the same way).
func (r *renderer) stateTimeline(ctx context.Context, p *Panel, b box) {
	results, ok := r.rangeData(ctx, p, b)
	if !ok {
		return
	}
	lines := plotLines(results, false)
	nameW := 0.0
	for _, l := range lines {
		nameW = math.Max(nameW, textWidth(l.name, 11)+10)
	}
	nameW = math.Min(nameW, b.w*0.3)
	lanes := box{b.x + nameW, b.y, b.w - nameW, b.h - 18}
	shown := len(lines)
	if int(lanes.h/12) < shown {
		shown = max(int(lanes.h/12)-1, 0)
	}
	laneH := math.Min(28, lanes.h/float64(max(shown, 1)))
	if shown < len(lines) {
		laneH = lanes.h / float64(shown+1)
	}
	r.timeAxis(lanes)
	style := p.style("")
	for i := 0; i < shown; i++ {
		y := lanes.y + laneH*float64(i)
		r.c.text(b.x, y+laneH/2+4, fit(lines[i].name, 11, nameW-8), "font-size", "11", "fill", r.theme.Text)
		r.lane(box{lanes.x, y + 1, lanes.w, laneH - 2}, lines[i], style)
	}
	if shown < len(lines) {
		y := lanes.y + laneH*float64(shown)
		r.c.text(b.x, y+laneH/2+4, fmt.Sprintf("+%d more series", len(lines)-shown), "class", "legend-more", "font-size", "11", "fill", r.theme.Secondary)
	}
}

// lane draws the runs of one series. A value holds until the next sample,
// or for one step after the last sample before a gap.
func (r *renderer) lane(b box, l plotLine, style fieldStyle) {
	x := r.scaleX(b)
	stepMs := r.step.Milliseconds()
	for _, seg := range r.segments(l) {
		start := 0
		for k := 1; k <= len(seg); k++ {
			first := l.raw[seg[start]]
			text, color := style.display(numValue(first.value))
			if k < len(seg) {
				if t, c := style.display(numValue(l.raw[seg[k]].value)); t == text && c == color {
					continue
				}
			}
			end := l.raw[seg[len(seg)-1]].ms + stepMs
			if k < len(seg) {
				end = l.raw[seg[k]].ms
			}
			fill := r.theme.color(color)
			if color == "" {
				fill = l.color
			}
			x0, x1 := x(first.ms), x(end)
			r.c.rect(x0, b.y, x1-x0, b.h, "class", "state", "fill", fill)
			if textWidth(text, 10) < x1-x0-6 {
				r.c.text((x0+x1)/2, b.y+b.h/2+3.5, text, "font-size", "10", "text-anchor", "middle", "fill", contrast(fill))
			}
			start = k
		}
	}
}
