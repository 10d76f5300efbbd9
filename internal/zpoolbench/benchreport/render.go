package benchreport

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// WriteTable writes the report as aligned text for a terminal, within
// 100 columns (long vdev names are cut, keeping their end).
func WriteTable(w io.Writer, r Report) error { return reportDoc(r).writeText(w) }

// WriteMarkdown writes the report as Markdown with GitHub tables.
func WriteMarkdown(w io.Writer, r Report) error { return reportDoc(r).writeMarkdown(w) }

// WriteJSON writes the report as indented JSON; ReadJSON reads it back.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadJSON reads a report written by WriteJSON. The peaks of a report
// saved before a peak had to lie inside the run and above its average are
// judged again as Compute judges them now.
func ReadJSON(rd io.Reader) (Report, error) {
	var r Report
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return Report{}, fmt.Errorf("benchreport: reading a report: %w", err)
	}
	r.judgePeaks()
	return r, nil
}

func runTitle(run Run) string {
	if run.Name != "" {
		return run.Name
	}
	if run.ID != "" {
		return "run " + run.ID
	}
	return "benchmark run"
}

const timeLayout = "2006-01-02 15:04:05.000 MST"

// headerFields are the lines every text format starts with.
func headerFields(r Report) [][2]string {
	run := r.Run
	cfg := run.Config
	get := func(f func() string) string {
		if cfg == nil {
			return "unknown"
		}
		if s := f(); s != "" {
			return s
		}
		return "unknown"
	}
	f := [][2]string{
		{"run", runTitle(run) + idSuffix(run.ID)},
		{"pool", run.Pool},
		{"layout", get(func() string { return cfg.Layout })},
		{"ashift", get(func() string { return intOrEmpty(cfg.Ashift) })},
		{"compression", get(func() string { return cfg.Compression })},
		{"recordsize", get(func() string { return sizeOrEmpty(cfg.Recordsize) })},
		{"state", stateField(r)},
		{"version", get(func() string { return cfg.Version })},
		{"command", commandLine(run.Command)},
	}
	if run.Host != "" {
		f = append(f, [2]string{"host", run.Host})
	}
	exit := strconv.Itoa(run.ExitStatus)
	if run.ExitStatus > 128 && run.ExitStatus < 160 {
		exit += fmt.Sprintf(" (signal %d)", run.ExitStatus-128)
	}
	if run.Interrupted {
		exit += ", interrupted"
	}
	f = append(f,
		[2]string{"start", run.Start.UTC().Format(timeLayout)},
		[2]string{"end", run.End.UTC().Format(timeLayout)},
		[2]string{"duration", FormatSeconds(r.DurationSeconds)},
		[2]string{"exit status", exit},
		[2]string{"samples", sampleField(r)},
	)
	return f
}

func idSuffix(id string) string {
	if id == "" {
		return ""
	}
	return " (" + id + ")"
}

func intOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// sizeOrEmpty formats a recordsize the way zfs prints it: 128K, 1M.
func sizeOrEmpty(b int64) string {
	switch {
	case b <= 0:
		return ""
	case b%(1<<20) == 0:
		return strconv.FormatInt(b>>20, 10) + "M"
	case b%(1<<10) == 0:
		return strconv.FormatInt(b>>10, 10) + "K"
	}
	return strconv.FormatInt(b, 10)
}

func stateField(r Report) string {
	s := "unknown"
	if r.Run.Config != nil && r.Run.Config.State != "" {
		s = r.Run.Config.State + " at start"
	}
	if len(r.PoolStates) > 0 {
		s += "; seen during the run: " + strings.Join(r.PoolStates, " → ")
	}
	return s
}

func sampleField(r Report) string {
	src := r.Run.Source
	if src == "" {
		src = "unknown source"
	}
	if r.Samples.From.IsZero() {
		return src
	}
	return fmt.Sprintf("%s, %s before the start to %s after the end",
		src, FormatSeconds(r.Run.Start.Sub(r.Samples.From).Seconds()), FormatSeconds(r.Samples.SettleSeconds))
}

