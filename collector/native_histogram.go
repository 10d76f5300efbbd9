package collector

import (
	"fmt"
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// sizeSchema is the native histogram schema of the request sizes: schema 0
// has a bucket per power of two, as zpool iostat -r does.
const sizeSchema = 0

// sizeNativeIndex maps the row of zpool iostat -r whose printed bound is
// bottom (512<<i bytes) to its schema-0 native bucket. zpool's row holds
// the sizes from bottom up to 2*bottom, excluded; schema 0's bucket k holds
// (2^(k-1), 2^k]. The row goes to the bucket whose upper bound is 2*bottom,
// one more than the row's classic le (2*bottom-1), so that both say "up to
// 2*bottom" and histogram_quantile picks the same bucket from either.
//
// A request of exactly 4096 bytes: zpool counts it in its 4K row, sizes
// 4096 to 8191; the classic histogram in le="8191" (and not in le="4095"),
// the native one in bucket 13, (4096, 8192]. Schema 0 alone would put 4096
// in bucket 12, (2048, 4096], but zpool has already merged it with the
// sizes up to 8191, and bucket 13 is the one that holds them (ZFS I/O sizes
// are multiples of 512: 4096 to 7680). A row whose bound is not a power of
// two has no such bucket: ok is false.
func sizeNativeIndex(bottom float64) (index int, ok bool) {
	frac, exp := math.Frexp(bottom) // bottom = frac * 2^exp, frac in [0.5, 1)
	if frac != 0.5 {
		return 0, false
	}
	// bottom = 2^(exp-1): the bucket up to 2*bottom = 2^exp.
	return exp, true
}

// withNativeSizes adds to the classic request-size histogram of column col
// of t, as constHistogram made it, the same counts as native schema-0
// buckets (every row: the native histogram is one series whatever its
// resolution). The metric then carries both: the text exposition writes
// the classic buckets (and Prometheus can store them as NHCB), the protobuf
// one both, of which Prometheus with scrape_native_histograms keeps the
// native ones. zpool's last row counts everything from 16 MiB up: its
// native bucket is (16 MiB, 32 MiB], which holds every read and write (ZFS
// blocks are at most 16 MiB) but not a larger TRIM, as the classic
// histogram's quantiles stop at its last finite le.
func withNativeSizes(classic prometheus.Metric, t zpool.Histograms, col int, labels []string) prometheus.Metric {
	k, ok := classic.(keyed)
	if !ok { // invalid already
		return classic
	}
	buckets := make(map[int]int64, len(t.Counts))
	var count uint64
	for i, row := range t.Counts {
		index, ok := sizeNativeIndex(t.Bounds[i])
		if !ok {
			return prometheus.NewInvalidMetric(vdevRequestSizeDesc, fmt.Errorf("zpool iostat -r: bound %v is not a power of two", t.Bounds[i]))
		}
		if n := row[col]; n > 0 {
			buckets[index] += int64(n)
			count += n
		}
	}
	// NaN: the sum comes from the classic histogram (see bothHistograms).
	native, err := prometheus.NewConstNativeHistogram(vdevRequestSizeDesc, count, math.NaN(), buckets, nil, 0, sizeSchema, 0, time.Time{}, labelValues(labels)...)
	if err != nil {
		return prometheus.NewInvalidMetric(vdevRequestSizeDesc, err)
	}
	return keyed{bothHistograms{classic: k.Metric, native: native}, k.key}
}

// bothHistograms is one histogram with classic and native buckets, of the
// same counts: client_golang makes const histograms of either kind only.
type bothHistograms struct {
	classic, native prometheus.Metric
}

func (b bothHistograms) Desc() *prometheus.Desc { return b.classic.Desc() }

// Write writes the classic histogram's count, sum and buckets and the
// native one's schema, zero bucket and spans. It leaves out the created
// timestamp NewConstNativeHistogram sets (the zero time: zpool's counts
// run since the pool's import, a time zpool does not print), which
// Prometheus would take for the start of the series.
func (b bothHistograms) Write(out *dto.Metric) error {
	var classic, native dto.Metric
	if err := b.classic.Write(&classic); err != nil {
		return err
	}
	if err := b.native.Write(&native); err != nil {
		return err
	}
	c, n := classic.GetHistogram(), native.GetHistogram()
	out.Label = classic.Label
	out.Histogram = &dto.Histogram{
		SampleCount:   c.SampleCount,
		SampleSum:     c.SampleSum,
		Bucket:        c.Bucket,
		Schema:        n.Schema,
		ZeroThreshold: n.ZeroThreshold,
		ZeroCount:     n.ZeroCount,
		PositiveSpan:  n.PositiveSpan,
		PositiveDelta: n.PositiveDelta,
	}
	return nil
}
