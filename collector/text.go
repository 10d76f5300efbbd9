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
	typ := "gauge"
	if f.typ == dto.MetricType_COUNTER {
		typ = "counter"
	}
	b := appendHeader(t.buf[:0], info.name, info.help, typ)
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
		var err error
		if b, err = t.flushFull(b); err != nil {
			return err
		}
	}
	return t.flush(b)
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
// label names need no quoting, line for line as expfmt would.
func (t *textWriter) histograms(fam *dto.MetricFamily) error {
	name := fam.GetName()
	b := appendHeader(t.buf[:0], name, fam.GetHelp(), "histogram")
	var (
		labels []byte
		bounds []float64
		counts []uint64
	)
	for _, m := range fam.Metric {
		labels = labels[:0]
		for _, l := range m.Label {
			labels = appendLabel(labels, l.GetName(), l.GetValue())
		}
		h := m.GetHistogram()
		bounds, counts = bounds[:0], counts[:0]
		for _, bucket := range h.Bucket {
			bounds = append(bounds, bucket.GetUpperBound())
			counts = append(counts, bucket.GetCumulativeCount())
		}
		b = appendHistogram(b, name, labels, bounds, counts, h.GetSampleCount(), h.GetSampleSum())
		var err error
		if b, err = t.flushFull(b); err != nil {
			return err
		}
	}
	return t.flush(b)
}

// histogramMetrics writes a family of histogramMetric alone, sorted,
// whose name and label names need no quoting, as histograms does.
func (t *textWriter) histogramMetrics(f *family) error {
	info := f.info
	b := appendHeader(t.buf[:0], info.name, info.help, "histogram")
	var labels []byte
	for _, h := range sortedHistograms(f.hists) {
		labels = labels[:0]
		for _, j := range info.byName {
			labels = appendLabel(labels, info.labels[j], h.values[j])
		}
		b = appendHistogram(b, info.name, labels, h.bounds, h.buckets, h.count, h.sum)
		var err error
		if b, err = t.flushFull(b); err != nil {
			return err
		}
	}
	return t.flush(b)
}

// appendHeader appends a family's HELP and TYPE lines.
func appendHeader(b []byte, name, help, typ string) []byte {
	b = append(b, "# HELP "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = appendEscaped(b, helpEscaper, help)
	b = append(b, "\n# TYPE "...)
	b = append(b, name...)
	b = append(b, ' ')
	b = append(b, typ...)
	return append(b, '\n')
}

// appendLabel appends a label pair and a comma.
func appendLabel(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, `="`...)
	b = appendEscaped(b, valueEscaper, value)
	return append(b, `",`...)
}

// appendHistogram appends the lines of one classic histogram, as expfmt
// writes them: a bucket for each of bounds, of the cumulative count in
// counts, then +Inf unless bounds had it, the sum and the count, counts
// written as floats. labels are its label pairs, each ended by a comma.
func appendHistogram(b []byte, name string, labels []byte, bounds []float64, counts []uint64, count uint64, sum float64) []byte {
	var le [32]byte
	inf := false
	for i, bound := range bounds {
		inf = inf || math.IsInf(bound, +1)
		b = appendSample(b, name, "_bucket", labels, appendFloat(le[:0], bound), float64(counts[i]))
	}
	if !inf {
		b = appendSample(b, name, "_bucket", labels, append(le[:0], "+Inf"...), float64(count))
	}
	b = appendSample(b, name, "_sum", labels, nil, sum)
	return appendSample(b, name, "_count", labels, nil, float64(count))
}

// appendSample appends the line of one sample of a histogram: its le, if
// not nil, after the label pairs of labels.
func appendSample(b []byte, name, suffix string, labels, le []byte, v float64) []byte {
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
	return append(b, '\n')
}

// flushFull writes b out once it holds 32 KiB, and returns it emptied.
func (t *textWriter) flushFull(b []byte) ([]byte, error) {
	if len(b) < 32<<10 {
		return b, nil
	}
	_, err := t.w.Write(b)
	return b[:0], err
}

// flush writes b out and keeps its array for the next family.
func (t *textWriter) flush(b []byte) error {
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
