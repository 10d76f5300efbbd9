package benchreport

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// doc is a report laid out once and rendered as a terminal table or as
// Markdown.
type doc struct {
	title  string
	fields [][2]string
	blocks []block
}

type block struct {
	heading string
	lines   []string
	table   *table
}

type table struct {
	cols []column
	rows [][]string
	// marked rows are highlighted: "*" in the terminal, bold in Markdown.
	marked []bool
	// markNote explains the highlight, below the table.
	markNote string
}

type column struct {
	name  string
	right bool // numbers
	// max is the width the terminal table cuts the column to (keeping the
	// end, which tells long device paths apart); 0 for no limit.
	max int
}

func (t *table) add(marked bool, cells ...string) {
	t.rows = append(t.rows, cells)
	t.marked = append(t.marked, marked)
}

// errWriter keeps the first write error, so renderers can write freely.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// textWidth is the width terminal output aims to fit.
const textWidth = 100

func (d doc) writeText(w io.Writer) error {
	e := &errWriter{w: w}
	e.printf("%s\n%s\n", d.title, strings.Repeat("=", min(textWidth, utf8.RuneCountInString(d.title))))
	keyW := 0
	for _, f := range d.fields {
		keyW = max(keyW, utf8.RuneCountInString(f[0]))
	}
	for _, f := range d.fields {
		e.printf("%s %s\n", pad(f[0]+":", keyW+1, false), f[1])
	}
	for _, b := range d.blocks {
		if b.heading == "" && len(b.lines) == 0 && b.table == nil {
			continue
		}
		e.printf("\n")
		if b.heading != "" {
			e.printf("%s\n%s\n", b.heading, strings.Repeat("-", utf8.RuneCountInString(b.heading)))
		}
		for _, l := range b.lines {
			e.printf("%s\n", l)
		}
		if b.table != nil {
			b.table.writeText(e)
		}
	}
	return e.err
}

func (t *table) writeText(e *errWriter) {
	anyMark := false
	for _, m := range t.marked {
		anyMark = anyMark || m
	}
	// Columns with a max are cut to it, and further (widest first, to no
	// less than minCut) while the table is wider than textWidth.
	limits := make([]int, len(t.cols))
	for i, c := range t.cols {
		limits[i] = c.max
	}
	cell := func(i int, s string) string {
		m := limits[i]
		if m <= 0 || utf8.RuneCountInString(s) <= m {
			return s
		}
		// Keep the indentation and the end of the text.
		r := []rune(s)
		indent := len(s) - len(strings.TrimLeft(s, " "))
		keep := max(1, m-indent-1)
		return s[:indent] + "…" + string(r[len(r)-keep:])
	}
	widths := make([]int, len(t.cols))
	measure := func() int {
		total := 2 * (len(t.cols) - 1)
		if anyMark {
			total += 2
		}
		for i, c := range t.cols {
			widths[i] = utf8.RuneCountInString(c.name)
			for _, row := range t.rows {
				widths[i] = max(widths[i], utf8.RuneCountInString(cell(i, row[i])))
			}
			total += widths[i]
		}
		return total
	}
	const minCut = 12
	for total := measure(); total > textWidth; total = measure() {
		widest := -1
		for i, c := range t.cols {
			if c.max > 0 && widths[i] > minCut && (widest < 0 || widths[i] > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break
		}
		limits[widest] = max(minCut, widths[widest]-(total-textWidth))
	}
	line := func(mark string, cells []string) {
		var b strings.Builder
		if anyMark {
			b.WriteString(mark)
		}
		for i, s := range cells {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(pad(cell(i, s), widths[i], t.cols[i].right))
		}
		e.printf("%s\n", strings.TrimRight(b.String(), " "))
	}
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	line("  ", names)
	for i, row := range t.rows {
		mark := "  "
		if t.marked[i] {
			mark = "* "
		}
		line(mark, row)
	}
	if anyMark && t.markNote != "" {
		e.printf("* %s\n", t.markNote)
	}
}

func pad(s string, w int, right bool) string {
	n := w - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

func (d doc) writeMarkdown(w io.Writer) error {
	e := &errWriter{w: w}
	e.printf("## %s\n\n", mdEscape(d.title))
	if len(d.fields) > 0 {
		e.printf("| | |\n|---|---|\n")
		for _, f := range d.fields {
			e.printf("| %s | %s |\n", mdEscape(f[0]), mdEscape(f[1]))
		}
	}
	for _, b := range d.blocks {
		if b.heading == "" && len(b.lines) == 0 && b.table == nil {
			continue
		}
		e.printf("\n")
		if b.heading != "" {
			e.printf("### %s\n\n", mdEscape(b.heading))
		}
		for _, l := range b.lines {
			e.printf("- %s\n", mdEscape(strings.TrimSpace(l)))
		}
		if len(b.lines) > 0 && b.table != nil {
			e.printf("\n")
		}
		if t := b.table; t != nil {
			var names, aligns []string
			for _, c := range t.cols {
				names = append(names, mdEscape(c.name))
				if c.right {
					aligns = append(aligns, "---:")
				} else {
					aligns = append(aligns, "---")
				}
			}
			e.printf("| %s |\n|%s|\n", strings.Join(names, " | "), strings.Join(aligns, "|"))
			for i, row := range t.rows {
				cells := make([]string, len(row))
				for j, s := range row {
					s = strings.TrimSpace(s)
					if j == 0 && t.cols[0].max > 0 {
						// Keep the tree's indentation visible.
						s = strings.Repeat("&nbsp;&nbsp;", (len(row[0])-len(strings.TrimLeft(row[0], " ")))/2) + mdEscape(s)
					} else {
						s = mdEscape(s)
					}
					if t.marked[i] && s != "" {
						s = "**" + s + "**"
					}
					cells[j] = s
				}
				e.printf("| %s |\n", strings.Join(cells, " | "))
			}
			if t.markNote != "" {
				for _, m := range t.marked {
					if m {
						e.printf("\nBold rows: %s.\n", mdEscape(t.markNote))
						break
					}
				}
			}
		}
	}
	return e.err
}

// mdEscape keeps a cell's text from breaking a Markdown table or turning
// into markup.
func mdEscape(s string) string {
	r := strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`, "`", "\\`", "<", "&lt;", "\n", " ")
	return r.Replace(s)
}

// Number formatting for the text formats. MB is decimal: see Units.

const mega = 1e6

// fmtMB formats bytes (or bytes per second) as decimal megabytes, with
// three significant digits or more, no unit.
func fmtMB(bytes float64) string { return sig(bytes / mega) }

// sig formats a figure with at least three significant digits and no
// exponent: 0.0421, 3.14, 67.9, 209.7, 12345.
func sig(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case a >= 0.001:
		return strconv.FormatFloat(v, 'f', 3, 64)
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

// fmtCount formats operations (integers, but integrated iostat rates
// are not): 8896, 12.5.
func fmtCount(v float64) string {
	if v == math.Trunc(v) || math.Abs(v) >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return sig(v)
}

// fmtPercent formats a ratio as a percentage with one decimal.
func fmtPercent(ratio float64) string {
	return strconv.FormatFloat(ratio*100, 'f', 1, 64) + " %"
}

// FormatSeconds writes a duration in seconds as the reports do: 0.047 s,
// 1.93 s, 62.0 s, 3600 s.
func FormatSeconds(s float64) string { return sig(s) + " s" }

// fmtRatio formats a run's figure over the first run's: 1.42×.
func fmtRatio(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) + "×" }
