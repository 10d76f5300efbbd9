package benchreport

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// shortReport is the mirror case cut to 1.5 s: shorter than the 2 s
// between its samples. The 1000 MB it counts over 1.5 s average 666.7
// MB/s, and the highest rate between two samples is 150 MB/s: what the
// issue measured (379.1 MB/s avg beside a 102.1 MB/s "peak").
func shortReport(t *testing.T) Report {
	t.Helper()
	run := mirrorRun()
	run.Name = "mirror 1.5 s"
	run.End = at(1.5)
	r, err := Compute(run, mirrorSeries())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

const shortReason = "run (1.50 s) shorter than the sampling interval of the pool's I/O counters (2.00 s)"

// A run shorter than one sampling interval has no peak and no average
// (what the counters moved took a whole interval, not the run's 1.5 s:
// 1000 MB in it would read 666.7 MB/s), says why, and every format says so.
func TestShortRunHasNoPeak(t *testing.T) {
	r := shortReport(t)
	for _, v := range append([]VdevStats{r.Pool}, r.Vdevs...) {
		for _, k := range []struct {
			name string
			c    Counter
		}{{"read bytes", v.ReadBytes}, {"write bytes", v.WriteBytes}, {"read ops", v.ReadOps}, {"write ops", v.WriteOps}} {
			if k.c.PeakUnavailable != shortReason || k.c.PeakPerSecond != 0 || k.c.PeakFromSeconds != 0 || k.c.PeakToSeconds != 0 {
				t.Errorf("%s %s: peak %v from %v to %v, reason %q; want none, for %q",
					v.Name, k.name, k.c.PeakPerSecond, k.c.PeakFromSeconds, k.c.PeakToSeconds, k.c.PeakUnavailable, shortReason)
			}
		}
	}
	for _, v := range append([]VdevStats{r.Pool}, r.Vdevs...) {
		for _, c := range []Counter{v.ReadBytes, v.WriteBytes, v.ReadOps, v.WriteOps} {
			if c.AverageUnavailable != shortAverageReason || c.PerSecond != 0 {
				t.Errorf("%s: average %v, reason %q; want none, for %q", v.Name, c.PerSecond, c.AverageUnavailable, shortAverageReason)
			}
		}
	}
	near(t, "pool written", r.Pool.WriteBytes.Increase, 1000e6)
	if !strings.Contains(strings.Join(r.Missing, "\n"), "the run lasted 1.5 s and the pool's I/O counters moved every 2 s: too short for a peak over a whole interval") {
		t.Errorf("missing = %q", r.Missing)
	}

	table := string(render(t, func(w io.Writer) error { return WriteTable(w, r) }))
	golden(t, "short.txt", []byte(table))
	for _, want := range []string{
		"\nMB/s peak           n/a     n/a\n",
		"\npeak between (s)    n/a     n/a\n",
		"note: MB/s peak n/a: " + shortReason,
		"dd wrote: 209.7 MB in 1.90 s, 110.0 MB/s | pool: 1000 MB written, average n/a, peak n/a",
		"\nMB/s avg            n/a     n/a\n",
		"note: MB/s avg n/a: " + shortAverageReason,
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "150.0") || strings.Contains(table, "666.7") {
		t.Errorf("table shows the 150 MB/s over the interval the run falls within:\n%s", table)
	}

	md := string(render(t, func(w io.Writer) error { return WriteMarkdown(w, r) }))
	golden(t, "short.md", []byte(md))
	for _, want := range []string{"| MB/s peak | n/a | n/a |", "| peak between (s) | n/a | n/a |", "- note: MB/s peak n/a: " + shortReason, "average n/a, peak n/a"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}

	data := render(t, func(w io.Writer) error { return WriteCSV(w, r) })
	golden(t, "short.csv", data)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	for _, rec := range recs[1:] {
		for _, dir := range []string{"read", "write"} {
			if got := rec[col["peak_"+dir+"_bytes_per_second"]]; got != "" {
				t.Errorf("CSV %s: peak %s %q, want an empty cell", rec[col["vdev"]], dir, got)
			}
			if got := rec[col["peak_"+dir+"_unavailable"]]; got != shortReason {
				t.Errorf("CSV %s: peak_%s_unavailable %q, want %q", rec[col["vdev"]], dir, got, shortReason)
			}
		}
		if got := rec[col["write_bytes_per_second"]]; got != "" {
			t.Errorf("CSV %s: average %q, want an empty cell", rec[col["vdev"]], got)
		}
	}

	js := render(t, func(w io.Writer) error { return WriteJSON(w, r) })
	var raw struct {
		Pool struct {
			WriteBytes map[string]json.RawMessage `json:"write_bytes"`
		} `json:"pool"`
	}
	if err := json.Unmarshal(js, &raw); err != nil {
		t.Fatal(err)
	}
	w := raw.Pool.WriteBytes
	for _, f := range []string{"peak_per_second", "peak_from_seconds", "peak_to_seconds"} {
		if string(w[f]) != "null" {
			t.Errorf("JSON pool write_bytes.%s = %s, want null", f, w[f])
		}
	}
	if want, _ := json.Marshal(shortReason); string(w["peak_unavailable"]) != string(want) {
		t.Errorf("JSON pool write_bytes.peak_unavailable = %s, want %s", w["peak_unavailable"], want)
	}
	if string(w["per_second"]) == "" || string(w["increase"]) == "" {
		t.Errorf("JSON pool write_bytes lacks its other fields: %v", w)
	}
	back, err := ReadJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("report differs after a JSON round trip:\n%s", js)
	}
}

