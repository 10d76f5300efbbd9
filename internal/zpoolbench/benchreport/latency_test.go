package benchreport

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"maps"
	"math"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/poolconfig"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// rz1Golden is what the vdev_latency collector exports by default for the
// OpenZFS 2.4 guest's raidz1 pool rz1: its row, raidz1-0 and five leaves,
// the log and the cache top-level vdevs too.
const rz1Golden = "../../../collector/testdata/vdev-latency-openzfs-2.4-rz1.prom"

// Bucket bounds of the collector's histograms (zpool's 2^n-1 ns).
const (
	le262us = 0.000262143
	le1ms   = 0.001048575
	le4ms   = 0.004194303
	le17ms  = 0.016777215
	le67ms  = 0.067108863
)

// added are I/Os a run adds to one histogram: how many fell in the bucket
// of each bound, and their summed time.
type added struct {
	counts map[float64]float64
	sum    float64
}

func (a added) total() float64 {
	n := 0.0
	for _, c := range a.counts {
		n += c
	}
	return n
}

// histKey names a histogram: family, vdev, type.
type histKey struct{ family, vdev, dir string }

var promLine = regexp.MustCompile(`^(\w+)\{([^}]*)\} (\S+)$`)
var promLabel = regexp.MustCompile(`(\w+)="([^"]*)"`)

// rz1Series are the golden's latency histograms as Prometheus stores
// them, at each of sampleTimes: the golden's lifetime counts at the
// baseline, and add's I/Os done evenly over the samples that follow; with
// the pool's tree and its I/O counters.
func rz1Series(t *testing.T, add map[histKey]added) []Series {
	t.Helper()
	f, err := os.Open(rz1Golden)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []Series
	histograms := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := promLine.FindStringSubmatch(sc.Text())
		if m == nil || !slices.Contains(benchmetrics.LatencyFamilies, m[1]) {
			continue
		}
		labels := map[string]string{}
		for _, l := range promLabel.FindAllStringSubmatch(m[2], -1) {
			labels[l[1]] = l[2]
		}
		base, err := strconv.ParseFloat(m[3], 64)
		if err != nil {
			t.Fatal(err)
		}
		family := m[1][:strings.LastIndexByte(m[1], '_')]
		a := add[histKey{family, labels["vdev"], labels["type"]}]
		more := 0.0
		switch {
		case strings.HasSuffix(m[1], "_sum"):
			more = a.sum
		case strings.HasSuffix(m[1], "_count"):
			more = a.total()
			histograms++
		default:
			le, err := strconv.ParseFloat(labels["le"], 64)
			if err != nil {
				t.Fatal(err)
			}
			for bound, n := range a.counts {
				if bound <= le {
					more += n
				}
			}
		}
		s := Series{Metric: m[1], Labels: labels}
		for _, when := range sampleTimes {
			done := more * (when + 1) / 13
			if !strings.HasSuffix(m[1], "_sum") {
				done = math.Round(done) // whole I/Os
			}
			s.Samples = append(s.Samples, Sample{Time: at(when), Value: base + done})
		}
		out = append(out, s)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// What the exporter sends by default, of 2 types each: the disk wait
	// of 7 vdevs, the total wait of the pool and its 3 top-level vdevs.
	if histograms != 22 {
		t.Fatalf("%d histograms in %s, want 22", histograms, rz1Golden)
	}
	info := func(vdev, typ, parent string) Series {
		return series("zfs_vdev_info", lbl("pool", "rz1", "vdev", vdev, "vdev_type", typ, "class", "normal", "parent", parent), 1, 1, 1, 1, 1, 1, 1)
	}
	out = append(out, info("rz1", "root", ""), info("raidz1-0", "raidz1", "rz1"))
	for _, leaf := range []string{"virtio-zd07", "virtio-zd08", "virtio-zd09", "virtio-zd10", "virtio-zd11"} {
		out = append(out, info(leaf, "disk", "raidz1-0"))
	}
	out = append(out, series("zfs_pool_state", lbl("pool", "rz1", "state", "online"), 1, 1, 1, 1, 1, 1, 1))
	for _, v := range []string{"rz1", "raidz1-0", "virtio-zd07", "virtio-zd08", "virtio-zd09", "virtio-zd10", "virtio-zd11"} {
		out = append(out, series("zfs_vdev_state", lbl("pool", "rz1", "vdev", v, "state", "online"), 1, 1, 1, 1, 1, 1, 1))
		l := lbl("pool", "rz1", "vdev", v)
		out = append(out,
			series("zfs_vdev_write_bytes_total", l, 0, 60e6, 180e6, 300e6, 420e6, 500e6, 520e6),
			series("zfs_vdev_read_bytes_total", l, 0, 0, 1e5, 2e5, 3e5, 4e5, 4e5),
			series("zfs_vdev_write_operations_total", l, 0, 100, 300, 500, 700, 950, 1000),
			series("zfs_vdev_read_operations_total", l, 0, 0, 10, 20, 30, 40, 40))
	}
	return out
}

