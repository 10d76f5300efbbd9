package zpool

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParseStatus reads the text output of `zpool status`, as every generation
// prints it: Solaris and zfs-fuse (" scrub:" lines, bare "mirror" vdevs),
// illumos, FreeBSD, ZFS on Linux 0.6 to 0.8 and OpenZFS 2.x, with any of
// -v, -x, -p, -s, -t, -i, -e, -g, -L, -P, -D, -T, -c and --power. Dates are
// read in loc, since zpool prints local time (in the C locale).
//
// Unknown header keys, states and vdev annotations are kept or skipped;
// any other line that cannot be read is an error naming its number. The
// strings of the status share the memory of the output, which is read
// whole.
func ParseStatus(r io.Reader, loc *time.Location) (*Status, error) {
	if loc == nil {
		loc = time.Local
	}
	p := &statusParser{loc: loc, st: &Status{Pools: []*Pool{}}}
	err := readOutput(r).eachLine(func(lineNo int, line string) error {
		p.lineNo = lineNo
		return p.line(p.clean(line))
	})
	if err != nil {
		return nil, err
	}
	p.endPool()
	return p.st, nil
}

// section tells what the lines following a header belong to.
type section int

const (
	inNothing    section = iota
	inParagraph          // continuation of status: or action:
	inScan               // continuation of scan: or scrub:
	inRemoval            // continuation of remove:
	inExpansion          // continuation of expand:
	inSkipped            // continuation of a header that is not read (condense:...), or of one that could not be
	inConfig             // after config:, before the NAME header
	inTable              // rows of the config table
	inErrorFiles         // the list after "Permanent errors have been detected..."
	inDedup              // dedup: statistics and DDT histogram, up to the next pool
)

type statusParser struct {
	loc    *time.Location
	st     *Status
	lineNo int

	logPrefix bool // lines carry a test-runner timestamp prefix
	started   bool // a non-blank line was seen

	pool    *Pool
	sect    section
	para    *string // the paragraph that continuation lines extend
	scan    int     // index in pool.Scans of the scan being continued
	table   *configTable
	listLen int // files read in the current permanent-error list
}

var (
	ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	// A ZFS test-suite log puts "12:20:10.98 " before every line.
	logPrefix = regexp.MustCompile(`^[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]+(?: |$)`)
)

// splitHeader splits a header line: a key of lowercase letters that up to
// seven spaces right-align ("  pool:", "   see:", "checkpoint:"), a colon,
// and nothing or blanks and the value, trimmed. Continuation lines start
// with a tab. It is read by hand, as every line of a large pool's config
// table is tried.
func splitHeader(s string) (key, value string, ok bool) {
	start := len(s) - len(strings.TrimLeft(s, " "))
	end := start
	for end < len(s) && 'a' <= s[end] && s[end] <= 'z' {
		end++
	}
	if start > 7 || end == start || end == len(s) || s[end] != ':' {
		return "", "", false
	}
	value = s[end+1:]
	if value != "" && value[0] != ' ' && value[0] != '\t' {
		return "", "", false
	}
	return s[start:end], strings.TrimSpace(value), true
}

// clean drops what a terminal or a log adds to a line: colours (ZFS_COLOR),
// a carriage return, trailing padding and a log timestamp prefix.
func (p *statusParser) clean(s string) string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = ansiEscape.ReplaceAllString(s, "")
	}
	s = strings.TrimRight(s, " \t\r")
	if !p.started && s != "" {
		p.started = true
		if loc := logPrefix.FindStringIndex(s); loc != nil && isHeader(s[loc[1]:]) {
			p.logPrefix = true
		}
	}
	if p.logPrefix {
		if loc := logPrefix.FindStringIndex(s); loc != nil {
			s = s[loc[1]:]
		}
	}
	return s
}

func (p *statusParser) errorf(format string, args ...any) error {
	return parse.Errorf(p.lineNo, format, args...)
}

// warnf notes a line that was skipped while the rest of the pool was read.
func (p *statusParser) warnf(format string, args ...any) {
	p.pool.Warnings = append(p.pool.Warnings, p.errorf(format, args...).Error())
}