// averages are the comparison's rows of averages over the run, which a run
// shorter than the sampling interval has none of.
var averages = map[string]bool{
	"pool.write.bytes_per_second": true, "pool.read.bytes_per_second": true,
	"pool.write.operations_per_second": true, "pool.read.operations_per_second": true,
}

// shortAverageReason is why the short run has no averages.
const shortAverageReason = "run (1.50 s) shorter than the sampling interval of the pool's I/O counters (2.00 s): what they counted took longer than the run"

// Compare says, run by run, which peaks and averages a run is too short
// for, in every format.
func TestCompareShortRunHasNoPeak(t *testing.T) {
	c := Compare([]Report{mirrorReport(t), shortReport(t)})
	for _, key := range []string{"pool.write.peak_bytes_per_second", "pool.read.peak_bytes_per_second"} {
		var row *ComparedRow
		for i := range c.Rows {
			if c.Rows[i].Key == key {
				row = &c.Rows[i]
			}
		}
		if row == nil {
			t.Fatalf("no row %s", key)
		}
		if row.Values[0] == nil || row.Values[1] != nil || row.Ratios[1] != nil {
			t.Errorf("%s: values %v, ratios %v; want the first run's only", key, deref(row.Values), deref(row.Ratios))
		}
		if len(row.Unavailable) != 2 || row.Unavailable[0] != "" || row.Unavailable[1] != shortReason {
			t.Errorf("%s: unavailable %q, want the second run's reason", key, row.Unavailable)
		}
	}

	note := "note: n/a in run 2 (mirror 1.5 s), pool write MB/s peak and pool read MB/s peak: " + shortReason
	table := string(render(t, func(w io.Writer) error { return WriteComparisonTable(w, c) }))
	golden(t, "compare-short.txt", []byte(table))
	for _, l := range strings.Split(table, "\n") {
		if strings.Contains(l, "MB/s peak") && !strings.HasPrefix(l, "note:") && !strings.HasSuffix(l, "  n/a") {
			t.Errorf("peak row without n/a for the short run: %q", l)
		}
	}
	if !strings.Contains(table, note) {
		t.Errorf("comparison table lacks %q:\n%s", note, table)
	}

	md := string(render(t, func(w io.Writer) error { return WriteComparisonMarkdown(w, c) }))
	golden(t, "compare-short.md", []byte(md))
	for _, want := range []string{"| pool write MB/s peak | 150.0 | n/a |", "| pool read MB/s peak | 0.500 | n/a |", "- " + note} {
		if !strings.Contains(md, want) {
			t.Errorf("comparison Markdown lacks %q:\n%s", want, md)
		}
	}

	data := render(t, func(w io.Writer) error { return WriteComparisonCSV(w, c) })
	golden(t, "compare-short.csv", data)
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if head := recs[0]; head[len(head)-1] != "unavailable" {
		t.Errorf("CSV header %q, want unavailable last", head)
	}
	found := 0
	for _, rec := range recs[1:] {
		if rec[0] == "pool.write.peak_bytes_per_second" || rec[0] == "pool.read.peak_bytes_per_second" {
			found++
			if rec[3] != "" || rec[4] != "" || rec[len(rec)-1] != "run 2: "+shortReason {
				t.Errorf("CSV %s = %q, want the second run's value and ratio empty, and why", rec[0], rec)
			}
		} else if averages[rec[0]] {
			found++
			if rec[3] != "" || rec[4] != "" || rec[len(rec)-1] != "run 2: "+shortAverageReason {
				t.Errorf("CSV %s = %q, want the second run's value and ratio empty, and why", rec[0], rec)
			}
		} else if rec[len(rec)-1] != "" && !isPoolLatency(rec[0]) {
			t.Errorf("CSV %s gives a reason: %q", rec[0], rec)
		}
	}
	if found != 2+len(averages) {
		t.Errorf("%d peak and average rows in the CSV, want %d", found, 2+len(averages))
	}

	js := render(t, func(w io.Writer) error { return WriteComparisonJSON(w, c) })
	if !bytes.Contains(js, []byte(`"unavailable": [`)) {
		t.Errorf("comparison JSON has no unavailable field:\n%s", js)
	}
	var back Comparison
	if err := json.Unmarshal(js, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Error("comparison differs after a JSON round trip")
	}
}

