package workload

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// bonnieTest is one column pair of a bonnie++ report.
type bonnieTest struct {
	name string
	dir  Direction
	kib  bool // the rate is KiB/s (I/O tests); else operations per second
}

var (
	bonnieIOTests = [6]bonnieTest{
		{"Sequential Output Per Chr", Write, true},
		{"Sequential Output Block", Write, true},
		{"Sequential Output Rewrite", Mixed, true}, // reads, changes and writes back each block
		{"Sequential Input Per Chr", Read, true},
		{"Sequential Input Block", Read, true},
		{"Random Seeks", Mixed, false}, // reads, and writes back a tenth of the blocks
	}
	bonnieFileTests = [6]bonnieTest{
		{"Sequential Create Create", Metadata, false},
		{"Sequential Create Read", Metadata, false}, // stat
		{"Sequential Create Delete", Metadata, false},
		{"Random Create Create", Metadata, false},
		{"Random Create Read", Metadata, false},
		{"Random Create Delete", Metadata, false},
	}
)

// bonnieCell is one test's figures as printed; "" where blank.
type bonnieCell struct{ rate, cpu, latency string }

// bonnieRow is one row of a report section: six tests of one machine.
type bonnieRow struct {
	machine string
	cells   [6]bonnieCell
	unit    string // what the rates are in: "K/sec" (1.x text and CSV) or "/sec" (1.98+ text, with k/m/g suffixes)
	garbled bool   // file-creation rates of the 1.98+ text report, which are not rates
	// line and latLine are the lines of the figures and of the latencies.
	line, latLine int
}

// bonnieRun is one run: its I/O and file-creation rows (either may be
// absent: -s 0, -n 0).
type bonnieRun struct{ io, file *bonnieRow }

var (
	bonnieVersionIO   = regexp.MustCompile(`^Version\s+(\S+)\s+-+Sequential Output-+`)
	bonnieVersionFile = regexp.MustCompile(`^(?:Version\s+(\S+))?\s+-+Sequential Create-+`)
	bonnieHeaderIO    = regexp.MustCompile(`^(?:Machine\s+Size|Name:Size etc)\s+(K/sec|/sec)\s+%CP`)
	bonnieHeaderFile  = regexp.MustCompile(`^\s*files(?::max(?::min)?)?\s+/sec\s+%CP`)
	bonnieCSVVersion  = regexp.MustCompile(`^[0-9]+\.[0-9]+[a-z]?$`)
	bonnieCSVSize     = regexp.MustCompile(`^(?:[0-9]+[KMGT]?(?::\S*)?)?$`)
)

// bonnieGarbledNote explains a file-creation rate missing from a 1.98
// and later text report.
const bonnieGarbledNote = "bonnie++ 1.98 and later print a wrong number in the text report's file-creation columns (here %s; the CSV line has the rate)"

