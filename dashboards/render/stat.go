package render

import (
	"context"
	"fmt"
	"math"
)

// statItem is one series of a stat panel: its name and last value.
type statItem struct {
	name  string
	value float64
}

// stat draws the last value of each series, big, in the colour its
// mapping or threshold gives it.
func (r *renderer) stat(ctx context.Context, p *Panel, b box) {
	results, err := r.fetch(ctx, p, true)
	if err != nil {
		r.failed(p, b, err)
		return
	}
	var items []statItem
	for _, res := range results {
		for _, s := range res.series {
			if len(s.points) == 0 {
				continue
			}
			name := ""
			if res.target.LegendFormat != "" || len(s.labels) > 0 {
				name = legend(res.target.LegendFormat, s.labels, res.target.Expr)
			}
			items = append(items, statItem{name, s.points[len(s.points)-1].value})
		}
	}
	if len(items) == 0 {
		r.noData(b)
		return
	}
	showName := p.Options.TextMode == "value_and_name" || p.Options.TextMode == "name" ||
		(p.Options.TextMode == "" || p.Options.TextMode == "auto") && len(items) > 1
	cells := statGrid(len(items), b)
	style := p.style("")
	for i, cell := range cells {
		if i == len(cells)-1 && len(cells) < len(items) {
			r.centered(cell, fmt.Sprintf("+%d more", len(items)-i), "stat-more", r.theme.Secondary)
			break
		}
		r.statCell(cell, items[i], style, p.Options.ColorMode, showName)
	}
}

// statGrid splits the box into cells side by side (or stacked in a tall
// box), at most as many as can show a readable value.
func statGrid(n int, b box) []box {
	cols := 1
	if b.w >= b.h {
		cols = min(n, max(1, int(b.w/110)))
	}
	rows := (n + cols - 1) / cols
	rows = min(rows, max(1, int(b.h/32)))
	w, h := b.w/float64(cols), b.h/float64(rows)
	var cells []box
	for i := 0; i < min(n, rows*cols); i++ {
		cells = append(cells, box{b.x + w*float64(i%cols), b.y + h*float64(i/cols), w - 4, h - 4})
	}
	return cells
}

func (r *renderer) statCell(b box, it statItem, style fieldStyle, colorMode string, showName bool) {
	text, color := style.display(numValue(it.value))
	fill := r.theme.color(color)
	if color == "" {
		fill = seriesColor(0)
	}
	textColor := fill
	switch colorMode {
	case "background", "background_solid":
		r.c.rect(b.x, b.y, b.w, b.h, "class", "stat-background", "rx", "2", "fill", fill)
		textColor = contrast(fill)
	case "none":
		textColor = r.theme.Text
	}
	valueH := b.h * 0.6
	if showName && it.name != "" {
		nameSize := math.Min(12, b.h*0.22)
		r.c.text(b.x+b.w/2, b.y+b.h*0.28, fit(it.name, nameSize, b.w-8), "font-size", num(nameSize), "text-anchor", "middle", "fill", textColor)
		valueH = b.h * 0.42
	}
	// Bold digits run wider than textWidth's average letter.
	size := clamp(math.Min(valueH, (b.w-12)/(float64(len([]rune(text)))*0.68)), 10, 48)
	y := b.y + b.h/2 + size*0.35
	if showName && it.name != "" {
		y = b.y + b.h*0.72 + size*0.25
	}
	r.c.text(b.x+b.w/2, y, text, "class", "stat-value", "font-size", num(size), "font-weight", "600", "text-anchor", "middle", "fill", textColor)
}
