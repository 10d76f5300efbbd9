package render

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Options say where the data comes from and what range is drawn.
type Options struct {
	// Prometheus is the base URL of the server's HTTP API.
	Prometheus string
	Client     *http.Client
	From, To   time.Time
	// Step is the resolution of range queries; zero picks about 300
	// points over the range, never finer than ScrapeInterval.
	Step time.Duration
	// ScrapeInterval feeds $__rate_interval as in Grafana's Prometheus
	// data source; zero means Grafana's default of 15s.
	ScrapeInterval time.Duration
	// Vars sets template variables by name; several values of one
	// variable are joined into a regex alternation.
	Vars  map[string][]string
	Theme Theme
}

// Report tells what a rendering could not show.
type Report struct {
	Panels int
	// NotDrawn names the panels of a type the renderer does not draw.
	NotDrawn []string
	// Problems are queries that failed; their panels show the error.
	Problems []Problem
}

// Problem is a failed query of a panel, or of an annotation.
type Problem struct {
	Panel, Annotation string
	Err               error
}

func (p Problem) Error() string {
	if p.Annotation != "" {
		return fmt.Sprintf("annotation %q: %v", p.Annotation, p.Err)
	}
	return fmt.Sprintf("panel %q: %v", p.Panel, p.Err)
}

// Grid of the picture: Grafana's 24 columns, in pixels.
const (
	unitWidth  = 60
	unitHeight = 30
	gap        = 8
	margin     = 16
	headerH    = 60
	titleSize  = 13
)

