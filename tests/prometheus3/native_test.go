package prometheus3

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// The exporter over the real OpenZFS 2.4.4 outputs of the walk's first
// scenario (four pools: a mirror, two mirrors, a raidz, a dRAID), scraped by
// Prometheus 3.16 in three jobs: classic (text, classic histograms), nhcb
// (text, convert_classic_histograms_to_nhcb) and native
// (scrape_native_histograms, so protobuf, with the conversion on too, as
// the shipped 3.x configuration has it). The request sizes then are:
// classic, 10 series a histogram; NHCB, one series with the classic
// bounds; native, one series with schema-0 bounds, powers of two. The
// latency histograms, classic on the wire, are one NHCB series in the
// native job. histogram_quantile agrees: NHCB equals classic, and the
// native result lies in the zpool row the quantile falls in, inside the
// classic bucket the classic result lies in.
func TestNativeRequestSizesInPrometheus3(t *testing.T) {
	began := time.Now()
	prom, exporter := binaries(t)
	replay := filepath.Join(t.TempDir(), "host")
	if err := hostgen.WriteCaptures(replay, "01-created",
		repotest.Path("internal", "zfs", "zpool", "testdata", "openzfs-2.4-guest"),
		repotest.Path("collector", "testdata", "openzfs-2.4-guest")); err != nil {
		t.Fatal(err)
	}
	e := e2e.Start(t, exporter, nil, "--zpool.replay-dir="+replay, "--collector.vdev_latency.request-sizes")
	target := strings.TrimPrefix(e.URL, "http://")

	p := startPrometheus(t, prom, fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: classic
    static_configs: [{targets: [%[1]q]}]
  - job_name: nhcb
    convert_classic_histograms_to_nhcb: true
    static_configs: [{targets: [%[1]q]}]
  - job_name: native
    scrape_native_histograms: true
    convert_classic_histograms_to_nhcb: true
    static_configs: [{targets: [%[1]q]}]
`, target))

	// Histograms the exporter serves: the classic job's _count series.
	histograms := func(name string) int {
		return len(p.mustQuery(t, name+`_count{job="classic"}`))
	}
	waitFor(t, "three jobs with request-size histograms", func() bool {
		for _, job := range []string{"classic", "nhcb", "native"} {
			if s, err := p.query(`count({__name__=~"zfs_vdev_request_size_bytes.*",job="` + job + `"})`); err != nil || len(s) == 0 {
				return false
			}
		}
		return true
	})
	sizes, disk := histograms("zfs_vdev_request_size_bytes"), histograms("zfs_vdev_disk_wait_seconds")
	if sizes < 14 || disk < 2 {
		t.Fatalf("%d request-size and %d disk-wait histograms, want at least 14 and 2", sizes, disk)
	}

	les := classicBounds(t, p)
	// Series per histogram in the TSDB.
	for _, c := range []struct {
		job, name string
		want      int
	}{
		{"classic", "zfs_vdev_request_size_bytes", (len(les) + 2) * sizes}, // buckets with +Inf, _sum, _count
		{"nhcb", "zfs_vdev_request_size_bytes", sizes},
		{"native", "zfs_vdev_request_size_bytes", sizes},
		{"nhcb", "zfs_vdev_disk_wait_seconds", disk},
		{"native", "zfs_vdev_disk_wait_seconds", disk},
	} {
		s := p.mustQuery(t, `count({__name__=~"`+c.name+`.*",job="`+c.job+`"})`)
		if len(s) != 1 || int(s[0].float()) != c.want {
			t.Errorf("job %s: %v series of %s, want %d", c.job, s, c.name, c.want)
		}
	}

	// Native: schema-0 bounds, powers of two; NHCB: the classic le, one
	// less than a power of two (or +Inf).
	for job, bound := range map[string]func(float64) bool{
		"native": func(b float64) bool { return isPowerOfTwo(b) },
		"nhcb":   func(b float64) bool { return math.IsInf(b, 1) || isPowerOfTwo(b+1) },
	} {
		checked := 0
		for _, s := range p.mustQuery(t, `zfs_vdev_request_size_bytes{job="`+job+`"}`) {
			h, err := s.histogram()
			if err != nil {
				t.Fatalf("job %s: %v: %v", job, s.Metric, err)
			}
			for _, b := range h.Buckets {
				upper, _ := strconv.ParseFloat(fmt.Sprint(b[2]), 64)
				if !bound(upper) {
					t.Errorf("job %s: %v: bucket %v: upper bound %v", job, s.Metric, b, upper)
				}
				checked++
			}
		}
		if checked == 0 {
			t.Errorf("job %s: no histogram buckets to check", job)
		}
	}

	rows := poolRows(t, replay)
	compared := 0
	for _, q := range []float64{0.5, 0.99} {
		classic := quantiles(t, p, q, `zfs_vdev_request_size_bytes_bucket{job="classic"}`)
		nhcb := quantiles(t, p, q, `zfs_vdev_request_size_bytes{job="nhcb"}`)
		native := quantiles(t, p, q, `zfs_vdev_request_size_bytes{job="native"}`)
		if len(classic) != sizes || len(nhcb) != sizes || len(native) != sizes {
			t.Fatalf("q=%v: %d classic, %d NHCB and %d native quantiles, want %d each", q, len(classic), len(nhcb), len(native), sizes)
		}
		for key, c := range classic {
			// The same buckets and interpolation, summed in another order:
			// equal but for rounding.
			if n := nhcb[key]; !(math.Abs(n-c) <= 1e-9*math.Abs(c) || math.IsNaN(n) && math.IsNaN(c)) {
				t.Errorf("q=%v %s: NHCB %v, classic %v", q, key, n, c)
			}
			counts, ok := rows[key]
			if !ok {
				continue // a vdev's row: the pools' rows are enough
			}
			r := rankRow(counts, q)
			if r < 0 {
				if !math.IsNaN(c) || !math.IsNaN(native[key]) {
					t.Errorf("q=%v %s: no requests, but classic %v, native %v", q, key, c, native[key])
				}
				continue
			}
			lo, hi := classicBucket(les, r)
			n := native[key]
			rowLo, rowHi := float64(uint64(512)<<r), float64(uint64(1024)<<r)
			if !(n > rowLo && n <= rowHi) {
				t.Errorf("q=%v %s: native %v outside zpool's row %d, (%v, %v]", q, key, n, r, rowLo, rowHi)
			}
			if math.IsInf(hi, 1) {
				if c != lo {
					t.Errorf("q=%v %s: classic %v, want the last finite le %v", q, key, c, lo)
				}
			} else {
				if !(c > lo && c <= hi) {
					t.Errorf("q=%v %s: classic %v outside its bucket (%v, %v]", q, key, c, lo, hi)
				}
				if !(n > lo && n <= hi+1) {
					t.Errorf("q=%v %s: native %v outside the classic bucket (%v, %v], +1 for schema 0's bound", q, key, n, lo, hi)
				}
			}
			compared++
		}
	}
	if compared < 8 {
		t.Errorf("compared %d quantiles of the pools' request sizes with zpool's rows, want at least 8", compared)
	}
	t.Logf("%d request-size and %d disk-wait histograms; %d quantiles checked against zpool's rows; %s in all",
		sizes, disk, compared, time.Since(began).Round(time.Second))
}

func isPowerOfTwo(b float64) bool {
	frac, _ := math.Frexp(b)
	return frac == 0.5
}

// classicBucket is the classic bucket (lo, hi] that holds zpool's row r,
// whose sizes run up to (1024<<r)-1, among the sorted bounds les (+Inf
// last): whichever resolution the exporter runs at.
func classicBucket(les []float64, r int) (lo, hi float64) {
	top := float64(uint64(1024)<<r - 1)
	for _, le := range les {
		if le >= top {
			return lo, le
		}
		lo = le
	}
	return lo, math.Inf(1)
}

// classicBounds are the le of the classic job's request-size buckets.
func classicBounds(t *testing.T, p *prometheus) []float64 {
	t.Helper()
	var les []float64
	for _, s := range p.mustQuery(t, `count by (le) (zfs_vdev_request_size_bytes_bucket{job="classic"})`) {
		le, err := strconv.ParseFloat(s.Metric["le"], 64)
		if err != nil {
			t.Fatalf("le %q: %v", s.Metric["le"], err)
		}
		les = append(les, le)
	}
	slices.Sort(les)
	if len(les) < 2 || !math.IsInf(les[len(les)-1], 1) {
		t.Fatalf("classic bounds %v, want some and +Inf", les)
	}
	return les
}

// rankRow is the row where histogram_quantile(q) falls: the first whose
// cumulative count reaches q times the total; -1 with no requests.
func rankRow(counts []uint64, q float64) int {
	var total, cum uint64
	for _, n := range counts {
		total += n
	}
	if total == 0 {
		return -1
	}
	rank := q * float64(total)
	for i, n := range counts {
		cum += n
		if float64(cum) >= rank {
			return i
		}
	}
	return len(counts) - 1
}

// quantiles evaluates histogram_quantile(q, selector), by the labels that
// tell a histogram apart.
func quantiles(t *testing.T, p *prometheus, q float64, selector string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range p.mustQuery(t, fmt.Sprintf("histogram_quantile(%v, %s)", q, selector)) {
		out[seriesKey(s.Metric)] = s.float() // "NaN" parses as NaN
	}
	return out
}

func seriesKey(m map[string]string) string {
	return m["pool"] + "/" + m["vdev"] + "/" + m["class"] + "/" + m["request"]
}

// poolRows reads zpool iostat -r of the replay: the counts of each pool's
// own row (the first table of a pool, named after it) by column, keyed as
// seriesKey keys the exporter's series.
func poolRows(t *testing.T, replay string) map[string][]uint64 {
	t.Helper()
	f, err := os.Open(filepath.Join(replay, runner.CaptureFileName("zpool iostat -vHp -r")))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables, err := zpool.ParseHistograms(f, zpool.SizeHistogram)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]uint64{}
	for _, pool := range []string{"dr", "mir", "r10", "rz1"} {
		found := false
		for _, tab := range tables {
			if tab.Name != pool {
				continue
			}
			found = true
			for col, name := range tab.Columns {
				class, request := name[:len(name)-4], "individual"
				if strings.HasSuffix(name, "_agg") {
					request = "aggregated"
				}
				counts := make([]uint64, len(tab.Counts))
				for i, row := range tab.Counts {
					counts[i] = row[col]
				}
				out[pool+"/"+pool+"/"+class+"/"+request] = counts
			}
			break
		}
		if !found {
			t.Fatalf("no table of pool %s in zpool iostat -r", pool)
		}
	}
	return out
}

// waitFor polls cond for a minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute", what)
		}
		time.Sleep(250 * time.Millisecond)
	}
	// One more scrape interval, so that every job has the same scrape.
	time.Sleep(1500 * time.Millisecond)
}