// ParseBonnie reads bonnie++ output: its text report, its CSV line, or
// both (bonnie++ prints the text report and then the CSV line; with -q,
// the text report goes to standard error). bon_csv2txt's output is a
// text report too.
//
// The CSV line holds exact figures, so when it is present the results
// come from it, and the text report gives the figures as printed. Without
// a CSV line, the results come from the text report. A test the run
// skipped (-f, -s 0, -n 0) leaves a blank and has no result; a test too
// fast to time ("+++++") has a result with no figures.
//
// The rates are KiB/s, the seeks and file tests operations per second,
// CPU use a ratio, and the "Latency" figures are each test's longest
// operation (MaxLatencySeconds). bonnie++ prints neither bytes nor times.
//
// bonnie++ 1.98 to 2.00a (at least) print the file-creation rates of
// their text report with the wrong printf conversion: the numbers shown
// are not rates (with -n 20 every column reads 20480). Results from such
// a report have no rate and say so in their Note.
func ParseBonnie(r io.Reader) (Summary, error) {
	lines, err := readLines(r)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Tool: Bonnie}
	var (
		text, csv         []bonnieRun
		ioRows, fileRows  []*bonnieRow
		section           string // "io" or "file"
		ends              []int  // value column ends of the section's header
		unit, textVersion string
		fileMachine       string
		last              *bonnieRow
		csvVersion        string
	)
	for i, line := range lines {
		n := i + 1
		if strings.Count(line, ",") >= 26 {
			if strings.HasPrefix(line, "format_version,") || strings.HasPrefix(line, "name,") {
				continue
			}
			run, version, err := bonnieCSV(strings.Split(line, ","), n)
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			csv = append(csv, run)
			if version != "" {
				csvVersion = version
			}
			continue
		}
		if m := bonnieVersionIO.FindStringSubmatch(line); m != nil {
			textVersion, section, ends, last = m[1], "io", nil, nil
			continue
		}
		if m := bonnieVersionFile.FindStringSubmatch(line); m != nil {
			if m[1] != "" {
				textVersion = m[1]
			}
			section, ends, last = "file", nil, nil
			continue
		}
		if strings.Contains(line, "-Per Chr-") {
			continue
		}
		if before, _, ok := strings.Cut(line, "-Create--"); ok {
			fileMachine = strings.TrimSpace(before)
			continue
		}
		if m := bonnieHeaderIO.FindStringSubmatch(line); m != nil {
			section, unit, ends, last = "io", m[1], columnEnds(line), nil
			continue
		}
		if bonnieHeaderFile.MatchString(line) {
			section, unit, ends, last = "file", "/sec", columnEnds(line), nil
			continue
		}
		if strings.TrimSpace(line) == "" {
			ends, last = nil, nil
			continue
		}
		if ends == nil {
			if strings.Contains(line, "Can't ") || strings.Contains(strings.ToLower(line), "error") {
				s.Messages = append(s.Messages, line)
			}
			continue
		}
		if f := strings.Fields(line); f[0] == "Latency" {
			if last == nil {
				return Summary{}, fmt.Errorf("line %d: bonnie++ Latency row without a row of figures before it", n)
			}
			if err := last.latencies(line, ends); err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			last.latLine = n
			continue
		}
		row, err := bonnieTextRow(line, ends)
		if err != nil {
			return Summary{}, fmt.Errorf("line %d: %w", n, err)
		}
		row.unit, row.line = unit, n
		if section == "io" {
			ioRows = append(ioRows, row)
		} else {
			row.machine = fileMachine
			row.garbled = versionAtLeast(textVersion, 1.98)
			fileRows = append(fileRows, row)
		}
		last = row
	}
	for k := 0; k < max(len(ioRows), len(fileRows)); k++ {
		var run bonnieRun
		if k < len(ioRows) {
			run.io = ioRows[k]
		}
		if k < len(fileRows) {
			run.file = fileRows[k]
		}
		text = append(text, run)
	}

	s.Version = textVersion
	if s.Version == "" {
		s.Version = csvVersion
	}
	runs, printed := text, []bonnieRun(nil)
	if len(csv) > 0 {
		runs = csv
		if len(text) == len(csv) {
			printed = text
		}
	}
	for k, run := range runs {
		var shown bonnieRun
		if printed != nil {
			shown = printed[k]
		}
		for _, part := range []struct {
			row, shown *bonnieRow
			tests      [6]bonnieTest
		}{{run.io, shown.io, bonnieIOTests}, {run.file, shown.file, bonnieFileTests}} {
			if part.row == nil {
				continue
			}
			for t, test := range part.tests {
				res, ok, err := bonnieResult(test, part.row, part.shown, t)
				if err != nil {
					return Summary{}, err
				}
				if ok {
					res.Run, res.Job = k+1, part.row.machine
					if res.Job == "" && run.io != nil {
						res.Job = run.io.machine
					}
					s.Results = append(s.Results, res)
				}
			}
		}
	}
	if len(s.Results) == 0 {
		return Summary{}, noSummary(Bonnie, "no text report and no CSV line with figures", lines, s.Messages)
	}
	renumber(s.Results)
	s.Headline = bonnieHeadline(s.Final())
	return s, nil
}

// columnEnds returns where the header's twelve value columns end (the
// ends of its last twelve fields).
func columnEnds(header string) []int {
	var ends []int
	for _, f := range fieldSpans(header) {
		ends = append(ends, f[1])
	}
	if len(ends) < 12 {
		return nil
	}
	return ends[len(ends)-12:]
}

