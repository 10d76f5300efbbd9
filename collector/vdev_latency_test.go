package collector

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// latencyExporter is the vdev_latency collector alone over a generated
// host, and the host's directory.
func latencyExporter(t *testing.T, s hostgen.Spec, detail LatencyDetail) (*Exporter, string) {
	t.Helper()
	var dir string
	e, _ := hostExporterWith(t, func(d string) error {
		dir = d
		return hostgen.Write(d, s)
	}, Config{Latency: detail}, map[string]bool{"vdev_latency": true})
	return e, dir
}

// everyDetail turns on every family the collector can send.
var everyDetail = LatencyDetail{QueueWait: true, RequestSizes: true, QueueLengths: true}

// gatherFamilies gathers e once, by family name.
func gatherByName(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e.Scraper(context.Background()))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	return byName
}

// readTables parses a capture of the host, and returns its tables by pool
// and vdev, the pools told by their names.
func readTables(t *testing.T, path string, kind zpool.HistogramKind, pools ...string) map[[2]string]zpool.Histograms {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tables, err := zpool.ParseHistograms(f, kind)
	if err != nil {
		t.Fatal(err)
	}
	byVdev := map[[2]string]zpool.Histograms{}
	pool := ""
	for _, h := range tables {
		for _, p := range pools {
			if h.Name == p {
				pool = p
			}
		}
		byVdev[[2]string{pool, h.Name}] = h
	}
	return byVdev
}

// Every bucket is the sum of zpool's buckets up to its bound, and the
// count all of them, for every vdev, queue and direction; the default
// keeps 11 latency bounds (16 µs to 17 s) and 7 size bounds, the full
// resolution all but the last bucket, which holds every slower or larger
// I/O.
func TestVdevLatencyBucketsAreZpools(t *testing.T) {
	for _, full := range []bool{false, true} {
		t.Run("full="+strconv.FormatBool(full), func(t *testing.T) {
			detail := everyDetail
			detail.FullResolution = full
			e, dir := latencyExporter(t, hostgen.Spec{Pools: 2, Leaves: 4, Version: "2.3"}, detail)
			fams := gatherByName(t, e)
			// 2 pools of 7 vdevs: 2 wait families of 2 directions, 7 queue classes; 14 size columns.
			checkBucketsAreZpools(t, fams, dir, full, map[string]int{"zfs_vdev_total_wait_seconds": 28, "zfs_vdev_disk_wait_seconds": 28, "zfs_vdev_queue_wait_seconds": 98, "zfs_vdev_request_size_bytes": 196}, "tank0", "tank1")
			if n := len(fams["zfs_vdev_queue_pending"].GetMetric()); n != 2*7*7 {
				t.Errorf("%d queue_pending series, want 98", n)
			}
		})
	}
}

// checkBucketsAreZpools checks every histogram of fams against the tables
// of zpool iostat -vHp -w and -r in dir: each bucket the sum of zpool's up
// to its bound, the count all of them, as many series as wantSeries.
func checkBucketsAreZpools(t *testing.T, fams map[string]*dto.MetricFamily, dir string, full bool, wantSeries map[string]int, pools ...string) {
	t.Helper()
	latency := readTables(t, filepath.Join(dir, runner.CaptureFileName("zpool iostat -vHp -w")), zpool.LatencyHistogram, pools...)
	sizes := readTables(t, filepath.Join(dir, runner.CaptureFileName("zpool iostat -vHp -r")), zpool.SizeHistogram, pools...)
	wantBuckets := map[string]int{"zfs_vdev_total_wait_seconds": 11, "zfs_vdev_disk_wait_seconds": 11, "zfs_vdev_queue_wait_seconds": 11, "zfs_vdev_request_size_bytes": 7}
	if full {
		wantBuckets = map[string]int{"zfs_vdev_total_wait_seconds": 36, "zfs_vdev_disk_wait_seconds": 36, "zfs_vdev_queue_wait_seconds": 36, "zfs_vdev_request_size_bytes": 15}
	}
	for name, n := range wantSeries {
		f := fams[name]
		if got := len(f.GetMetric()); got != n {
			t.Errorf("%s: %d series, want %d", name, got, n)
		}
		for _, m := range f.GetMetric() {
			l := labelsOf(m)
			h := m.GetHistogram()
			if got := len(h.GetBucket()); got != wantBuckets[name] {
				t.Errorf("%s%v: %d buckets, want %d", name, l, got, wantBuckets[name])
			}
			tables, column, top := latency, latencyColumnOf(name, l), func(b float64) float64 { return b }
			if name == "zfs_vdev_request_size_bytes" {
				tables, column, top = sizes, l["class"]+"_"+l["request"][:3], func(b float64) float64 { return 2*b - 1 }
			}
			table, ok := tables[[2]string{l["pool"], l["vdev"]}]
			col := indexOf(table.Columns, column)
			if !ok || col < 0 {
				t.Errorf("%s%v: no table or column %q in zpool's output", name, l, column)
				continue
			}
			var total uint64
			for i := range table.Bounds {
				total += table.Counts[i][col]
			}
			if h.GetSampleCount() != total {
				t.Errorf("%s%v: count %d, zpool's buckets add up to %d", name, l, h.GetSampleCount(), total)
			}
			for _, b := range h.GetBucket() {
				var want uint64
				for i, bound := range table.Bounds {
					if top(bound) <= b.GetUpperBound() {
						want += table.Counts[i][col]
					}
				}
				if b.GetCumulativeCount() != want {
					t.Errorf("%s%v: bucket le=%g holds %d, zpool's buckets up to it %d", name, l, b.GetUpperBound(), b.GetCumulativeCount(), want)
				}
			}
		}
	}
}

