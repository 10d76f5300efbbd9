package zpool

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ErrIostatHistogram is wrapped by the parse error of the line where the
// output of `zpool iostat -w` or `-r` shows itself: histograms are a
// different table, which ParseHistograms reads.
var ErrIostatHistogram = errors.New("histogram output (-w/-r) is not supported by ParseIostat")

// maxIostatLine bounds one line; -l -q rows are a few hundred bytes.
const maxIostatLine = 1 << 20

// iostatColumns names the six base columns, in print order, for errors.
var iostatColumns = [6]string{
	"alloc", "free",
	"read operations", "write operations",
	"read bandwidth", "write bandwidth",
}

// iostatClassHeaders are the section rows printed before the vdevs of a
// class. `spares` is never printed by iostat; it is listed for safety.
var iostatClassHeaders = map[string]string{
	"logs":    ClassLog,
	"cache":   ClassCache,
	"special": ClassSpecial,
	"dedup":   ClassDedup,
	"spares":  ClassSpare,
}

// histogramTitles are the column groups of -w and -r tables. The -l and
// -q headers use other names (syncq_read, ...) or sit beside "operations".
var histogramTitles = map[string]bool{
	"total_wait": true, "disk_wait": true, "syncq_wait": true, "asyncq_wait": true,
	"sync_queue": true, "async_queue": true,
	"sync_read": true, "sync_write": true, "async_read": true, "async_write": true,
}

// ParseIostat reads the whole output of `zpool iostat [-v] [-H] [-p] [-l]
// [-q] [-c ...] [-y] [-T u|d] [interval [count]]` and returns its reports
// in order. See IostatScanner for how reports are told apart. Histograms
// (-w, -r) give ErrIostatHistogram. Output restricted to named vdevs
// (`zpool iostat POOL VDEV...`), which zpool prints unindented, reads as
// pool rows.
func ParseIostat(r io.Reader) ([]IostatReport, error) {
	s := NewIostatScanner(r)
	var reports []IostatReport
	for s.Scan() {
		reports = append(reports, s.Report())
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return reports, nil
}

type iostatMode int

const (
	modeUnknown  iostatMode = iota
	modeText                // headers, indentation and section rows
	modeScripted            // -H: tab-separated rows only
)

// IostatScanner reads a `zpool iostat` stream report by report, so that a
// long-running `zpool iostat -v INTERVAL` can be consumed as it prints.
//
// Text output: a report starts with its header (or its -T timestamp) and
// is yielded as soon as its end is certain:
//   - at the empty line that old zpool (zfs-fuse, OpenSolaris) prints
//     after each verbose report;
//   - at the closing separator line, once the report holds the same pools
//     as the one before (current zpool prints a separator after every pool,
//     so the first report of a stream is only known complete when the
//     next header arrives);
//   - without -v, at the separator printed after several pools, or at the
//     pool row that completes the previous report's pool list;
//   - otherwise when the next header, timestamp or repeated pool row
//     arrives, or at the end of the input.
//
// Scripted output (-H) has no header and no separator: a report ends only
// when the next one starts, at its timestamp (-T) or when the report's
// first row comes again, so each report is yielded one interval late.
// Only that first row is known to be a pool; see IostatRow.Break.
//
// zpool's first report is the average since import, unless -y was given:
// the scanner cannot tell, the caller knows its flags.
type IostatScanner struct {
	lines *bufio.Scanner
	line  int
	mode  iostatMode

	cur pendingIostat
	// The pools of the last complete report, and whether it had vdev rows:
	// they tell when the next report is complete.
	prevPools   []string
	prevVerbose bool

	ready  []IostatReport
	report IostatReport
	err    error
	eof    bool
}

// pendingIostat is the report being read.
type pendingIostat struct {
	time  time.Time
	rows  []IostatRow
	pools []string // pool rows, in print order
	seen  map[string]bool

	pool        string // pool of the vdev rows that follow; "" after a separator
	class       string // class of the vdev rows that follow
	verbose     bool   // vdev rows seen
	afterDashes bool   // the last line was a separator
	breakNext   bool   // an empty line came before the next row
}

// NewIostatScanner returns a scanner reading from r.
func NewIostatScanner(r io.Reader) *IostatScanner {
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 4096), maxIostatLine)
	return &IostatScanner{lines: lines}
}

// Scan advances to the next complete report, which Report then returns.
// It returns false at the end of the input or on an error; reports
// completed before a bad line are still returned first.
func (s *IostatScanner) Scan() bool {
	for len(s.ready) == 0 {
		if s.err != nil || s.eof {
			return false
		}
		if !s.lines.Scan() {
			if err := s.lines.Err(); err != nil {
				s.err = fmt.Errorf("line %d: %w", s.line+1, err)
				continue
			}
			s.eof = true
			s.complete()
			continue
		}
		s.line++
		if err := s.parseLine(s.lines.Text()); err != nil {
			s.err = parse.AtLine(s.line, err)
		}
	}
	s.report, s.ready = s.ready[0], s.ready[1:]
	return true
}