// fieldSpans returns the start and end of each blank-separated field.
func fieldSpans(s string) [][2]int {
	var spans [][2]int
	start := -1
	for i := 0; i <= len(s); i++ {
		blank := i == len(s) || s[i] == ' ' || s[i] == '\t'
		switch {
		case blank && start >= 0:
			spans = append(spans, [2]int{start, i})
			start = -1
		case !blank && start < 0:
			start = i
		}
	}
	return spans
}

// place assigns fields to the nearest of the targets, in order: cells
// are right-aligned under their header, blank cells leave gaps, and a
// figure too wide for its cell pushes the rest of the row right.
func place(line string, spans [][2]int, targets []int) ([]string, error) {
	cells := make([]string, len(targets))
	next := 0
	for _, sp := range spans {
		if next >= len(targets) {
			return nil, fmt.Errorf("bonnie++ row has more figures than columns: %q", parse.Clip(line))
		}
		best := next
		for j := next + 1; j < len(targets); j++ {
			if abs(sp[1]-targets[j]) < abs(sp[1]-targets[best]) {
				best = j
			}
		}
		cells[best] = line[sp[0]:sp[1]]
		next = best + 1
	}
	return cells, nil
}

func abs(v int) int { return max(v, -v) }

// bonnieTextRow reads a row of figures under a header whose value
// columns end at ends. What comes before the first column is the machine
// name and size, or the file counts.
func bonnieTextRow(line string, ends []int) (*bonnieRow, error) {
	spans := fieldSpans(line)
	var label []string
	for len(spans) > 0 && spans[0][1] <= ends[0]-6 {
		label = append(label, line[spans[0][0]:spans[0][1]])
		spans = spans[1:]
	}
	cells, err := place(line, spans, ends)
	if err != nil {
		return nil, err
	}
	row := &bonnieRow{}
	if len(label) > 1 {
		row.machine = strings.Join(label[:len(label)-1], " ")
	}
	for t := range row.cells {
		row.cells[t].rate, row.cells[t].cpu = cells[2*t], cells[2*t+1]
	}
	return row, nil
}

// latencies reads a "Latency" row: six figures, each centred under its
// test's column pair.
func (row *bonnieRow) latencies(line string, ends []int) error {
	spans := fieldSpans(line)[1:]
	targets := make([]int, 6)
	for t := range targets {
		targets[t] = (ends[2*t] + ends[2*t+1]) / 2
	}
	cells, err := place(line, spans, targets)
	if err != nil {
		return err
	}
	for t := range row.cells {
		row.cells[t].latency = cells[t]
	}
	return nil
}

// bonnieCSV reads a CSV line of one of the three layouts.
func bonnieCSV(f []string, line int) (run bonnieRun, version string, err error) {
	var name, ioAt, fileAt, latAt, filesAt int
	switch {
	case len(f) == 50 && bonnieCSVVersion.MatchString(f[0]): // 1.98 and later: seeks and seeker count after the size
		version, name, ioAt, filesAt, fileAt, latAt = f[1], 2, 9, 21, 26, 38
	case len(f) == 48 && bonnieCSVVersion.MatchString(f[0]): // 1.96, 1.97
		version, name, ioAt, filesAt, fileAt, latAt = f[1], 2, 7, 19, 24, 36
	case len(f) == 27 && bonnieCSVSize.MatchString(f[1]): // 1.0x: no version, no latency
		name, ioAt, filesAt, fileAt, latAt = 0, 2, 14, 15, -1
	default:
		return run, "", fmt.Errorf("not a bonnie++ CSV line: %d fields, and the known layouts have 27 (1.0x), 48 (1.96, 1.97) or 50 (1.98 and later)", len(f))
	}
	row := func(at, lat int) *bonnieRow {
		r := &bonnieRow{machine: f[name], unit: "K/sec", line: line, latLine: line}
		empty := true
		for t := range r.cells {
			r.cells[t].rate, r.cells[t].cpu = f[at+2*t], f[at+2*t+1]
			if lat >= 0 {
				r.cells[t].latency = f[lat+t]
			}
			empty = empty && r.cells[t].rate == ""
		}
		if empty {
			return nil
		}
		return r
	}
	run.io = row(ioAt, latAt)
	if f[filesAt] != "" {
		fileLat := -1
		if latAt >= 0 {
			fileLat = latAt + 6
		}
		run.file = row(fileAt, fileLat)
	}
	return run, version, nil
}