// rateSeries is a counter of the pool sampled at times (seconds from t0)
// with values.
func rateSeries(metric string, times, values []float64) Series {
	s := Series{Metric: metric, Labels: lbl("pool", "tank", "vdev", "tank")}
	for i := range times {
		s.Samples = append(s.Samples, Sample{Time: at(times[i]), Value: values[i]})
	}
	return s
}

// A run of many intervals keeps its peak: the highest rate over a whole
// interval inside it, above the average.
func TestLongRunKeepsItsPeak(t *testing.T) {
	r := mirrorReport(t)
	for _, k := range []Counter{r.Pool.WriteBytes, r.Pool.ReadBytes} {
		if k.PeakUnavailable != "" || k.PeakPerSecond < k.PerSecond {
			t.Errorf("mirror: peak %v (%q), average %v", k.PeakPerSecond, k.PeakUnavailable, k.PerSecond)
		}
	}

	// A minute sampled every second, written at 100 MB/s with 180 MB/s
	// from 29.6 to 30.6 s, and two seconds of settling after, in which
	// the pool writes out 400 MB at once: not the run's peak.
	var times, values []float64
	total := 0.0
	for s := -0.4; s < 63; s++ {
		times, values = append(times, s), append(values, total)
		rate := 100e6
		switch {
		case s > 29 && s < 30:
			rate = 180e6
		case s > 59 && s < 61:
			rate = 0
		case s > 61:
			rate = 400e6
		}
		total += rate
	}
	run := Run{Name: "minute", Pool: "tank", Start: t0, End: at(60)}
	r, err := Compute(run, []Series{rateSeries("zfs_vdev_write_bytes_total", times, values)})
	if err != nil {
		t.Fatal(err)
	}
	if last := r.Timeline.Pool.Write[len(r.Timeline.Pool.Write)-1]; last.PerSecond != 400e6 || last.From < 60 {
		t.Fatalf("the settling's write-out: %+v", last)
	}
	w := r.Pool.WriteBytes
	if w.PeakUnavailable != "" {
		t.Fatalf("no peak: %s", w.PeakUnavailable)
	}
	near(t, "peak", w.PeakPerSecond, 180e6)
	near(t, "peak from", w.PeakFromSeconds, 29.6)
	near(t, "peak to", w.PeakToSeconds, 30.6)
	if w.PeakPerSecond < w.PerSecond {
		t.Errorf("peak %v below the average %v", w.PeakPerSecond, w.PerSecond)
	}
	table := string(render(t, func(w io.Writer) error { return WriteTable(w, r) }))
	// The run has no latency histograms: only their note says n/a.
	withoutLatency := regexp.MustCompile(`(?m)^note: latency n/a: .*$`).ReplaceAllString(table, "")
	if !regexp.MustCompile(`\nMB/s peak +- +180\.0\n`).MatchString(table) || strings.Contains(withoutLatency, "n/a") {
		t.Errorf("table:\n%s", table)
	}
}

