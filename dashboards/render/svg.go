package render

import (
	"encoding/xml"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// canvas collects the SVG elements of one picture. Coordinates are
// written with one decimal so the same data gives the same bytes.
type canvas struct{ b strings.Builder }

// num writes a coordinate.
func num(f float64) string {
	r := math.Round(f*10) / 10
	if r == 0 {
		r = 0 // not -0
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func escape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// attrs writes name="value" pairs; values are escaped.
func attrs(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			continue
		}
		fmt.Fprintf(&b, ` %s="%s"`, kv[i], escape(kv[i+1]))
	}
	return b.String()
}

func (c *canvas) raw(s string) { c.b.WriteString(s) }

func (c *canvas) open(tag string, kv ...string) {
	c.b.WriteString("<" + tag + attrs(kv...) + ">\n")
}

func (c *canvas) close(tag string) { c.b.WriteString("</" + tag + ">\n") }

func (c *canvas) rect(x, y, w, h float64, kv ...string) {
	c.b.WriteString(`<rect x="` + num(x) + `" y="` + num(y) + `" width="` + num(max(w, 0)) + `" height="` + num(max(h, 0)) + `"` + attrs(kv...) + "/>\n")
}

func (c *canvas) line(x1, y1, x2, y2 float64, kv ...string) {
	c.b.WriteString(`<line x1="` + num(x1) + `" y1="` + num(y1) + `" x2="` + num(x2) + `" y2="` + num(y2) + `"` + attrs(kv...) + "/>\n")
}

func (c *canvas) path(d string, kv ...string) {
	c.b.WriteString(`<path d="` + d + `"` + attrs(kv...) + "/>\n")
}

// text writes s at (x, y), y being the baseline.
func (c *canvas) text(x, y float64, s string, kv ...string) {
	c.b.WriteString(`<text x="` + num(x) + `" y="` + num(y) + `"` + attrs(kv...) + ">" + escape(s) + "</text>\n")
}

// textWidth estimates the width of s in the picture's sans-serif font;
// there are no font metrics to measure it with.
func textWidth(s string, size float64) float64 {
	return float64(len([]rune(s))) * size * 0.56
}

// fit shortens s with an ellipsis until it fits width.
func fit(s string, size, width float64) string {
	if textWidth(s, size) <= width {
		return s
	}
	r := []rune(s)
	n := int(width/(size*0.56)) - 1
	if n <= 0 {
		return ""
	}
	return string(r[:min(n, len(r))]) + "…"
}

// pathBuilder writes the d attribute of a path.
type pathBuilder struct{ b strings.Builder }

func (p *pathBuilder) move(x, y float64) { p.add("M", x, y) }
func (p *pathBuilder) to(x, y float64)   { p.add("L", x, y) }

func (p *pathBuilder) add(cmd string, x, y float64) {
	if p.b.Len() > 0 {
		p.b.WriteByte(' ')
	}
	p.b.WriteString(cmd + num(x) + " " + num(y))
}

func (p *pathBuilder) closePath() { p.b.WriteString(" Z") }

func (p *pathBuilder) String() string { return p.b.String() }

func (p *pathBuilder) empty() bool { return p.b.Len() == 0 }

// contrast picks black or white text for a background colour.
func contrast(background string) string {
	if len(background) != 7 || background[0] != '#' {
		return "#ffffff"
	}
	v, err := strconv.ParseUint(background[1:], 16, 32)
	if err != nil {
		return "#ffffff"
	}
	r, g, b := float64(v>>16&0xff), float64(v>>8&0xff), float64(v&0xff)
	if 0.299*r+0.587*g+0.114*b > 160 {
		return "#111217"
	}
	return "#ffffff"
}
