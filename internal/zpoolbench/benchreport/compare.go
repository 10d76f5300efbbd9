package benchreport

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// Comparison puts several runs side by side: one column per run, one row
// per figure, each with its ratio to the first run's.
type Comparison struct {
	Runs []ComparedRun `json:"runs"`
	Rows []ComparedRow `json:"rows"`
}

// ComparedRun identifies a run of a comparison, and keeps its pool's
// bandwidth over time for the overlay chart.
type ComparedRun struct {
	Name     string          `json:"name"`
	ID       string          `json:"id,omitempty"`
	Pool     string          `json:"pool"`
	Start    time.Time       `json:"start"`
	Timeline BandwidthSeries `json:"timeline"`
}

// ComparedRow is one figure of every run, or one configuration field.
type ComparedRow struct {
	// Key names the figure for programs: "pool.write.bytes_per_second",
	// "workload.dd wrote.bytes_per_second", "config.layout".
	Key string `json:"key"`
	// Figure names it for people, in the text formats' units
	// ("pool write MB/s avg"); Unit is the unit of Values.
	Figure string `json:"figure"`
	Unit   string `json:"unit"` // bytes, bytes/s, operations, operations/s, seconds, ratio; "" for text
	// Values are the runs' figures in base units, null where a run lacks
	// it; Text holds configuration fields instead.
	Values []*float64 `json:"values,omitempty"`
	Text   []string   `json:"text,omitempty"`
	// Ratios are each run's value over the first run's, null where
	// either is missing or the first is 0. Ratios[0] is 1.
	Ratios []*float64 `json:"ratios,omitempty"`
	// Unavailable says, for each run whose value is null because the run
	// cannot tell it (a peak of a run shorter than the sampling
	// interval), why; "" for the others. Absent when no run has a reason.
	Unavailable []string `json:"unavailable,omitempty"`
	// Differs is set on text rows (configuration, command, exit status)
	// whose runs are not all alike.
	Differs bool `json:"differs,omitempty"`
}