// Over random sample series, whenever a report gives a peak it is at or
// above the average, over a whole interval inside the run, and the same
// after a JSON round trip; and a run that holds no whole interval has
// none.
func TestPeakIsNeverBelowTheAverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(20250314, 1))
	given, withheld := 0, 0
	for n := range 2000 {
		step := []float64{0.25, 1, 1, 2, 5, 10}[rng.IntN(6)]
		jitter := rng.Float64() * 0.3 * step
		dur := math.Round(rng.ExpFloat64()*3*step*1e3) / 1e3
		if dur <= 0 {
			dur = 0.001
		}
		first := -rng.Float64() * step // the baseline, at or before the start
		settle := rng.Float64() * 4 * step
		var times, values []float64
		total := rng.Float64() * 1e12
		for s := first; ; s += step + (rng.Float64()-0.5)*jitter {
			times = append(times, math.Round(s*1e6)/1e6)
			values = append(values, total)
			if s > dur+settle {
				break
			}
			switch rng.IntN(10) {
			case 0: // idle
			case 1: // a counter reset
				total = rng.Float64() * 1e6
			case 2: // a burst
				total += rng.Float64() * 5e9
			default:
				total += rng.Float64() * 2e8
			}
		}
		run := Run{Name: fmt.Sprintf("random %d", n), Pool: "tank", Start: t0, End: t0.Add(time.Duration(dur * float64(time.Second)))}
		reads := 1 + rng.IntN(len(values)) // the read counter stops early
		r, err := Compute(run, []Series{
			rateSeries("zfs_vdev_write_bytes_total", times, values),
			rateSeries("zfs_vdev_read_bytes_total", times[:reads], values[:reads]),
		})
		if err != nil {
			t.Fatal(err)
		}
		// wholeInside says whether one of the first n samples' intervals
		// lies inside the run.
		wholeInside := func(n int) bool {
			for i := 1; i < n; i++ {
				if !at(times[i-1]).Before(run.Start) && !at(times[i]).After(run.End) {
					return true
				}
			}
			return false
		}
		check := func(what string, r Report) {
			for dir, k := range map[string]Counter{"write": r.Pool.WriteBytes, "read": r.Pool.ReadBytes} {
				inside := wholeInside(len(times))
				if dir == "read" {
					inside = wholeInside(reads)
				}
				switch {
				case k.PeakUnavailable != "":
					if k.PeakPerSecond != 0 {
						t.Errorf("run %d %s %s: peak %v with a reason, %q", n, what, dir, k.PeakPerSecond, k.PeakUnavailable)
					}
				case k.PeakPerSecond < k.PerSecond:
					t.Errorf("run %d %s %s: peak %v below the average %v (duration %v, step %v)", n, what, dir, k.PeakPerSecond, k.PerSecond, dur, step)
				case k.PeakFromSeconds < 0 || k.PeakToSeconds > r.DurationSeconds || k.PeakToSeconds <= k.PeakFromSeconds:
					t.Errorf("run %d %s %s: peak over %v to %v s, not inside the %v s run", n, what, dir, k.PeakFromSeconds, k.PeakToSeconds, r.DurationSeconds)
				case !inside:
					t.Errorf("run %d %s %s: a peak, %v, with no whole interval inside the run", n, what, dir, k.PeakPerSecond)
				}
			}
		}
		check("computed", r)
		back, err := ReadJSON(bytes.NewReader(render(t, func(w io.Writer) error { return WriteJSON(w, r) })))
		if err != nil {
			t.Fatal(err)
		}
		check("read back", back)
		if !reflect.DeepEqual(back, r) {
			t.Errorf("run %d: the report differs after a JSON round trip", n)
		}
		if r.Pool.WriteBytes.PeakUnavailable == "" {
			given++
		} else {
			withheld++
		}
	}
	// Both cases are tried often.
	if given < 200 || withheld < 200 {
		t.Errorf("%d peaks given, %d withheld: the series do not try both enough", given, withheld)
	}
}

// A report saved before peaks had to lie inside the run and above its
// average, as the was (379.1 MB/s avg beside a 102.1 MB/s peak),
// reads back without that peak; one that meets the rule keeps it.
func TestSavedPeakBelowTheAverageIsDropped(t *testing.T) {
	old := func(avg, peak, from, to float64) []byte {
		return []byte(fmt.Sprintf(`{"run": {"name": "raidz 3x3", "pool": "tank", "start": "2025-03-14T09:00:00Z", "end": "2025-03-14T09:00:00.4Z"},
			"duration_seconds": 0.4,
			"pool": {"name": "tank", "write_bytes": {"samples": 5, "increase": %v, "per_second": %v, "peak_per_second": %v, "peak_from_seconds": %v, "peak_to_seconds": %v}},
			"timeline": {"pool": {"vdev": "tank", "read": [], "write": [
				{"from": -0.6, "to": 0.4, "per_second": 1.0e8}, {"from": 0.4, "to": 1.4, "per_second": %v}, {"from": 1.4, "to": 2.4, "per_second": 1e6}]}}}`,
			avg*0.4, avg, peak, from, to, peak))
	}
	r, err := ReadJSON(bytes.NewReader(old(379.1e6, 102.1e6, 0.4, 1.4)))
	if err != nil {
		t.Fatal(err)
	}
	if w := r.Pool.WriteBytes; w.PeakPerSecond != 0 || !strings.Contains(w.PeakUnavailable, "shorter than the sampling interval") {
		t.Errorf("saved peak %v beside a 379.1 MB/s average: %q", w.PeakPerSecond, w.PeakUnavailable)
	}
	c := Compare([]Report{r, r})
	table := string(render(t, func(w io.Writer) error { return WriteComparisonTable(w, c) }))
	if !strings.Contains(table, "pool write MB/s peak") || strings.Contains(table, "102.1") {
		t.Errorf("comparison of saved runs:\n%s", table)
	}
}