// rz1Writes is a run of writes: the pool's row and raidz1-0 each complete
// 1000 writes and 40 reads (too few for percentiles), the leaves more.
func rz1Writes() map[histKey]added {
	const dw, tw = benchmetrics.DiskWait, benchmetrics.TotalWait
	reads := added{counts: map[float64]float64{le4ms: 40}, sum: 0.1}
	add := map[histKey]added{
		{tw, "rz1", "write"}:      {counts: map[float64]float64{le4ms: 600, le17ms: 385, le67ms: 15}, sum: 7.5},
		{dw, "rz1", "write"}:      {counts: map[float64]float64{le1ms: 900, le4ms: 99, le17ms: 1}, sum: 0.9},
		{tw, "raidz1-0", "write"}: {counts: map[float64]float64{le4ms: 500, le17ms: 490, le67ms: 10}, sum: 6},
		{dw, "raidz1-0", "write"}: {counts: map[float64]float64{le262us: 100, le1ms: 800, le4ms: 100}, sum: 0.8},
		{tw, "rz1", "read"}:       reads, {dw, "rz1", "read"}: reads,
		{tw, "raidz1-0", "read"}: reads, {dw, "raidz1-0", "read"}: reads,
	}
	for _, leaf := range []string{"virtio-zd07", "virtio-zd08", "virtio-zd09", "virtio-zd10", "virtio-zd11"} {
		add[histKey{dw, leaf, "write"}] = added{counts: map[float64]float64{le1ms: 400}, sum: 0.2}
		add[histKey{tw, leaf, "write"}] = added{counts: map[float64]float64{le4ms: 400}, sum: 0.8}
	}
	return add
}

// rz1Run is a fio run of sequential writes on rz1, its own figures from
// fio's real output.
func rz1Run(t *testing.T) Run {
	t.Helper()
	out := sample.MustRead(t, "../workload/testdata/fio-333-seq-write-tmpfs.txt")
	s, err := workload.ParseFio(bytes.NewReader(out.Body))
	if err != nil {
		t.Fatal(err)
	}
	return Run{
		ID: "7c1e5a90", Name: "raidz1 fio seqwrite", Pool: "rz1",
		Command: []string{"fio", "--name=seqwrite", "--directory=/rz1", "--rw=write", "--bs=1M", "--size=256M"},
		Host:    "guest", Start: t0, End: at(10),
		Config: &poolconfig.Config{Pool: "rz1", Layout: "raidz1 of 5", Ashift: 12, Compression: "lz4", Recordsize: 128 << 10,
			State: "online", Version: "OpenZFS 2.4.0"},
		Workload: &s, Source: "exporter http://guest:9134",
	}
}