// latencyColumnOf is the -w column of a latency series.
func latencyColumnOf(name string, l map[string]string) string {
	for column, m := range latencyColumns {
		if strings.Contains(m.desc.String(), `"`+name+`"`) && (m.label == l["type"] || m.label == l["class"]) {
			return column
		}
	}
	return ""
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// The queue gauges are zpool's -q columns of the same vdev.
func TestVdevLatencyQueues(t *testing.T) {
	e, _ := latencyExporter(t, hostgen.Spec{Pools: 1, Leaves: 4, Version: "2.3"}, LatencyDetail{QueueLengths: true})
	fams := gatherByName(t, e)
	got := map[string]float64{}
	for _, m := range fams["zfs_vdev_queue_pending"].GetMetric() {
		l := labelsOf(m)
		got[l["vdev"]+"/"+l["class"]] = m.GetGauge().GetValue()
	}
	// hostgen: a leaf holds 2*(index%3) async writes pending, a mirror
	// its leaves', the pool its mirrors'.
	for key, want := range map[string]float64{
		"virtio-zd01/async_write": 0, "virtio-zd02/async_write": 2, "virtio-zd03/async_write": 4, "virtio-zd04/async_write": 0,
		"mirror-0/async_write": 2, "mirror-1/async_write": 4, "tank0/async_write": 6, "tank0/sync_read": 0, "virtio-zd02/rebuild": 0,
	} {
		if v, ok := got[key]; !ok || v != want {
			t.Errorf("%s pending = %v (present %v), want %v", key, v, ok, want)
		}
	}
	if n := len(got); n != 7*7 {
		t.Errorf("%d pending series, want 49 (7 vdevs, 7 classes)", n)
	}
}

// The collector passes the linter, and its HELP says that _sum is an
// estimate.
func TestVdevLatencyLint(t *testing.T) {
	e, _ := latencyExporter(t, hostgen.Spec{Pools: 1, Leaves: 2, Version: "2.3"}, everyDetail)
	problems, err := testutil.CollectAndLint(e.Scraper(context.Background()))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	for _, d := range []*prometheus.Desc{vdevTotalWaitDesc, vdevDiskWaitDesc, vdevQueueWaitDesc} {
		if !strings.Contains(d.String(), "estimate") {
			t.Errorf("%s: HELP does not say that _sum is an estimate", d)
		}
	}
}

// A zpool that refuses -w, -r or -q (zfs-fuse says "invalid option 'H'")
// gives no series and no failure, and is not asked again; one that fails
// otherwise fails the collector.
func TestVdevLatencyRefused(t *testing.T) {
	dir := t.TempDir()
	status, err := os.ReadFile("testdata/replay/zfs-fuse/000/zpool_status.txt")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"zpool_status.txt": string(status)}
	for _, flag := range []string{"-w", "-r", "-q"} {
		files[runner.CaptureFileName("zpool iostat -vHp "+flag)] = "# command: zpool iostat -vHp " + flag + "\n# exit: 2\n# stderr: invalid option 'H'\n# stderr: usage:\n# ---\n"
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := New(Config{ZFS: zfs.New(zfs.Config{Runner: replay}, logger), Runner: replay, Latency: everyDetail}, logger, map[string]bool{"vdev_latency": true})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		fams := gatherByName(t, e)
		for name := range fams {
			if strings.HasPrefix(name, "zfs_vdev_") {
				t.Errorf("series of %s from a zpool that refuses -w, -r and -q", name)
			}
		}
		for _, m := range fams["zfs_exporter_collector_success"].GetMetric() {
			if v := m.GetGauge().GetValue(); v != 1 {
				t.Errorf("collector success %v, want 1: a zpool without histograms is not a failure", v)
			}
		}
	}
	var runs uint64
	for line, st := range replay.Stats() {
		if strings.HasPrefix(line, "zpool iostat") {
			runs += st.Runs
		}
	}
	if runs > 3 {
		t.Errorf("zpool iostat ran %d times over 3 scrapes: a refusal must be remembered", runs)
	}
}