func (p *statusParser) line(s string) error {
	if strings.TrimSpace(s) == "" {
		p.blank()
		return nil
	}
	key, value, isHeader := p.header(s)
	if p.sect == inDedup && !(isHeader && key == "pool") {
		return nil
	}
	if isHeader {
		return p.headerLine(key, value)
	}
	switch p.sect {
	case inParagraph:
		if indented(s) {
			*p.para += " " + strings.TrimSpace(s)
			return nil
		}
	case inScan:
		if indented(s) {
			if err := p.pool.Scans[p.scan].continuation(s, p.loc); err != nil {
				p.warnf("cannot parse scan line %q: %v", strings.TrimSpace(s), err)
				p.sect = inSkipped
			}
			return nil
		}
	case inRemoval:
		if indented(s) {
			if err := p.pool.Removal.continuation(s); err != nil {
				p.warnf("cannot parse remove line %q: %v", strings.TrimSpace(s), err)
				p.sect = inSkipped
			}
			return nil
		}
	case inExpansion:
		if indented(s) {
			if err := p.pool.Expansion.continuation(s); err != nil {
				p.warnf("cannot parse expand line %q: %v", strings.TrimSpace(s), err)
				p.sect = inSkipped
			}
			return nil
		}
	case inSkipped:
		if indented(s) {
			return nil
		}
	case inConfig:
		t, err := newConfigTable(s, p.loc)
		if err != nil {
			return parse.AtLine(p.lineNo, err)
		}
		p.table, p.sect = t, inTable
		return nil
	case inTable:
		if err := p.table.row(s); err != nil {
			return parse.AtLine(p.lineNo, err)
		}
		if p.table.warning != nil {
			p.warnf("%v", p.table.warning)
		}
		return nil
	case inErrorFiles:
		p.pool.ErrorFiles = append(p.pool.ErrorFiles, strings.TrimSpace(s))
		p.listLen++
		return nil
	}
	return p.outsidePool(s)
}

func indented(s string) bool { return s[0] == ' ' || s[0] == '\t' }

// header splits a "key: value" line. Inside the config table and the
// error list only known keys count, so that no vdev or file is mistaken
// for one.
func (p *statusParser) header(s string) (key, value string, ok bool) {
	key, value, ok = splitHeader(s)
	if !ok || (p.sect == inTable || p.sect == inErrorFiles) && !knownHeaders[key] {
		return "", "", false
	}
	return key, value, true
}

func isHeader(s string) bool {
	_, _, ok := splitHeader(s)
	return ok
}

var knownHeaders = map[string]bool{
	"pool": true, "id": true, "state": true, "status": true, "action": true,
	"see": true, "scan": true, "scrub": true, "remove": true, "checkpoint": true,
	"expand": true, "trim": true, "condense": true, "config": true,
	"errors": true, "dedup": true,
}

// blank ends paragraphs, scan blocks, the config table and a non-empty
// error list; the blank line after "config:" or after the error list
// header does not.
func (p *statusParser) blank() {
	switch p.sect {
	case inConfig, inDedup:
	case inErrorFiles:
		if p.listLen > 0 {
			p.sect = inNothing
		}
	default:
		p.sect = inNothing
	}
}

