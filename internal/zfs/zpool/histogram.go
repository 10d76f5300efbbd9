package zpool

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// HistogramKind tells latency tables (-w) from request-size tables (-r).
type HistogramKind int

const (
	LatencyHistogram HistogramKind = iota + 1 // -w: bucket bounds in seconds
	SizeHistogram                             // -r: bucket bounds in bytes
)

// Histograms is one vdev's or pool's table, as printed.
type Histograms struct {
	Name string // pool or vdev name as printed
	// Break tells that an empty line came before the table. zpool prints
	// one before every table, text or -H, and a second one before the
	// first vdev of a log, special, dedup or cache section: Break is
	// always true in zpool's output.
	Break bool
	// Columns names each count column canonically, whatever the version
	// printed: for -w "total_wait_read", "total_wait_write",
	// "disk_wait_read", "disk_wait_write", "syncq_wait_read",
	// "syncq_wait_write", "asyncq_wait_read", "asyncq_wait_write",
	// "scrub", "trim", "rebuild" (0.7's sync_queue and async_queue are
	// syncq_wait and asyncq_wait); for -r "sync_read_ind",
	// "sync_read_agg", "sync_write_ind", "sync_write_agg",
	// "async_read_ind", ..., "scrub_ind", "scrub_agg", "trim_ind",
	// "trim_agg", "rebuild_ind", "rebuild_agg". Versions before trim
	// (0.8) and rebuild (2.2) print fewer columns, so fewer names.
	Columns []string
	// Bounds is the exact bucket bound of each row, by row position
	// (text output prints rounded labels):
	//   - -w: the bucket's upper bound, 2^(i+1)-1 ns, in seconds
	//     (1e-9 ... 137.438953471); the last bucket also counts
	//     everything slower;
	//   - -r: the bytes zpool prints, 512 ... 16777216, which are the
	//     buckets' lower bounds: row i counts sizes from 512<<i up to the
	//     next row's bound, excluded, and the last row everything from
	//     16M up (TRIM I/O may be larger).
	Bounds []float64
	// Counts[row][column] are I/O counts since the pool was imported.
	// Output without -p prints them rounded ("10.0K" for 10273): they are
	// then the nearest integer to the printed figure, off by up to 0.5%.
	Counts [][]uint64
}

// histogramSpec is what zpool prints for one kind of table, from
// print_iostat_histo and the label tables of cmd/zpool/zpool_main.c.
type histogramSpec struct {
	flag  string // "-w" or "-r", for errors
	title string // the first word of the header's second line
	// top are the column groups of the header's first line, the last
	// ones optional; old are 0.7's names for the same groups, if any.
	top, old []string
	minTop   int
	bottom   []string // the second line's labels after the title
	columns  []string // canonical names, in print order
	widths   []int    // the column counts versions printed, oldest first
	rows     int      // buckets per table
}

var histogramSpecs = map[HistogramKind]*histogramSpec{
	LatencyHistogram: {
		flag:   "-w",
		title:  "latency",
		top:    []string{"total_wait", "disk_wait", "syncq_wait", "asyncq_wait"},
		old:    []string{"total_wait", "disk_wait", "sync_queue", "async_queue"},
		minTop: 4,
		bottom: []string{"read", "write", "read", "write", "read", "write", "read", "write", "scrub", "trim", "rebuild"},
		columns: []string{
			"total_wait_read", "total_wait_write", "disk_wait_read", "disk_wait_write",
			"syncq_wait_read", "syncq_wait_write", "asyncq_wait_read", "asyncq_wait_write",
			"scrub", "trim", "rebuild",
		},
		widths: []int{9, 10, 11},
		rows:   37, // VDEV_L_HISTO_BUCKETS
	},
	SizeHistogram: {
		flag:   "-r",
		title:  "req_size",
		top:    []string{"sync_read", "sync_write", "async_read", "async_write", "scrub", "trim", "rebuild"},
		minTop: 5,
		bottom: []string{"ind", "agg", "ind", "agg", "ind", "agg", "ind", "agg", "ind", "agg", "ind", "agg", "ind", "agg"},
		columns: []string{
			"sync_read_ind", "sync_read_agg", "sync_write_ind", "sync_write_agg",
			"async_read_ind", "async_read_agg", "async_write_ind", "async_write_agg",
			"scrub_ind", "scrub_agg", "trim_ind", "trim_agg", "rebuild_ind", "rebuild_agg",
		},
		widths: []int{10, 12, 14},
		rows:   16, // VDEV_RQ_HISTO_BUCKETS, less the 9 below 512 bytes zpool skips
	},
}

