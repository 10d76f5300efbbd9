package render

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// tableRow is one row of a table: field name to cell.
type tableRow map[string]value

// tableData is the merged answer of a table panel's queries.
type tableData struct {
	fields []string
	rows   []tableRow
}

// table draws the instant answers of the panel's queries as Grafana's
// table does with table-format queries: one row per series, a column per
// label and a "Value #A" column per query, rows of several queries merged
// where their shared labels agree, then organized, sorted and coloured.
func (r *renderer) table(ctx context.Context, p *Panel, b box) {
	results, err := r.fetch(ctx, p, true)
	if err != nil {
		r.failed(p, b, err)
		return
	}
	data := mergeResults(results)
	if len(data.rows) == 0 {
		r.noData(b)
		return
	}
	cols := columns(p, data)
	sortRows(p, data.rows, cols)
	r.drawTable(p, b, data.rows, cols)
}

// valueField names the value column of a query: "Value" when the panel
// has one query, "Value #A" and so on when it has several.
func valueField(results []result, ref string) string {
	if len(results) == 1 {
		return "Value"
	}
	return "Value #" + ref
}

func mergeResults(results []result) tableData {
	var d tableData
	seen := map[string]bool{}
	addField := func(f string) {
		if !seen[f] {
			seen[f] = true
			d.fields = append(d.fields, f)
		}
	}
	for _, res := range results {
		vf := valueField(results, res.target.RefID)
		for _, s := range res.series {
			if len(s.points) == 0 {
				continue
			}
			pt := s.points[len(s.points)-1]
			row := tableRow{"Time": numValue(float64(pt.ms)), vf: numValue(pt.value)}
			addField("Time")
			for _, k := range sortedKeys(s.labels) {
				row[k] = textValue(s.labels[k])
				addField(k)
			}
			addField(vf)
			d.rows = mergeRow(d.rows, row, vf)
		}
	}
	return d
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mergeRow adds row's value to the first row that has all of row's other
// fields with the same values and no value of its own yet, or appends it.
func mergeRow(rows []tableRow, row tableRow, vf string) []tableRow {
	for _, ex := range rows {
		if _, taken := ex[vf]; taken {
			continue
		}
		match := true
		for k, v := range row {
			if k == vf {
				continue
			}
			if ev, ok := ex[k]; !ok || ev.key() != v.key() {
				match = false
				break
			}
		}
		if match {
			ex[vf] = row[vf]
			return rows
		}
	}
	return append(rows, row)
}

// column is a shown column: its field and heading.
type column struct {
	field, title string
	style        fieldStyle
	numeric      bool
}

// columns applies the panel's organize transformation; without one the
// table shows the labels that differ between rows and the values.
func columns(p *Panel, d tableData) []column {
	var org *Transformation
	for i := range p.Transformations {
		if p.Transformations[i].ID == "organize" {
			org = &p.Transformations[i]
		}
	}
	var fields []string
	if org != nil {
		for _, f := range d.fields {
			if !org.Options.ExcludeByName[f] {
				fields = append(fields, f)
			}
		}
		sort.SliceStable(fields, func(i, j int) bool {
			return fieldIndex(org, fields[i]) < fieldIndex(org, fields[j])
		})
	} else {
		for _, f := range d.fields {
			if f != "Time" && f != "__name__" && (isValueField(f) || len(d.rows) == 1 || differs(d.rows, f)) {
				fields = append(fields, f)
			}
		}
	}
	cols := make([]column, len(fields))
	for i, f := range fields {
		c := column{field: f, title: f, style: p.style(f), numeric: true}
		if org != nil && org.Options.RenameByName[f] != "" {
			c.title = org.Options.RenameByName[f]
		}
		if c.style.displayName != "" {
			c.title = c.style.displayName
		}
		if f == "Time" && c.style.unit == p.FieldConfig.Defaults.Unit {
			c.style.unit = "dateTimeAsIso"
		}
		for _, row := range d.rows {
			if v, ok := row[f]; ok && !v.isNum {
				c.numeric = false
			}
		}
		cols[i] = c
	}
	return cols
}

// fieldIndex is a field's place in the organize transformation; fields
// it does not place keep their order after the placed ones.
func fieldIndex(org *Transformation, f string) int {
	if i, ok := org.Options.IndexByName[f]; ok {
		return i
	}
	return math.MaxInt32
}

func isValueField(f string) bool { return f == "Value" || len(f) > 7 && f[:7] == "Value #" }

func differs(rows []tableRow, f string) bool {
	first, ok := rows[0][f]
	for _, row := range rows[1:] {
		v, ok2 := row[f]
		if ok != ok2 || v.key() != first.key() {
			return true
		}
	}
	return false
}

// sortRows orders rows by every shown column, then by the panel's sort
// column, so the order never depends on the order of the answers.
func sortRows(p *Panel, rows []tableRow, cols []column) {
	sort.SliceStable(rows, func(i, j int) bool {
		for _, c := range cols {
			if cmp := compareCells(rows[i][c.field], rows[j][c.field]); cmp != 0 {
				return cmp < 0
			}
		}
		return false
	})
	for _, s := range p.Options.SortBy {
		for _, c := range cols {
			if c.title != s.DisplayName {
				continue
			}
			sort.SliceStable(rows, func(i, j int) bool {
				cmp := compareCells(rows[i][c.field], rows[j][c.field])
				if s.Desc {
					return cmp > 0
				}
				return cmp < 0
			})
			return
		}
	}
}

// compareCells orders numbers by value, texts alphabetically, and empty
// cells last.
func compareCells(a, b value) int {
	switch {
	case !a.present || !b.present:
		if a.present == b.present {
			return 0
		}
		if a.present {
			return -1
		}
		return 1
	case a.isNum && b.isNum:
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
		return 0
	}
	switch {
	case a.key() < b.key():
		return -1
	case a.key() > b.key():
		return 1
	}
	return 0
}

const (
	tableFont = 11.0
	tableRowH = 20.0
)

// drawTable writes the header and as many rows as fit.
func (r *renderer) drawTable(p *Panel, b box, rows []tableRow, cols []column) {
	texts := make([][]string, len(rows))
	colors := make([][]string, len(rows))
	widths := make([]float64, len(cols))
	for j, c := range cols {
		widths[j] = textWidth(c.title, tableFont) + 14
	}
	for i, row := range rows {
		texts[i] = make([]string, len(cols))
		colors[i] = make([]string, len(cols))
		for j, c := range cols {
			texts[i][j], colors[i][j] = c.style.display(row[c.field])
			widths[j] = math.Max(widths[j], textWidth(texts[i][j], tableFont)+14)
		}
	}
	widths = fitWidths(widths, b.w)

	maxRows := int((b.h - tableRowH) / tableRowH)
	shown := len(rows)
	if shown > maxRows {
		shown = max(maxRows-1, 0)
	}
	x := b.x
	for j, c := range cols {
		r.cellText(x, b.y+14, widths[j], c.title, c.numeric, "font-weight", "600", "fill", r.theme.Secondary)
		x += widths[j]
	}
	r.c.line(b.x, b.y+tableRowH, b.x+b.w, b.y+tableRowH, "stroke", r.theme.Border)
	for i := 0; i < shown; i++ {
		y := b.y + tableRowH*float64(i+1)
		r.c.open("g", "class", "table-row")
		x := b.x
		for j, c := range cols {
			r.cell(x, y, widths[j], texts[i][j], colors[i][j], c)
			x += widths[j]
		}
		r.c.close("g")
	}
	if shown < len(rows) {
		y := b.y + tableRowH*float64(shown+1)
		r.c.text(b.x+6, y+14, fmt.Sprintf("+%d more rows", len(rows)-shown), "class", "table-more", "font-size", num(tableFont), "fill", r.theme.Secondary)
	}
}

// cell draws one cell, with its colour as background or text colour as
// the column's cell options say.
func (r *renderer) cell(x, y, w float64, text, color string, c column) {
	fill := r.theme.Text
	if color != "" {
		switch c.style.cell {
		case "color-background", "color-background-solid":
			bg := r.theme.color(color)
			r.c.rect(x+1, y+1, w-2, tableRowH-2, "fill", bg)
			fill = contrast(bg)
		case "color-text":
			fill = r.theme.color(color)
		}
	}
	r.cellText(x, y+14, w, text, c.numeric, "fill", fill)
}

func (r *renderer) cellText(x, baseline, w float64, text string, right bool, kv ...string) {
	text = fit(text, tableFont, w-12)
	kv = append([]string{"font-size", num(tableFont)}, kv...)
	if right {
		r.c.text(x+w-6, baseline, text, append(kv, "text-anchor", "end")...)
		return
	}
	r.c.text(x+6, baseline, text, kv...)
}

// fitWidths makes natural column widths fill width. Extra room is shared
// in proportion; missing room is taken from the widest columns first,
// so that short columns (a state, a count) stay readable and long ones
// (paths) are cut.
func fitWidths(natural []float64, width float64) []float64 {
	total := 0.0
	for _, w := range natural {
		total += w
	}
	out := make([]float64, len(natural))
	if total <= width {
		for i, w := range natural {
			out[i] = w * width / total
		}
		return out
	}
	sorted := append([]float64(nil), natural...)
	sort.Float64s(sorted)
	// The cap is the width no column may pass: every column below it
	// keeps its width and the others share what is left equally.
	limit, left := 0.0, width
	for i, w := range sorted {
		share := left / float64(len(sorted)-i)
		if w > share {
			limit = share
			break
		}
		left -= w
		limit = w
	}
	for i, w := range natural {
		out[i] = math.Min(w, limit)
	}
	return out
}