// The estimated sum of a latency histogram lies between its buckets'
// bottoms and tops: each I/O at the middle of its bucket.
func TestVdevLatencySumIsBetweenTheBounds(t *testing.T) {
	e, _ := latencyExporter(t, hostgen.Spec{Pools: 1, Leaves: 2, Version: "2.3"}, LatencyDetail{FullResolution: true})
	for _, m := range gatherByName(t, e)["zfs_vdev_disk_wait_seconds"].GetMetric() {
		h := m.GetHistogram()
		var prevCount uint64
		var lo, hi, prev float64
		for _, b := range h.GetBucket() {
			n := b.GetCumulativeCount() - prevCount
			lo += float64(n) * prev
			hi += float64(n) * b.GetUpperBound()
			prev, prevCount = b.GetUpperBound(), b.GetCumulativeCount()
		}
		if rest := h.GetSampleCount() - prevCount; rest > 0 {
			lo += float64(rest) * prev
			hi = math.Inf(1)
		}
		if s := h.GetSampleSum(); h.GetSampleCount() > 0 && (s < lo || s > hi) {
			t.Errorf("%v: sum %g outside [%g, %g]", labelsOf(m), s, lo, hi)
		}
	}
}

// Over the real OpenZFS 2.3.2 and 2.4.4 outputs of the walk's first
// scenario (a mirror, two mirrors, a raidz with log, cache and spare, a
// dRAID): every table pairs with its vdev, and every bucket is the sum of
// zpool's.
func TestVdevLatencyOverGuestCaptures(t *testing.T) {
	for _, release := range guestReleases {
		t.Run(release, func(t *testing.T) {
			var dir string
			e, _ := hostExporterWith(t, func(d string) error {
				dir = d
				return hostgen.WriteCaptures(d, "01-created", guestDir(release))
			}, Config{Latency: everyDetail}, map[string]bool{"vdev_latency": true})
			fams := gatherByName(t, e)
			f, err := os.Open(filepath.Join(dir, runner.CaptureFileName("zpool iostat -vHp -w")))
			if err != nil {
				t.Fatal(err)
			}
			tables, err := zpool.ParseHistograms(f, zpool.LatencyHistogram)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
			n := len(tables)
			checkBucketsAreZpools(t, fams, dir, false, map[string]int{
				"zfs_vdev_total_wait_seconds": 2 * n, "zfs_vdev_disk_wait_seconds": 2 * n,
				"zfs_vdev_queue_wait_seconds": 7 * n, "zfs_vdev_request_size_bytes": 14 * n,
			}, "dr", "mir", "r10", "rz1")
			if got := len(fams["zfs_vdev_queue_active"].GetMetric()); got != 7*n {
				t.Errorf("%d queue_active series, want %d: 7 classes for each of %d vdevs", got, 7*n, n)
			}
			for _, m := range fams["zfs_exporter_collector_success"].GetMetric() {
				if m.GetGauge().GetValue() != 1 {
					t.Errorf("collector %v failed", labelsOf(m))
				}
			}
			if release == "2.4" {
				// The rules and dashboards' detail panels are checked
				// against this golden: every family for one pool of the
				// newest release (a raidz with a log and a cache), small
				// enough to review.
				compareGolden(t, filepath.Join("testdata", "vdev-latency-openzfs-"+release+"-rz1-detail.prom"), exposition(t, rz1Latency(fams)))
			}
		})
	}
}