// rawBound is the integer zpool computes for row i: nanoseconds (-w),
// bytes (-r); -H prints it as is.
func (k HistogramKind) rawBound(i int) uint64 {
	if k == LatencyHistogram {
		return 1<<(i+1) - 1
	}
	return 512 << i
}

// bound is rawBound in the unit of Histograms.Bounds.
func (k HistogramKind) bound(i int) float64 {
	if k == LatencyHistogram {
		return float64(k.rawBound(i)) / 1e9
	}
	return float64(k.rawBound(i))
}

// describe names the kind in errors.
func (k HistogramKind) describe() string {
	if k == LatencyHistogram {
		return "latency histogram (-w)"
	}
	return "request-size histogram (-r)"
}

// ParseHistograms reads the whole output of `zpool iostat [-v] [-H] [-p]
// -w|-r [pool...]` (one report, no interval) and returns its tables in
// print order. Every table must be complete, with all the buckets zpool
// has printed since 0.7 (37 for -w, 16 for -r): a table cut short, as a
// pasted excerpt may be, is an error rather than a histogram whose
// missing buckets would read as zero.
func ParseHistograms(r io.Reader, kind HistogramKind) ([]Histograms, error) {
	return ParseHistogramColumns(r, kind, nil)
}

// ParseHistogramColumns is ParseHistograms keeping only the columns that
// keep accepts (all when keep is nil): each table's Columns and Counts
// then hold those alone. The other columns are checked to be there, not
// read, which makes the tables of -w four times cheaper to read when two
// of its eleven columns are wanted.
func ParseHistogramColumns(r io.Reader, kind HistogramKind, keep func(column string) bool) ([]Histograms, error) {
	spec := histogramSpecs[kind]
	if spec == nil {
		return nil, fmt.Errorf("unknown histogram kind %d", int(kind))
	}
	p := histogramParser{kind: kind, spec: spec, keep: keep}
	err := readOutput(r).eachLine(func(lineNo int, line string) error {
		p.lineNo = lineNo
		return parse.AtLine(lineNo, p.line(line))
	})
	if err == nil {
		err = parse.AtLine(p.lineNo+1, p.end())
	}
	if err != nil {
		return nil, err
	}
	return p.tables, nil
}

// What the next line of a table must be.
type histogramState int

const (
	wantName      histogramState = iota // a table's name (-H) or header: after blank lines
	wantLabels                          // the header's second line: "latency read write ..."
	wantDashes                          // the header's dashed line
	wantRows                            // a bucket row
	wantSeparator                       // text: the solid line closing the table
)

type histogramParser struct {
	kind   HistogramKind
	spec   *histogramSpec
	mode   iostatMode // of the first table; every table has it
	state  histogramState
	lineNo int

	tables []Histograms
	cur    Histograms // the table being read
	fields []string   // the fields of the row being read
	block  []uint64   // counts not yet given to a row

	keep    func(column string) bool // nil: every column
	kept    []int                    // the indexes of the columns kept, for the table's columns
	keptFor []string                 // the columns kept is for

	top   int  // column groups of its text header
	blank bool // an empty line came since the last table
}

func (p *histogramParser) line(raw string) error {
	text := strings.TrimRight(raw, " \t")
	if strings.TrimSpace(text) == "" {
		return p.blankLine()
	}
	switch p.state {
	case wantName:
		return p.nameLine(text)
	case wantLabels:
		return p.labelsLine(text)
	case wantDashes:
		return p.dashesLine(text)
	case wantSeparator:
		if !isSolidSeparator(text) {
			return fmt.Errorf("expected the dashed line closing table %q after its %d buckets, found %q",
				p.cur.Name, p.spec.rows, text)
		}
		p.finish()
		return nil
	}
	return p.row(text)
}

func (p *histogramParser) blankLine() error {
	switch p.state {
	case wantName:
		p.blank = true
		return nil
	case wantRows:
		return p.truncated()
	case wantSeparator:
		return fmt.Errorf("expected the dashed line closing table %q, found an empty line", p.cur.Name)
	}
	return fmt.Errorf("header of table %q ends early: empty line", p.cur.Name)
}

