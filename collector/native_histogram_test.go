package collector

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/bits"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// schema0Index is the schema-0 bucket of a size, as Prometheus defines it:
// bucket k holds (2^(k-1), 2^k].
func schema0Index(size uint64) int { return bits.Len64(size - 1) }

func TestSizeNativeIndex(t *testing.T) {
	for _, c := range []struct {
		bottom float64
		want   int
		ok     bool
	}{
		{512, 10, true},      // 512 B to 1023 B: (512, 1024]
		{1024, 11, true},     // 1 KiB row: (1024, 2048]
		{4096, 13, true},     // 4 KiB row, sizes 4096 to 8191: (4096, 8192], not 12
		{131072, 18, true},   // 128 KiB row: (128 KiB, 256 KiB]
		{16777216, 25, true}, // the last row, 16 MiB up: (16 MiB, 32 MiB]
		{3000, 0, false},     // not a power of two: no bucket fits
		{0, 0, false},        // no bucket of zpool
		{6144, 0, false},     // 1.5 * 4096
		{math.Inf(1), 0, false},
	} {
		got, ok := sizeNativeIndex(c.bottom)
		if got != c.want || ok != c.ok {
			t.Errorf("sizeNativeIndex(%v) = %d, %v; want %d, %v", c.bottom, got, ok, c.want, c.ok)
		}
	}
}

// For every row of zpool iostat -r, the native bucket's upper bound is one
// more than the classic le, and the bucket holds every size of the row
// that ZFS can issue (multiples of 512) but its bottom, which schema 0
// puts one bucket lower: the two histograms agree up to that edge.
func TestSizeNativeBucketHoldsZpoolsRow(t *testing.T) {
	for i := range 16 {
		bottom := uint64(512) << i
		index, ok := sizeNativeIndex(float64(bottom))
		if !ok {
			t.Fatalf("row %d (%d B): no native bucket", i, bottom)
		}
		le := 2*bottom - 1 // the classic bound of sizeHistogram
		if upper := uint64(1) << index; upper != le+1 {
			t.Errorf("row %d: native upper bound %d, classic le %d", i, upper, le)
		}
		for size := bottom + 512; size <= le; size += 512 {
			if k := schema0Index(size); k != index {
				t.Fatalf("row %d: a request of %d B is in schema-0 bucket %d, the row's is %d", i, size, k, index)
			}
		}
		if k := schema0Index(bottom); k != index-1 {
			t.Errorf("row %d: a request of exactly %d B is in schema-0 bucket %d, want %d", i, bottom, k, index-1)
		}
	}
}

// scrapeFormat serves e's families once through ServeMetrics in the format
// the Accept header asks for, and returns them by name with the response's
// content type.
func scrapeFormat(t *testing.T, e *Exporter, accept string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	shared := NewShared(e.Gather)
	req := httptest.NewRequest("GET", "/metrics", nil)
	req.Header.Set("Accept", accept)
	rec := httptest.NewRecorder()
	shared.ServeMetrics(context.Background(), rec, req, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	ct := rec.Header().Get("Content-Type")
	dec := expfmt.NewDecoder(rec.Body, expfmt.Format(ct))
	byName := map[string]*dto.MetricFamily{}
	for {
		var f dto.MetricFamily
		if err := dec.Decode(&f); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding %s: %v", ct, err)
		}
		byName[f.GetName()] = &f
	}
	return byName, ct
}

// nativeBuckets expands a native histogram's spans and deltas into counts
// by bucket index.
func nativeBuckets(h *dto.Histogram) map[int]int64 {
	out := map[int]int64{}
	index, d, count := 0, 0, int64(0)
	for _, s := range h.GetPositiveSpan() {
		index += int(s.GetOffset())
		for range s.GetLength() {
			count += h.GetPositiveDelta()[d]
			d++
			if count != 0 {
				out[index] = count
			}
			index++
		}
	}
	return out
}