// Compare puts reports side by side, the first being the one each ratio
// divides by.
func Compare(reports []Report) Comparison {
	var c Comparison
	for _, r := range reports {
		c.Runs = append(c.Runs, ComparedRun{Name: runTitle(r.Run), ID: r.Run.ID, Pool: r.Run.Pool, Start: r.Run.Start, Timeline: r.Timeline.Pool})
	}
	// figureOrWhy adds a row whose runs may lack a value for a reason
	// (why, with ok false).
	figureOrWhy := func(key, label, unit string, get func(Report) (v float64, ok bool, why string)) {
		row := ComparedRow{Key: key, Figure: label, Unit: unit}
		found, whys := false, make([]string, len(reports))
		for i, r := range reports {
			v, ok, why := get(r)
			if ok {
				row.Values = append(row.Values, &v)
				found = true
				continue
			}
			row.Values = append(row.Values, nil)
			if why != "" {
				whys[i], row.Unavailable = why, whys
				found = true
			}
		}
		if !found {
			return
		}
		for _, v := range row.Values {
			var ratio *float64
			if v != nil && row.Values[0] != nil && *row.Values[0] != 0 {
				q := *v / *row.Values[0]
				ratio = &q
			}
			row.Ratios = append(row.Ratios, ratio)
		}
		c.Rows = append(c.Rows, row)
	}
	figure := func(key, label, unit string, get func(Report) (float64, bool)) {
		figureOrWhy(key, label, unit, func(r Report) (float64, bool, string) {
			v, ok := get(r)
			return v, ok, ""
		})
	}
	counter := func(key, label, unit string, pick func(VdevStats) Counter, val func(Counter) float64) {
		figure(key, label, unit, func(r Report) (float64, bool) {
			k := pick(r.Pool)
			return val(k), k.Samples > 0
		})
	}
	average := func(key, label, unit string, pick func(VdevStats) Counter) {
		figureOrWhy(key, label, unit, func(r Report) (float64, bool, string) {
			k := pick(r.Pool)
			if k.Samples > 0 && k.AverageUnavailable != "" {
				return 0, false, k.AverageUnavailable
			}
			return k.PerSecond, k.Samples > 0, ""
		})
	}
	peakOf := func(key, label string, pick func(VdevStats) Counter) {
		figureOrWhy(key, label, "bytes/s", func(r Report) (float64, bool, string) {
			k := pick(r.Pool)
			if k.Samples > 0 && k.PeakUnavailable != "" {
				return 0, false, k.PeakUnavailable
			}
			return k.PeakPerSecond, k.Samples > 0, ""
		})
	}
	wb := func(v VdevStats) Counter { return v.WriteBytes }
	rb := func(v VdevStats) Counter { return v.ReadBytes }
	wo := func(v VdevStats) Counter { return v.WriteOps }
	ro := func(v VdevStats) Counter { return v.ReadOps }
	inc := func(k Counter) float64 { return k.Increase }

	average("pool.write.bytes_per_second", "pool write MB/s avg", "bytes/s", wb)
	peakOf("pool.write.peak_bytes_per_second", "pool write MB/s peak", wb)
	average("pool.read.bytes_per_second", "pool read MB/s avg", "bytes/s", rb)
	peakOf("pool.read.peak_bytes_per_second", "pool read MB/s peak", rb)
	counter("pool.write.bytes", "pool written MB", "bytes", wb, inc)
	counter("pool.read.bytes", "pool read MB", "bytes", rb, inc)
	counter("pool.write.operations", "pool write ops", "operations", wo, inc)
	counter("pool.read.operations", "pool read ops", "operations", ro, inc)
	average("pool.write.operations_per_second", "pool write ops/s", "operations/s", wo)
	average("pool.read.operations_per_second", "pool read ops/s", "operations/s", ro)
	// The pool's latency: writes first, as above, and total wait before
	// disk wait.
	for _, dir := range []string{"write", "read"} {
		for _, k := range latencyKinds {
			if k.dir != dir {
				continue
			}
			key := "pool." + dir + "." + strings.ReplaceAll(k.wait, " ", "_") + "."
			label := "pool " + dir + " " + k.wait + " "
			for _, f := range latencyFigures {
				figureOrWhy(key+f.key, label+f.label+" ms", "seconds", func(r Report) (float64, bool, string) {
					if r.Pool.Latency == nil {
						return 0, false, ""
					}
					l := k.get(*r.Pool.Latency)
					if !l.Available() {
						return 0, false, l.Unavailable
					}
					return f.get(l), true, ""
				})
			}
		}
	}
	figure("cpu.busy_ratio", "host CPU busy %", "ratio", func(r Report) (float64, bool) {
		if r.CPU == nil {
			return 0, false
		}
		return r.CPU.BusyRatio, true
	})
	figure("cpu.engine_ratio", "ZFS engine CPU %", "ratio", func(r Report) (float64, bool) {
		if r.CPU == nil || r.CPU.Engine == nil {
			return 0, false
		}
		return r.CPU.Engine.Ratio, true
	})
	figure("arc.hit_ratio", "ARC hit ratio %", "ratio", func(r Report) (float64, bool) {
		if r.ARC == nil || !r.ARC.Accessed() {
			return 0, false
		}
		return r.ARC.HitRatio, true
	})

	// The benchmark's own figures, matched across runs by name.
	var names []string
	seen := map[string]bool{}
	for _, r := range reports {
		if s := r.Run.Workload; s != nil {
			for _, res := range s.Final() {
				n := comparedName(r, s.Tool, res)
				if !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	for _, n := range names {
		get := func(f func(r workload.Result) *float64) func(Report) (float64, bool) {
			return func(r Report) (float64, bool) {
				if s := r.Run.Workload; s != nil {
					for _, res := range s.Final() {
						if comparedName(r, s.Tool, res) == n {
							if v := f(res); v != nil {
								return *v, true
							}
							return 0, false
						}
					}
				}
				return 0, false
			}
		}
		figure("workload."+n+".bytes_per_second", n+" MB/s", "bytes/s", get(func(r workload.Result) *float64 { return r.BytesPerSecond }))
		figure("workload."+n+".operations_per_second", n+" ops/s", "operations/s", get(func(r workload.Result) *float64 { return r.OperationsPerSecond }))
		// The tool's latency, by measure: fio's clat of one run and lat of
		// another are different figures.
		for _, measure := range []string{"clat", "lat"} {
			of := func(f func(l workload.Latency) (float64, bool)) func(r workload.Result) *float64 {
				return func(r workload.Result) *float64 {
					if r.Latency == nil || r.Latency.Measure != measure {
						return nil
					}
					if v, ok := f(*r.Latency); ok {
						return &v
					}
					return nil
				}
			}
			key, label := "workload."+n+"."+measure+"_", n+" "+measure+" "
			figure(key+"p50_seconds", label+"p50 ms", "seconds", get(of(func(l workload.Latency) (float64, bool) { return l.At(50) })))
			figure(key+"p99_seconds", label+"p99 ms", "seconds", get(of(func(l workload.Latency) (float64, bool) { return l.At(99) })))
			figure(key+"mean_seconds", label+"mean ms", "seconds", get(of(func(l workload.Latency) (float64, bool) {
				if l.MeanSeconds == nil {
					return 0, false
				}
				return *l.MeanSeconds, true
			})))
		}
	}
	figure("duration_seconds", "duration s", "seconds", func(r Report) (float64, bool) { return r.DurationSeconds, true })

	text := func(key, label string, get func(Report) string) {
		row := ComparedRow{Key: key, Figure: label}
		for i, r := range reports {
			v := get(r)
			row.Text = append(row.Text, v)
			if i > 0 && v != row.Text[0] {
				row.Differs = true
			}
		}
		c.Rows = append(c.Rows, row)
	}
	cfg := func(f func(r Run) string) func(Report) string {
		return func(r Report) string {
			if r.Run.Config == nil {
				return "unknown"
			}
			if s := f(r.Run); s != "" {
				return s
			}
			return "unknown"
		}
	}
	text("config.pool", "pool", func(r Report) string { return r.Run.Pool })
	text("config.layout", "layout", cfg(func(r Run) string { return r.Config.Layout }))
	text("config.ashift", "ashift", cfg(func(r Run) string { return intOrEmpty(r.Config.Ashift) }))
	text("config.compression", "compression", cfg(func(r Run) string { return r.Config.Compression }))
	text("config.recordsize", "recordsize", cfg(func(r Run) string { return sizeOrEmpty(r.Config.Recordsize) }))
	text("config.version", "version", cfg(func(r Run) string { return r.Config.Version }))
	text("config.state", "states seen", func(r Report) string {
		if len(r.PoolStates) == 0 {
			return "unknown"
		}
		return strings.Join(r.PoolStates, " → ")
	})
	text("run.command", "command", func(r Report) string { return commandLine(r.Run.Command) })
	text("run.exit_status", "exit status", func(r Report) string {
		s := strconv.Itoa(r.Run.ExitStatus)
		if r.Run.Interrupted {
			s += ", interrupted"
		}
		return s
	})
	return c
}

// comparedName names a result of the benchmark's own in a comparison,
// with the direction of its bytes: "fio seq read", "dd wrote".
func comparedName(r Report, tool workload.Tool, res workload.Result) string {
	dir := poolDirection(r, tool, res)
	n := resultName(tool, res, dir)
	if tool != workload.DD && dir != "" && !strings.Contains(n, string(dir)) {
		n += " " + string(dir)
	}
	return n
}

// latencyFigures are the figures of a latency a comparison lists.
var latencyFigures = []struct {
	key, label string
	get        func(Latency) float64
}{
	{"p50_seconds", "p50", func(l Latency) float64 { return l.P50Seconds }},
	{"p99_seconds", "p99", func(l Latency) float64 { return l.P99Seconds }},
	{"mean_seconds", "mean", func(l Latency) float64 { return l.MeanSeconds }},
}

// formatValue shows a figure of row in the text formats' units: those its
// label names, ms for latencies.
func formatValue(row ComparedRow, v float64) string {
	switch row.Unit {
	case "bytes", "bytes/s":
		return fmtMB(v)
	case "ratio":
		return strconv.FormatFloat(v*100, 'f', 1, 64)
	case "operations":
		return fmtCount(v)
	case "seconds":
		if strings.HasSuffix(row.Figure, " ms") {
			return fmtMS(v)
		}
	}
	return sig(v)
}

// isPoolLatency tells the rows of the pool's latency.
func isPoolLatency(key string) bool {
	return strings.HasPrefix(key, "pool.") && (strings.Contains(key, ".total_wait.") || strings.Contains(key, ".disk_wait."))
}

// shownRows are the rows the text formats show: the pool's latency rows
// become one, "pool latency ms", when no run has any of them and each run
// lacks them all for one reason (the collector was off), which its note
// then says once.
func (c Comparison) shownRows() []ComparedRow {
	var out []ComparedRow
	var latency []ComparedRow
	for _, row := range c.Rows {
		if isPoolLatency(row.Key) {
			latency = append(latency, row)
			continue
		}
		if len(latency) > 0 {
			out = append(out, collapseLatency(latency, len(c.Runs))...)
			latency = nil
		}
		out = append(out, row)
	}
	return append(out, collapseLatency(latency, len(c.Runs))...)
}

// collapseLatency is rows, or the one row that stands for them.
func collapseLatency(rows []ComparedRow, runs int) []ComparedRow {
	if len(rows) < 2 {
		return rows
	}
	why := func(row ComparedRow, i int) string {
		if row.Unavailable == nil {
			return ""
		}
		return row.Unavailable[i]
	}
	whys := make([]string, runs)
	for i := range whys {
		whys[i] = why(rows[0], i)
	}
	for _, row := range rows {
		for i, v := range row.Values {
			if v != nil || why(row, i) != whys[i] {
				return rows
			}
		}
	}
	one := ComparedRow{Key: "pool.latency", Figure: "pool latency ms", Unit: "seconds", Values: make([]*float64, runs), Ratios: make([]*float64, runs)}
	for _, why := range whys {
		if why != "" {
			one.Unavailable = whys
		}
	}
	return []ComparedRow{one}
}

func (c Comparison) doc() doc {
	var names []string
	for _, r := range c.Runs {
		names = append(names, r.Name)
	}
	d := doc{title: "Comparison: " + strings.Join(names, " | ")}
	for i, r := range c.Runs {
		label := "run " + strconv.Itoa(i+1)
		if i == 0 {
			label += " (ratios divide by it)"
		}
		d.fields = append(d.fields, [2]string{label, r.Name + idSuffix(r.ID) + ", pool " + r.Pool + ", " + r.Start.UTC().Format(timeLayout)})
	}
	// Fit the runs' columns in the terminal's width.
	colMax := 14
	if len(c.Runs) > 0 {
		colMax = max(12, (textWidth-28)/len(c.Runs)-2)
	}
	t := &table{cols: []column{{name: "FIGURE (MB = 1e6 bytes)", max: 30}}, markNote: "the runs differ in this setting"}
	for i, r := range c.Runs {
		n := strconv.Itoa(i+1) + " " + r.Name
		if utf8.RuneCountInString(n) > colMax {
			n = string([]rune(n)[:colMax-1]) + "…"
		}
		t.cols = append(t.cols, column{name: n, right: true, max: colMax})
	}
	rows := c.shownRows()
	for _, row := range rows {
		cells := []string{row.Figure}
		if row.Text != nil {
			cells = append(cells, row.Text...)
			t.add(row.Differs, cells...)
			continue
		}
		for i, v := range row.Values {
			s := "-"
			if row.Unavailable != nil && row.Unavailable[i] != "" {
				s = notAvailable
			}
			if v != nil {
				s = formatValue(row, *v)
				if i > 0 {
					if q := row.Ratios[i]; q != nil {
						s += " (" + fmtRatio(*q) + ")"
					} else {
						s += " (-)"
					}
				}
			}
			cells = append(cells, s)
		}
		t.add(false, cells...)
	}
	d.blocks = append(d.blocks, block{table: t}, block{lines: c.unavailableNotes(rows)})
	return d
}

// unavailableNotes say, run by run, why the figures of rows are n/a.
func (c Comparison) unavailableNotes(rows []ComparedRow) []string {
	var out []string
	for i, r := range c.Runs {
		var whys []string
		figures := map[string][]string{}
		for _, row := range rows {
			if row.Unavailable == nil || row.Unavailable[i] == "" {
				continue
			}
			why := row.Unavailable[i]
			if figures[why] == nil {
				whys = append(whys, why)
			}
			figures[why] = append(figures[why], row.Figure)
		}
		for _, why := range whys {
			out = append(out, fmt.Sprintf("note: %s in run %d (%s), %s: %s", notAvailable, i+1, r.Name, strings.Join(groupLatency(figures[why]), " and "), why))
		}
	}
	return out
}

// groupLatency names the pool's latency figures of a note by what they
// share: "pool latency ms" for all twelve, "pool read latency ms" for a
// direction's six, "pool read total wait p50, p99 and mean ms" for a
// wait's three. Other figures stay as they are, in their order.
func groupLatency(figures []string) []string {
	has := map[string]bool{}
	for _, f := range figures {
		has[f] = true
	}
	label := func(dir, wait, figure string) string { return "pool " + dir + " " + wait + " " + figure + " ms" }
	// groups, widest first: the name of each and the figures it stands for.
	type group struct {
		name    string
		figures []string
	}
	var all []string
	var groups []group
	for _, dir := range []string{"write", "read"} {
		var ofDir []string
		for _, k := range latencyKinds {
			if k.dir != dir {
				continue
			}
			var ofWait []string
			for _, f := range latencyFigures {
				ofWait = append(ofWait, label(dir, k.wait, f.label))
			}
			groups = append(groups, group{"pool " + dir + " " + k.wait + " p50, p99 and mean ms", ofWait})
			ofDir = append(ofDir, ofWait...)
		}
		groups = append(groups, group{"pool " + dir + " latency ms", ofDir})
		all = append(all, ofDir...)
	}
	groups = append(groups, group{"pool latency ms", all})
	slices.SortStableFunc(groups, func(a, b group) int { return len(b.figures) - len(a.figures) })
	named := map[string]string{} // figure -> the group's name it goes under
	for _, g := range groups {
		whole := true
		for _, f := range g.figures {
			whole = whole && has[f] && named[f] == ""
		}
		if whole {
			for _, f := range g.figures {
				named[f] = g.name
			}
		}
	}
	var out []string
	said := map[string]bool{}
	for _, f := range figures {
		name := f
		if n := named[f]; n != "" {
			name = n
		}
		if !said[name] {
			said[name] = true
			out = append(out, name)
		}
	}
	return out
}

// WriteComparisonTable writes a comparison as aligned text for a
// terminal; rows where the runs' configurations differ start with "*".
func WriteComparisonTable(w io.Writer, c Comparison) error { return c.doc().writeText(w) }

// WriteComparisonMarkdown writes a comparison as a GitHub table; rows
// where the runs' configurations differ are bold.
func WriteComparisonMarkdown(w io.Writer, c Comparison) error { return c.doc().writeMarkdown(w) }

// WriteComparisonJSON writes a comparison as indented JSON.
func WriteComparisonJSON(w io.Writer, c Comparison) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(c)
}

// WriteComparisonCSV writes a comparison as CSV: key, unit, then
// one column per run (base units, as in Values; configuration fields as
// text), then one ratio column per run after the first ("ratio 2/1": run 2
// over run 1), then differs (true on configuration rows that differ), then
// unavailable: why runs' cells are empty ("run 2: ..."; several joined by
// "; "), else empty.
func WriteComparisonCSV(w io.Writer, c Comparison) error {
	cw := csv.NewWriter(w)
	head := []string{"key", "unit"}
	for _, r := range c.Runs {
		head = append(head, r.Name)
	}
	for i := 1; i < len(c.Runs); i++ {
		head = append(head, fmt.Sprintf("ratio %d/1", i+1))
	}
	head = append(head, "differs", "unavailable")
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, row := range c.Rows {
		rec := []string{row.Key, row.Unit}
		if row.Text != nil {
			rec = append(rec, row.Text...)
			for i := 1; i < len(c.Runs); i++ {
				rec = append(rec, "")
			}
		} else {
			for _, v := range row.Values {
				rec = append(rec, optFloat(v))
			}
			for i := 1; i < len(row.Ratios); i++ {
				rec = append(rec, optFloat(row.Ratios[i]))
			}
		}
		var whys []string
		for i, why := range row.Unavailable {
			if why != "" {
				whys = append(whys, fmt.Sprintf("run %d: %s", i+1, why))
			}
		}
		rec = append(rec, strconv.FormatBool(row.Differs), strings.Join(whys, "; "))
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func optFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'g', -1, 64)
}

// WriteComparisonSVG writes a standalone SVG chart of the runs' pool
// bandwidth, aligned at their starts: one colour per run, writes solid,
// reads dashed.
func WriteComparisonSVG(w io.Writer, c Comparison) error {
	var names []string
	for _, r := range c.Runs {
		names = append(names, r.Name)
	}
	ch := chart{
		title:    []string{"Pool bandwidth: " + strings.Join(names, " vs "), "writes solid, reads dashed; runs aligned at their starts"},
		subtitle: "MB/s (1 MB = 1e6 bytes) between consecutive samples; seconds since each run's start",
		marks:    []chartMark{{x: 0, label: "start"}},
	}
	for i, r := range c.Runs {
		color := palette[i%len(palette)]
		ch.series = append(ch.series,
			chartSeries{name: r.Name + " write", color: color, rates: r.Timeline.Write},
			chartSeries{name: r.Name + " read", color: color, dash: true, rates: r.Timeline.Read})
	}
	return ch.write(w)
}