// Render draws the dashboard from the answers of the Prometheus server.
// Failed queries do not stop it: their panels show the error and the
// report lists them. The error is for options that make no picture.
func Render(ctx context.Context, d *Dashboard, opt Options) ([]byte, Report, error) {
	r, err := newRenderer(d, opt)
	if err != nil {
		return nil, Report{}, err
	}
	r.loadAnnotations(ctx, d.Annotations.List)
	panels := layout(d.Panels)
	bottom := 0
	for _, p := range panels {
		bottom = max(bottom, p.pos.Y+p.pos.H)
	}
	width := float64(margin*2 + 24*unitWidth - gap)
	height := float64(margin + headerH + bottom*unitHeight + margin - gap)
	r.c.raw(fmt.Sprintf(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="Inter, Helvetica, Arial, sans-serif">`+"\n",
		num(width), num(height), num(width), num(height)))
	r.c.rect(0, 0, width, height, "fill", r.theme.Background)
	r.header(d, width)
	for _, p := range panels {
		r.panel(ctx, p)
	}
	r.c.close("svg")
	return []byte(r.c.b.String()), r.report, nil
}

type renderer struct {
	prom        prometheus
	from, to    time.Time
	step        time.Duration
	vars        map[string]string
	theme       Theme
	c           *canvas
	report      Report
	annotations []annotationEvent
}

func newRenderer(d *Dashboard, opt Options) (*renderer, error) {
	if !opt.To.After(opt.From) {
		return nil, errors.New("the range is empty: to must be after from")
	}
	if opt.Prometheus == "" {
		return nil, errors.New("no Prometheus URL")
	}
	scrape := opt.ScrapeInterval
	if scrape <= 0 {
		scrape = 15 * time.Second
	}
	step := opt.Step
	if step <= 0 {
		step = max(opt.To.Sub(opt.From)/300, scrape)
		if step > time.Second {
			step = step.Round(time.Second)
		}
	}
	vars := variables(d, opt.Vars)
	for k, v := range intervalVars(opt.From, opt.To, step, rateInterval(step, scrape)) {
		vars[k] = v
	}
	theme := opt.Theme
	if theme.Name == "" {
		theme = Dark
	}
	return &renderer{
		prom:  prometheus{base: opt.Prometheus, client: opt.Client},
		from:  opt.From,
		to:    opt.To,
		step:  step,
		vars:  vars,
		theme: theme,
		c:     &canvas{},
	}, nil
}

// header writes the dashboard's title, the range and the variables.
func (r *renderer) header(d *Dashboard, width float64) {
	r.c.text(margin, margin+22, d.Title, "class", "dashboard-title", "font-size", "20", "font-weight", "600", "fill", r.theme.Text)
	var names []string
	for _, v := range d.Templating.List {
		if v.Type != "datasource" {
			names = append(names, v.Name)
		}
	}
	sort.Strings(names)
	info := r.from.UTC().Format("2006-01-02 15:04:05") + " to " + r.to.UTC().Format("2006-01-02 15:04:05") + " UTC, step " + promDuration(r.step)
	for _, n := range names {
		info += ", " + n + "=" + r.vars[n]
	}
	r.c.text(margin, margin+42, fit(info, 12, width-2*margin), "font-size", "12", "fill", r.theme.Secondary)
}

// placed is a panel with its grid position in the picture.
type placed struct {
	panel *Panel
	pos   GridPos
}

// layout puts the panels on the grid as Grafana shows them, with
// collapsed rows opened: their panels go below their heading and push
// everything after them down.
func layout(panels []Panel) []placed {
	order := make([]*Panel, len(panels))
	for i := range panels {
		order[i] = &panels[i]
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i].GridPos, order[j].GridPos
		return a.Y < b.Y || a.Y == b.Y && a.X < b.X
	})
	var out []placed
	shift := 0
	for _, p := range order {
		pos := p.GridPos
		pos.Y += shift
		out = append(out, placed{p, pos})
		if p.Type != "row" || !p.Collapsed || len(p.Panels) == 0 {
			continue
		}
		top, bottom := p.Panels[0].GridPos.Y, 0
		for _, n := range p.Panels {
			top = min(top, n.GridPos.Y)
			bottom = max(bottom, n.GridPos.Y+n.GridPos.H)
		}
		for _, n := range layout(p.Panels) {
			n.pos.Y = n.pos.Y - top + pos.Y + pos.H
			out = append(out, n)
		}
		shift += bottom - top
	}
	return out
}

// box is a rectangle in pixels.
type box struct{ x, y, w, h float64 }

func (r *renderer) panelBox(pos GridPos) box {
	return box{
		x: float64(margin + pos.X*unitWidth),
		y: float64(margin + headerH + pos.Y*unitHeight),
		w: float64(pos.W*unitWidth - gap),
		h: float64(pos.H*unitHeight - gap),
	}
}

// panel draws one panel: its frame and title, then its content.
func (r *renderer) panel(ctx context.Context, p placed) {
	b := r.panelBox(p.pos)
	if p.panel.Type == "row" {
		r.row(p.panel, b)
		return
	}
	r.report.Panels++
	r.c.open("g", "class", "panel panel-"+p.panel.Type)
	r.c.rect(b.x, b.y, b.w, b.h, "rx", "2", "fill", r.theme.Panel, "stroke", r.theme.Border)
	r.c.text(b.x+8, b.y+19, fit(p.panel.Title, titleSize, b.w-16), "class", "panel-title", "font-size", num(titleSize), "font-weight", "500", "fill", r.theme.Text)
	content := box{b.x + 8, b.y + 28, b.w - 16, b.h - 36}
	switch p.panel.Type {
	case "timeseries":
		r.timeseries(ctx, p.panel, content)
	case "stat":
		r.stat(ctx, p.panel, content)
	case "table":
		r.table(ctx, p.panel, content)
	case "state-timeline", "status-history":
		r.stateTimeline(ctx, p.panel, content)
	case "heatmap":
		r.heatmap(ctx, p.panel, content)
	default:
		r.report.NotDrawn = append(r.report.NotDrawn, fmt.Sprintf("%q (type %s)", p.panel.Title, p.panel.Type))
		r.centered(content, fmt.Sprintf("(panel type %s not drawn)", p.panel.Type), "not-drawn", r.theme.Secondary)
	}
	r.c.close("g")
}

func (r *renderer) row(p *Panel, b box) {
	r.c.open("g", "class", "row")
	r.c.text(b.x, b.y+19, fit(p.Title, 16, b.w), "class", "row-title", "font-size", "16", "font-weight", "600", "fill", r.theme.Text)
	r.c.line(b.x, b.y+b.h+2, b.x+b.w, b.y+b.h+2, "stroke", r.theme.Border)
	r.c.close("g")
}

// centered writes a message in the middle of a box.
func (r *renderer) centered(b box, msg, class, color string) {
	r.c.text(b.x+b.w/2, b.y+b.h/2+5, fit(msg, 14, b.w), "class", class, "font-size", "14", "text-anchor", "middle", "fill", color)
}

func (r *renderer) noData(b box) { r.centered(b, "No data", "no-data", r.theme.Secondary) }

// failed shows a query error in the panel and reports it.
func (r *renderer) failed(p *Panel, b box, err error) {
	r.report.Problems = append(r.report.Problems, Problem{Panel: p.Title, Err: err})
	r.centered(b, "Error: "+err.Error(), "error", r.theme.Error)
}

// result is the answer to one target of a panel.
type result struct {
	target Target
	series []series
}

// rangeData fetches the series of a panel drawn over time, or draws why
// there are none.
func (r *renderer) rangeData(ctx context.Context, p *Panel, b box) ([]result, bool) {
	results, err := r.fetch(ctx, p, false)
	if err != nil {
		r.failed(p, b, err)
		return nil, false
	}
	if !hasPoints(results) {
		r.noData(b)
		return nil, false
	}
	return results, true
}

// fetch runs the panel's targets: over the range, or at its end for the
// panels that show one value per series.
func (r *renderer) fetch(ctx context.Context, p *Panel, instant bool) ([]result, error) {
	var out []result
	for _, t := range p.Targets {
		if t.Hide || strings.TrimSpace(t.Expr) == "" {
			continue
		}
		expr := Interpolate(t.Expr, r.vars)
		var s []series
		var err error
		if instant {
			s, err = r.prom.query(ctx, expr, r.to)
		} else {
			s, err = r.prom.queryRange(ctx, expr, r.from, r.to, r.step)
		}
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", t.RefID, err)
		}
		sortSeries(s, t.LegendFormat, expr)
		out = append(out, result{target: t, series: s})
	}
	return out, nil
}

// sortSeries orders series by their legend, then by their labels, so
// that answers in any order draw the same picture.
func sortSeries(s []series, format, expr string) {
	sort.SliceStable(s, func(i, j int) bool {
		li, lj := legend(format, s[i].labels, expr), legend(format, s[j].labels, expr)
		if li != lj {
			return li < lj
		}
		return labelString(s[i].labels) < labelString(s[j].labels)
	})
}

func hasPoints(results []result) bool {
	for _, res := range results {
		for _, s := range res.series {
			if len(s.points) > 0 {
				return true
			}
		}
	}
	return false
}
