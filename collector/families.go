package collector

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
)

// gathered is what the collectors of one gather sent, by family: written
// out as text by WriteText, or built into metric families once, for the
// protobuf exposition and for readers of values (the status page).
type gathered struct {
	families []*family // sorted by name

	once  sync.Once
	built []*dto.MetricFamily
}

// metricFamilies returns the families built, for a reader that needs
// them as the client library makes them.
func (g *gathered) metricFamilies() []*dto.MetricFamily {
	if g == nil {
		return nil
	}
	g.once.Do(func() {
		if g.built != nil {
			return
		}
		g.built = make([]*dto.MetricFamily, len(g.families))
		for i, f := range g.families {
			g.built[i] = f.build()
		}
	})
	return g.built
}

// gatheredOf holds families built already.
func gatheredOf(fams []*dto.MetricFamily) *gathered { return &gathered{built: fams} }

// gatherFamilies runs collect, which hands each metric to sink from the
// calling goroutine (the scraper does, without a channel that cost two
// goroutine switches a metric), and sorts what it gets as a
// prometheus.Registry would: families by name, each family's metrics by
// their label values. It trusts what admission let through (valid, and no
// series twice) and the descs of desc, which prometheus.NewDesc checked:
// at a thousand vdevs, the registry's checks and its sort through the
// label pairs were a third of a scrape. A metric whose Desc desc did not
// make takes the library's way instead (see addForeign); one whose type or
// help differs from its family's is left out and named in the error.
//
// collect may tell reserve how many metrics of a Desc are coming, before it
// hands them to sink: a family is then made with room for them.
func gatherFamilies(collect func(sink func(prometheus.Metric), reserve func(*prometheus.Desc, int))) (*gathered, error) {
	byName := map[string]*family{}
	room := map[string]int{}
	var (
		errs    prometheus.MultiError
		foreign []prometheus.Metric
	)
	collect(func(m prometheus.Metric) {
		info := infoOfMetric(m)
		if info == nil {
			foreign = append(foreign, m)
			return
		}
		if err := add(byName, room, m, info); err != nil {
			errs = append(errs, err)
		}
	}, func(d *prometheus.Desc, n int) {
		if info := infoOf(d); info != nil {
			room[info.name] += n
		}
	})
	if len(foreign) > 0 {
		errs = append(errs, addForeign(byName, foreign)...)
	}
	g := &gathered{families: make([]*family, 0, len(byName))}
	for _, f := range byName {
		g.families = append(g.families, f)
	}
	slices.SortFunc(g.families, func(a, b *family) int { return strings.Compare(a.info.name, b.info.name) })
	var sorted orders
	for _, f := range g.families {
		if len(f.written) == 0 {
			f.order = sorted.of(f.plain)
		}
	}
	return g, errs.MaybeUnwrap()
}

// orders sorts the plain metrics of families by their keys. Most families
// of a scrape are sent for the same series in the same order (a counter
// per vdev, one per disk), so a family whose keys are those of one sorted
// before takes its order, and a thousand vdevs are sorted a few times, not
// once per family.
type orders struct {
	last []orderedKeys
}

type orderedKeys struct {
	plain []plainMetric
	order []int32
}

func (o *orders) of(plain []plainMetric) []int32 {
	for _, prev := range o.last {
		if sameKeys(prev.plain, plain) {
			return prev.order
		}
	}
	order := make([]int32, len(plain))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(plain[a].key, plain[b].key) })
	o.last = append(o.last, orderedKeys{plain, order})
	if len(o.last) > 8 {
		o.last = o.last[1:]
	}
	return order
}

func sameKeys(a, b []plainMetric) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key {
			return false
		}
	}
	return true
}

// family collects the metrics of one name. When it has plain metrics
// alone, order lists them sorted; build sorts the others in.
type family struct {
	info    *descInfo
	typ     dto.MetricType
	plain   []plainMetric
	order   []int32 // indexes into plain, sorted by key
	hists   []histogramMetric
	written []writtenMetric // metrics other than plainMetric and histogramMetric
}

// sorted returns the family's plain metrics in the order of their keys,
// or as they were sent when the family has other metrics too (build sorts
// them all).
func (f *family) sorted() iter.Seq[*plainMetric] {
	return func(yield func(*plainMetric) bool) {
		for i := range f.plain {
			j := i
			if f.order != nil {
				j = int(f.order[i])
			}
			if !yield(&f.plain[j]) {
				return
			}
		}
	}
}

// writtenMetric is a metric written out, with its label values in the
// order of its label pairs for sorting.
type writtenMetric struct {
	values []string
	m      *dto.Metric
}

// addForeign gathers the metrics whose Desc desc did not make, as a
// collector written against the client library alone makes them
// (prometheus.NewDesc and NewConstMetric, a GaugeVec): a registry, which
// can read such a Desc, builds their families, and each joins the others
// as written metrics. It costs a registry's checks and sort, which desc's
// metrics skip. A family whose name desc's metrics have already is left
// out and named.
func addForeign(byName map[string]*family, metrics []prometheus.Metric) prometheus.MultiError {
	reg := prometheus.NewRegistry()
	reg.MustRegister(resent(metrics))
	fams, err := reg.Gather()
	var errs prometheus.MultiError
	if multi := (prometheus.MultiError{}); errors.As(err, &multi) {
		errs = append(errs, multi...)
	} else if err != nil {
		errs = append(errs, err)
	}
	for _, fam := range fams {
		if _, taken := byName[fam.GetName()]; taken {
			errs = append(errs, fmt.Errorf("metric family %s is sent both with a Desc of desc and with another Desc", fam.GetName()))
			continue
		}
		byName[fam.GetName()] = foreignFamily(fam)
	}
	return errs
}

