package collector

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gatherFamilies runs collect and builds the metric families of what it
// sends, as a prometheus.Registry would: families sorted by name, each
// family's metrics by their label values. It trusts what admission let
// through (valid, and no series twice) and the descs of desc, which
// prometheus.NewDesc checked: at a thousand vdevs, the registry's checks
// and its sort through the label pairs were a third of a scrape. A metric
// whose Desc desc did not make, or whose type differs from its family's,
// is left out and named in the error.
func gatherFamilies(collect func(chan<- prometheus.Metric)) ([]*dto.MetricFamily, error) {
	ch := make(chan prometheus.Metric, 256)
	go func() {
		defer close(ch)
		collect(ch)
	}()
	byName := map[string]*family{}
	var errs prometheus.MultiError
	for m := range ch {
		if err := add(byName, m); err != nil {
			errs = append(errs, err)
		}
	}
	fams := make([]*dto.MetricFamily, 0, len(byName))
	for _, f := range byName {
		fams = append(fams, f.build())
	}
	slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return fams, errs.MaybeUnwrap()
}

// family collects the metrics of one name until it is built.
type family struct {
	info    *descInfo
	typ     dto.MetricType
	plain   []plainMetric
	written []writtenMetric // metrics other than plainMetric (histograms)
}

// writtenMetric is a metric written out, with its label values in the
// order of its label pairs for sorting.
type writtenMetric struct {
	values []string
	m      *dto.Metric
}

func add(byName map[string]*family, m prometheus.Metric) error {
	info := infoOf(m.Desc())
	if info == nil {
		return fmt.Errorf("metric %s has no desc made by desc", m.Desc())
	}
	var (
		typ     dto.MetricType
		plain   plainMetric
		written writtenMetric
	)
	if p, ok := m.(plainMetric); ok {
		plain, typ = p, dto.MetricType_GAUGE
		if p.valueType == prometheus.CounterValue {
			typ = dto.MetricType_COUNTER
		}
	} else {
		pb := &dto.Metric{}
		if err := m.Write(pb); err != nil {
			return fmt.Errorf("writing %s: %w", m.Desc(), err)
		}
		switch {
		case pb.Histogram != nil:
			typ = dto.MetricType_HISTOGRAM
		case pb.Counter != nil:
			typ = dto.MetricType_COUNTER
		case pb.Gauge != nil:
			typ = dto.MetricType_GAUGE
		case pb.Summary != nil:
			typ = dto.MetricType_SUMMARY
		default:
			typ = dto.MetricType_UNTYPED
		}
		written = writtenMetric{m: pb, values: make([]string, len(pb.Label))}
		for i, l := range pb.Label {
			written.values[i] = l.GetValue()
		}
	}
	f := byName[info.name]
	switch {
	case f == nil:
		f = &family{info: info, typ: typ}
		byName[info.name] = f
	case f.typ != typ || f.info.help != info.help:
		return fmt.Errorf("metric %s is a %s, or its help differs, in a family of %s", m.Desc(), typ, f.typ)
	}
	if written.m != nil {
		f.written = append(f.written, written)
	} else {
		f.plain = append(f.plain, plain)
	}
	return nil
}

// build makes the family, its metrics sorted by label values in the order
// of label names, as the text and protobuf expositions list them. The
// label pairs and values of its plain metrics are allocated together.
func (f *family) build() *dto.MetricFamily {
	name, help, typ := f.info.name, f.info.help, f.typ
	fam := &dto.MetricFamily{Name: &name, Help: &help, Type: &typ}
	all := append(make([]writtenMetric, 0, len(f.written)+len(f.plain)), f.written...)
	if len(f.plain) > 0 {
		labels := len(f.info.labels)
		metrics := make([]dto.Metric, len(f.plain))
		pairs := make([]dto.LabelPair, len(f.plain)*labels)
		pointers := make([]*dto.LabelPair, len(f.plain)*labels)
		values := make([]string, len(f.plain)*labels)
		var gauges []dto.Gauge
		var counters []dto.Counter
		if typ == dto.MetricType_COUNTER {
			counters = make([]dto.Counter, len(f.plain))
		} else {
			gauges = make([]dto.Gauge, len(f.plain))
		}
		for i := range f.plain {
			p, m := &f.plain[i], &metrics[i]
			from, to := i*labels, (i+1)*labels
			sorted := values[from:to:to]
			m.Label = pointers[from:to:to]
			p.labelPairs(m.Label, pairs[from:to:to], sorted)
			if counters != nil {
				counters[i].Value = &p.value
				m.Counter = &counters[i]
			} else {
				gauges[i].Value = &p.value
				m.Gauge = &gauges[i]
			}
			all = append(all, writtenMetric{values: sorted, m: m})
		}
	}
	slices.SortFunc(all, func(a, b writtenMetric) int {
		if c := slices.Compare(a.values, b.values); c != 0 {
			return c
		}
		return cmp.Compare(a.m.GetTimestampMs(), b.m.GetTimestampMs())
	})
	fam.Metric = make([]*dto.Metric, len(all))
	for i := range all {
		fam.Metric[i] = all[i].m
	}
	return fam
}
