package benchreport

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchmetrics"
)

// Units. Every figure of a Report and of a Comparison is in base units:
// bytes, bytes per second, operations, seconds, and ratios from 0 to 1.
// The text formats (table, Markdown, SVG) show decimal megabytes (1 MB =
// 1e6 bytes) and MB/s, and name the unit in every header: GNU dd and fio's
// "(MB/s)" figures, which people set beside the pool's, are decimal, so a
// dd figure and the pool's line up without conversion. zpool iostat's
// binary "M" is not used anywhere in these reports. CSV keeps base units.

// ioCounters are the per-vdev I/O counter families.
var ioCounters = []string{
	"zfs_vdev_read_bytes_total",
	"zfs_vdev_write_bytes_total",
	"zfs_vdev_read_operations_total",
	"zfs_vdev_write_operations_total",
}

// Report is what a benchmark run did to its pool. It round-trips through
// JSON, so a saved report can be rendered and compared later.
type Report struct {
	Run Run `json:"run"`
	// DurationSeconds is Run.End - Run.Start: the workload's own run
	// time, which every average divides by.
	DurationSeconds float64 `json:"duration_seconds"`
	// Samples is the span of the samples read: from the last sample at
	// or before the start (the baseline) to the last one after the end
	// (a few seconds of settling, while ZFS writes out what the workload
	// left dirty). Byte and operation counts, latencies, CPU and ARC
	// figures are increases over this span.
	Samples SampleSpan `json:"samples"`
	// Pool is the pool's own row: the root vdev, named after the pool.
	Pool VdevStats `json:"pool"`
	// Vdevs are every vdev below the root, in tree order.
	Vdevs []VdevStats `json:"vdevs"`
	// CPU is nil when the host CPU counters are missing.
	CPU *CPUStats `json:"cpu,omitempty"`
	// ARC is nil when the ARC counters are missing.
	ARC *ARCStats `json:"arc,omitempty"`
	// PoolStates are the pool's states seen during the run, in the order
	// first seen (lowercase, as zfs_pool_state names them).
	PoolStates []string `json:"pool_states,omitempty"`
	// NotOnline lists the vdevs seen in a state other than online (or
	// avail, for an unused hot spare) during the run.
	NotOnline []VdevStates `json:"vdevs_not_online,omitempty"`
	// Timeline is bandwidth between consecutive samples, for the chart.
	Timeline Timeline `json:"timeline"`
	// Missing says which figures could not be computed, and why.
	Missing []string `json:"missing,omitempty"`
}

// SampleSpan is the time span of the samples a report read.
type SampleSpan struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// SettleSeconds is how long after the run's end the samples go on.
	SettleSeconds float64 `json:"settle_seconds"`
}

// VdevStats are one vdev's I/O during the run.
type VdevStats struct {
	Name   string `json:"name"`
	Type   string `json:"type,omitempty"`  // root, mirror, raidz1, disk, file...
	Class  string `json:"class,omitempty"` // normal, log, cache, spare, special, dedup
	Parent string `json:"parent,omitempty"`
	// Depth is 0 for the pool's root, 1 for top-level vdevs, 2 for their
	// leaves, and so on.
	Depth      int     `json:"depth"`
	ReadBytes  Counter `json:"read_bytes"`
	WriteBytes Counter `json:"write_bytes"`
	ReadOps    Counter `json:"read_operations"`
	WriteOps   Counter `json:"write_operations"`
	// Latency is the pool's and each top-level vdev's I/O latency over
	// the sample span; nil for leaves, and in reports saved before it.
	Latency *VdevLatency `json:"latency,omitempty"`
}

// ReadShare is the share of the bytes moved that were read, from 0 to 1;
// false when no byte moved.
func (v VdevStats) ReadShare() (float64, bool) {
	total := v.ReadBytes.Increase + v.WriteBytes.Increase
	if total <= 0 {
		return 0, false
	}
	return v.ReadBytes.Increase / total, true
}