func rz1Report(t *testing.T) Report {
	t.Helper()
	r, err := Compute(rz1Run(t), rz1Series(t, rz1Writes()))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The latency of each kind of I/O is of the I/Os done over the run, the
// histogram's increase: percentiles interpolated within the bucket the
// rank falls in, as histogram_quantile does, and means from _sum and
// _count; reads too few for a 99th percentile are n/a; leaves have none.
func TestLatencyFromRealHistograms(t *testing.T) {
	r := rz1Report(t)
	for _, m := range r.Missing {
		if strings.Contains(m, "wait_seconds") {
			t.Errorf("missing %q", m)
		}
	}
	if r.Pool.Latency == nil || len(r.Vdevs) != 6 || r.Vdevs[0].Name != "raidz1-0" || r.Vdevs[0].Latency == nil {
		t.Fatalf("pool %+v, vdevs %+v", r.Pool.Latency, r.Vdevs)
	}
	for _, leaf := range r.Vdevs[1:] {
		if leaf.Latency != nil {
			t.Errorf("leaf %s has a latency: %+v", leaf.Name, leaf.Latency)
		}
	}
	check := func(what string, l Latency, ops, p50, p99, mean float64) {
		t.Helper()
		if l.Unavailable != "" || l.Samples != len(sampleTimes) {
			t.Errorf("%s: %d samples, n/a: %q", what, l.Samples, l.Unavailable)
		}
		near(t, what+" operations", l.Operations, ops)
		near(t, what+" p50", l.P50Seconds, p50)
		near(t, what+" p99", l.P99Seconds, p99)
		near(t, what+" mean", l.MeanSeconds, mean)
	}
	pool, top := r.Pool.Latency, r.Vdevs[0].Latency
	// 600 in (1 ms, 4 ms], 385 in (4 ms, 17 ms], 15 in (17 ms, 67 ms]:
	// rank 500 is the 500th of the first 600, rank 990 the 5th of the 15.
	check("pool total write", pool.TotalWait.Write, 1000, le1ms+(le4ms-le1ms)*500/600, le17ms+(le67ms-le17ms)*5/15, 7.5/1000)
	// 900 in (262 µs, 1 ms], 99 in (1 ms, 4 ms], 1 above.
	check("pool disk write", pool.DiskWait.Write, 1000, le262us+(le1ms-le262us)*500/900, le1ms+(le4ms-le1ms)*90/99, 0.9/1000)
	// 500 in (1 ms, 4 ms], 490 in (4 ms, 17 ms]: ranks 500 and 990 are
	// the last of each, at its upper bound.
	check("raidz1-0 total write", top.TotalWait.Write, 1000, le4ms, le17ms, 6.0/1000)
	// 100 in the first bucket with I/Os, (65 µs, 262 µs].
	check("raidz1-0 disk write", top.DiskWait.Write, 1000, le262us+(le1ms-le262us)*400/800, le1ms+(le4ms-le1ms)*90/100, 0.8/1000)

	const fewReads = "40 reads completed during the run: too few for a 99th percentile (100 or more)"
	for what, l := range map[string]Latency{
		"pool total read": pool.TotalWait.Read, "pool disk read": pool.DiskWait.Read,
		"raidz1-0 total read": top.TotalWait.Read, "raidz1-0 disk read": top.DiskWait.Read,
	} {
		if l.Unavailable != fewReads || l.P50Seconds != 0 || l.P99Seconds != 0 || l.MeanSeconds != 0 || l.Operations != 40 {
			t.Errorf("%s: %+v, want no figures but the 40 reads, for %q", what, l, fewReads)
		}
	}
}

// quantile is histogram_quantile's: within the bucket, from its lower
// bound (0 below the first), and the highest finite bound for a rank in
// the +Inf bucket.
func TestQuantile(t *testing.T) {
	b := []histogramBucket{{0.001, 10}, {0.004, 10}, {0.016, 90}, {math.Inf(+1), 100}}
	for _, c := range []struct{ q, want float64 }{
		{0.05, 0.0005},                  // rank 5 of the first 10, from 0
		{0.1, 0.001},                    // rank 10: the first bucket's top
		{0.5, 0.004 + 0.012*40/80},      // rank 50: the 40th of the 80 in (4 ms, 16 ms]
		{0.95, 0.016},                   // rank 95, in +Inf: the highest finite bound
		{0.99, 0.016},                   // likewise
		{0.0, 0},                        // rank 0: the first bucket's bottom
		{0.101, 0.004 + 0.012*0.1/80.0}, // just past an empty bucket
	} {
		if got := quantile(c.q, b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("quantile(%v) = %v, want %v", c.q, got, c.want)
		}
	}
}

// Where the histograms are missing, or the run cannot tell, every figure
// is n/a with the reason, never a zero.
func TestLatencyUnavailable(t *testing.T) {
	noHistograms := "no zfs_vdev_total_wait_seconds or zfs_vdev_disk_wait_seconds histograms: the exporter's vdev_latency collector is off (--no-collector.vdev_latency), " +
		"its zpool has no iostat -w (zfs-fuse, OpenZFS before 0.7), or the exporter predates them"
	each := func(r Report, f func(vdev, kind string, l Latency)) {
		for _, v := range append([]VdevStats{r.Pool}, r.Vdevs...) {
			if v.Latency == nil {
				continue
			}
			for _, k := range latencyKinds {
				f(v.Name, k.dir+" "+k.wait, k.get(*v.Latency))
			}
		}
	}
	without := func(drop func(s Series) bool) []Series {
		var out []Series
		for _, s := range rz1Series(t, rz1Writes()) {
			if !drop(s) {
				out = append(out, s)
			}
		}
		return out
	}
	for _, c := range []struct {
		name   string
		series []Series
		want   func(vdev, kind string) string
	}{
		{"collector off", without(func(s Series) bool { return slices.Contains(benchmetrics.LatencyFamilies, s.Metric) }),
			func(string, string) string { return noHistograms }},
		{"total wait only", without(func(s Series) bool { return strings.HasPrefix(s.Metric, benchmetrics.DiskWait) }),
			func(_, kind string) string {
				if strings.HasSuffix(kind, "disk wait") {
					return strings.Replace(noHistograms, "zfs_vdev_total_wait_seconds or ", "", 1)
				}
				if strings.HasPrefix(kind, "read") {
					return "40 reads completed during the run: too few for a 99th percentile (100 or more)"
				}
				return ""
			}},
		{"a vdev without its histograms", without(func(s Series) bool {
			return s.Labels["vdev"] == "raidz1-0" && strings.HasPrefix(s.Metric, benchmetrics.DiskWait) && s.Labels["type"] == "write"
		}), func(vdev, kind string) string {
			switch {
			case vdev == "raidz1-0" && kind == "write disk wait":
				return "no zfs_vdev_disk_wait_seconds histogram of this vdev's writes"
			case strings.HasPrefix(kind, "read"):
				return "40 reads completed during the run: too few for a 99th percentile (100 or more)"
			}
			return ""
		}},
		{"nothing done", rz1Series(t, nil), func(_, kind string) string {
			return "no " + strings.Fields(kind)[0] + "s completed during the run"
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Compute(rz1Run(t), c.series)
			if err != nil {
				t.Fatal(err)
			}
			each(r, func(vdev, kind string, l Latency) {
				want := c.want(vdev, kind)
				if l.Unavailable != want {
					t.Errorf("%s %s: n/a %q, want %q", vdev, kind, l.Unavailable, want)
				}
				if want != "" && (l.P50Seconds != 0 || l.P99Seconds != 0 || l.MeanSeconds != 0) {
					t.Errorf("%s %s: figures %+v beside the reason", vdev, kind, l)
				}
			})
			back, err := ReadJSON(bytes.NewReader(render(t, func(w io.Writer) error { return WriteJSON(w, r) })))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, r) {
				t.Error("the report differs after a JSON round trip")
			}
		})
	}

	// A single sample: no increase to take, and no count of I/Os.
	var one []Series
	for _, s := range rz1Series(t, rz1Writes()) {
		if slices.Contains(benchmetrics.LatencyFamilies, s.Metric) {
			s.Samples = s.Samples[len(s.Samples)-1:]
		}
		one = append(one, s)
	}
	r, err := Compute(rz1Run(t), one)
	if err != nil {
		t.Fatal(err)
	}
	if l := r.Pool.Latency.TotalWait.Write; l.Unavailable != "a single sample of the histogram: no increase to take" || l.Samples != 1 {
		t.Errorf("a single sample: %+v", l)
	}
	var raw struct {
		Pool struct {
			Latency struct {
				TotalWait struct {
					Write map[string]json.RawMessage `json:"write"`
				} `json:"total_wait"`
			} `json:"latency"`
		} `json:"pool"`
	}
	if err := json.Unmarshal(render(t, func(w io.Writer) error { return WriteJSON(w, r) }), &raw); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"operations", "p50_seconds", "p99_seconds", "mean_seconds"} {
		if v := string(raw.Pool.Latency.TotalWait.Write[f]); v != "null" {
			t.Errorf("JSON pool.latency.total_wait.write.%s = %s, want null", f, v)
		}
	}
}