// rz1Latency is the vdev_latency families of fams for pool rz1.
func rz1Latency(fams map[string]*dto.MetricFamily) []*dto.MetricFamily {
	var own []*dto.MetricFamily
	for _, name := range []string{"zfs_vdev_disk_wait_seconds", "zfs_vdev_queue_active", "zfs_vdev_queue_pending",
		"zfs_vdev_queue_wait_seconds", "zfs_vdev_request_size_bytes", "zfs_vdev_total_wait_seconds"} {
		f := fams[name]
		if f == nil {
			continue
		}
		f.Metric = slices.DeleteFunc(f.Metric, func(m *dto.Metric) bool { return labelsOf(m)["pool"] != "rz1" })
		own = append(own, f)
	}
	return own
}

// By default the collector sends the disk wait of every vdev and the
// total wait of pools and top-level vdevs, and runs neither zpool iostat
// -r nor -q; each flag adds its own families and nothing else.
func TestVdevLatencyDefaultsAndEachDetail(t *testing.T) {
	// 2 pools, each of 2 mirrors of 2 leaves: 2 pool rows, 4 top-level
	// vdevs, 8 leaves, each histogram of 2 directions.
	const pools, tops, leaves = 2, 4, 8
	for _, c := range []struct {
		name   string
		detail LatencyDetail
		series map[string]int
		runs   []string // the -r and -q runs wanted
	}{
		{"default", LatencyDetail{}, map[string]int{
			"zfs_vdev_disk_wait_seconds": 2 * (pools + tops + leaves), "zfs_vdev_total_wait_seconds": 2 * (pools + tops),
		}, nil},
		{"queue-wait", LatencyDetail{QueueWait: true}, map[string]int{
			"zfs_vdev_disk_wait_seconds": 2 * (pools + tops + leaves), "zfs_vdev_total_wait_seconds": 2 * (pools + tops + leaves),
			"zfs_vdev_queue_wait_seconds": 7 * (pools + tops + leaves),
		}, nil},
		{"request-sizes", LatencyDetail{RequestSizes: true}, map[string]int{
			"zfs_vdev_disk_wait_seconds": 2 * (pools + tops + leaves), "zfs_vdev_total_wait_seconds": 2 * (pools + tops),
			"zfs_vdev_request_size_bytes": 14 * (pools + tops + leaves),
		}, []string{"-r"}},
		{"queue-lengths", LatencyDetail{QueueLengths: true}, map[string]int{
			"zfs_vdev_disk_wait_seconds": 2 * (pools + tops + leaves), "zfs_vdev_total_wait_seconds": 2 * (pools + tops),
			"zfs_vdev_queue_pending": 7 * (pools + tops + leaves), "zfs_vdev_queue_active": 7 * (pools + tops + leaves),
		}, []string{"-q"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, replay := hostExporterWith(t, func(d string) error {
				return hostgen.Write(d, hostgen.Spec{Pools: pools, Leaves: leaves / pools, Version: "2.3"})
			}, Config{Latency: c.detail}, map[string]bool{"vdev_latency": true})
			got := map[string]int{}
			for name, f := range gatherByName(t, e) {
				if strings.HasPrefix(name, "zfs_vdev_") {
					got[name] = len(f.GetMetric())
				}
			}
			if !maps.Equal(got, c.series) {
				t.Errorf("series by family %v, want %v", got, c.series)
			}
			var runs []string
			for line, st := range replay.Stats() {
				for _, flag := range []string{"-r", "-q"} {
					if strings.HasPrefix(line, "zpool iostat") && strings.HasSuffix(line, " "+flag) && st.Runs > 0 {
						runs = append(runs, flag)
					}
				}
			}
			if !slices.Equal(runs, c.runs) {
				t.Errorf("zpool iostat ran with %v, want %v", runs, c.runs)
			}
		})
	}
}

// The default families of the guest's rz1, the golden that the
// dashboards' default panels and the slow-disk rule are checked against.
func TestVdevLatencyDefaultGolden(t *testing.T) {
	e, _ := hostExporterWith(t, func(d string) error {
		return hostgen.WriteCaptures(d, "01-created", guestDir("2.4"))
	}, Config{}, map[string]bool{"vdev_latency": true})
	compareGolden(t, filepath.Join("testdata", "vdev-latency-openzfs-2.4-rz1.prom"), exposition(t, rz1Latency(gatherByName(t, e))))
}