// Counter is what one counter did during the run. Its unit is the
// counter's: bytes or operations, per second for the rates.
type Counter struct {
	// Samples is how many samples were read; 0 means the counter was
	// missing and every figure is 0.
	Samples int `json:"samples"`
	// Increase is over the whole sample span, counter resets counted as
	// Prometheus does (a drop means the counter restarted from 0).
	Increase float64 `json:"increase"`
	// PerSecond is Increase / the run's duration, or 0 when
	// AverageUnavailable says why it cannot be told.
	PerSecond float64 `json:"per_second"`
	// AverageUnavailable says why a counter with samples has no average:
	// a run shorter than the sampling interval of its counter, whose
	// increase then counts a whole interval's work against the run's
	// fraction of one (a 0.05 s run read as hundreds of MB/s).
	AverageUnavailable string `json:"average_unavailable,omitempty"`
	// PeakPerSecond is the highest rate over one whole sampling interval
	// inside the run: between two consecutive samples, from
	// PeakFromSeconds to PeakToSeconds (seconds since the run's start,
	// both within the run). It is never below PerSecond: see setPeak.
	PeakPerSecond   float64 `json:"peak_per_second"`
	PeakFromSeconds float64 `json:"peak_from_seconds"`
	PeakToSeconds   float64 `json:"peak_to_seconds"`
	// PeakUnavailable says why a counter with samples has no peak (the
	// run is shorter than the sampling interval, say); the three peak
	// fields are then 0, and null in JSON.
	PeakUnavailable string `json:"peak_unavailable,omitempty"`
}

// MarshalJSON writes the peak fields as null when there is no peak, so
// that no reader takes their zeros for a rate.
func (k Counter) MarshalJSON() ([]byte, error) {
	type plain Counter
	if k.PeakUnavailable == "" && k.AverageUnavailable == "" {
		return json.Marshal(plain(k))
	}
	figure := func(v float64, unavailable string) *float64 {
		if unavailable != "" {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		Samples            int      `json:"samples"`
		Increase           float64  `json:"increase"`
		PerSecond          *float64 `json:"per_second"`
		AverageUnavailable string   `json:"average_unavailable,omitempty"`
		PeakPerSecond      *float64 `json:"peak_per_second"`
		PeakFromSeconds    *float64 `json:"peak_from_seconds"`
		PeakToSeconds      *float64 `json:"peak_to_seconds"`
		PeakUnavailable    string   `json:"peak_unavailable,omitempty"`
	}{
		Samples: k.Samples, Increase: k.Increase,
		PerSecond: figure(k.PerSecond, k.AverageUnavailable), AverageUnavailable: k.AverageUnavailable,
		PeakPerSecond:   figure(k.PeakPerSecond, k.PeakUnavailable),
		PeakFromSeconds: figure(k.PeakFromSeconds, k.PeakUnavailable),
		PeakToSeconds:   figure(k.PeakToSeconds, k.PeakUnavailable),
		PeakUnavailable: k.PeakUnavailable,
	})
}

// setPeak gives a counter its peak from its rates between consecutive
// samples (seconds since the run's start), or says why it has none. This
// is the one place the rule lives:
//
//   - the peak is the highest rate over a whole interval inside the run,
//     one that starts at or after the start and ends at or before the
//     end: an interval the start or the end falls within also holds time
//     before or after the run, and its rate reads low;
//   - there is no peak without such an interval: a run shorter than the
//     sampling interval, or one whose start and end both fall within
//     intervals, has none;
//   - nor when that highest rate is below the average over the run
//     (PerSecond), which divides everything counted, the intervals the
//     start and end fall within and the settling included, by the run's
//     own duration: a "peak" below the average is no peak.
//
// PerSecond must be set.
func (k *Counter) setPeak(rates []Rate, dur float64) {
	k.PeakPerSecond, k.PeakFromSeconds, k.PeakToSeconds, k.PeakUnavailable = 0, 0, 0, ""
	best := -1
	for i, r := range rates {
		if r.From >= 0 && r.To <= dur && r.To > r.From && (best < 0 || r.PerSecond > rates[best].PerSecond) {
			best = i
		}
	}
	switch {
	case len(rates) == 0:
		k.PeakUnavailable = "a single sample: no interval to take a rate over"
	case best < 0 && dur < medianStep(rates):
		k.PeakUnavailable = fmt.Sprintf("run (%s) shorter than the sampling interval of the pool's I/O counters (%s)",
			FormatSeconds(dur), FormatSeconds(medianStep(rates)))
	case best < 0:
		k.PeakUnavailable = fmt.Sprintf("no whole sampling interval of the pool's I/O counters (%s) inside the run (%s): its start and end fall within intervals",
			FormatSeconds(medianStep(rates)), FormatSeconds(dur))
	case rates[best].PerSecond < k.PerSecond:
		k.PeakUnavailable = peakBelowAverage
	default:
		r := rates[best]
		k.PeakPerSecond, k.PeakFromSeconds, k.PeakToSeconds = r.PerSecond, r.From, r.To
	}
}