// A pool re-imported during the run restarts its counts from 0: each
// series' increase counts what it holds after the drop, as Prometheus's
// increase() does, and the figures are those of the run without the
// re-import.
func TestLatencyAcrossAReset(t *testing.T) {
	ss := rz1Series(t, rz1Writes())
	for i := range ss {
		s := &ss[i]
		if s.Labels["vdev"] != "rz1" || !slices.Contains(benchmetrics.LatencyFamilies, s.Metric) {
			continue
		}
		// Re-imported between the samples at 4 and 6 s: from then on the
		// series counts the I/Os since.
		before := s.Samples[2].Value
		for j := 3; j < len(s.Samples); j++ {
			s.Samples[j].Value -= before
		}
	}
	r, err := Compute(rz1Run(t), ss)
	if err != nil {
		t.Fatal(err)
	}
	want := rz1Report(t)
	for _, k := range latencyKinds {
		got, w := k.get(*r.Pool.Latency), k.get(*want.Pool.Latency)
		if got.Unavailable != w.Unavailable {
			t.Errorf("%s %s: n/a %q, want %q", k.dir, k.wait, got.Unavailable, w.Unavailable)
		}
		near(t, k.dir+" "+k.wait+" operations", got.Operations, w.Operations)
		near(t, k.dir+" "+k.wait+" p50", got.P50Seconds, w.P50Seconds)
		near(t, k.dir+" "+k.wait+" p99", got.P99Seconds, w.P99Seconds)
		near(t, k.dir+" "+k.wait+" mean", got.MeanSeconds, w.MeanSeconds)
	}
}