// end checks the state at the end of the output.
func (p *histogramParser) end() error {
	switch p.state {
	case wantName:
		return nil
	case wantRows:
		if len(p.cur.Bounds) == 0 && p.mode == modeScripted {
			return fmt.Errorf("output ends after the name of table %q", p.cur.Name)
		}
		return p.truncated()
	case wantSeparator:
		return fmt.Errorf("output ends before the dashed line closing table %q", p.cur.Name)
	}
	return fmt.Errorf("output ends in the header of table %q", p.cur.Name)
}

func (p *histogramParser) truncated() error {
	return fmt.Errorf("table %q ends after %d of its %d buckets (truncated output?)",
		p.cur.Name, len(p.cur.Bounds), p.spec.rows)
}

// nameLine starts a table: with its text header, or with the name alone
// (-H).
func (p *histogramParser) nameLine(text string) error {
	fields := strings.Fields(text)
	if name, groups, ok := p.spec.matchTop(text, fields); ok {
		if p.mode == modeScripted {
			return fmt.Errorf("text header of table %q in -H output", name)
		}
		p.mode = modeText
		p.start(name)
		p.top = groups
		p.state = wantLabels
		return nil
	}
	if kind := p.otherKind(); kind.matches(text, fields) {
		return fmt.Errorf("header of a %s where a %s was expected: %q", kind.describe(), p.kind.describe(), text)
	}
	switch {
	case isSeparatorLine(text):
		return fmt.Errorf("expected a table name, found the dashed line %q", text)
	case isIostatHeader(fields):
		return fmt.Errorf("expected a table name, found the header of zpool iostat without -w or -r: %q", text)
	case len(fields) > 1 && fields[0] == p.spec.title:
		return fmt.Errorf("header line %q without the table name line before it", text)
	case len(fields) > 1 && slices.ContainsFunc(fields[1:], func(f string) bool { return histogramTitles[f] }):
		return fmt.Errorf("malformed %s header %q", p.spec.flag, text)
	case strings.Contains(text, "\t") || len(fields) > 1 && allCounts(fields):
		if p.mode == modeScripted && !p.blank && len(p.tables) > 0 {
			return fmt.Errorf("bucket row %q after the %d buckets of table %q", text, p.spec.rows, p.tables[len(p.tables)-1].Name)
		}
		return fmt.Errorf("expected a table name, found the bucket row %q", text)
	case p.mode == modeText:
		return fmt.Errorf("expected a table header, found %q", text)
	case !isPlausibleName(text):
		return fmt.Errorf("expected a table name, found %q", text)
	}
	p.mode = modeScripted
	p.start(strings.TrimSpace(text))
	p.state = wantRows
	return nil
}

func (p *histogramParser) otherKind() HistogramKind {
	if p.kind == LatencyHistogram {
		return SizeHistogram
	}
	return LatencyHistogram
}

// matches tells a header line of the kind's tables.
func (k HistogramKind) matches(text string, fields []string) bool {
	s := histogramSpecs[k]
	_, _, top := s.matchTop(text, fields)
	return top || len(fields) > 1 && fields[0] == s.title
}

func (p *histogramParser) start(name string) {
	p.cur = Histograms{
		Name:   name,
		Break:  p.blank,
		Bounds: make([]float64, 0, p.spec.rows),
		Counts: make([][]uint64, 0, p.spec.rows),
	}
	p.blank = false
}

// matchTop reads the header's first line, "NAME  total_wait  disk_wait
// ...": the name, and how many column groups follow it.
func (s *histogramSpec) matchTop(text string, fields []string) (name string, groups int, ok bool) {
	for _, top := range [][]string{s.top, s.old} {
		for n := min(len(top), len(fields)-1); n >= s.minTop; n-- {
			if !slices.Equal(fields[len(fields)-n:], top[:n]) {
				continue
			}
			rest := text
			for _, label := range slices.Backward(top[:n]) {
				rest = strings.TrimSuffix(strings.TrimRightFunc(rest, unicode.IsSpace), label)
			}
			return strings.TrimSpace(rest), n, true
		}
	}
	return "", 0, false
}