// A dd that copies a file into the pool wrote to it: its figure is named
// by the direction the pool saw, not "copied ... mixed".
func TestDDLabelIsTheDirectionThePoolSaw(t *testing.T) {
	swap := map[string]string{
		"zfs_vdev_read_bytes_total": "zfs_vdev_write_bytes_total", "zfs_vdev_write_bytes_total": "zfs_vdev_read_bytes_total",
	}
	for _, c := range []struct {
		name    string
		command string
		series  func() []Series
		label   string
		pool    string
	}{
		{"copy into the pool", "dd if=/var/tmp/src of=/tank/f bs=1M conv=fsync", mirrorSeries, "dd wrote", "pool: 1000 MB written, 100.0 MB/s avg, 150.0 MB/s peak"},
		{"copy out of the pool", "dd if=/tank/f of=/var/tmp/dst bs=1M", func() []Series {
			ss := mirrorSeries()
			for i := range ss {
				if m, ok := swap[ss[i].Metric]; ok {
					ss[i].Metric = m
				}
			}
			return ss
		}, "dd read", "pool: 1000 MB read, 100.0 MB/s avg, 150.0 MB/s peak"},
		{"copy within the pool", "dd if=/tank/a of=/tank/b bs=1M", func() []Series {
			// Every vdev read what it wrote.
			ss := mirrorSeries()
			written := map[string][]Sample{}
			for _, s := range ss {
				if s.Metric == "zfs_vdev_write_bytes_total" {
					written[s.Labels["vdev"]] = s.Samples
				}
			}
			for i := range ss {
				if ss[i].Metric == "zfs_vdev_read_bytes_total" {
					ss[i].Samples = written[ss[i].Labels["vdev"]]
				}
			}
			return ss
		}, "dd copied within the pool", "pool: 1000 MB read, 100.0 MB/s avg, 150.0 MB/s peak; 1000 MB written, 100.0 MB/s avg, 150.0 MB/s peak"},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := mirrorRun()
			run.Command = strings.Fields(c.command)
			// As zpool_bench gives a dd from one file to another.
			run.Workload.Results[0].Direction = workload.DDDirection(run.Command[1:])
			if run.Workload.Results[0].Direction != workload.Mixed {
				t.Fatalf("%s: operands tell %q", c.command, run.Workload.Results[0].Direction)
			}
			r, err := Compute(run, c.series())
			if err != nil {
				t.Fatal(err)
			}
			want := c.label + ": 209.7 MB in 1.90 s, 110.0 MB/s | " + c.pool
			if got := workloadLines(r); len(got) != 1 || got[0] != want {
				t.Errorf("workload lines %q, want %q", got, want)
			}
			cmp := Compare([]Report{r, mirrorReport(t)})
			var keys []string
			for _, row := range cmp.Rows {
				if strings.HasPrefix(row.Key, "workload.") {
					keys = append(keys, row.Key+" / "+row.Figure)
				}
			}
			wantKeys := []string{"workload." + c.label + ".bytes_per_second / " + c.label + " MB/s"}
			if c.label != "dd wrote" {
				wantKeys = append(wantKeys, "workload.dd wrote.bytes_per_second / dd wrote MB/s")
			}
			if !reflect.DeepEqual(keys, wantKeys) {
				t.Errorf("workload rows %q, want %q", keys, wantKeys)
			}
			table := string(render(t, func(w io.Writer) error { return WriteComparisonTable(w, cmp) }))
			if !strings.Contains(table, c.label+" MB/s") || strings.Contains(table, "mixed") {
				t.Errorf("comparison table:\n%s", table)
			}
		})
	}

	// Nothing moved: the direction is unknown, and dd's own word stays.
	r := mirrorReport(t)
	r.Run.Workload.Results[0].Direction = workload.Mixed
	r.Pool.ReadBytes.Increase, r.Pool.WriteBytes.Increase = 0, 0
	if got := resultName(workload.DD, r.Run.Workload.Results[0], poolDirection(r, workload.DD, r.Run.Workload.Results[0])); got != "dd copied" {
		t.Errorf("dd of nothing the pool saw: %q, want dd copied", got)
	}
}