// The report's every format shows the latency table, fio's own
// distribution beside the pool's, and the reads' reason.
func TestLatencyGolden(t *testing.T) {
	r := rz1Report(t)
	table := string(render(t, func(w io.Writer) error { return WriteTable(w, r) }))
	golden(t, "latency.txt", []byte(table))
	const fewReads = "40 reads completed during the run: too few for a 99th percentile (100 or more)"
	for _, want := range []string{
		"Latency (ms) of the pool and its top-level vdevs, from zpool iostat -w",
		"note: latency n/a for rz1 read, raidz1-0 read: " + fewReads,
		// fio's clat: 50.00th=[  192], 99.00th=[ 1123] µs, avg=234.22 µs.
		"fio seqwrite group 0 write clat: p50 0.192 ms, p99 1.12 ms, mean 0.234 ms | pool write total wait: p50 3.67 ms, p99 33.6 ms, mean 7.50 ms; disk wait: p50 0.699 ms, p99 3.91 ms, mean 0.900 ms",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if !regexp.MustCompile(`(?m)^rz1 +read +40 +n/a +n/a +n/a +n/a +n/a +n/a$`).MatchString(table) ||
		!regexp.MustCompile(`(?m)^ +write +1000 +3\.67 +33\.6 +7\.50 +0\.699 +3\.91 +0\.900$`).MatchString(table) {
		t.Errorf("the pool's rows:\n%s", table)
	}
	for _, l := range strings.Split(table, "\n") {
		if !strings.HasPrefix(l, "note") && !strings.HasPrefix(l, "fio ") && !strings.HasPrefix(l, "no ") && len([]rune(l)) > textWidth {
			t.Errorf("line of %d columns: %q", len([]rune(l)), l)
		}
	}

	md := string(render(t, func(w io.Writer) error { return WriteMarkdown(w, r) }))
	golden(t, "latency.md", []byte(md))
	for _, want := range []string{"| rz1 | read | 40 | n/a | n/a | n/a | n/a | n/a | n/a |", "|  | write | 1000 | 3.67 | 33.6 | 7.50 | 0.699 | 3.91 | 0.900 |",
		"- note: latency n/a for rz1 read, raidz1-0 read: " + fewReads} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}

	data := render(t, func(w io.Writer) error { return WriteCSV(w, r) })
	golden(t, "latency.csv", data)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	pool, top, leaf := recs[1], recs[2], recs[3]
	for _, c := range []struct {
		row  []string
		col  string
		want float64
	}{
		{pool, "total_wait_write_mean_seconds", 0.0075}, {pool, "disk_wait_write_mean_seconds", 0.0009},
		{pool, "total_wait_write_p50_seconds", le1ms + (le4ms-le1ms)*500/600}, {top, "total_wait_write_p50_seconds", le4ms},
	} {
		got, err := strconv.ParseFloat(c.row[col[c.col]], 64)
		if err != nil {
			t.Errorf("CSV %s of %s: %v", c.col, c.row[col["vdev"]], err)
			continue
		}
		near(t, "CSV "+c.col+" of "+c.row[col["vdev"]], got, c.want)
	}
	for _, c := range []struct {
		row       []string
		col, want string
	}{
		{pool, "total_wait_write_unavailable", ""},
		{pool, "total_wait_read_p50_seconds", ""}, {pool, "total_wait_read_unavailable", fewReads}, {top, "disk_wait_read_unavailable", fewReads},
		{leaf, "vdev", "virtio-zd07"}, {leaf, "total_wait_write_p50_seconds", ""}, {leaf, "total_wait_write_unavailable", ""},
	} {
		if got := c.row[col[c.col]]; got != c.want {
			t.Errorf("CSV %s of %s = %q, want %q", c.col, c.row[col["vdev"]], got, c.want)
		}
	}

	js := render(t, func(w io.Writer) error { return WriteJSON(w, r) })
	golden(t, "latency.json", js)
	var raw struct {
		Pool struct {
			Latency map[string]map[string]map[string]json.RawMessage `json:"latency"`
		} `json:"pool"`
	}
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	w, rd := raw.Pool.Latency["total_wait"]["write"], raw.Pool.Latency["disk_wait"]["read"]
	var mean float64
	if err := json.Unmarshal(w["mean_seconds"], &mean); err != nil || string(w["operations"]) != "1000" || w["unavailable"] != nil {
		t.Errorf("JSON pool.latency.total_wait.write = %v (%v)", w, err)
	}
	near(t, "JSON pool.latency.total_wait.write.mean_seconds", mean, 0.0075)
	if want, _ := json.Marshal(fewReads); string(rd["unavailable"]) != string(want) || string(rd["p99_seconds"]) != "null" || string(rd["operations"]) != "40" {
		t.Errorf("JSON pool.latency.disk_wait.read = %v", rd)
	}
	back, err := ReadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Error("the report differs after a JSON round trip")
	}
}

