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
		} else if f := ours[j]; len(f.written) == 0 && len(f.hists) == 0 && f.info.legacy {
			err = t.family(f)
			j++
		} else if len(f.written) == 0 && len(f.plain) == 0 && f.info.legacy {
			err = t.histogramMetrics(f)
			j++
		} else if fam := f.build(); f.info.legacy && classicHistograms(fam) {
			err = t.histograms(fam)
			j++
		} else {
			err = enc.Encode(fam)
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

// classicHistograms reports whether fam holds classic histograms alone,
// without the native buckets, float counts, exemplars or timestamps that
// only expfmt writes: the latency histograms, a third of a scrape's series
// at a thousand vdevs, which expfmt wrote at four times the cost of
// histograms below.
func classicHistograms(fam *dto.MetricFamily) bool {
	if fam.GetType() != dto.MetricType_HISTOGRAM {
		return false
	}
	for _, m := range fam.Metric {
		h := m.GetHistogram()
		if h == nil || m.TimestampMs != nil || h.Schema != nil || h.SampleCountFloat != nil || len(h.Exemplars) > 0 {
			return false
		}
		for _, b := range h.Bucket {
			if b.CumulativeCountFloat != nil || b.Exemplar != nil {
				return false
			}
		}
	}
	return true
}

// histograms writes a family of classic histograms, sorted, whose name and
// label names need no quoting, line for line as expfmt would: each bucket,
// the +Inf one if missing, the sum and the count, counts written as
// floats.
func (t *textWriter) histograms(fam *dto.MetricFamily) error {
	name := fam.GetName()
	b := append(t.buf[:0], "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, helpEscaper, fam.GetHelp())
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, " histogram\n"...)
	var labels []byte // the metric's label pairs, each ended by a comma
	sample := func(suffix string, le []byte, v float64) {
		b = append(b, name...)
		b = append(b, suffix...)
		if len(labels) > 0 || le != nil {
			b = append(b, '{')
			b = append(b, labels...)
			if le != nil {
				b = append(b, `le="`...)
				b = append(b, le...)
				b = append(b, `",`...)
			}
			b[len(b)-1] = '}'
		}
		b = append(b, ' ')
		b = appendFloat(b, v)
		b = append(b, '\n')
	}
	var le []byte
	for _, m := range fam.Metric {
		labels = labels[:0]
		for _, l := range m.Label {
			labels = append(labels, l.GetName()...)
			labels = append(labels, `="`...)
			labels = appendEscaped(labels, valueEscaper, l.GetValue())
			labels = append(labels, `",`...)
		}
		h := m.GetHistogram()
		inf := false
		for _, bucket := range h.Bucket {
			bound := bucket.GetUpperBound()
			inf = inf || math.IsInf(bound, +1)
			le = appendFloat(le[:0], bound)
			sample("_bucket", le, float64(bucket.GetCumulativeCount()))
		}
		if !inf {
			sample("_bucket", append(le[:0], "+Inf"...), float64(h.GetSampleCount()))
		}
		sample("_sum", nil, h.GetSampleSum())
		sample("_count", nil, float64(h.GetSampleCount()))
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

// histogramMetrics writes a family of histogramMetric alone, sorted,
// whose name and label names need no quoting, as histograms does.
func (t *textWriter) histogramMetrics(f *family) error {
	info := f.info
	b := append(t.buf[:0], "# HELP "...)
	b = append(b, info.name...)
	b = append(b, ' ')
	b = appendEscaped(b, helpEscaper, info.help)
	b = append(b, "\n# TYPE "...)
	b = append(b, info.name...)
	b = append(b, " histogram\n"...)
	var labels, le []byte // the series' label pairs, each ended by a comma
	sample := func(suffix string, le []byte, v float64) {
		b = append(b, info.name...)
		b = append(b, suffix...)
		if len(labels) > 0 || le != nil {
			b = append(b, '{')
			b = append(b, labels...)
			if le != nil {
				b = append(b, `le="`...)
				b = append(b, le...)
				b = append(b, `",`...)
			}
			b[len(b)-1] = '}'
		}
		b = append(b, ' ')
		b = appendFloat(b, v)
		b = append(b, '\n')
	}
	for _, h := range sortedHistograms(f.hists) {
		labels = labels[:0]
		for _, j := range info.byName {
			labels = append(labels, info.labels[j]...)
			labels = append(labels, `="`...)
			labels = appendEscaped(labels, valueEscaper, h.values[j])
			labels = append(labels, `",`...)
		}
		for i, bound := range h.bounds {
			le = appendFloat(le[:0], bound)
			sample("_bucket", le, float64(h.buckets[i]))
		}
		sample("_bucket", append(le[:0], "+Inf"...), float64(h.count))
		sample("_sum", nil, h.sum)
		sample("_count", nil, float64(h.count))
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
