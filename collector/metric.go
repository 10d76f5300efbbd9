package collector

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"
)

// namespace starts the name of every metric the collectors make.
const namespace = "zfs"

// desc describes a metric of the zfs namespace, and keeps what the
// gather needs to build its family without a registry.
func desc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	fqName := prometheus.BuildFQName(namespace, subsystem, name)
	d := prometheus.NewDesc(fqName, help, labels, nil)
	descInfos.Store(d, newDescInfo(fqName, help, labels))
	return d
}

// descInfos holds the descInfo of every Desc that desc made.
var descInfos sync.Map // *prometheus.Desc → *descInfo

// descInfo is what a prometheus.Desc keeps to itself and the gather needs
// to build a family without a registry (see gatherFamilies).
type descInfo struct {
	name, help string
	labels     []string // in the order of the Desc's label values
	byName     []int    // indexes into labels, in the order of label names
	inOrder    bool     // labels are in the order of their names
	// legacy says the name and label names need no quoting in any text
	// exposition (see WriteText).
	legacy bool
}

func newDescInfo(name, help string, labels []string) *descInfo {
	byName := make([]int, len(labels))
	for i := range byName {
		byName[i] = i
	}
	slices.SortFunc(byName, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	legacy := model.LegacyValidation.IsValidMetricName(name)
	for _, l := range labels {
		legacy = legacy && model.LegacyValidation.IsValidLabelName(l)
	}
	return &descInfo{name: name, help: help, labels: labels, byName: byName,
		inOrder: slices.IsSorted(byName), legacy: legacy}
}

// key is the series key of label values given in the order of the
// Desc's labels: joined in the order of label names, so that keys sort as
// the registry sorts series.
func (info *descInfo) key(values []string) string {
	if info.inOrder {
		return seriesKey(values)
	}
	n := len(values)
	for _, v := range values {
		n += len(v)
	}
	var b strings.Builder
	b.Grow(n)
	for k, j := range info.byName {
		if k > 0 {
			b.WriteByte(0)
		}
		b.WriteString(values[j])
	}
	return b.String()
}

func infoOf(d *prometheus.Desc) *descInfo {
	if info, ok := descInfos.Load(d); ok {
		return info.(*descInfo)
	}
	return nil
}

// constMetric builds a metric from values read off zpool, kstats or the OS.
// It never panics: a metric that cannot be built is sent as an invalid
// metric, which the scrape drops and counts (see admission). The metric
// keeps labels: the caller must not change them afterwards.
func constMetric(d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) prometheus.Metric {
	labels = labelValues(labels)
	plain := t == prometheus.GaugeValue || t == prometheus.CounterValue
	if info := infoOf(d); plain && info != nil && len(labels) == len(info.labels) {
		return plainMetric{desc: d, info: info, valueType: t, value: v, values: labels, key: info.key(labels)}
	}
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return keyed{m, seriesKey(labels)}
}

// plainMetric is a gauge or counter of a Desc made by desc, with valid label
// values: what prometheus.NewConstMetric makes, without building the label
// pairs that gatherFamilies builds in bulk.
type plainMetric struct {
	desc      *prometheus.Desc
	info      *descInfo
	valueType prometheus.ValueType
	value     float64
	values    []string
	key       string // for admission and sorting (see descInfo.key)
}

func (s plainMetric) Desc() *prometheus.Desc { return s.desc }

func (s plainMetric) Write(m *dto.Metric) error {
	n := len(s.values)
	m.Label = make([]*dto.LabelPair, n)
	labelPairs(s.info, s.values, m.Label, make([]dto.LabelPair, n), make([]string, n))
	if s.valueType == prometheus.CounterValue {
		m.Counter = &dto.Counter{Value: &s.value}
	} else {
		m.Gauge = &dto.Gauge{Value: &s.value}
	}
	return nil
}

// labelPairs fills pointers with the label pairs of values, given in the
// order of info's labels, in the order of label names, as a dto.Metric
// holds them, made in pairs with their values in sorted: all as long as
// the metric has labels.
func labelPairs(info *descInfo, values []string, pointers []*dto.LabelPair, pairs []dto.LabelPair, sorted []string) {
	for k, j := range info.byName {
		sorted[k] = values[j]
		pairs[k] = dto.LabelPair{Name: &info.labels[j], Value: &sorted[k]}
		pointers[k] = &pairs[k]
	}
}

// keyed is a metric built here, valid, that carries its label values, so
// that admission tells a duplicate without writing the metric: a histogram,
// or a gauge or counter of a Desc that desc did not make.
type keyed struct {
	prometheus.Metric
	key string
}

// seriesKey joins label values with NUL, which labelValue replaces: keys
// then sort as the lists of values do.
func seriesKey(values []string) string { return strings.Join(values, "\x00") }

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- constMetric(d, prometheus.GaugeValue, v, labels)
}

func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- constMetric(d, prometheus.CounterValue, v, labels)
}

func optGauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v *float64, labels ...string) {
	if v != nil {
		gauge(ch, d, *v, labels...)
	}
}

func optCounter(ch chan<- prometheus.Metric, d *prometheus.Desc, v *float64, labels ...string) {
	if v != nil {
		counter(ch, d, *v, labels...)
	}
}

// stateSet sends one series per known state, and one more for a state
// outside the list, so that nothing zpool prints is lost.
func stateSet(ch chan<- prometheus.Metric, d *prometheus.Desc, known []string, current string, labels ...string) {
	for _, state := range known {
		v := 0.0
		if state == current {
			v = 1
		}
		gauge(ch, d, v, append(labels[:len(labels):len(labels)], state)...)
	}
	if current != "" && !slices.Contains(known, current) {
		gauge(ch, d, 1, append(labels[:len(labels):len(labels)], current)...)
	}
}

// labelValues returns values as valid label values, copying the slice only
// when one of them changes.
func labelValues(values []string) []string {
	for i, v := range values {
		if clean := labelValue(v); clean != v {
			out := slices.Clone(values)
			out[i] = clean
			for j := i + 1; j < len(out); j++ {
				out[j] = labelValue(out[j])
			}
			return out
		}
	}
	return values
}

// labelValue replaces every byte that is not UTF-8, and every control
// character (NUL included), with U+FFFD. encoding/json does the same to bad
// bytes in zpool's JSON, so a name reads alike whichever output it came
// from, and nothing a label carries can break a line of the exposition or
// of a log.
func labelValue(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return replaceInvalid(s)
		}
	}
	return s
}

func replaceInvalid(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || unicode.IsControl(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
		i += size
	}
	return b.String()
}
