package collector

import (
	"bufio"
	"io"
	"math"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// WriteText writes the families of base, sorted by name as a registry
// gathers them, and those of the reading, merged by name, in format: a
// text format that expfmt.Negotiate chose. It writes plain gauges and
// counters itself, line for line as expfmt would: building metric
// families only to write them out was, with expfmt's writing, a third of
// a scrape at 1,000 leaves. Other families go through expfmt. When base
// and the reading share a name, both are merged as Merge does.
func WriteText(w io.Writer, format expfmt.Format, base []*dto.MetricFamily, r Reading) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := expfmt.NewEncoder(bw, format)
	var ours []*family
	if r.gathered != nil {
		ours = r.gathered.families
	}
	if sharesName(base, ours) {
		fams, err := Merge(gatherer(base), gatherer(r.Families())).Gather()
		if err != nil {
			return err
		}
		for _, f := range fams {
			if err := enc.Encode(f); err != nil {
				return err
			}
		}
		return bw.Flush()
	}
	t := textWriter{w: bw}
	for i, j := 0, 0; i < len(base) || j < len(ours); {
		var err error
		if j == len(ours) || (i < len(base) && base[i].GetName() < ours[j].info.name) {
			err = enc.Encode(base[i])
			i++
		} else if f := ours[j]; len(f.written) == 0 && f.info.legacy {
			err = t.family(f)
			j++
		} else {
			err = enc.Encode(f.build())
			j++
		}
		if err != nil {
			return err
		}
	}
	return bw.Flush()
}

func sharesName(base []*dto.MetricFamily, ours []*family) bool {
	names := make(map[string]bool, len(base))
	for _, f := range base {
		names[f.GetName()] = true
	}
	for _, f := range ours {
		if names[f.info.name] {
			return true
		}
	}
	return false
}

// textWriter writes plain families a line at a time through buf.
type textWriter struct {
	w   *bufio.Writer
	buf []byte
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	valueEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

// family writes a family of plain metrics, sorted, whose name and label
// names need no quoting.
func (t *textWriter) family(f *family) error {
	info := f.info
	b := append(t.buf[:0], "# HELP "...)
	b = append(b, info.name...)
	b = append(b, ' ')
	b = appendEscaped(b, helpEscaper, info.help)
	b = append(b, "\n# TYPE "...)
	b = append(b, info.name...)
	if f.typ == dto.MetricType_COUNTER {
		b = append(b, " counter\n"...)
	} else {
		b = append(b, " gauge\n"...)
	}
	for p := range f.sorted() {
		b = append(b, info.name...)
		for k, j := range info.byName {
			if k == 0 {
				b = append(b, '{')
			} else {
				b = append(b, ',')
			}
			b = append(b, info.labels[j]...)
			b = append(b, `="`...)
			b = appendEscaped(b, valueEscaper, p.values[j])
			b = append(b, '"')
		}
		if len(info.byName) > 0 {
			b = append(b, '}')
		}
		b = append(b, ' ')
		b = appendFloat(b, p.value)
		b = append(b, '\n')
		if len(b) >= 32<<10 {
			if _, err := t.w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	t.buf = b
	_, err := t.w.Write(b)
	return err
}

// appendEscaped appends s, escaped by r when it holds a byte to escape.
func appendEscaped(b []byte, r *strings.Replacer, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '\n' || c == '"' {
			return append(b, r.Replace(s)...)
		}
	}
	return append(b, s...)
}

// appendFloat appends v as expfmt writes a sample's value.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case v == 1:
		return append(b, '1')
	case v == 0:
		return append(b, '0')
	case v == -1:
		return append(b, "-1"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