// resent sends metrics collected already, as an unchecked collector.
type resent []prometheus.Metric

func (resent) Describe(chan<- *prometheus.Desc) {}

func (r resent) Collect(ch chan<- prometheus.Metric) {
	for _, m := range r {
		ch <- m
	}
}

// foreignFamily is a family that a registry built, its metrics written.
func foreignFamily(fam *dto.MetricFamily) *family {
	var labels []string
	legacy := model.LegacyValidation.IsValidMetricName(fam.GetName())
	for i, m := range fam.Metric {
		for _, l := range m.Label {
			if i == 0 {
				labels = append(labels, l.GetName())
			}
			legacy = legacy && model.LegacyValidation.IsValidLabelName(l.GetName())
		}
	}
	info := newDescInfo(fam.GetName(), fam.GetHelp(), labels)
	info.legacy = legacy
	f := &family{info: info, typ: fam.GetType(), written: make([]writtenMetric, len(fam.Metric))}
	for i, m := range fam.Metric {
		values := make([]string, len(m.Label))
		for j, l := range m.Label {
			values[j] = l.GetValue()
		}
		f.written[i] = writtenMetric{values: values, m: m}
	}
	return f
}

// infoOfMetric is the descInfo of m's Desc, nil when desc did not make
// it. Plain and histogram metrics carry theirs, which saves a lookup a
// metric: a thousand vdevs send some 50,000.
func infoOfMetric(m prometheus.Metric) *descInfo {
	switch m := m.(type) {
	case plainMetric:
		return m.info
	case histogramMetric:
		return m.info
	}
	return infoOf(m.Desc())
}

// add puts m, whose Desc's info is info, in its family, made with room
// for the metrics reserved for its name when m is the first.
func add(byName map[string]*family, room map[string]int, m prometheus.Metric, info *descInfo) error {
	var (
		typ     dto.MetricType
		plain   plainMetric
		hist    histogramMetric
		written writtenMetric
	)
	if p, ok := m.(plainMetric); ok {
		plain, typ = p, dto.MetricType_GAUGE
		if p.valueType == prometheus.CounterValue {
			typ = dto.MetricType_COUNTER
		}
	} else if h, ok := m.(histogramMetric); ok {
		hist, typ = h, dto.MetricType_HISTOGRAM
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
		if n := room[info.name]; n > 0 {
			switch {
			case written.m != nil:
				f.written = make([]writtenMetric, 0, n)
			case hist.desc != nil:
				f.hists = make([]histogramMetric, 0, n)
			default:
				f.plain = make([]plainMetric, 0, n)
			}
		}
		byName[info.name] = f
	case f.typ != typ || f.info.help != info.help:
		return fmt.Errorf("metric %s is a %s, or its help differs, in a family of %s", m.Desc(), typ, f.typ)
	}
	switch {
	case written.m != nil:
		f.written = append(f.written, written)
	case hist.desc != nil:
		f.hists = append(f.hists, hist)
	default:
		f.plain = append(f.plain, plain)
	}
	return nil
}

// build makes the family, its metrics sorted by label values in the order
// of label names, as the text and protobuf expositions list them. The
// label pairs and values of its plain metrics are allocated together. It
// leaves f as it is, for readers that share the gather.
func (f *family) build() *dto.MetricFamily {
	name, help, typ := f.info.name, f.info.help, f.typ
	fam := &dto.MetricFamily{Name: &name, Help: &help, Type: &typ}
	all := append(make([]writtenMetric, 0, len(f.written)+len(f.hists)+len(f.plain)), f.written...)
	for _, h := range f.hists {
		m := &dto.Metric{}
		h.Write(m)
		values := make([]string, len(m.Label))
		for i, l := range m.Label {
			values[i] = l.GetValue()
		}
		all = append(all, writtenMetric{values: values, m: m})
	}
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
		i := 0
		for p := range f.sorted() {
			m := &metrics[i]
			from, to := i*labels, (i+1)*labels
			sorted := values[from:to:to]
			m.Label = pointers[from:to:to]
			labelPairs(f.info, p.values, m.Label, pairs[from:to:to], sorted)
			if counters != nil {
				counters[i].Value = &p.value
				m.Counter = &counters[i]
			} else {
				gauges[i].Value = &p.value
				m.Gauge = &gauges[i]
			}
			all = append(all, writtenMetric{values: sorted, m: m})
			i++
		}
	}
	if len(f.written)+len(f.hists) > 0 {
		slices.SortFunc(all, compareWritten)
	}
	fam.Metric = make([]*dto.Metric, len(all))
	for i := range all {
		fam.Metric[i] = all[i].m
	}
	return fam
}