// peakBelowAverage is why a counter has no peak when the highest rate over
// a whole sampling interval inside the run is below the run's average.
const peakBelowAverage = "the highest rate over a whole sampling interval inside the run is below the run's average, " +
	"which also counts the I/O of the intervals around its start and end, and of the settling"

// judgePeaks applies setPeak to the peaks of a report read back, which a
// zpool_bench from before the rule may have saved: the pool's and the
// top-level vdevs' byte counters from their timelines, the others from the
// one rate they keep, their peak. A peak setPeak gave is left as it is.
func (r *Report) judgePeaks() {
	timelines := map[string]BandwidthSeries{r.Timeline.Pool.Vdev: r.Timeline.Pool}
	for _, b := range r.Timeline.Vdevs {
		timelines[b.Vdev] = b
	}
	judge := func(k *Counter, timeline []Rate) {
		if k.Samples == 0 || k.PeakUnavailable != "" {
			return
		}
		if timeline != nil || k.Samples < 2 {
			k.setPeak(timeline, r.DurationSeconds)
			return
		}
		from, to := k.PeakFromSeconds, k.PeakToSeconds
		if k.setPeak([]Rate{{From: from, To: to, PerSecond: k.PeakPerSecond}}, r.DurationSeconds); k.PeakUnavailable != "" && k.PeakUnavailable != peakBelowAverage {
			// Other intervals may have been inside the run: the report
			// does not keep them.
			k.PeakUnavailable = fmt.Sprintf("saved by an earlier zpool_bench, with the highest rate over %s to %s s, not inside the run", sig(from), sig(to))
		}
	}
	for _, v := range append([]*VdevStats{&r.Pool}, pointers(r.Vdevs)...) {
		var read, write []Rate
		if b, ok := timelines[v.Name]; ok {
			read, write = b.Read, b.Write
		}
		judge(&v.ReadBytes, read)
		judge(&v.WriteBytes, write)
		judge(&v.ReadOps, nil)
		judge(&v.WriteOps, nil)
	}
}

func pointers[T any](s []T) []*T {
	out := make([]*T, len(s))
	for i := range s {
		out[i] = &s[i]
	}
	return out
}

// CPUStats is the host's CPU during the run, over the sample span.
type CPUStats struct {
	// Seconds is all the host's CPU time (every mode, every CPU);
	// CPUs is Seconds over the sample span: about the number of CPUs.
	Seconds float64 `json:"seconds"`
	CPUs    float64 `json:"cpus"`
	// BusyRatio is 1 - (idle + iowait) / all.
	BusyRatio float64 `json:"busy_ratio"`
	// Engine is the ZFS engine's CPU (zfs_engine_cpu_seconds_total);
	// nil when that family is missing.
	Engine *EngineCPU `json:"engine,omitempty"`
}

// EngineCPU is the ZFS engine's CPU time as a share of the whole machine's.
type EngineCPU struct {
	Seconds float64 `json:"seconds"`
	Ratio   float64 `json:"ratio"` // Seconds / all the host's CPU seconds
	// Families are the thread families that used the most, largest first
	// (at most TopFamilies).
	Families []FamilyCPU `json:"families,omitempty"`
}

// FamilyCPU is one thread family's CPU time.
type FamilyCPU struct {
	Family  string  `json:"family"`
	Seconds float64 `json:"seconds"`
	Ratio   float64 `json:"ratio"` // share of the whole machine
}

// TopFamilies is how many engine thread families a report lists.
const TopFamilies = 5

// ARCStats are the ARC's hits and misses during the run, summed over kinds.
type ARCStats struct {
	Hits   float64 `json:"hits"`
	Misses float64 `json:"misses"`
	// HitRatio is Hits / (Hits + Misses); 0 when there was no access.
	HitRatio float64 `json:"hit_ratio"`
}

// Accessed says whether the ARC saw any access, i.e. HitRatio means
// something.
func (a ARCStats) Accessed() bool { return a.Hits+a.Misses > 0 }

// VdevStates are the states other than online a vdev was seen in.
type VdevStates struct {
	Vdev   string   `json:"vdev"`
	States []string `json:"states"`
}

// Timeline is bandwidth between consecutive samples.
type Timeline struct {
	Pool BandwidthSeries `json:"pool"`
	// Vdevs are the top-level vdevs, in tree order.
	Vdevs []BandwidthSeries `json:"vdevs,omitempty"`
}

// BandwidthSeries are one vdev's read and write rates.
type BandwidthSeries struct {
	Vdev  string `json:"vdev"`
	Read  []Rate `json:"read"`
	Write []Rate `json:"write"`
}

