package benchreport

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// Latency figures come from the exporter's vdev_latency histograms (zpool
// iostat -w), lifetime counts of I/Os by how long they took: each figure is
// of the I/Os that completed over the report's sample span, the histogram's
// increase from the baseline to the last sample, bucket by bucket. The
// percentiles are interpolated linearly within their bucket, as
// Prometheus's histogram_quantile does, and the buckets are a factor of
// two to four wide (1 µs to 17 s): they are estimates, good for comparing
// runs and for telling a queue from a slow disk, not to the microsecond.
// The mean is _sum over _count, and the exporter's _sum counts each I/O at
// the middle of its bucket: an estimate too.

// MinLatencyOperations is the fewest I/Os a latency's figures are given
// for: below a hundred, a 99th percentile is the slowest I/O or less, and
// says nothing of the run.
const MinLatencyOperations = 100

// VdevLatency is how long a vdev's I/Os took during the run: on the disk
// (disk_wait), and in all (total_wait: ZFS's queue and the disk). Reads
// and writes are apart: on ZFS, writes are mostly asynchronous, gathered
// into transaction groups and queued behind each other, while reads are
// waited for by the application; one figure of both would show the queue
// of the writes as the latency of the reads.
type VdevLatency struct {
	DiskWait  WaitLatency `json:"disk_wait"`
	TotalWait WaitLatency `json:"total_wait"`
}

// WaitLatency is one wait's latency, reads and writes apart.
type WaitLatency struct {
	Read  Latency `json:"read"`
	Write Latency `json:"write"`
}

// Latency is the latency of one kind of I/O (a direction and a wait) over
// the sample span. Unit: seconds.
type Latency struct {
	// Samples is how many samples of the histogram were read; 0 when it
	// is missing.
	Samples int `json:"samples"`
	// Operations is how many I/Os completed: the increase of _count.
	Operations float64 `json:"operations"`
	// P50Seconds and P99Seconds are the median and the 99th percentile,
	// MeanSeconds the mean.
	P50Seconds  float64 `json:"p50_seconds"`
	P99Seconds  float64 `json:"p99_seconds"`
	MeanSeconds float64 `json:"mean_seconds"`
	// Unavailable says why there are no figures (no histogram, too few
	// I/Os); P50Seconds, P99Seconds and MeanSeconds are then 0, and null
	// in JSON, as Operations is when there was no increase to take.
	Unavailable string `json:"unavailable,omitempty"`
}

// MarshalJSON writes the figures as null when there are none, so that no
// reader takes their zeros for a latency.
func (l Latency) MarshalJSON() ([]byte, error) {
	type plain Latency
	if l.Unavailable == "" {
		return json.Marshal(plain(l))
	}
	var ops *float64
	if l.Samples > 1 {
		ops = &l.Operations
	}
	return json.Marshal(struct {
		Samples     int      `json:"samples"`
		Operations  *float64 `json:"operations"`
		P50Seconds  *float64 `json:"p50_seconds"`
		P99Seconds  *float64 `json:"p99_seconds"`
		MeanSeconds *float64 `json:"mean_seconds"`
		Unavailable string   `json:"unavailable"`
	}{Samples: l.Samples, Operations: ops, Unavailable: l.Unavailable})
}

// Available tells whether l has figures.
func (l Latency) Available() bool { return l.Unavailable == "" }

// of gives the total wait and the disk wait of one direction, "read" or
// "write".
func (v VdevLatency) of(dir string) (total, disk Latency) {
	if dir == "write" {
		return v.TotalWait.Write, v.DiskWait.Write
	}
	return v.TotalWait.Read, v.DiskWait.Read
}

// latencyKind names one of a VdevLatency's figures.
type latencyKind struct {
	wait string // "disk wait", "total wait"
	dir  string // "read", "write"
	get  func(VdevLatency) Latency
}

// latencyKinds are a VdevLatency's figures, in the order the reports list
// them: total wait first, what the application saw of the pool.
var latencyKinds = []latencyKind{
	{"total wait", "read", func(v VdevLatency) Latency { return v.TotalWait.Read }},
	{"total wait", "write", func(v VdevLatency) Latency { return v.TotalWait.Write }},
	{"disk wait", "read", func(v VdevLatency) Latency { return v.DiskWait.Read }},
	{"disk wait", "write", func(v VdevLatency) Latency { return v.DiskWait.Write }},
}

