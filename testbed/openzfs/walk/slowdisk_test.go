//go:build openzfsguest

package walk

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	zpoolparse "github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// The slow-disk scenario's raidz: its last disk is throttled by qemu
// (the host test's --disk-opt for zd24), as a dying disk that still
// answers, only slowly.
var (
	slowDisks = []int{22, 23, 24}
	slowLeaf  = leaf(24)
)

const (
	slowPool = "slow"
	// slowScrapes expositions, slowEvery apart, are kept for the host,
	// which evaluates the slow-disk alert over them with promtool.
	slowScrapes = 9
	slowEvery   = 10 * time.Second
)

// slowDisk writes into a raidz1 of three disks, one of them throttled,
// while an exporter with the vdev_latency collector is scraped at a steady
// pace. The throttled disk's writes must land in slower buckets than its
// siblings', and the exporter's buckets must be zpool's own.
func slowDisk(t *testing.T, mnt string) {
	args := []string{"create", "-f", "-m", filepath.Join(mnt, slowPool), slowPool, "raidz1"}
	for _, n := range slowDisks {
		args = append(args, disk(n))
	}
	zpool(t, args...)
	// A slow I/O is one of more than zio_slow_io_ms (30 s): the throttled
	// disk's take seconds. At 200 ms they count in zpool status -s and post
	// delay events, as a dying disk's would.
	setTunable(t, "zio_slow_io_ms", "200")
	x := e2e.Start(t, *exporterBin, nil, "--collector.vdev_latency", "--web.enable-benchmark-api", "--zpool.iostat-interval=1s", "--scrape.timeout=20s")

	stop := make(chan struct{})
	written := make(chan error, 1)
	go func() { written <- keepWriting(filepath.Join(mnt, slowPool), stop) }()
	var first, last e2e.Metrics
	next := time.Now()
	for i := range slowScrapes {
		time.Sleep(time.Until(next))
		next = next.Add(slowEvery)
		text := x.ScrapeText(t)
		keepText(t, fmt.Sprintf("slow-disk-%02d", i), text)
		m := e2e.Parse(t, text)
		if i == 0 {
			first = m
		}
		last = m
	}
	close(stop)
	if err := <-written; err != nil {
		t.Fatal(err)
	}
	capture(t, "12-slow-disk")
	// What the collector costs here, beside the others, for the record.
	for _, s := range last.Series("zfs_exporter_collector_duration_seconds", nil) {
		t.Logf("collector %s took %.3fs in the last scrape", e2e.Label(s, "collector"), e2e.Value(s))
	}

	// Where each leaf's slowest writes fell. Not the median: most of
	// the throttled disk's writes still pass at once, within qemu's
	// burst, and only the ones behind them wait (the alert reads the p90
	// too).
	p90 := map[string]float64{}
	for _, n := range slowDisks {
		l := leaf(n)
		median, ios := quantileBound(t, first, last, l, 0.5)
		p90[l], _ = quantileBound(t, first, last, l, 0.9)
		if ios < 50 {
			t.Errorf("%s: %v writes over the scrapes; want at least 50 to judge it", l, ios)
		}
		t.Logf("%s: %v writes, the median at or below %gs, the 90th percentile at or below %gs", l, ios, median, p90[l])
	}
	for _, n := range slowDisks[:2] {
		if p90[slowLeaf] <= p90[leaf(n)] {
			t.Errorf("the throttled %s's 90th percentile write (≤ %gs) is no slower than %s's (≤ %gs)", slowLeaf, p90[slowLeaf], leaf(n), p90[leaf(n)])
		}
	}
	bucketsAreZpools(t, x)
	benchLatency(t, x, mnt)
}

// benchLatency runs dd under zpool_bench on the slow pool and checks the
// report's write latency: given for the pool and its raidz, whose p99 the
// throttled disk holds up.
func benchLatency(t *testing.T, x *e2e.Exporter, mnt string) {
	t.Helper()
	rep := benchRun(t, x.URL, t.TempDir(), slowPool, filepath.Join(mnt, slowPool))
	rows := map[string]*benchreport.VdevLatency{slowPool: rep.Pool.Latency}
	for _, v := range rep.Vdevs {
		if v.Depth == 1 {
			rows[v.Name] = v.Latency
		}
	}
	for _, name := range []string{slowPool, "raidz1-0"} {
		l := rows[name]
		if l == nil {
			t.Errorf("zpool_bench: no latency for %s in the report", name)
			continue
		}
		for wait, w := range map[string]benchreport.Latency{"disk wait": l.DiskWait.Write, "total wait": l.TotalWait.Write} {
			if !w.Available() {
				t.Errorf("zpool_bench: %s write %s unavailable: %s", name, wait, w.Unavailable)
				continue
			}
			t.Logf("zpool_bench: %s write %s over %v I/Os: p50 %.3f ms, p99 %.3f ms, mean %.3f ms", name, wait, w.Operations, w.P50Seconds*1e3, w.P99Seconds*1e3, w.MeanSeconds*1e3)
			if w.P99Seconds < w.P50Seconds || w.P99Seconds <= 0 {
				t.Errorf("zpool_bench: %s write %s p99 %gs below its p50 %gs", name, wait, w.P99Seconds, w.P50Seconds)
			}
		}
		// The reads dd made are few: figures or a reason, never neither.
		if r := l.DiskWait.Read; !r.Available() && r.Unavailable == "" {
			t.Errorf("zpool_bench: %s read disk wait has neither figures nor a reason", name)
		}
	}
	// Half a second and more: the throttled disk's writes wait behind
	// one another, and a raidz write waits for its slowest disk.
	if l := rows["raidz1-0"]; l != nil && l.DiskWait.Write.Available() && l.DiskWait.Write.P99Seconds < 0.5 {
		t.Errorf("zpool_bench: raidz1-0's write disk wait p99 %gs, want the throttled disk's seconds", l.DiskWait.Write.P99Seconds)
	}
}