// Rate is a counter's rate between two consecutive samples, at From and
// To seconds since the run's start.
type Rate struct {
	From      float64 `json:"from"`
	To        float64 `json:"to"`
	PerSecond float64 `json:"per_second"`
}

// Compute turns the samples of the families a report reads
// (benchmetrics.Families) over a run's window into a report. Each series
// should hold the last sample at or before run.Start and every sample
// after it up to the end of the settling time; earlier samples are
// ignored. Missing families are listed in
// Report.Missing; the only error is a run without a positive duration or
// without any I/O sample of the pool itself.
func Compute(run Run, series []Series) (Report, error) {
	if run.Pool == "" {
		return Report{}, fmt.Errorf("benchreport: run %q names no pool", run.Name)
	}
	if !run.End.After(run.Start) {
		return Report{}, fmt.Errorf("benchreport: run %q ends (%s) no later than it starts (%s)",
			run.Name, run.End.UTC().Format(time.RFC3339Nano), run.Start.UTC().Format(time.RFC3339Nano))
	}
	c := &computer{run: run, dur: run.End.Sub(run.Start).Seconds()}
	c.index(series)
	r := Report{Run: run, DurationSeconds: c.dur}

	poolName := run.Pool
	root, tree := c.tree()
	if root != "" {
		poolName = root
	}
	r.Pool = c.vdev(poolName, "root", "", "", 0)
	if r.Pool.ReadBytes.Samples == 0 && r.Pool.WriteBytes.Samples == 0 {
		return Report{}, fmt.Errorf("benchreport: no I/O samples for pool %q between %s and %s "+
			"(zfs_vdev_read_bytes_total and zfs_vdev_write_bytes_total with pool=%q, vdev=%q): "+
			"is the exporter watching this pool, and did it run during the window?",
			run.Pool, run.Start.UTC().Format(time.RFC3339), run.End.UTC().Format(time.RFC3339), run.Pool, poolName)
	}
	for _, n := range tree {
		r.Vdevs = append(r.Vdevs, c.vdev(n.name, n.typ, n.class, n.parent, n.depth))
	}
	if root == "" {
		c.missing("no zfs_vdev_info for pool %q: the vdev tree is unknown, and vdevs are listed by name", run.Pool)
	}
	c.latencies(&r)

	for _, m := range ioCounters {
		if vs := c.absent[m]; len(vs) > 0 {
			c.missing("no %s samples for %s", m, vdevList(vs))
		}
	}
	r.Timeline.Pool = c.bandwidth(poolName)
	for _, v := range r.Vdevs {
		if v.Depth == 1 {
			r.Timeline.Vdevs = append(r.Timeline.Vdevs, c.bandwidth(v.Name))
		}
	}
	if step := medianStep(r.Timeline.Pool.Write); step > 0 && c.dur < 5*step {
		averageToo := ""
		if c.dur < step {
			averageToo = ", or for an average over the run"
		}
		hasPeak := func(k Counter) bool { return k.Samples > 0 && k.PeakUnavailable == "" }
		if hasPeak(r.Pool.WriteBytes) || hasPeak(r.Pool.ReadBytes) {
			c.missing("the run lasted %.3g s and the pool's I/O counters moved every %.3g s: peaks are over whole intervals and read low; run for a minute or more, or sample more often (the exporter's --zpool.iostat-interval, zpool_bench's --exporter.sample-interval)", c.dur, step)
		} else {
			c.missing("the run lasted %.3g s and the pool's I/O counters moved every %.3g s: too short for a peak over a whole interval%s; run for a minute or more, or sample more often (the exporter's --zpool.iostat-interval, zpool_bench's --exporter.sample-interval)", c.dur, step, averageToo)
		}
	}
	r.CPU = c.cpu()
	r.ARC = c.arc()
	r.PoolStates = c.poolStates()
	r.NotOnline = c.notOnline()
	r.Samples = SampleSpan{From: c.from, To: c.to}
	if !c.to.IsZero() {
		r.Samples.SettleSeconds = c.to.Sub(run.End).Seconds()
	}
	r.Missing = c.notes
	return r, nil
}

// computer holds the state of one Compute.
type computer struct {
	run    Run
	dur    float64
	byName map[string][]*Series // metric -> series of the run's pool, or host-wide
	from   time.Time
	to     time.Time
	notes  []string
	noted  map[string]bool
	// absent lists, per counter family, the vdevs without samples.
	absent map[string][]string
	// treeRoot and treeNodes cache tree().
	treeDone  bool
	treeRoot  string
	treeNodes []node
}