// noLatencyHistograms is why a report of a pool without either histogram
// family has no latency.
func noLatencyHistograms(families ...string) string {
	return fmt.Sprintf("no %s histograms: the exporter's vdev_latency collector is off (--no-collector.vdev_latency), "+
		"its zpool has no iostat -w (zfs-fuse, OpenZFS before 0.7), or the exporter predates them",
		strings.Join(families, " or "))
}

// latencies gives the pool's row and its top-level vdevs their latency.
// Leaves have none: a report compares layouts, and a leaf's latency is
// its disk's, which the dashboards show.
func (c *computer) latencies(r *Report) {
	var absent []string
	for _, f := range []string{benchmetrics.TotalWait, benchmetrics.DiskWait} {
		if len(c.byName[f+"_bucket"])+len(c.byName[f+"_sum"])+len(c.byName[f+"_count"]) == 0 {
			absent = append(absent, f)
		}
	}
	why := map[string]string{}
	for _, f := range absent {
		why[f] = noLatencyHistograms(absent...)
	}
	for _, v := range append([]*VdevStats{&r.Pool}, pointers(r.Vdevs)...) {
		if v.Depth > 1 {
			continue
		}
		get := func(family, dir string) Latency {
			if why[family] != "" {
				return Latency{Unavailable: why[family]}
			}
			return c.latency(family, v.Name, dir)
		}
		v.Latency = &VdevLatency{
			DiskWait:  WaitLatency{Read: get(benchmetrics.DiskWait, "read"), Write: get(benchmetrics.DiskWait, "write")},
			TotalWait: WaitLatency{Read: get(benchmetrics.TotalWait, "read"), Write: get(benchmetrics.TotalWait, "write")},
		}
	}
}

// histogramBucket is a bucket's increase over the sample span: the I/Os
// that took le seconds or less.
type histogramBucket struct{ le, count float64 }

// latency computes the latency of vdev's I/Os of direction dir (the type
// label) from family's histogram.
func (c *computer) latency(family, vdev, dir string) Latency {
	want := map[string]string{"vdev": vdev, "type": dir}
	counts, sums := c.find(family+"_count", want), c.find(family+"_sum", want)
	byBound := c.find(family+"_bucket", want)
	if len(counts)+len(sums)+len(byBound) == 0 {
		return Latency{Unavailable: fmt.Sprintf("no %s histogram of this vdev's %ss", family, dir)}
	}
	if len(counts) == 0 || len(sums) == 0 {
		return Latency{Unavailable: fmt.Sprintf("%s of this vdev's %ss has no _count or no _sum", family, dir)}
	}
	for _, ss := range [][]*Series{counts, sums} {
		if len(ss) > 1 {
			c.missing("%d series of %s for vdev %q, type %q; the first, %v, is used", len(ss), ss[0].Metric, vdev, dir, ss[0].Labels)
		}
	}
	count := counts[0]
	l := Latency{Samples: len(count.Samples)}
	if l.Samples < 2 {
		l.Unavailable = "a single sample of the histogram: no increase to take"
		return l
	}
	if count.Samples[0].Time.After(c.run.Start) {
		c.missing("%s for vdev %q, type %q has no sample at or before the start; it counts from its first sample, %.1f s after the start",
			count.Metric, vdev, dir, c.secs(count.Samples[0].Time))
	}
	l.Operations = increase(count.Samples)

	var buckets []histogramBucket
	seen := map[float64]bool{}
	for _, s := range byBound {
		le, err := strconv.ParseFloat(s.Labels["le"], 64)
		if err != nil || math.IsNaN(le) {
			c.missing("%s for vdev %q, type %q: a bucket's le %q is no number; the bucket is left out", s.Metric, vdev, dir, s.Labels["le"])
			continue
		}
		if seen[le] {
			// As for _count and _sum, noted once for the histogram.
			c.missing("several series of %s for vdev %q, type %q at one le; the first of each is used", s.Metric, vdev, dir)
			continue
		}
		seen[le] = true
		buckets = append(buckets, histogramBucket{le: le, count: increase(s.Samples)})
	}
	slices.SortFunc(buckets, func(a, b histogramBucket) int { return cmp.Compare(a.le, b.le) })
	if len(buckets) < 2 || !math.IsInf(buckets[len(buckets)-1].le, +1) {
		l.Unavailable = fmt.Sprintf("%s of this vdev's %ss has no +Inf bucket or no other: no percentile", family, dir)
		return l
	}
	// The increases of cumulative buckets are cumulative too, but for a
	// counter reset one bucket saw and another did not: Prometheus's
	// histogram_quantile then takes each bucket as at least the one below.
	for i := 1; i < len(buckets); i++ {
		buckets[i].count = max(buckets[i].count, buckets[i-1].count)
	}
	n := buckets[len(buckets)-1].count
	switch {
	case n == 0:
		l.Unavailable = fmt.Sprintf("no %ss completed during the run", dir)
		return l
	case n < MinLatencyOperations:
		l.Unavailable = fmt.Sprintf("%s %ss completed during the run: too few for a 99th percentile (%d or more)", fmtCount(n), dir, MinLatencyOperations)
		return l
	}
	l.P50Seconds, l.P99Seconds = quantile(0.5, buckets), quantile(0.99, buckets)
	if l.Operations > 0 {
		l.MeanSeconds = increase(sums[0].Samples) / l.Operations
	} else {
		l.Unavailable = fmt.Sprintf("%s of this vdev's %ss: _count did not move while its buckets did", family, dir)
		l.P50Seconds, l.P99Seconds = 0, 0
	}
	return l
}

