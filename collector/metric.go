package collector

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
)

// namespace starts the name of every metric the collectors make.
const namespace = "zfs"

// desc describes a metric of the zfs namespace.
func desc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, name), help, labels, nil)
}

// constMetric builds a metric from values read off zpool, kstats or the OS.
// It never panics: a metric that cannot be built is sent as an invalid
// metric, which the scrape drops and counts (see admission).
func constMetric(d *prometheus.Desc, t prometheus.ValueType, v float64, labels []string) prometheus.Metric {
	labels = labelValues(labels)
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return keyed{m, seriesKey(labels)}
}

// keyed is a metric built here, valid, that carries its label values, so
// that admission tells a duplicate without writing the metric a second time
// (the registry writes it once more anyway).
type keyed struct {
	prometheus.Metric
	key string
}

// seriesKey joins label values with a byte that no valid one holds.
func seriesKey(values []string) string { return strings.Join(values, "\xff") }

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