// keepWriting writes 16 MiB files with fsync into dir until stop closes.
func keepWriting(dir string, stop <-chan struct{}) error {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		// Four files written over and over: the pool never fills.
		file := filepath.Join(dir, fmt.Sprint("data", i%4))
		if out, err := exec.Command("dd", "if=/dev/urandom", "of="+file, "bs=1M", "count=16", "conv=fsync", "status=none").CombinedOutput(); err != nil {
			return fmt.Errorf("writing %s: %v\n%s", file, err, out)
		}
	}
}

// keepText saves an exposition for `promtool check metrics` on the host.
func keepText(t *testing.T, name, text string) {
	t.Helper()
	if *expositions == "" {
		return
	}
	if err := os.MkdirAll(*expositions, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*expositions, name+".prom"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeHistogram is the disk-wait histogram of the slow pool's vdev for
// writes.
func writeHistogram(t *testing.T, m e2e.Metrics, vdev string) *dto.Histogram {
	t.Helper()
	s := m.Series("zfs_vdev_disk_wait_seconds", map[string]string{"pool": slowPool, "vdev": vdev, "type": "write"})
	if len(s) != 1 || s[0].GetHistogram() == nil {
		t.Fatalf("%s: %d zfs_vdev_disk_wait_seconds{type=write} histograms, want 1", vdev, len(s))
	}
	return s[0].GetHistogram()
}

// quantileBound is the upper bound of the bucket that holds the q-th
// quantile of the writes vdev completed between two scrapes, and their
// number.
func quantileBound(t *testing.T, before, after e2e.Metrics, vdev string, q float64) (float64, uint64) {
	t.Helper()
	b, a := writeHistogram(t, before, vdev), writeHistogram(t, after, vdev)
	ios := a.GetSampleCount() - b.GetSampleCount()
	for i, bucket := range a.GetBucket() {
		if float64(bucket.GetCumulativeCount()-b.GetBucket()[i].GetCumulativeCount()) >= q*float64(ios) {
			return bucket.GetUpperBound(), ios
		}
	}
	return math.Inf(1), ios
}

// bucketsAreZpools compares the exporter's disk-wait buckets of the slow
// pool's leaves with zpool iostat -w read just before and just after the
// scrape: each lies between the two sums of zpool's buckets up to its
// bound.
func bucketsAreZpools(t *testing.T, x *e2e.Exporter) {
	t.Helper()
	zpool(t, "sync", slowPool)
	before := latencyTables(t)
	m := x.Scrape(t)
	after := latencyTables(t)
	checked := 0
	for _, n := range slowDisks {
		for _, typ := range []string{"read", "write"} {
			s := m.Series("zfs_vdev_disk_wait_seconds", map[string]string{"pool": slowPool, "vdev": leaf(n), "type": typ})
			if len(s) != 1 {
				t.Fatalf("%s: %d disk_wait histograms for %s, want 1", leaf(n), len(s), typ)
			}
			h := s[0].GetHistogram()
			column := "disk_wait_" + typ
			for _, bucket := range h.GetBucket() {
				lo, hi := before.upTo(t, leaf(n), column, bucket.GetUpperBound()), after.upTo(t, leaf(n), column, bucket.GetUpperBound())
				if c := bucket.GetCumulativeCount(); c < lo || c > hi {
					t.Errorf("%s %s le=%g: the exporter counts %d, zpool %d before and %d after", leaf(n), column, bucket.GetUpperBound(), c, lo, hi)
				}
				checked++
			}
			if c, lo, hi := h.GetSampleCount(), before.upTo(t, leaf(n), column, math.Inf(1)), after.upTo(t, leaf(n), column, math.Inf(1)); c < lo || c > hi {
				t.Errorf("%s %s: the exporter counts %d in all, zpool %d before and %d after", leaf(n), column, c, lo, hi)
			}
		}
	}
	t.Logf("%d disk-wait buckets of the slow pool's leaves checked against zpool iostat -w", checked)
}

// tables are zpool iostat -w's tables of the slow pool, by vdev name.
type tables map[string]zpoolparse.Histograms

func latencyTables(t *testing.T) tables {
	t.Helper()
	out := zpool(t, "iostat", "-vHp", "-w", slowPool)
	hs, err := zpoolparse.ParseHistograms(strings.NewReader(out), zpoolparse.LatencyHistogram)
	if err != nil {
		t.Fatalf("zpool iostat -vHp -w %s: %v", slowPool, err)
	}
	byName := tables{}
	for _, h := range hs {
		byName[h.Name] = h
	}
	return byName
}

// upTo sums the column of vdev's table over the rows whose bound is at
// most le.
func (ts tables) upTo(t *testing.T, vdev, column string, le float64) uint64 {
	t.Helper()
	h, ok := ts[vdev]
	if !ok {
		t.Fatalf("zpool iostat -w printed no table for %s", vdev)
	}
	col := -1
	for i, c := range h.Columns {
		if c == column {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("zpool iostat -w: no column %s in %v", column, h.Columns)
	}
	var sum uint64
	for i, bound := range h.Bounds {
		// The exporter writes zpool's bounds as they are; a relative
		// margin covers their printing.
		if bound <= le*(1+1e-9) {
			sum += h.Counts[i][col]
		}
	}
	return sum
}