// quantile is the q-quantile of buckets, sorted by le, the last one +Inf
// and holding every I/O, as Prometheus's histogram_quantile computes it:
// the bucket the rank falls in, and within it a linear interpolation
// between its lower bound (0 for the first) and its upper bound. A rank in
// the +Inf bucket gives the highest finite bound: the I/O took that long
// or longer.
func quantile(q float64, buckets []histogramBucket) float64 {
	last := len(buckets) - 1
	rank := q * buckets[last].count
	b := 0
	for b < last && buckets[b].count < rank {
		b++
	}
	if b == last {
		return buckets[last-1].le
	}
	lower, below := 0.0, 0.0
	if b > 0 {
		lower, below = buckets[b-1].le, buckets[b-1].count
	}
	in := buckets[b].count - below
	if in <= 0 {
		// Only a rank of 0 in an empty first bucket: no division by 0.
		return buckets[b].le
	}
	return lower + (buckets[b].le-lower)*(rank-below)/in
}

// latencyHeading heads the latency figures in the text formats.
const latencyHeading = "Latency (ms) of the pool and its top-level vdevs, from zpool iostat -w"

// latencyBlocks are the report's latency table and its notes; when no
// figure is there, the notes alone, a table of n/a saying no more. A
// report without any latency (saved before it) has none.
func latencyBlocks(r Report) []block {
	var rows []VdevStats
	for _, v := range append([]VdevStats{r.Pool}, r.Vdevs...) {
		if v.Latency != nil {
			rows = append(rows, v)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	notes, any := latencyNotes(rows)
	if !any {
		return []block{{heading: latencyHeading, lines: notes}}
	}
	t := &table{cols: []column{
		{name: "VDEV", max: 30}, {name: "I/O"}, {name: "OPS", right: true},
		{name: "TOTAL p50", right: true}, {name: "TOTAL p99", right: true}, {name: "TOTAL mean", right: true},
		{name: "DISK p50", right: true}, {name: "DISK p99", right: true}, {name: "DISK mean", right: true},
	}}
	for _, v := range rows {
		for i, dir := range []string{"read", "write"} {
			name := ""
			if i == 0 {
				name = strings.Repeat("  ", v.Depth) + v.Name
			}
			total, disk := v.Latency.of(dir)
			ops := "-"
			if total.Samples > 1 {
				ops = fmtCount(total.Operations)
			} else if disk.Samples > 1 {
				ops = fmtCount(disk.Operations)
			}
			t.add(false, append([]string{name, dir, ops}, append(latencyCells(total), latencyCells(disk)...)...)...)
		}
	}
	lines := append([]string{"estimates: p50 and p99 interpolated in their bucket (histogram_quantile); means at bucket middles"}, notes...)
	return []block{{heading: latencyHeading, table: t}, {lines: lines}}
}

// latencyCells are a latency's p50, p99 and mean in ms, or n/a.
func latencyCells(l Latency) []string {
	if !l.Available() {
		return []string{notAvailable, notAvailable, notAvailable}
	}
	return []string{fmtMS(l.P50Seconds), fmtMS(l.P99Seconds), fmtMS(l.MeanSeconds)}
}

// fmtMS formats seconds as milliseconds, with no unit and three
// significant digits below 1 ms too, where sig keeps three decimals: fio
// times I/Os to the nanosecond, and 7.58 µs must not read 0.008 ms.
func fmtMS(seconds float64) string {
	ms := seconds * 1e3
	if a := math.Abs(ms); a > 0 && a < 1 {
		return strconv.FormatFloat(ms, 'f', 2-int(math.Floor(math.Log10(a))), 64)
	}
	return sig(ms)
}

// latencyNotes say why latency figures are n/a, a note per reason, and
// tell whether any figure is there. A reason that holds for every figure
// is said once for all.
func latencyNotes(rows []VdevStats) (notes []string, any bool) {
	type item struct {
		vdev, dir string
		waits     []string
	}
	var reasons []string
	items := map[string][]item{}
	total := 0
	for _, v := range rows {
		for _, dir := range []string{"read", "write"} {
			for _, k := range latencyKinds {
				if k.dir != dir {
					continue
				}
				total++
				l := k.get(*v.Latency)
				if l.Available() {
					any = true
					continue
				}
				why := l.Unavailable
				if items[why] == nil {
					reasons = append(reasons, why)
				}
				is := items[why]
				if n := len(is); n > 0 && is[n-1].vdev == v.Name && is[n-1].dir == dir {
					is[n-1].waits = append(is[n-1].waits, k.wait)
				} else {
					is = append(is, item{v.Name, dir, []string{k.wait}})
				}
				items[why] = is
			}
		}
	}
	for _, why := range reasons {
		count := 0
		var what []string
		for _, it := range items[why] {
			count += len(it.waits)
			s := it.vdev + " " + it.dir
			if len(it.waits) == 1 {
				s += " " + it.waits[0]
			}
			what = append(what, s)
		}
		if count == total {
			notes = append(notes, "note: latency "+notAvailable+": "+why)
			continue
		}
		notes = append(notes, "note: latency "+notAvailable+" for "+strings.Join(what, ", ")+": "+why)
	}
	return notes, any
}

// latencyLine sets the latency a tool measured beside the pool's, in the
// direction of the result (both, for a result of no single direction):
// the tool's own time per I/O against ZFS's queue and disk.
func latencyLine(r Report, tool workload.Tool, res workload.Result, dir workload.Direction) string {
	l := res.Latency
	var figs []string
	for _, p := range []struct {
		name    string
		percent float64
	}{{"p50", 50}, {"p99", 99}} {
		if v, ok := l.At(p.percent); ok {
			figs = append(figs, p.name+" "+fmtMS(v)+" ms")
		}
	}
	if l.MeanSeconds != nil {
		figs = append(figs, "mean "+fmtMS(*l.MeanSeconds)+" ms")
	}
	if len(figs) == 0 {
		figs = append(figs, "no p50, p99 or mean")
	}
	side := func(d string) string {
		if r.Pool.Latency == nil {
			return "pool " + d + " latency unknown"
		}
		total, disk := r.Pool.Latency.of(d)
		if !total.Available() && !disk.Available() {
			return "pool " + d + " latency " + notAvailable
		}
		return "pool " + d + " total wait: " + latencyPhrase(total) + "; disk wait: " + latencyPhrase(disk)
	}
	var pool []string
	switch dir {
	case workload.Read, workload.Write:
		pool = append(pool, side(string(dir)))
	default:
		pool = append(pool, side("read"), side("write"))
	}
	return resultName(tool, res, dir) + " " + l.Measure + ": " + strings.Join(figs, ", ") + " | " + strings.Join(pool, "; ")
}

// latencyPhrase is a latency for a sentence: "p50 0.192 ms, p99 1.12 ms,
// mean 0.234 ms", or "n/a".
func latencyPhrase(l Latency) string {
	if !l.Available() {
		return notAvailable
	}
	return "p50 " + fmtMS(l.P50Seconds) + " ms, p99 " + fmtMS(l.P99Seconds) + " ms, mean " + fmtMS(l.MeanSeconds) + " ms"
}