// labelsLine reads the header's second line, which tells the columns.
func (p *histogramParser) labelsLine(text string) error {
	fields := strings.Fields(text)
	if fields[0] != p.spec.title {
		return fmt.Errorf("expected the %q line of the header of table %q, found %q", p.spec.title, p.cur.Name, text)
	}
	labels := fields[1:]
	n := len(labels)
	if !slices.Contains(p.spec.widths, n) || !slices.Equal(labels, p.spec.bottom[:n]) {
		return fmt.Errorf("unknown %s columns %q", p.spec.flag, strings.Join(labels, " "))
	}
	// -r names a group over each pair of columns; -w names the four
	// read/write pairs only, which matchTop checked.
	if p.kind == SizeHistogram && n != 2*p.top {
		return fmt.Errorf("%d columns under %d column groups", n, p.top)
	}
	p.cur.Columns = slices.Clone(p.spec.columns[:n])
	p.state = wantDashes
	return nil
}

func (p *histogramParser) dashesLine(text string) error {
	fields := strings.Fields(text)
	if !isSeparatorLine(text) || len(fields) != 1+len(p.cur.Columns) {
		return fmt.Errorf("expected the dashed line of the header of table %q, %d groups of dashes, found %q",
			p.cur.Name, 1+len(p.cur.Columns), text)
	}
	p.state = wantRows
	return nil
}

// row reads one bucket: its bound, checked against the row's position,
// and its counts.
func (p *histogramParser) row(text string) error {
	i := len(p.cur.Bounds)
	// The fields go into one buffer for every row: a table of -w at a
	// thousand leaves is some 60,000 rows.
	fields := p.fields[:0]
	total := 0 // fields in the row, those after the last one needed counted only
	if p.mode == modeScripted {
		if !strings.Contains(text, "\t") {
			return fmt.Errorf("expected a tab-separated bucket row of table %q, found %q", p.cur.Name, text)
		}
		// Once the table's columns are known, its fields past the last
		// one kept are counted, not split.
		need := -1
		if p.keep != nil && p.cur.Columns != nil {
			need = 1
			if kept := p.keptColumns(); len(kept) > 0 {
				need += kept[len(kept)-1] + 1
			}
		}
		rest, more := text, true
		for more && (need < 0 || len(fields) < need) {
			var f string
			f, rest, more = strings.Cut(rest, "\t")
			fields = append(fields, f)
		}
		total = len(fields)
		if more {
			total += strings.Count(rest, "\t") + 1
		}
	} else {
		if isSolidSeparator(text) {
			return p.truncated()
		}
		for f := range strings.FieldsSeq(text) {
			fields = append(fields, f)
		}
		total = len(fields)
	}
	p.fields = fields
	if err := p.checkBound(fields[0], i); err != nil {
		return err
	}
	counts := fields[1:]
	if p.cur.Columns == nil {
		// -H prints no header: the column count tells the version.
		if !slices.Contains(p.spec.widths, total-1) {
			return fmt.Errorf("bucket %s has %d counts; %s tables have %s", fields[0], total-1, p.spec.flag, widthsText(p.spec.widths))
		}
		p.cur.Columns = slices.Clone(p.spec.columns[:total-1])
	}
	if total-1 != len(p.cur.Columns) {
		return fmt.Errorf("bucket %s has %d counts, table %q has %d columns", fields[0], total-1, p.cur.Name, len(p.cur.Columns))
	}
	kept := p.keptColumns()
	// The rows of a table share one block of counts.
	if len(p.block) < len(kept) {
		p.block = make([]uint64, len(kept)*p.spec.rows)
	}
	row := p.block[:len(kept):len(kept)]
	p.block = p.block[len(kept):]
	for k, j := range kept {
		n, err := parseCount(counts[j])
		if err != nil {
			return fmt.Errorf("bucket %s, column %s: %w", fields[0], p.cur.Columns[j], err)
		}
		row[k] = n
	}
	p.cur.Bounds = append(p.cur.Bounds, p.kind.bound(i))
	p.cur.Counts = append(p.cur.Counts, row)
	if len(p.cur.Bounds) == p.spec.rows {
		if p.mode == modeText {
			p.state = wantSeparator
		} else {
			p.finish()
		}
	}
	return nil
}

