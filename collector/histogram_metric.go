package collector

import (
	"cmp"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// histogramMetric is a classic histogram of a Desc made by desc, with
// valid label values: what prometheus.NewConstHistogram makes, kept as
// bounds and cumulative counts. The text exposition writes it as it is
// (see WriteText), where a dto.Metric with its label pairs and buckets,
// written through expfmt, was most of a scrape's cost at a thousand vdevs:
// the latency histograms are most of its series.
type histogramMetric struct {
	desc    *prometheus.Desc
	info    *descInfo
	bounds  []float64 // upper bounds, ascending, +Inf left out
	buckets []uint64  // cumulative counts, one per bound
	count   uint64
	sum     float64
	values  []string // in the order of the Desc's labels
	key     string   // for admission and sorting (see descInfo.key)
}

// classicHistogram builds a classic histogram from values read off zpool; see
// constMetric for what it guarantees. bounds and buckets are kept.
func classicHistogram(d *prometheus.Desc, bounds []float64, buckets []uint64, count uint64, sum float64, labels []string) prometheus.Metric {
	labels = labelValues(labels)
	if info := infoOf(d); info != nil && len(labels) == len(info.labels) && len(bounds) == len(buckets) && slices.IsSorted(bounds) {
		return histogramMetric{desc: d, info: info, bounds: bounds, buckets: buckets, count: count, sum: sum, values: labels, key: info.key(labels)}
	}
	m := make(map[float64]uint64, len(bounds))
	for i, b := range bounds {
		if i < len(buckets) {
			m[b] = buckets[i]
		}
	}
	h, err := prometheus.NewConstHistogram(d, count, sum, m, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return keyed{h, seriesKey(labels)}
}

func (h histogramMetric) Desc() *prometheus.Desc { return h.desc }

// Write fills m as prometheus.NewConstHistogram's metric would.
func (h histogramMetric) Write(m *dto.Metric) error {
	n := len(h.values)
	m.Label = make([]*dto.LabelPair, n)
	labelPairs(h.info, h.values, m.Label, make([]dto.LabelPair, n), make([]string, n))
	buckets := make([]dto.Bucket, len(h.bounds))
	m.Histogram = &dto.Histogram{SampleCount: &h.count, SampleSum: &h.sum, Bucket: make([]*dto.Bucket, len(h.bounds))}
	for i := range buckets {
		buckets[i] = dto.Bucket{UpperBound: &h.bounds[i], CumulativeCount: &h.buckets[i]}
		m.Histogram.Bucket[i] = &buckets[i]
	}
	return nil
}

// sortedHistograms returns hists sorted by their keys, as the registry
// sorts series.
func sortedHistograms(hists []histogramMetric) []histogramMetric {
	if slices.IsSortedFunc(hists, compareHistograms) {
		return hists
	}
	return slices.SortedFunc(slices.Values(hists), compareHistograms)
}

func compareHistograms(a, b histogramMetric) int { return strings.Compare(a.key, b.key) }

// compareWritten orders written metrics as the registry does: by label
// values in the order of label names, then by timestamp.
func compareWritten(a, b writtenMetric) int {
	if c := slices.Compare(a.values, b.values); c != 0 {
		return c
	}
	return cmp.Compare(a.m.GetTimestampMs(), b.m.GetTimestampMs())
}