// Report returns the report found by the last call to Scan.
func (s *IostatScanner) Report() IostatReport { return s.report }

// Err returns the first error met, naming its line; nil at a clean end.
// It is a parse error unless the reader failed.
func (s *IostatScanner) Err() error { return s.err }

func (s *IostatScanner) parseLine(raw string) error {
	text := strings.TrimRight(raw, " \t\r")
	fields := splitIostatFields(text)
	if len(fields) == 0 {
		s.blank()
		return nil
	}
	if isSeparatorLine(text) {
		s.separator()
		return nil
	}
	if t, ok := parseIostatTime(fields); ok {
		s.complete()
		s.cur.time = t
		return nil
	}
	if isHistogramHeader(fields) {
		return ErrIostatHistogram
	}
	if isIostatHeader(fields) {
		s.complete()
		s.mode = modeText
		return nil
	}
	if s.mode == modeText {
		return s.textRow(text, fields)
	}
	return s.scriptedRow(fields)
}

// blank handles an empty line: the end of an old-style verbose report, or,
// between rows, the start of a class section (always so with -H).
func (s *IostatScanner) blank() {
	c := &s.cur
	switch {
	case len(c.rows) == 0:
	case s.mode == modeText && c.afterDashes:
		s.complete()
	default:
		c.breakNext = true
	}
}

// separator handles a dashed line: the end of a pool's rows with -v, of a
// report without it.
func (s *IostatScanner) separator() {
	c := &s.cur
	if len(c.rows) == 0 {
		return // under the header, or the leading one of 0.7's -y
	}
	c.afterDashes = true
	c.pool, c.class = "", ClassNormal
	if !c.verbose || s.samePoolsAsBefore() {
		s.complete()
	}
}

// samePoolsAsBefore tells whether the pending report has printed all the
// pools of the previous one, which then ends it.
func (s *IostatScanner) samePoolsAsBefore() bool {
	return len(s.cur.pools) == len(s.prevPools) && slices.Equal(s.cur.pools, s.prevPools)
}

func (s *IostatScanner) textRow(text string, fields []string) error {
	c := &s.cur
	depth := (len(text) - len(strings.TrimLeft(text, " "))) / 2
	if depth == 0 {
		if class, glued, ok := classHeader(fields); ok {
			return s.classSection(class, glued)
		}
	}
	if len(fields) == 1 {
		return fmt.Errorf("unexpected line %q", text)
	}
	row, err := parseIostatRow(fields)
	if err != nil {
		return err
	}
	if depth > 0 {
		return s.vdevRow(row, depth)
	}
	if c.seen[row.Name] {
		s.complete() // the next interval, printed without a header
	}
	row.Pool, row.Depth, row.Class = row.Name, 0, ClassNormal
	s.add(row)
	if c.seen == nil {
		c.seen = make(map[string]bool)
	}
	c.seen[row.Name] = true
	c.pools = append(c.pools, row.Name)
	c.pool, c.class = row.Name, ClassNormal
	if !s.prevVerbose && s.samePoolsAsBefore() {
		s.complete()
	}
	return nil
}

// classSection starts the section of a class header row. ZoL 0.7.0-rc3
// with -c lost the newline after "cache", gluing the first cache device
// to the header: that row is read too.
func (s *IostatScanner) classSection(class string, glued []string) error {
	if s.cur.pool == "" {
		return fmt.Errorf("%s section outside a pool", class)
	}
	s.cur.class = class
	if glued == nil {
		return nil
	}
	row, err := parseIostatRow(glued)
	if err != nil {
		return err
	}
	return s.vdevRow(row, 1)
}

func (s *IostatScanner) vdevRow(row IostatRow, depth int) error {
	c := &s.cur
	if c.pool == "" {
		return fmt.Errorf("vdev %q outside a pool", row.Name)
	}
	row.Pool, row.Depth, row.Class = c.pool, depth, c.class
	c.verbose = true
	s.add(row)
	return nil
}

func (s *IostatScanner) scriptedRow(fields []string) error {
	if len(fields) == 1 {
		// -H histograms print each vdev name alone above its buckets.
		if isPlausibleName(fields[0]) {
			return ErrIostatHistogram
		}
		return fmt.Errorf("unexpected line %q", fields[0])
	}
	row, err := parseIostatRow(fields)
	if err != nil {
		return err
	}
	s.mode = modeScripted
	c := &s.cur
	if len(c.rows) > 0 && row.Name == c.rows[0].Name {
		s.complete()
	}
	if len(c.rows) == 0 {
		row.Pool, row.Depth, row.Class = row.Name, 0, ClassNormal
		c.pools = []string{row.Name}
	} else {
		row.Depth = -1
	}
	s.add(row)
	return nil
}

func (s *IostatScanner) add(row IostatRow) {
	c := &s.cur
	row.Break, c.breakNext, c.afterDashes = c.breakNext, false, false
	c.rows = append(c.rows, row)
}