// Compare sets the pool's latency of runs side by side with its ratio,
// n/a where a run cannot tell and why, and fio's own beside it; a run
// without histograms has every latency row n/a for its one reason.
func TestCompareLatency(t *testing.T) {
	// The second run: the same writes, four times slower in the queue.
	slower := rz1Writes()
	slower[histKey{benchmetrics.TotalWait, "rz1", "write"}] = added{counts: map[float64]float64{le17ms: 600, le67ms: 400}, sum: 30}
	run := rz1Run(t)
	run.Name, run.ID = "raidz1 fio seqwrite, sync=always", "9d0f3b12"
	second, err := Compute(run, rz1Series(t, slower))
	if err != nil {
		t.Fatal(err)
	}
	mirror := mirrorReport(t)
	c := Compare([]Report{rz1Report(t), second, mirror})
	rows := map[string]ComparedRow{}
	var keys []string
	for _, row := range c.Rows {
		rows[row.Key] = row
		keys = append(keys, row.Key)
	}
	const fewReads = "40 reads completed during the run: too few for a 99th percentile (100 or more)"
	noHistograms := mirror.Pool.Latency.TotalWait.Write.Unavailable
	for _, dir := range []string{"write", "read"} {
		for _, wait := range []string{"total_wait", "disk_wait"} {
			for _, f := range []string{"p50_seconds", "p99_seconds", "mean_seconds"} {
				key := "pool." + dir + "." + wait + "." + f
				row, ok := rows[key]
				if !ok {
					t.Errorf("no row %s in %q", key, keys)
					continue
				}
				if row.Unit != "seconds" || !strings.HasSuffix(row.Figure, " ms") || row.Values[2] != nil || row.Unavailable[2] != noHistograms {
					t.Errorf("%s: unit %q, figure %q, third run %v (%q); want seconds, ms, and n/a without histograms",
						key, row.Unit, row.Figure, deref(row.Values), row.Unavailable)
				}
				if dir == "read" && (row.Values[0] != nil || row.Unavailable[0] != fewReads || row.Unavailable[1] != fewReads) {
					t.Errorf("%s: %v (%q), want n/a for the reads", key, deref(row.Values), row.Unavailable)
				}
				if dir == "write" && (row.Values[0] == nil || row.Values[1] == nil || row.Unavailable[0] != "" || row.Unavailable[1] != "") {
					t.Errorf("%s: %v (%q), want the writes of both runs", key, deref(row.Values), row.Unavailable)
				}
			}
		}
	}
	// 600 in (4 ms, 17 ms] and 400 in (17 ms, 67 ms] against the first
	// run's 600 in (1 ms, 4 ms], 385 above and 15 in (17 ms, 67 ms].
	p99 := rows["pool.write.total_wait.p99_seconds"]
	want := (le17ms + (le67ms-le17ms)*390/400) / (le17ms + (le67ms-le17ms)*5/15)
	if p99.Ratios[1] == nil || math.Abs(*p99.Ratios[1]-want) > 1e-9 {
		t.Errorf("p99 ratio %v, want %v", deref(p99.Ratios), want)
	}
	if mean := rows["pool.write.total_wait.mean_seconds"]; mean.Ratios[1] == nil || math.Abs(*mean.Ratios[1]-4) > 1e-9 {
		t.Errorf("mean ratio %v, want 4", deref(mean.Ratios))
	}
	fio := rows["workload.fio seqwrite group 0 write.clat_p99_seconds"]
	if fio.Values == nil || fio.Values[0] == nil || math.Abs(*fio.Values[0]-1123e-6) > 1e-12 || fio.Values[2] != nil || fio.Figure != "fio seqwrite group 0 write clat p99 ms" {
		t.Errorf("fio's p99 row %+v, want 1123 µs for the fio runs, none for dd's", fio)
	}
	if _, ok := rows["workload.fio seqwrite group 0 write.lat_p99_seconds"]; ok {
		t.Error("a row of fio's lat percentiles, which it did not print")
	}

	table := string(render(t, func(w io.Writer) error { return WriteComparisonTable(w, c) }))
	golden(t, "compare-latency.txt", []byte(table))
	for _, want := range []string{
		"note: n/a in run 1 (raidz1 fio seqwrite), pool read latency ms: " + fewReads,
		"note: n/a in run 3 (mirror ashift=12 lz4), pool latency ms: " + noHistograms,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("comparison lacks %q:\n%s", want, table)
		}
	}
	// 33.6 ms and 65.9 ms: the ranks of the p99s above.
	if !regexp.MustCompile(`(?m)write total wait p99 ms +33\.6 +65\.9 \(1\.96×\) +n/a$`).MatchString(table) {
		t.Errorf("the write p99 row:\n%s", table)
	}
	golden(t, "compare-latency.md", render(t, func(w io.Writer) error { return WriteComparisonMarkdown(w, c) }))
	data := render(t, func(w io.Writer) error { return WriteComparisonCSV(w, c) })
	golden(t, "compare-latency.csv", data)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec[0] == "pool.read.disk_wait.p99_seconds" && rec[len(rec)-1] != "run 1: "+fewReads+"; run 2: "+fewReads+"; run 3: "+noHistograms {
			t.Errorf("CSV %q", rec)
		}
	}
	var back Comparison
	if err := json.Unmarshal(render(t, func(w io.Writer) error { return WriteComparisonJSON(w, c) }), &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Error("comparison differs after a JSON round trip")
	}
}