// bonnieResult converts test t of a row; shown, when not nil, is the
// same run's text report row, whose figures are the ones printed.
func bonnieResult(test bonnieTest, row, shown *bonnieRow, t int) (Result, bool, error) {
	c := row.cells[t]
	if c.rate == "" {
		return Result{}, false, nil // not run
	}
	res := Result{Name: test.name, Direction: test.dir}
	if !row.garbled || c.rate == "+++++" {
		res.Printed = bonnieShown(test, row.unit, c.rate)
	}
	if shown != nil && shown.cells[t].rate != "" && !shown.garbled {
		res.Printed = bonnieShown(test, shown.unit, shown.cells[t].rate)
	}
	fail := func(what, v string) (Result, bool, error) {
		n := row.line
		if what == "latency" {
			n = row.latLine
		}
		return Result{}, false, fmt.Errorf("line %d: bonnie++ %s of %s: %q is not a figure", n, what, test.name, v)
	}
	switch {
	case c.rate == "+++++":
		res.Note = "too fast to measure"
	case row.garbled:
		res.Note = fmt.Sprintf(bonnieGarbledNote, c.rate)
	default:
		v, ok := bonnieRate(c.rate, test.kib)
		if !ok {
			return fail("rate", c.rate)
		}
		if test.kib {
			res.BytesPerSecond = &v
		} else {
			res.OperationsPerSecond = &v
		}
	}
	if c.cpu != "" && c.cpu != "+++" {
		v, err := number(c.cpu)
		if err != nil {
			return fail("%CP", c.cpu)
		}
		res.CPURatio = ptr(v / 100)
	}
	if c.latency != "" {
		v, err := duration(c.latency)
		if err != nil {
			return fail("latency", c.latency)
		}
		res.MaxLatencySeconds = &v
	}
	return res, true, nil
}

// bonnieRate reads a rate: KiB/s for I/O tests, where 1.98 and later
// scale with a k, m or g suffix (KiB, MiB, GiB), and operations per
// second for the others.
func bonnieRate(s string, kib bool) (float64, bool) {
	mult := 1.0
	if kib {
		mult = 1024
		switch s[len(s)-1] {
		case 'k':
			s = s[:len(s)-1]
		case 'm':
			s, mult = s[:len(s)-1], 1<<20
		case 'g':
			s, mult = s[:len(s)-1], 1<<30
		}
	}
	v, err := number(s)
	if err != nil || v < 0 {
		return 0, false
	}
	return v * mult, true
}

// bonnieShown is a rate as the report shows it: "78993 K/sec",
// "1.4g/sec", "185.9/sec", "+++++".
func bonnieShown(test bonnieTest, unit, rate string) string {
	switch {
	case rate == "+++++":
		return rate
	case test.kib && unit == "K/sec":
		return rate + " K/sec"
	}
	return rate + "/sec"
}

// bonnieHeadline names the block write and read rates and the seeks of a
// run, or its first file-creation figure when it ran no I/O tests.
func bonnieHeadline(results []Result) string {
	var parts []string
	for _, r := range results {
		switch r.Name {
		case "Sequential Output Block":
			parts = append(parts, "block write "+r.Printed)
		case "Sequential Input Block":
			parts = append(parts, "block read "+r.Printed)
		case "Random Seeks":
			parts = append(parts, "seeks "+r.Printed)
		}
	}
	if len(parts) == 0 && len(results) > 0 {
		parts = append(parts, strings.ToLower(results[0].Name)+" "+results[0].Printed)
	}
	return strings.Join(parts, ", ")
}

// versionAtLeast compares a bonnie++ version ("1.97", "2.00a") with v.
func versionAtLeast(version string, v float64) bool {
	i := strings.IndexFunc(version, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i >= 0 {
		version = version[:i]
	}
	f, err := number(version)
	return err == nil && f >= v-1e-9
}