// complete queues the pending report, if it has rows.
func (s *IostatScanner) complete() {
	c := s.cur
	if len(c.rows) == 0 {
		return
	}
	s.ready = append(s.ready, IostatReport{Time: c.time, Rows: c.rows})
	s.prevPools, s.prevVerbose = c.pools, c.verbose
	s.cur = pendingIostat{}
}

// splitIostatFields splits on tabs with -H (so that names keep any
// spaces) and on runs of blanks otherwise.
func splitIostatFields(text string) []string {
	if strings.Count(text, "\t") < 6 {
		return strings.Fields(text)
	}
	var fields []string
	for _, f := range strings.Split(text, "\t") {
		if f = strings.TrimSpace(f); f != "" {
			fields = append(fields, f)
		}
	}
	return fields
}

func isSeparatorLine(text string) bool {
	return strings.Trim(text, "- ") == "" && strings.Contains(text, "-")
}

// isIostatHeader matches both header lines: the column groups
// ("capacity operations bandwidth ...") and the column names, whose first
// two are "pool alloc" (or "pool used" before 2009).
func isIostatHeader(fields []string) bool {
	if slices.Contains(fields, "operations") && slices.Contains(fields, "bandwidth") {
		return true
	}
	return len(fields) >= 3 && fields[0] == "pool" && (fields[1] == "alloc" || fields[1] == "used")
}

// isHistogramHeader matches the header lines of -w and -r tables:
// "r10  total_wait  disk_wait ..." and "latency  read  write ...".
func isHistogramHeader(fields []string) bool {
	if fields[0] == "latency" || fields[0] == "req_size" {
		return len(fields) > 1 && (fields[1] == "read" || fields[1] == "ind")
	}
	if slices.Contains(fields, "operations") {
		return false
	}
	for _, f := range fields[1:] {
		if histogramTitles[f] {
			return true
		}
	}
	return false
}

// classHeader recognizes a section row: a class name with "-" in every
// column, or alone. glued is what follows the dashes on a mangled line.
func classHeader(fields []string) (class string, glued []string, ok bool) {
	class, ok = iostatClassHeaders[fields[0]]
	if !ok {
		return "", nil, false
	}
	i := 1
	for i < len(fields) && fields[i] == "-" {
		i++
	}
	switch {
	case i == len(fields):
		return class, nil, true
	case i > len(iostatColumns) && len(fields)-i > len(iostatColumns):
		return class, fields[i:], true
	}
	return "", nil, false // a pool that happens to be named "cache"
}

// parseIostatTime reads a -T u (epoch seconds) or -T d line
// ("Mon Nov 30 08:12:11 UTC 2026", or without the zone). Zone names are
// not resolved: the wall clock is read as UTC, exact when zpool runs in
// UTC; -T u has no such ambiguity.
func parseIostatTime(fields []string) (time.Time, bool) {
	switch len(fields) {
	case 1:
		f := fields[0]
		// 12 digits reach year 33658; longer numbers are GUIDs (-g).
		if len(f) > 12 || strings.Trim(f, "0123456789") != "" {
			return time.Time{}, false
		}
		sec, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return time.Time{}, false
		}
		return time.Unix(sec, 0).UTC(), true
	case 5, 6:
		date := strings.Join([]string{fields[0], fields[1], fields[2], fields[3], fields[len(fields)-1]}, " ")
		t, err := time.Parse("Mon Jan 2 15:04:05 2006", date)
		return t, err == nil
	}
	return time.Time{}, false
}

// isPlausibleName tells a vdev name from stray text such as "```".
func isPlausibleName(s string) bool {
	c := s[0]
	return c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// parseIostatRow reads a name and the six base columns; the rest goes to
// Extra. "-" (and -p's "0 0" for vdevs without capacity) leave Alloc and
// Free nil.
func parseIostatRow(fields []string) (IostatRow, error) {
	n := len(iostatColumns)
	if len(fields) < 1+n {
		return IostatRow{}, fmt.Errorf("expected a name and %d values, found %d fields in %q",
			n, len(fields), strings.Join(fields, " "))
	}
	var v [6]float64
	var printed [6]bool
	for i, f := range fields[1 : 1+n] {
		x, ok, err := ParseSize(f)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return IostatRow{}, fmt.Errorf("cannot parse %s %q", iostatColumns[i], f)
		}
		if !ok && i >= 2 {
			return IostatRow{}, fmt.Errorf("no %s value (%q) for %q", iostatColumns[i], f, fields[0])
		}
		v[i], printed[i] = x, ok
	}
	row := IostatRow{
		Name:       fields[0],
		ReadOps:    v[2],
		WriteOps:   v[3],
		ReadBytes:  v[4],
		WriteBytes: v[5],
	}
	notApplicable := printed[0] && printed[1] && v[0] == 0 && v[1] == 0
	if printed[0] && !notApplicable {
		alloc := v[0]
		row.Alloc = &alloc
	}
	if printed[1] && !notApplicable {
		free := v[1]
		row.Free = &free
	}
	if len(fields) > 1+n {
		row.Extra = slices.Clone(fields[1+n:])
	}
	return row, nil
}