// A note names the pool's latency figures by what they share.
func TestGroupLatency(t *testing.T) {
	var all []string
	for _, dir := range []string{"write", "read"} {
		for _, wait := range []string{"total wait", "disk wait"} {
			for _, f := range []string{"p50", "p99", "mean"} {
				all = append(all, "pool "+dir+" "+wait+" "+f+" ms")
			}
		}
	}
	for _, c := range []struct {
		in, want []string
	}{
		{append([]string{"pool write MB/s peak"}, all...), []string{"pool write MB/s peak", "pool latency ms"}},
		{all[6:], []string{"pool read latency ms"}},
		{all[:3], []string{"pool write total wait p50, p99 and mean ms"}},
		{append(all[3:5:5], "pool read MB/s peak"), []string{"pool write disk wait p50 ms", "pool write disk wait p99 ms", "pool read MB/s peak"}},
	} {
		if got := groupLatency(c.in); !slices.Equal(got, c.want) {
			t.Errorf("groupLatency(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Milliseconds keep three significant digits below 1 ms.
func TestFmtMS(t *testing.T) {
	for s, want := range map[float64]string{0.0015: "1.50", 7.584e-6: "0.00758", 0.0009: "0.900", 0.000699: "0.699", 0.0336: "33.6", 17.2: "17200", 0: "0", 1.48e-7: "0.000148"} {
		if got := fmtMS(s); got != want {
			t.Errorf("fmtMS(%v) = %q, want %q", s, got, want)
		}
	}
}

// The text formats fold the pool's latency rows into one only when no run
// has any and each run lacks them all for one reason.
func TestLatencyRowsFolded(t *testing.T) {
	idle, err := Compute(rz1Run(t), rz1Series(t, nil)) // no reads, no writes: two reasons
	if err != nil {
		t.Fatal(err)
	}
	count := func(c Comparison) (n int) {
		for _, row := range c.shownRows() {
			if isPoolLatency(row.Key) || row.Key == "pool.latency" {
				n++
			}
		}
		return n
	}
	if n := count(Compare([]Report{mirrorReport(t), secondReport(t)})); n != 1 {
		t.Errorf("two runs without histograms: %d latency rows shown, want 1", n)
	}
	c := Compare([]Report{idle, mirrorReport(t)})
	if n := count(c); n != 12 {
		t.Errorf("a run without reads or writes beside one without histograms: %d latency rows shown, want 12", n)
	}
	notes := strings.Join(c.unavailableNotes(c.shownRows()), "\n")
	for _, want := range []string{"pool write latency ms: no writes completed during the run", "pool read latency ms: no reads completed during the run",
		"run 2 (mirror ashift=12 lz4), pool latency ms: no zfs_vdev_total_wait_seconds"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
}

// Series the report cannot take as they are are noted, once each: a
// histogram twice (two scrape jobs), a bound that is no number, a
// histogram that appeared after the start. The figures are those of the
// series used.
func TestLatencyNotes(t *testing.T) {
	var ss []Series
	for _, s := range rz1Series(t, rz1Writes()) {
		ss = append(ss, s)
		if s.Labels["vdev"] == "raidz1-0" && s.Labels["type"] == "write" && strings.HasPrefix(s.Metric, benchmetrics.TotalWait) {
			again := s
			again.Labels = maps.Clone(s.Labels)
			again.Labels["job"] = "other"
			ss = append(ss, again)
		}
		if s.Labels["vdev"] == "rz1" && s.Labels["type"] == "write" && s.Metric == benchmetrics.DiskWait+"_bucket" && s.Labels["le"] == "+Inf" {
			bad := s
			bad.Labels = maps.Clone(s.Labels)
			bad.Labels["le"] = "lots"
			ss = append(ss, bad)
		}
	}
	for i := range ss {
		if ss[i].Labels["vdev"] == "rz1" && ss[i].Labels["type"] == "read" && strings.HasPrefix(ss[i].Metric, benchmetrics.DiskWait) {
			ss[i].Samples = ss[i].Samples[2:] // from 4 s on
		}
	}
	r, err := Compute(rz1Run(t), ss)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, m := range r.Missing {
		if strings.Contains(m, "wait_seconds") {
			notes = append(notes, m)
		}
	}
	want := []string{
		`zfs_vdev_disk_wait_seconds_count for vdev "rz1", type "read" has no sample at or before the start; it counts from its first sample, 4.0 s after the start`,
		`zfs_vdev_disk_wait_seconds_bucket for vdev "rz1", type "write": a bucket's le "lots" is no number; the bucket is left out`,
		`2 series of zfs_vdev_total_wait_seconds_count for vdev "raidz1-0", type "write"; the first, map[pool:rz1 type:write vdev:raidz1-0], is used`,
		`2 series of zfs_vdev_total_wait_seconds_sum for vdev "raidz1-0", type "write"; the first, map[pool:rz1 type:write vdev:raidz1-0], is used`,
		`several series of zfs_vdev_total_wait_seconds_bucket for vdev "raidz1-0", type "write" at one le; the first of each is used`,
	}
	slices.Sort(notes)
	slices.Sort(want)
	if !slices.Equal(notes, want) {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(notes, "\n"), strings.Join(want, "\n"))
	}
	plain := rz1Report(t)
	near(t, "raidz1-0 total write p99 with a second job", r.Vdevs[0].Latency.TotalWait.Write.P99Seconds, plain.Vdevs[0].Latency.TotalWait.Write.P99Seconds)
	near(t, "rz1 disk write p50 beside a bad bound", r.Pool.Latency.DiskWait.Write.P50Seconds, plain.Pool.Latency.DiskWait.Write.P50Seconds)
}