// keptColumns returns the indexes of the current table's columns that are
// kept: the same for every table of one output, worked out once.
func (p *histogramParser) keptColumns() []int {
	if p.kept != nil && slices.Equal(p.keptFor, p.cur.Columns) {
		return p.kept
	}
	p.kept, p.keptFor = p.kept[:0], p.cur.Columns
	for j, c := range p.cur.Columns {
		if p.keep == nil || p.keep(c) {
			p.kept = append(p.kept, j)
		}
	}
	return p.kept
}

func (p *histogramParser) finish() {
	if p.keep != nil {
		names := make([]string, 0, len(p.kept))
		for _, j := range p.keptColumns() {
			names = append(names, p.cur.Columns[j])
		}
		p.cur.Columns = names
	}
	p.tables = append(p.tables, p.cur)
	p.cur = Histograms{}
	p.state = wantName
}

// checkBound checks the label of row i. -H prints the exact integer;
// text prints -r sizes exactly ("512", "1K", ... "16M") but -w times
// rounded down to an integer of their unit ("65us" for 65535 ns), which
// only has to be near the exact bound: neighbouring buckets are twice
// apart.
func (p *histogramParser) checkBound(label string, i int) error {
	if i >= p.spec.rows {
		return fmt.Errorf("bucket row %q after the %d buckets of table %q", label, p.spec.rows, p.cur.Name)
	}
	want := p.kind.rawBound(i)
	if p.mode == modeScripted {
		n, err := strconv.ParseUint(label, 10, 64)
		if err == nil && n == want {
			return nil
		}
		hint := ""
		if other := p.otherKind(); err == nil && i == 0 && n == other.rawBound(0) {
			hint = fmt.Sprintf(" (the first bucket of a %s)", other.describe())
		}
		return fmt.Errorf("bucket %d of table %q: expected bound %d, found %q%s", i+1, p.cur.Name, want, label, hint)
	}
	if p.kind == SizeHistogram {
		if n, err := parseCount(label); err != nil || n != want {
			return fmt.Errorf("bucket %d of table %q: expected size %d, found %q", i+1, p.cur.Name, want, label)
		}
		return nil
	}
	// zfs_nicetime always prints a unit, which parseNiceDuration does not
	// require: every one of them ends in s.
	seconds, err := parseNiceDuration(label)
	if ns := seconds * 1e9; err != nil || !strings.HasSuffix(label, "s") || ns*1.25 < float64(want) || ns > float64(want)*1.25 {
		return fmt.Errorf("bucket %d of table %q: expected a time near %d ns, found %q", i+1, p.cur.Name, want, label)
	}
	return nil
}

// errCount is the cause of every unreadable count.
var errCount = errors.New("expected a count")

// parseCount reads a count: exact ("10273", with -p) or rounded
// with a binary suffix ("10.0K", "1,43K" in a decimal-comma locale), as
// zfs_nicenum prints it; the latter is read with ParseSize and rounded
// to the nearest integer.
func parseCount(s string) (uint64, error) {
	if isDigits(s) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w, found %q: out of range", errCount, s)
		}
		return n, nil
	}
	if len(s) < 2 || !isDecimal(strings.Replace(s[:len(s)-1], ",", ".", 1)) {
		return 0, fmt.Errorf("%w, found %q", errCount, s)
	}
	if _, isUnit := unitMultiplier(s[len(s)-1] | 0x20); !isUnit {
		return 0, fmt.Errorf("%w, found %q", errCount, s)
	}
	v, ok, err := ParseSize(s)
	if err != nil || !ok || math.IsNaN(v) || v < 0 || v >= 1<<64 {
		return 0, fmt.Errorf("%w, found %q", errCount, s)
	}
	return uint64(math.Round(v)), nil
}

// isDecimal matches digits with at most one decimal point inside them.
func isDecimal(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	return isDigits(whole) && (frac == "" && !strings.HasSuffix(s, ".") || isDigits(frac))
}

// allCounts tells a bucket row that lost its tabs from a name.
func allCounts(fields []string) bool {
	for _, f := range fields {
		if _, err := parseCount(f); err != nil {
			return false
		}
	}
	return true
}

// isSolidSeparator matches the dashed line that closes a text table, as
// opposed to the header's groups of dashes.
func isSolidSeparator(text string) bool {
	return strings.Trim(text, "-") == ""
}

func widthsText(widths []int) string {
	s := make([]string, len(widths))
	for i, w := range widths {
		s[i] = strconv.Itoa(w)
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
