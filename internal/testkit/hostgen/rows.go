package hostgen

import (
	"bufio"
	"strings"
)

// rows is a block of tab-separated rows as zpool or a kstat prints them,
// written in the source as the capture reads, with each figure that
// differs between vdevs or pools as a {field}.
type rows [][]string

// parseRows reads a block of rows; blank lines are skipped.
func parseRows(block string) rows {
	var r rows
	for line := range strings.Lines(block) {
		if line = strings.TrimSuffix(line, "\n"); line != "" {
			r = append(r, strings.Split(line, "\t"))
		}
	}
	return r
}

// with returns the rows with more rows after them (those a later release
// added).
func (r rows) with(more rows) rows {
	return append(r[:len(r):len(r)], more...)
}

// write writes the rows, each after prefix and a tab when prefix is not
// empty, with every {field} replaced by its value.
func (r rows) write(w *bufio.Writer, prefix string, fields map[string]string) {
	for _, row := range r {
		if prefix != "" {
			w.WriteString(prefix)
			w.WriteByte('\t')
		}
		for i, f := range row {
			if i > 0 {
				w.WriteByte('\t')
			}
			if name, ok := strings.CutPrefix(f, "{"); ok {
				f = fields[strings.TrimSuffix(name, "}")]
			}
			w.WriteString(f)
		}
		w.WriteByte('\n')
	}
}