func (c *computer) missing(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if c.noted == nil {
		c.noted = map[string]bool{}
	}
	if !c.noted[msg] {
		c.noted[msg] = true
		c.notes = append(c.notes, msg)
	}
}

// index keeps the series of the run's pool (and the host-wide ones),
// trimmed to the window.
func (c *computer) index(series []Series) {
	c.byName = map[string][]*Series{}
	sourceTimes := ioSourceTimes(series)
	for i := range series {
		s := series[i]
		if p, ok := s.Labels["pool"]; ok && p != c.run.Pool {
			continue
		}
		s.Samples = finiteSamples(s.Samples)
		if slices.Contains(ioCounters, s.Metric) && len(sourceTimes) > 0 {
			s.Samples = retime(s.Samples, sourceTimes)
		}
		s.Samples = c.trim(s.Samples)
		if len(s.Samples) == 0 {
			continue
		}
		if c.from.IsZero() || s.Samples[0].Time.Before(c.from) {
			c.from = s.Samples[0].Time
		}
		if last := s.Samples[len(s.Samples)-1].Time; last.After(c.to) {
			c.to = last
		}
		c.byName[s.Metric] = append(c.byName[s.Metric], &s)
	}
}

// medianStep is the median length of the intervals of rates; 0 without
// any.
func medianStep(rates []Rate) float64 {
	if len(rates) == 0 {
		return 0
	}
	steps := make([]float64, len(rates))
	for i, r := range rates {
		steps[i] = r.To - r.From
	}
	slices.Sort(steps)
	return steps[len(steps)/2]
}

// ioSourceTimes are the samples of when the vdev I/O counters' source
// last answered: at each scrape, the latest time of any of
// benchmetrics.IOSources.
func ioSourceTimes(series []Series) []Sample {
	byScrape := map[time.Time]float64{}
	for _, s := range series {
		if s.Metric != benchmetrics.SourceTime || !slices.Contains(benchmetrics.IOSources, s.Labels["source"]) {
			continue
		}
		for _, p := range s.Samples {
			if p.Value > 0 && p.Value > byScrape[p.Time] {
				byScrape[p.Time] = p.Value
			}
		}
	}
	out := make([]Sample, 0, len(byScrape))
	for t, v := range byScrape {
		out = append(out, Sample{Time: t, Value: v})
	}
	slices.SortFunc(out, func(a, b Sample) int { return a.Time.Compare(b.Time) })
	return out
}

// retime gives each counter sample the time its source answered, as of
// the scrape that read it, and keeps one sample per answer. Samples of
// scrapes without a source time keep their own.
func retime(samples []Sample, sourceTimes []Sample) []Sample {
	out := make([]Sample, 0, len(samples))
	for _, p := range samples {
		i := sort.Search(len(sourceTimes), func(i int) bool { return sourceTimes[i].Time.After(p.Time) })
		if i > 0 {
			// Even when later than the scrape's own time: a scrape is
			// timed when it starts, and a slow one reads reports that
			// came after.
			// To the microsecond: a float64 of Unix seconds holds no more.
			p.Time = time.UnixMicro(int64(math.Round(sourceTimes[i-1].Value * 1e6))).UTC()
		}
		if n := len(out); n > 0 && !p.Time.After(out[n-1].Time) {
			// The same answer scraped again, or a clock step back:
			// the later scrape's value stands at the earlier time.
			out[n-1].Value = p.Value
			continue
		}
		out = append(out, p)
	}
	return out
}

// trim drops the samples before the last one at or before the start.
func (c *computer) trim(samples []Sample) []Sample {
	i := sort.Search(len(samples), func(i int) bool { return samples[i].Time.After(c.run.Start) })
	if i > 0 {
		return samples[i-1:]
	}
	return samples
}