// commandLine quotes the arguments that need it, as a shell would read them.
func commandLine(args []string) string {
	if len(args) == 0 {
		return "unknown"
	}
	q := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

func reportDoc(r Report) doc {
	d := doc{title: runTitle(r.Run) + ": " + r.Run.Pool, fields: headerFields(r)}

	// The pool's figures, read beside write.
	p := r.Pool
	sum := &table{cols: []column{{name: "POOL " + p.Name}, {name: "READ", right: true}, {name: "WRITE", right: true}}}
	sum.add(false, "MB", counterMB(p.ReadBytes), counterMB(p.WriteBytes))
	sum.add(false, "MB/s avg", AverageMB(p.ReadBytes), AverageMB(p.WriteBytes))
	sum.add(false, "MB/s peak", peakMB(p.ReadBytes), peakMB(p.WriteBytes))
	sum.add(false, "peak between (s)", peakWhen(p.ReadBytes), peakWhen(p.WriteBytes))
	sum.add(false, "operations", counterOps(p.ReadOps), counterOps(p.WriteOps))
	sum.add(false, "ops/s avg", rateOps(p.ReadOps), rateOps(p.WriteOps))
	rs, rw := "-", "-"
	if share, ok := p.ReadShare(); ok {
		rs, rw = fmtPercent(share), fmtPercent(1-share)
	}
	sum.add(false, "share of bytes", rs, rw)
	var lines []string
	lines = append(lines, peakNotes(p)...)
	lines = append(lines, cpuLines(r)...)
	lines = append(lines, stateLines(r)...)
	d.blocks = append(d.blocks, block{heading: "Pool", table: sum}, block{lines: lines})

	if wl := workloadLines(r); len(wl) > 0 {
		d.blocks = append(d.blocks, block{heading: "Benchmark's own figures beside the pool's", lines: wl})
	}

	vt := &table{cols: []column{
		{name: "VDEV", max: 30}, {name: "TYPE", max: 14},
		{name: "READ MB", right: true}, {name: "WRITE MB", right: true},
		{name: "R MB/s", right: true}, {name: "W MB/s", right: true},
		{name: "R OPS", right: true}, {name: "W OPS", right: true},
	}}
	for _, v := range append([]VdevStats{r.Pool}, r.Vdevs...) {
		typ := v.Type
		if v.Class != "" && v.Class != "normal" {
			typ += " " + v.Class
		}
		vt.add(false, strings.Repeat("  ", v.Depth)+v.Name, typ,
			counterMB(v.ReadBytes), counterMB(v.WriteBytes), AverageMB(v.ReadBytes), AverageMB(v.WriteBytes),
			counterOps(v.ReadOps), counterOps(v.WriteOps))
	}
	d.blocks = append(d.blocks, block{heading: "Vdevs (MB = 1e6 bytes; averages over the run's duration)", table: vt})
	d.blocks = append(d.blocks, latencyBlocks(r)...)

	if len(r.Missing) > 0 {
		d.blocks = append(d.blocks, block{heading: "Missing", lines: r.Missing})
	}
	return d
}

func counterMB(c Counter) string {
	if c.Samples == 0 {
		return "-"
	}
	return fmtMB(c.Increase)
}

// AverageMB writes a byte counter's average as the reports do, in MB/s:
// n/a for a run too short to tell one, - without samples.
func AverageMB(c Counter) string {
	switch {
	case c.Samples == 0:
		return "-"
	case c.AverageUnavailable != "":
		return notAvailable
	}
	return fmtMB(c.PerSecond)
}

// notAvailable marks a figure the run is too short to tell; a note beside
// it says why.
const notAvailable = "n/a"

func peakMB(c Counter) string {
	return peakText(c, func() string { return fmtMB(c.PeakPerSecond) })
}

func peakWhen(c Counter) string {
	return peakText(c, func() string { return sig(c.PeakFromSeconds) + " to " + sig(c.PeakToSeconds) })
}

// peakText is what show writes of a counter's peak; "-" without samples
// for one, n/a when the run is too short for it.
func peakText(c Counter, show func() string) string {
	switch {
	case c.Samples == 0:
		return "-"
	case c.PeakUnavailable != "":
		return notAvailable
	case c.Samples < 2:
		return "-"
	}
	return show()
}

// peakPhrase is a counter's peak for a sentence: "150.0 MB/s peak", or
// "peak n/a".
func peakPhrase(c Counter) string {
	if c.Samples > 0 && c.PeakUnavailable != "" {
		return "peak " + notAvailable
	}
	return peakMB(c) + " MB/s peak"
}

// averagePhrase is a counter's average for a sentence: "150.0 MB/s avg",
// or "average n/a".
func averagePhrase(c Counter) string {
	if c.Samples > 0 && c.AverageUnavailable != "" {
		return "average " + notAvailable
	}
	return AverageMB(c) + " MB/s avg"
}

// peakNotes say why the pool's table shows no average or no peak.
func peakNotes(p VdevStats) []string {
	notes := func(figure, r, w string) []string {
		if r != "" && r == w {
			return []string{"note: " + figure + " " + notAvailable + ": " + r}
		}
		var out []string
		if w != "" {
			out = append(out, "note: write "+figure+" "+notAvailable+": "+w)
		}
		if r != "" {
			out = append(out, "note: read "+figure+" "+notAvailable+": "+r)
		}
		return out
	}
	return append(notes("MB/s avg", p.ReadBytes.AverageUnavailable, p.WriteBytes.AverageUnavailable),
		notes("MB/s peak", p.ReadBytes.PeakUnavailable, p.WriteBytes.PeakUnavailable)...)
}

func counterOps(c Counter) string {
	if c.Samples == 0 {
		return "-"
	}
	return fmtCount(c.Increase)
}

func rateOps(c Counter) string {
	switch {
	case c.Samples == 0:
		return "-"
	case c.AverageUnavailable != "":
		return notAvailable
	}
	return sig(c.PerSecond)
}

func cpuLines(r Report) []string {
	var out []string
	if c := r.CPU; c != nil {
		out = append(out, fmt.Sprintf("host CPU busy: %s (of %s CPUs)", fmtPercent(c.BusyRatio), sig(c.CPUs)))
		if e := c.Engine; e != nil {
			var fams []string
			for _, f := range e.Families {
				fams = append(fams, f.Family+" "+fmtPercent(f.Ratio))
			}
			l := "ZFS engine CPU: " + fmtPercent(e.Ratio) + " of the machine"
			if len(fams) > 0 {
				l += " (" + strings.Join(fams, ", ") + ")"
			}
			out = append(out, l)
		}
	}
	if a := r.ARC; a != nil && a.Accessed() {
		out = append(out, fmt.Sprintf("ARC hit ratio: %s (%s hits, %s misses)", fmtPercent(a.HitRatio), fmtCount(a.Hits), fmtCount(a.Misses)))
	}
	return out
}

func stateLines(r Report) []string {
	var out []string
	if len(r.PoolStates) > 0 {
		out = append(out, "pool states seen: "+strings.Join(r.PoolStates, " → "))
	}
	for _, v := range r.NotOnline {
		out = append(out, fmt.Sprintf("vdev not online: %s (%s)", v.Vdev, strings.Join(v.States, ", ")))
	}
	return out
}

// workloadLines set each of the tool's final results beside the pool's
// figures in the same direction.
func workloadLines(r Report) []string {
	var out []string
	if s := r.Run.Workload; s != nil {
		for _, res := range s.Final() {
			dir := poolDirection(r, s.Tool, res)
			out = append(out, resultText(s.Tool, res, dir)+" | "+poolSide(r.Pool, dir))
			if res.Latency != nil {
				out = append(out, latencyLine(r, s.Tool, res, dir))
			}
		}
		for _, m := range s.Messages {
			out = append(out, string(s.Tool)+" said: "+m)
		}
	}
	if r.Run.WorkloadError != "" {
		out = append(out, "note: the benchmark's output was not read: "+r.Run.WorkloadError)
	}
	return out
}

// resultName is a result's name as the reports show it: "fio job1
// write"; dd's, which names no direction, is named by dir, the direction
// the pool saw (poolDirection): "dd wrote", "dd read", "dd copied within
// the pool", and "dd copied" when that is unknown.
func resultName(tool workload.Tool, res workload.Result, dir workload.Direction) string {
	parts := []string{string(tool)}
	if res.Job != "" {
		parts = append(parts, res.Job)
	}
	if res.Group != nil {
		parts = append(parts, "group "+strconv.Itoa(*res.Group))
	}
	name := res.Name
	if tool == workload.DD {
		switch dir {
		case workload.Write:
			name = "wrote"
		case workload.Read:
			name = "read"
		case workload.Mixed:
			name += " within the pool"
		}
	}
	parts = append(parts, name)
	return strings.Join(parts, " ")
}

// poolDirection is the direction of a result's bytes as the pool saw them:
// the result's own, but for dd, whose summary names none and whose
// operands (workload.DDDirection) tell only a stream from a file, the
// pool's counters decide when both ends are files or the direction is
// unknown.
func poolDirection(r Report, tool workload.Tool, res workload.Result) workload.Direction {
	if tool != workload.DD {
		return res.Direction
	}
	dir := res.Direction
	if dir == "" && len(r.Run.Command) > 0 {
		if t, ok := workload.ToolFor(r.Run.Command[0]); ok && t == workload.DD {
			dir = workload.DDDirection(r.Run.Command[1:])
		}
	}
	if dir == workload.Read || dir == workload.Write {
		return dir
	}
	// A file dd copies into the pool is a write to it and one it copies
	// out a read, whatever the paths and the mountpoints: the pool's
	// counters tell which end it holds, and both when it holds both.
	if saw, ok := sawDirection(r.Pool); ok {
		return saw
	}
	return ""
}

// sawDirection is the direction that moved nearly all (90 % or more) of a
// vdev's bytes, Mixed when both moved, and false when no byte moved.
func sawDirection(v VdevStats) (workload.Direction, bool) {
	share, ok := v.ReadShare()
	switch {
	case !ok:
		return "", false
	case share >= 0.9:
		return workload.Read, true
	case share <= 0.1:
		return workload.Write, true
	}
	return workload.Mixed, true
}

func resultText(tool workload.Tool, res workload.Result, dir workload.Direction) string {
	var figs []string
	if res.Bytes != nil {
		f := fmtMB(*res.Bytes) + " MB"
		if res.Direction != "" && tool != workload.DD { // dd's name says it
			f += " " + string(res.Direction)
		}
		if res.Seconds != nil {
			f += " in " + FormatSeconds(*res.Seconds)
		}
		figs = append(figs, f)
	} else if res.Seconds != nil {
		figs = append(figs, FormatSeconds(*res.Seconds))
	}
	if res.BytesPerSecond != nil {
		figs = append(figs, fmtMB(*res.BytesPerSecond)+" MB/s")
	}
	if res.OperationsPerSecond != nil {
		figs = append(figs, sig(*res.OperationsPerSecond)+" ops/s")
	}
	if res.LatencySeconds != nil {
		figs = append(figs, "latency "+sig(*res.LatencySeconds*1000)+" ms")
	}
	if len(figs) == 0 && res.Printed != "" {
		figs = append(figs, res.Printed)
	}
	if res.Note != "" {
		figs = append(figs, "("+res.Note+")")
	}
	if len(figs) == 0 {
		figs = append(figs, "no figures")
	}
	return resultName(tool, res, dir) + ": " + strings.Join(figs, ", ")
}

// poolSide is the pool's figures in a result's direction: for a result of
// no single direction (dd, whose direction its operands set; mixed loads)
// the direction that moved more bytes, or both when that is unclear.
func poolSide(p VdevStats, dir workload.Direction) string {
	read := func() string {
		return fmt.Sprintf("%s MB read, %s, %s", counterMB(p.ReadBytes), averagePhrase(p.ReadBytes), peakPhrase(p.ReadBytes))
	}
	write := func() string {
		return fmt.Sprintf("%s MB written, %s, %s", counterMB(p.WriteBytes), averagePhrase(p.WriteBytes), peakPhrase(p.WriteBytes))
	}
	if dir == "" {
		dir, _ = sawDirection(p)
	}
	switch dir {
	case workload.Read:
		return "pool: " + read()
	case workload.Write:
		return "pool: " + write()
	}
	return "pool: " + read() + "; " + write()
}

// CSVColumns are the columns of WriteCSV, in order. Every row repeats the
// run's fields, so that the rows of several runs can be concatenated into
// one sheet. Units are base units, named in the column: bytes, bytes per
// second, operations, seconds, ratios from 0 to 1.
//
//	run, run_id, pool, layout, ashift, compression, recordsize_bytes: the run and its pool's configuration
//	start: RFC 3339, UTC; duration_seconds: the run's; exit_status, interrupted (true/false)
//	vdev, type, class, parent, depth: the row's vdev; the pool's row has type root and depth 0
//	read_bytes, write_bytes, read_operations, write_operations: increases over the samples
//	read_bytes_per_second, write_bytes_per_second: averages over the run's duration
//	peak_read_bytes_per_second, peak_write_bytes_per_second: highest rate over a whole sampling interval inside the run
//	cpu_busy_ratio, engine_cpu_ratio, arc_hit_ratio: pool row only, empty when unknown
//	peak_read_unavailable, peak_write_unavailable: why the peak's cell is empty (the run is too short for one), else empty
//	total_wait_read_p50_seconds, total_wait_read_p99_seconds, total_wait_read_mean_seconds, total_wait_read_unavailable,
//	total_wait_write_..., disk_wait_read_..., disk_wait_write_...: the latency of the pool and of each top-level vdev,
//	  empty for leaves; where a latency is n/a its figures are empty and _unavailable says why
//
// A counter without samples leaves its cells empty.
var CSVColumns = append([]string{
	"run", "run_id", "pool", "layout", "ashift", "compression", "recordsize_bytes",
	"start", "duration_seconds", "exit_status", "interrupted",
	"vdev", "type", "class", "parent", "depth",
	"read_bytes", "write_bytes", "read_operations", "write_operations",
	"read_bytes_per_second", "write_bytes_per_second",
	"peak_read_bytes_per_second", "peak_write_bytes_per_second",
	"cpu_busy_ratio", "engine_cpu_ratio", "arc_hit_ratio",
	"peak_read_unavailable", "peak_write_unavailable",
}, latencyCSVColumns()...)

// latencyCSVColumns are the last columns of WriteCSV: for total wait, then
// disk wait, reads then writes, the p50, p99 and mean in seconds and why
// they are n/a.
func latencyCSVColumns() []string {
	var out []string
	for _, k := range latencyKinds {
		p := strings.ReplaceAll(k.wait, " ", "_") + "_" + k.dir + "_"
		out = append(out, p+"p50_seconds", p+"p99_seconds", p+"mean_seconds", p+"unavailable")
	}
	return out
}

// WriteCSV writes the report as CSV: the CSVColumns header, then the
// pool's row and one row per vdev in tree order.
func WriteCSV(w io.Writer, r Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVColumns); err != nil {
		return err
	}
	run := r.Run
	var layout, ashift, compression, recordsize string
	if cfg := run.Config; cfg != nil {
		layout, ashift, compression = cfg.Layout, intOrEmpty(cfg.Ashift), cfg.Compression
		if cfg.Recordsize > 0 {
			recordsize = strconv.FormatInt(cfg.Recordsize, 10)
		}
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	cnt := func(c Counter, f float64) string {
		if c.Samples == 0 {
			return ""
		}
		return num(f)
	}
	peak := func(c Counter) string {
		if c.PeakUnavailable != "" {
			return ""
		}
		return cnt(c, c.PeakPerSecond)
	}
	average := func(c Counter) string {
		if c.AverageUnavailable != "" {
			return ""
		}
		return cnt(c, c.PerSecond)
	}
	for i, v := range append([]VdevStats{r.Pool}, r.Vdevs...) {
		var busy, engine, arc string
		if i == 0 {
			if r.CPU != nil {
				busy = num(r.CPU.BusyRatio)
				if r.CPU.Engine != nil {
					engine = num(r.CPU.Engine.Ratio)
				}
			}
			if r.ARC != nil && r.ARC.Accessed() {
				arc = num(r.ARC.HitRatio)
			}
		}
		row := []string{
			run.Name, run.ID, run.Pool, layout, ashift, compression, recordsize,
			run.Start.UTC().Format(time.RFC3339Nano), num(r.DurationSeconds), strconv.Itoa(run.ExitStatus), strconv.FormatBool(run.Interrupted),
			v.Name, v.Type, v.Class, v.Parent, strconv.Itoa(v.Depth),
			cnt(v.ReadBytes, v.ReadBytes.Increase), cnt(v.WriteBytes, v.WriteBytes.Increase),
			cnt(v.ReadOps, v.ReadOps.Increase), cnt(v.WriteOps, v.WriteOps.Increase),
			average(v.ReadBytes), average(v.WriteBytes),
			peak(v.ReadBytes), peak(v.WriteBytes),
			busy, engine, arc,
			v.ReadBytes.PeakUnavailable, v.WriteBytes.PeakUnavailable,
		}
		for _, k := range latencyKinds {
			if v.Latency == nil {
				row = append(row, "", "", "", "")
				continue
			}
			l := k.get(*v.Latency)
			if !l.Available() {
				row = append(row, "", "", "", l.Unavailable)
				continue
			}
			row = append(row, num(l.P50Seconds), num(l.P99Seconds), num(l.MeanSeconds), "")
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