// With --collector.vdev_latency.interior-vdevs, a replacing-N or spare-N
// (named after its parent, as zpool repeats their names) has the figures
// of a top-level vdev; without it, none.
// --collector.vdev_latency.max-vdevs keeps the first vdevs in zpool's
// order, pool by pool, and counts the rest.
func TestVdevLatencyMaxVdevs(t *testing.T) {
	for _, c := range []struct {
		max     int
		want    map[string]int // vdevs with figures, by pool
		leftOut float64
	}{
		{max: 0, want: map[string]int{"tank0": 7, "tank1": 7}},
		{max: 14, want: map[string]int{"tank0": 7, "tank1": 7}},
		{max: 9, want: map[string]int{"tank0": 7, "tank1": 2}, leftOut: 5},
		{max: 3, want: map[string]int{"tank0": 3}, leftOut: 11},
	} {
		e, _ := hostExporterWith(t, func(d string) error {
			return hostgen.Write(d, hostgen.Spec{Pools: 2, Leaves: 4, Version: "2.3"})
		}, Config{Latency: LatencyDetail{QueueLengths: true, RequestSizes: true, MaxVdevs: c.max}}, map[string]bool{"vdev_latency": true})
		fams := gatherByName(t, e)
		for _, name := range []string{"zfs_vdev_disk_wait_seconds", "zfs_vdev_request_size_bytes", "zfs_vdev_queue_active"} {
			vdevs := map[string]map[string]bool{}
			for _, m := range fams[name].GetMetric() {
				l := labelsOf(m)
				if vdevs[l["pool"]] == nil {
					vdevs[l["pool"]] = map[string]bool{}
				}
				vdevs[l["pool"]][l["vdev"]] = true
			}
			got := map[string]int{}
			for pool, v := range vdevs {
				got[pool] = len(v)
			}
			if !maps.Equal(got, c.want) {
				t.Errorf("max %d: %s covers %v vdevs by pool, want %v", c.max, name, got, c.want)
			}
		}
		if c.max == 3 {
			// The pool's row, then its first mirror and that mirror's
			// first leaf: zpool's order.
			var first []string
			for _, m := range fams["zfs_vdev_queue_active"].GetMetric() {
				if l := labelsOf(m); l["class"] == "sync_read" {
					first = append(first, l["vdev"])
				}
			}
			slices.Sort(first)
			if want := []string{"mirror-0", "tank0", "virtio-zd01"}; !slices.Equal(first, want) {
				t.Errorf("max 3: vdevs %v, want %v", first, want)
			}
		}
		f := fams["zfs_exporter_vdev_latency_left_out"]
		if f == nil || len(f.GetMetric()) != 1 || f.GetMetric()[0].GetGauge().GetValue() != c.leftOut {
			t.Errorf("max %d: zfs_exporter_vdev_latency_left_out %v, want %v", c.max, f.GetMetric(), c.leftOut)
		}
	}
}
func TestVdevLatencyInteriorVdevs(t *testing.T) {
	for _, c := range []struct {
		scenario, vdev string
	}{{"04-resilvering", "mirror-0/replacing-1"}, {"06-spare-inuse", "raidz1-0/spare-1"}} {
		for _, interior := range []bool{false, true} {
			e, _ := hostExporterWith(t, func(d string) error {
				return hostgen.WriteCaptures(d, c.scenario, guestDir("2.3"))
			}, Config{Latency: LatencyDetail{InteriorVdevs: interior}}, map[string]bool{"vdev_latency": true})
			fams := gatherByName(t, e)
			for _, name := range []string{"zfs_vdev_disk_wait_seconds", "zfs_vdev_total_wait_seconds"} {
				n := 0
				for _, m := range fams[name].GetMetric() {
					if labelsOf(m)["vdev"] == c.vdev {
						n++
					}
				}
				if want := map[bool]int{false: 0, true: 2}[interior]; n != want {
					t.Errorf("%s, interior vdevs %v: %d %s series of %s, want %d", c.scenario, interior, n, name, c.vdev, want)
				}
			}
		}
	}
}