// find returns the series of metric whose labels include want.
func (c *computer) find(metric string, want map[string]string) []*Series {
	var out []*Series
next:
	for _, s := range c.byName[metric] {
		for k, v := range want {
			if s.Labels[k] != v {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

func (c *computer) secs(t time.Time) float64 { return t.Sub(c.run.Start).Seconds() }

// counter sums the increase of the series of metric for one vdev. When
// several series match (the same counter from several Prometheus jobs),
// the first is used, and a note says so.
func (c *computer) counter(metric, vdev string) (Counter, *Series) {
	ss := c.find(metric, map[string]string{"vdev": vdev})
	if len(ss) == 0 {
		if c.absent == nil {
			c.absent = map[string][]string{}
		}
		c.absent[metric] = append(c.absent[metric], vdev)
		return Counter{}, nil
	}
	if len(ss) > 1 {
		c.missing("%d series of %s for vdev %q; the first, %v, is used", len(ss), metric, vdev, ss[0].Labels)
	}
	s := ss[0]
	if s.Samples[0].Time.After(c.run.Start) {
		c.missing("%s for vdev %q has no sample at or before the start; it counts from its first sample, %.1f s after the start",
			metric, vdev, c.secs(s.Samples[0].Time))
	}
	k := Counter{Samples: len(s.Samples), Increase: increase(s.Samples)}
	rates := c.rates(s.Samples)
	if step := medianStep(rates); step > 0 && c.dur < step {
		k.AverageUnavailable = fmt.Sprintf("run (%s) shorter than the sampling interval of the pool's I/O counters (%s): what they counted took longer than the run",
			FormatSeconds(c.dur), FormatSeconds(step))
	} else {
		k.PerSecond = k.Increase / c.dur
	}
	k.setPeak(rates, c.dur)
	return k, s
}

// increase is a counter's increase over its samples; a value below the
// previous one means the counter restarted from 0 in between, as
// Prometheus's increase() takes it.
func increase(samples []Sample) float64 {
	var sum float64
	for i := 1; i < len(samples); i++ {
		sum += delta(samples[i-1].Value, samples[i].Value)
	}
	return sum
}

func delta(prev, cur float64) float64 {
	if cur < prev {
		return cur
	}
	return cur - prev
}

// rates are a counter's rates between consecutive samples.
func (c *computer) rates(samples []Sample) []Rate {
	out := make([]Rate, 0, max(0, len(samples)-1))
	for i := 1; i < len(samples); i++ {
		dt := samples[i].Time.Sub(samples[i-1].Time).Seconds()
		if dt <= 0 {
			continue
		}
		out = append(out, Rate{
			From:      c.secs(samples[i-1].Time),
			To:        c.secs(samples[i].Time),
			PerSecond: delta(samples[i-1].Value, samples[i].Value) / dt,
		})
	}
	return out
}

func (c *computer) vdev(name, typ, class, parent string, depth int) VdevStats {
	v := VdevStats{Name: name, Type: typ, Class: class, Parent: parent, Depth: depth}
	v.ReadBytes, _ = c.counter("zfs_vdev_read_bytes_total", name)
	v.WriteBytes, _ = c.counter("zfs_vdev_write_bytes_total", name)
	v.ReadOps, _ = c.counter("zfs_vdev_read_operations_total", name)
	v.WriteOps, _ = c.counter("zfs_vdev_write_operations_total", name)
	return v
}

func (c *computer) bandwidth(vdev string) BandwidthSeries {
	b := BandwidthSeries{Vdev: vdev, Read: []Rate{}, Write: []Rate{}}
	if ss := c.find("zfs_vdev_read_bytes_total", map[string]string{"vdev": vdev}); len(ss) > 0 {
		b.Read = c.rates(ss[0].Samples)
	}
	if ss := c.find("zfs_vdev_write_bytes_total", map[string]string{"vdev": vdev}); len(ss) > 0 {
		b.Write = c.rates(ss[0].Samples)
	}
	return b
}

// sum is the summed increase of every series of metric whose labels
// include want, and whether there was any.
func (c *computer) sum(metric string, want map[string]string) (float64, bool) {
	ss := c.find(metric, want)
	var sum float64
	for _, s := range ss {
		sum += increase(s.Samples)
	}
	return sum, len(ss) > 0
}

func (c *computer) cpu() *CPUStats {
	all, ok := c.sum("zfs_host_cpu_seconds_total", nil)
	if !ok {
		c.missing("no zfs_host_cpu_seconds_total: no host CPU figures (the cpu collector gives none on this platform or source)")
		return nil
	}
	if all <= 0 {
		c.missing("zfs_host_cpu_seconds_total did not move during the run: no host CPU figures")
		return nil
	}
	idle, _ := c.sum("zfs_host_cpu_seconds_total", map[string]string{"mode": "idle"})
	iowait, _ := c.sum("zfs_host_cpu_seconds_total", map[string]string{"mode": "iowait"})
	cpu := &CPUStats{Seconds: all, BusyRatio: 1 - (idle+iowait)/all}
	if span := c.to.Sub(c.from).Seconds(); span > 0 {
		cpu.CPUs = all / span
	}
	engine, ok := c.sum("zfs_engine_cpu_seconds_total", nil)
	if !ok {
		c.missing("no zfs_engine_cpu_seconds_total: no ZFS engine CPU figures")
		return cpu
	}
	e := &EngineCPU{Seconds: engine, Ratio: engine / all}
	byFamily := map[string]float64{}
	for _, s := range c.find("zfs_engine_cpu_seconds_total", nil) {
		byFamily[s.Labels["family"]] += increase(s.Samples)
	}
	for f, secs := range byFamily {
		e.Families = append(e.Families, FamilyCPU{Family: f, Seconds: secs, Ratio: secs / all})
	}
	sort.Slice(e.Families, func(i, j int) bool {
		a, b := e.Families[i], e.Families[j]
		if a.Seconds != b.Seconds {
			return a.Seconds > b.Seconds
		}
		return a.Family < b.Family
	})
	if len(e.Families) > TopFamilies {
		e.Families = e.Families[:TopFamilies]
	}
	cpu.Engine = e
	return cpu
}

func (c *computer) arc() *ARCStats {
	hits, okH := c.sum("zfs_arc_hits_total", nil)
	misses, okM := c.sum("zfs_arc_misses_total", nil)
	if !okH || !okM {
		c.missing("no zfs_arc_hits_total or zfs_arc_misses_total: no ARC hit ratio (no ARC kstats on this platform or source)")
		return nil
	}
	a := &ARCStats{Hits: hits, Misses: misses}
	if a.Accessed() {
		a.HitRatio = hits / (hits + misses)
	} else {
		c.missing("the ARC saw no access during the run: no hit ratio")
	}
	return a
}

// seen is a state label with the time it was first seen at 1.
type seen struct {
	state string
	at    time.Time
}

func firstSeen(ss []*Series) []seen {
	first := map[string]time.Time{}
	for _, s := range ss {
		for _, p := range s.Samples {
			if p.Value == 1 {
				st := s.Labels["state"]
				if t, ok := first[st]; !ok || p.Time.Before(t) {
					first[st] = p.Time
				}
				break
			}
		}
	}
	out := make([]seen, 0, len(first))
	for st, t := range first {
		out = append(out, seen{st, t})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].at.Equal(out[j].at) {
			return out[i].at.Before(out[j].at)
		}
		return out[i].state < out[j].state
	})
	return out
}

func (c *computer) poolStates() []string {
	ss := c.find("zfs_pool_state", nil)
	if len(ss) == 0 {
		c.missing("no zfs_pool_state samples: the pool's state during the run is unknown")
		return nil
	}
	var out []string
	for _, s := range firstSeen(ss) {
		out = append(out, s.state)
	}
	return out
}

func (c *computer) notOnline() []VdevStates {
	ss := c.find("zfs_vdev_state", nil)
	if len(ss) == 0 {
		c.missing("no zfs_vdev_state samples: vdev states during the run are unknown")
		return nil
	}
	byVdev := map[string][]*Series{}
	var order []string
	for _, s := range ss {
		v := s.Labels["vdev"]
		if _, ok := byVdev[v]; !ok {
			order = append(order, v)
		}
		byVdev[v] = append(byVdev[v], s)
	}
	rank := map[string]int{}
	for i, n := range c.treeOrder() {
		rank[n] = i + 1
	}
	sort.SliceStable(order, func(i, j int) bool {
		ri, rj := rank[order[i]], rank[order[j]]
		if ri == 0 || rj == 0 {
			return ri != 0 || (rj == 0 && natLess(order[i], order[j]))
		}
		return ri < rj
	})
	var out []VdevStates
	for _, v := range order {
		var states []string
		for _, s := range firstSeen(byVdev[v]) {
			if s.state != "online" && s.state != "avail" {
				states = append(states, s.state)
			}
		}
		if len(states) > 0 {
			out = append(out, VdevStates{Vdev: v, States: states})
		}
	}
	return out
}

// node is a vdev of the tree.
type node struct {
	name, typ, class, parent string
	depth                    int
}

// treeOrder lists the pool's vdev names, root first, in tree order.
func (c *computer) treeOrder() []string {
	root, tree := c.tree()
	out := []string{root}
	for _, n := range tree {
		out = append(out, n.name)
	}
	return out
}

// tree builds the vdev tree from zfs_vdev_info: the root's name ("" when
// there is no info), and the other vdevs depth first. Siblings are in
// zpool status order: top-level vdevs by class (data, dedup, special,
// log, cache, spare), then in the order of the run's pool configuration
// when it lists them, else by the index in their name (mirror-1), else by
// name; leaves by name, numbers compared as numbers (disk2 before disk10).
func (c *computer) tree() (string, []node) {
	if !c.treeDone {
		c.treeRoot, c.treeNodes = c.buildTree()
		c.treeDone = true
	}
	return c.treeRoot, c.treeNodes
}

func (c *computer) buildTree() (string, []node) {
	infos := map[string]node{}
	for _, s := range c.find("zfs_vdev_info", nil) {
		n := node{name: s.Labels["vdev"], typ: s.Labels["vdev_type"], class: s.Labels["class"], parent: s.Labels["parent"]}
		if n.name == "" {
			continue
		}
		if _, dup := infos[n.name]; !dup {
			infos[n.name] = n
		}
	}
	if len(infos) == 0 {
		// No tree: the pool row is the vdev named after the pool, the
		// others are listed flat.
		names := map[string]bool{}
		for _, m := range []string{"zfs_vdev_read_bytes_total", "zfs_vdev_write_bytes_total"} {
			for _, s := range c.find(m, nil) {
				if v := s.Labels["vdev"]; v != c.run.Pool {
					names[v] = true
				}
			}
		}
		var flat []node
		for n := range names {
			flat = append(flat, node{name: n, depth: 1})
		}
		sort.Slice(flat, func(i, j int) bool { return natLess(flat[i].name, flat[j].name) })
		return "", flat
	}
	root := ""
	for _, n := range infos {
		if n.typ == "root" && (root == "" || n.name == c.run.Pool) {
			root = n.name
		}
	}
	if root == "" {
		root = c.run.Pool
		c.missing("zfs_vdev_info of pool %q has no vdev of type root; the vdev named after the pool is its row", c.run.Pool)
	}
	children := map[string][]node{}
	for _, n := range infos {
		if n.name == root {
			continue
		}
		p := n.parent
		if _, ok := infos[p]; !ok || p == "" {
			p = root
		}
		children[p] = append(children[p], n)
	}
	configRank := map[string]int{}
	if cfg := c.run.Config; cfg != nil {
		for i, v := range cfg.Vdevs {
			configRank[v.Name] = i + 1
		}
	}
	var out []node
	visited := map[string]bool{root: true}
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		kids := children[parent]
		sort.Slice(kids, func(i, j int) bool { return siblingLess(kids[i], kids[j], depth == 1, configRank) })
		for _, k := range kids {
			if visited[k.name] {
				continue
			}
			visited[k.name] = true
			k.depth = depth
			k.parent = parent
			out = append(out, k)
			walk(k.name, depth+1)
		}
	}
	walk(root, 1)
	return root, out
}

var classRank = map[string]int{"normal": 0, "": 0, "dedup": 1, "special": 2, "log": 3, "cache": 4, "spare": 5}

func siblingLess(a, b node, topLevel bool, configRank map[string]int) bool {
	if topLevel {
		ca, ok := classRank[a.class]
		if !ok {
			ca = 6
		}
		cb, ok := classRank[b.class]
		if !ok {
			cb = 6
		}
		if ca != cb {
			return ca < cb
		}
		ra, rb := configRank[a.name], configRank[b.name]
		if ra != 0 && rb != 0 && ra != rb {
			return ra < rb
		}
	}
	ia, oka := vdevIndex(a.name)
	ib, okb := vdevIndex(b.name)
	if oka && okb && ia != ib {
		return ia < ib
	}
	if oka != okb {
		return oka
	}
	return natLess(a.name, b.name)
}

// vdevIndex is N of an interior vdev named <type>-<N>.
func vdevIndex(name string) (int, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || strings.ContainsRune(name, '/') {
		return 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	return n, err == nil
}

// natLess compares names with runs of digits compared as numbers.
func natLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if len(na) != len(nb) {
				return len(na) < len(nb)
			}
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// vdevList names a few vdevs for a note.
func vdevList(vs []string) string {
	const show = 4
	q := make([]string, 0, show)
	for i, v := range vs {
		if i == show {
			break
		}
		q = append(q, strconv.Quote(v))
	}
	s := "vdev " + q[0]
	if len(vs) > 1 {
		s = fmt.Sprintf("%d vdevs: %s", len(vs), strings.Join(q, ", "))
	}
	if len(vs) > show {
		s += fmt.Sprintf(" and %d more", len(vs)-show)
	}
	return s
}

// finiteSamples drops NaN values (Prometheus staleness markers) and
// infinities, which no counter holds.
func finiteSamples(samples []Sample) []Sample {
	for _, p := range samples {
		if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
			out := make([]Sample, 0, len(samples))
			for _, q := range samples {
				if !math.IsNaN(q.Value) && !math.IsInf(q.Value, 0) {
					out = append(out, q)
				}
			}
			return out
		}
	}
	return samples
}