func (p *statusParser) headerLine(key, value string) error {
	if key == "pool" {
		if value == "" {
			return p.errorf("pool: line without a name")
		}
		p.endPool()
		p.pool = &Pool{Name: value}
		p.st.Pools = append(p.st.Pools, p.pool)
		p.sect = inNothing
		return nil
	}
	if p.pool == nil {
		return p.errorf("%q before any pool: line", key+":")
	}
	p.sect = inNothing
	switch key {
	case "state":
		p.pool.State = strings.ToLower(value)
	case "status":
		p.pool.Status = value
		p.para, p.sect = &p.pool.Status, inParagraph
	case "action":
		p.pool.Action = value
		p.para, p.sect = &p.pool.Action, inParagraph
	case "see":
		p.pool.MessageID = messageID(value)
	case "scan", "scrub":
		s, err := parseScanHeader(value, p.loc)
		if err != nil {
			// A scan worded in a way we do not know must not hide the
			// pool's health: skip it and say so.
			p.warnf("cannot parse %s: line %v", key, err)
			p.sect = inSkipped
			return nil
		}
		p.pool.Scans = append(p.pool.Scans, s)
		p.scan, p.sect = len(p.pool.Scans)-1, inScan
	case "remove":
		r, err := parseRemovalHeader(value, p.loc)
		if err != nil {
			p.warnf("cannot parse remove: line %v", err)
			p.sect = inSkipped
			return nil
		}
		p.pool.Removal, p.sect = r, inRemoval
	case "expand":
		e, err := parseExpansionHeader(value, p.loc)
		if err != nil {
			p.warnf("cannot parse expand: line %v", err)
			p.sect = inSkipped
			return nil
		}
		p.pool.Expansion, p.sect = e, inExpansion
	case "checkpoint":
		c, err := parseCheckpoint(value, p.loc)
		if err != nil {
			p.warnf("cannot parse checkpoint: line %v", err)
			p.sect = inSkipped
			return nil
		}
		p.pool.Checkpoint = c
	case "config":
		// "config: The configuration cannot be determined." has no table.
		if value == "" {
			p.sect = inConfig
		}
	case "errors":
		p.errorsLine(value)
	case "dedup":
		p.sect = inDedup
	default:
		// id:, condense:, the trim: line of old TRIM patches and
		// whatever comes next: not read.
		p.sect = inSkipped
	}
	return nil
}

// messageID takes "ZFS-8000-9P" from the see: URL of any vintage
// (sun.com, illumos.org, zfsonlinux.org, openzfs.github.io).
func messageID(see string) string {
	see = strings.TrimRight(see, "/")
	if i := strings.LastIndexByte(see, '/'); i >= 0 {
		return see[i+1:]
	}
	return see
}

var dataErrorCount = regexp.MustCompile(`^([0-9]+) data errors?\b`)

func (p *statusParser) errorsLine(value string) {
	switch {
	case value == "No known data errors", value == "No known errors":
		zero := 0.0
		p.pool.DataErrors = &zero
	case strings.Contains(value, "errors have been detected"):
		p.sect, p.listLen = inErrorFiles, 0
	default:
		// "N data errors, use '-v' for a list"; "List of errors
		// unavailable: ..." leaves the count unknown.
		if m := dataErrorCount.FindStringSubmatch(value); m != nil {
			n, _ := strconv.ParseFloat(m[1], 64)
			p.pool.DataErrors = &n
		}
	}
}

var (
	// `zpool status -T u` and `-T d` print a timestamp before each round.
	unixTimestamp = regexp.MustCompile(`^[0-9]{9,}$`)
	dateTimestamp = regexp.MustCompile(`^[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}(?: \S+)? [0-9]{4}$`)
	healthyPool   = regexp.MustCompile(`^pool '.+' is healthy$`)
)

// outsidePool reads a line that belongs to no header: the one-line answers
// of -x and the -T timestamps are known, anything else is an error.
func (p *statusParser) outsidePool(s string) error {
	t := strings.TrimSpace(s)
	switch {
	case t == "all pools are healthy", t == "no pools available",
		healthyPool.MatchString(t), unixTimestamp.MatchString(t), dateTimestamp.MatchString(t):
		p.sect = inNothing
		return nil
	}
	return p.errorf("unexpected line %q", t)
}

// endPool completes the pool being read: its vdev tree gets modern names
// and types, and a permanent-error list counts as the error count when no
// count was printed.
func (p *statusParser) endPool() {
	if p.pool == nil {
		return
	}
	if p.table != nil && p.table.root != nil {
		finishTree(p.table.root)
		qualifyNames(p.table.root)
		p.pool.Root = p.table.root
	}
	if p.pool.DataErrors == nil && len(p.pool.ErrorFiles) > 0 {
		n := float64(len(p.pool.ErrorFiles))
		p.pool.DataErrors = &n
	}
	p.pool, p.table, p.sect = nil, nil, inNothing
}