// Over protobuf, every request-size histogram carries zpool's rows as
// schema-0 buckets beside its classic buckets, with no created timestamp;
// latency histograms stay classic. Over text, the classic histogram alone.
func TestRequestSizesNativeOverProtobuf(t *testing.T) {
	e, dir := latencyExporter(t, hostgen.Spec{Pools: 1, Leaves: 2, Version: "2.3"}, LatencyDetail{RequestSizes: true})
	fams, ct := scrapeFormat(t, e, string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	if !strings.Contains(ct, "application/vnd.google.protobuf") {
		t.Fatalf("content type %q, want protobuf", ct)
	}
	sizes := readTables(t, filepath.Join(dir, runner.CaptureFileName("zpool iostat -vHp -r")), zpool.SizeHistogram, "tank0")
	f := fams["zfs_vdev_request_size_bytes"]
	if len(f.GetMetric()) == 0 {
		t.Fatal("no zfs_vdev_request_size_bytes over protobuf")
	}
	nonEmpty := 0
	for _, m := range f.GetMetric() {
		l := labelsOf(m)
		h := m.GetHistogram()
		if h.Schema == nil || h.GetSchema() != 0 || h.GetZeroThreshold() != 0 || h.GetZeroCount() != 0 || len(h.GetPositiveSpan()) == 0 {
			t.Errorf("%v: schema %v, zero threshold %v, zero count %d, %d spans; want a native histogram of schema 0",
				l, h.Schema, h.GetZeroThreshold(), h.GetZeroCount(), len(h.GetPositiveSpan()))
		}
		if h.CreatedTimestamp != nil {
			t.Errorf("%v: created timestamp %v, want none", l, h.CreatedTimestamp)
		}
		if n := len(h.GetBucket()); n != 7 {
			t.Errorf("%v: %d classic buckets, want 7", l, n)
		}
		table, ok := sizes[[2]string{l["pool"], l["vdev"]}]
		col := indexOf(table.Columns, l["class"]+"_"+l["request"][:3])
		if !ok || col < 0 {
			t.Errorf("%v: no table or column in zpool's output", l)
			continue
		}
		want := map[int]int64{}
		var total uint64
		for i, row := range table.Counts {
			if row[col] > 0 {
				want[10+i] = int64(row[col])
			}
			total += row[col]
		}
		got := nativeBuckets(h)
		if len(got) != len(want) {
			t.Errorf("%v: native buckets %v, want %v", l, got, want)
		}
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%v: native bucket %d holds %d, want %d (%v)", l, k, got[k], n, got)
			}
		}
		if h.GetSampleCount() != total {
			t.Errorf("%v: count %d, want %d", l, h.GetSampleCount(), total)
		}
		if total > 0 {
			nonEmpty++
		}
	}
	if nonEmpty == 0 {
		t.Error("every request-size histogram is empty: the test shows nothing")
	}
	for _, name := range []string{"zfs_vdev_total_wait_seconds", "zfs_vdev_disk_wait_seconds", "zfs_vdev_queue_wait_seconds"} {
		for _, m := range fams[name].GetMetric() {
			if h := m.GetHistogram(); h.Schema != nil || len(h.GetPositiveSpan()) > 0 || len(h.GetBucket()) == 0 {
				t.Fatalf("%s%v: schema %v, %d spans, %d buckets; want a classic histogram", name, labelsOf(m), h.Schema, len(h.GetPositiveSpan()), len(h.GetBucket()))
			}
		}
	}

	text, ct := scrapeFormat(t, e, "text/plain;version=0.0.4")
	if !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("content type %q, want text", ct)
	}
	for _, m := range text["zfs_vdev_request_size_bytes"].GetMetric() {
		if h := m.GetHistogram(); h.Schema != nil || len(h.GetBucket()) != 8 {
			t.Fatalf("text: %v: schema %v, %d buckets; want 7 classic buckets and +Inf alone", labelsOf(m), h.Schema, len(h.GetBucket()))
		}
	}
}
