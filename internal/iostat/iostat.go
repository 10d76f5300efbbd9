package iostat

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ErrNotExtended is wrapped by the parse error returned for input that is
// not extended (-x) iostat output, such as `iostat -E` or plain `iostat`:
// the wrong form of the command rather than a line it printed anew.
var ErrNotExtended = errors.New("not iostat -x output")

// Report is one interval of iostat output. The first report of a run
// covers the time since boot.
type Report struct {
	// Time is the report's timestamp (illumos -T d or -T u, sysstat -t),
	// zero without one. Timestamps printed without a zone (all but -T u)
	// are local wall-clock times, returned in UTC with the same reading.
	Time    time.Time `json:",omitzero"`
	CPU     *CPU      `json:",omitempty"` // nil when the report has no CPU figures
	Devices []Device
	// StateChanges are the notices illumos and Solaris print before a
	// report when a disk, partition, NFS mount or processor came or went
	// ("disk added: c1t1d0", "processors removed: 3"), without the << >>.
	// iostat then computes from boot again: such a report averages since
	// boot, like the first one, not over the interval.
	StateChanges []string `json:",omitempty"`
}

// CPU is the CPU utilisation of a report, each field a share of CPU time
// between 0 and 1. Fields a platform does not print are nil.
type CPU struct {
	User      float64  // us, %user
	System    float64  // sy, %system
	Idle      float64  // id, %idle
	Nice      *float64 `json:",omitempty"` // %nice (Linux), ni (FreeBSD)
	IOWait    *float64 `json:",omitempty"` // %iowait (Linux), wt (Solaris; always 0 since Solaris 10)
	Steal     *float64 `json:",omitempty"` // %steal (Linux)
	Interrupt *float64 `json:",omitempty"` // in (FreeBSD)
	DTrace    *float64 `json:",omitempty"` // dt (current illumos: time in DTrace probes)
	// Extra holds other CPU columns by header name, as printed (percent).
	Extra map[string]float64 `json:",omitempty"`
}

// Device is one row of the device table.
type Device struct {
	// Name as printed: cXtYdZ with illumos -n, the instance (sd1) without,
	// a pool or NFS mount ("server:/path") on illumos, ada0 on FreeBSD,
	// sda or dm-0 on Linux.
	Name string

	ReadOps, WriteOps     float64 // operations per second (r/s, w/s)
	ReadBytes, WriteBytes float64 // bytes per second (kr/s, Mr/s, rkB/s, rMB/s, rsec/s...)

	// Wait and Actv are the average numbers of operations waiting for
	// service and being serviced (illumos wait, actv).
	Wait *float64 `json:",omitempty"`
	Actv *float64 `json:",omitempty"`
	// WaitSvcSeconds and ActvSvcSeconds are the average times spent
	// waiting and being serviced (illumos -n wsvc_t, asvc_t).
	WaitSvcSeconds *float64 `json:",omitempty"`
	ActvSvcSeconds *float64 `json:",omitempty"`
	// AwaitSeconds is the average time of an operation from queueing to
	// completion: Linux await, FreeBSD ms/t, illumos svc_t (printed
	// without -n; it is wsvc_t plus asvc_t).
	AwaitSeconds *float64 `json:",omitempty"`
	// ReadAwaitSeconds and WriteAwaitSeconds split it by direction: Linux
	// r_await and w_await, FreeBSD ms/r and ms/w.
	ReadAwaitSeconds  *float64 `json:",omitempty"`
	WriteAwaitSeconds *float64 `json:",omitempty"`
	// QueueLength is the average queue length: Linux aqu-sz (avgqu-sz
	// before sysstat 11.6), FreeBSD qlen (an instant value).
	QueueLength *float64 `json:",omitempty"`
	// BusyRatio is the share of time the device was busy (%b, %util).
	BusyRatio *float64 `json:",omitempty"`
	// WaitRatio is the share of time operations were waiting (illumos %w).
	WaitRatio *float64 `json:",omitempty"`
	// Errors holds the illumos -e columns.
	Errors *DeviceErrors `json:",omitempty"`
	// Extra holds every other numeric column by its header name, as
	// printed: no unit conversion (rrqm/s, %rrqm, svctm in ms, ms/o...).
	Extra map[string]float64 `json:",omitempty"`
}

// DeviceErrors are the error counts of illumos `iostat -e`, cumulative
// since boot (they are not rates).
type DeviceErrors struct {
	Soft      uint64 // s/w
	Hard      uint64 // h/w
	Transport uint64 // trn
	Total     uint64 // tot
}

// ParseIostat reads the whole output of `iostat -x ...` and returns every
// report in it.
func ParseIostat(r io.Reader) ([]Report, error) {
	var reports []Report
	s := NewScanner(r)
	for s.Scan() {
		reports = append(reports, s.Report())
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return reports, nil
}

// part is a section of a report, in the order the tools print them. A line
// that starts a part not after the last one seen starts the next report.
type part int

const (
	partNone part = iota
	partTime
	partCPU
	partTitle
	partTable
)

// Scanner reads iostat -x output report by report, like bufio.Scanner.
type Scanner struct {
	lines  *bufio.Scanner
	lineNo int
	seen   bool // a line of iostat output has been recognised

	cur  *Report
	last part
	rows int // device rows in cur

	table     *table   // device header in force
	cpuTitled bool     // an illumos or FreeBSD "cpu" title awaits its header
	cpuCols   []string // a CPU header awaits its values
	changes   []string // state change notices for the next report

	report Report
	err    error
	done   bool
}

// NewScanner returns a Scanner reading from r.
func NewScanner(r io.Reader) *Scanner {
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	return &Scanner{lines: lines}
}

// Scan advances to the next complete report. It returns false at the end
// of the input or on the first error, which Err then returns.
func (s *Scanner) Scan() bool {
	if s.done {
		return false
	}
	for s.lines.Scan() {
		s.lineNo++
		complete, err := s.feed(s.lines.Text())
		if err != nil {
			return s.fail(err)
		}
		if complete != nil {
			s.report = *complete
			return true
		}
	}
	if err := s.lines.Err(); err != nil {
		return s.fail(fmt.Errorf("line %d: %w", s.lineNo+1, err))
	}
	s.done = true
	if s.cpuCols != nil {
		s.err = parse.Errorf(s.lineNo, "input ends before the CPU values")
		return false
	}
	if s.cur != nil {
		s.report, s.cur = *s.cur, nil
		return true
	}
	return false
}

func (s *Scanner) fail(err error) bool {
	s.err, s.done, s.cur = err, true, nil
	return false
}

// Report returns the report found by the last call to Scan.
func (s *Scanner) Report() Report { return s.report }

// Err returns the first error met, nil at a clean end of input: a parse
// error naming its line, or the reader's error.
func (s *Scanner) Err() error { return s.err }

// feed takes one line and returns the report it completes, if any.
func (s *Scanner) feed(line string) (*Report, error) {
	fields := strings.Fields(line)
	switch {
	case len(fields) == 0:
		// sysstat ends each report with a blank line; illumos man pages
		// separate -T reports with one.
		if s.cur != nil && s.rows > 0 {
			return s.finish(), nil
		}
		return nil, nil
	case isStateChange(line):
		s.changes = append(s.changes, stateChange(line))
		return nil, nil
	case isSysstatBanner(fields):
		return nil, nil
	case s.cpuCols != nil:
		return nil, s.cpuValues(fields)
	case strings.Contains(line, "extended device statistics"):
		return s.begin(partTitle), nil
	case isCPUTitle(fields):
		done := s.begin(partCPU)
		s.cpuTitled = true
		return done, nil
	case s.cpuTitled && isCPUHeader(fields):
		s.cpuTitled, s.cpuCols = false, fields
		return nil, nil
	case fields[0] == "avg-cpu:":
		done := s.begin(partCPU)
		s.cpuCols = fields[1:]
		return done, nil
	case isDeviceHeader(fields):
		return s.deviceHeader(fields)
	}
	if t, ok := parseTimestamp(fields); ok {
		done := s.begin(partTime)
		s.cur.Time = t
		return done, nil
	}
	if s.table != nil {
		return nil, s.deviceRow(fields)
	}
	if !s.seen {
		return nil, parse.Errorf(s.lineNo, "%w: unexpected %q", ErrNotExtended, parse.Clip(line))
	}
	return nil, parse.Errorf(s.lineNo, "unexpected %q outside a device table", parse.Clip(line))
}

// begin notes that a line of part p arrived. When p does not come after
// the part seen last, the current report is complete and is returned.
func (s *Scanner) begin(p part) *Report {
	var done *Report
	if s.cur != nil && p <= s.last {
		done = s.finish()
	}
	if s.cur == nil {
		// Notices come after the rows of the report before.
		s.cur = &Report{StateChanges: s.changes}
		s.changes = nil
	}
	s.seen, s.last = true, p
	s.table, s.cpuTitled, s.cpuCols = nil, false, nil
	return done
}

func (s *Scanner) finish() *Report {
	done := s.cur
	s.cur, s.last, s.rows = nil, partNone, 0
	s.table, s.cpuTitled = nil, false
	return done
}

func (s *Scanner) cpuValues(fields []string) error {
	cols := s.cpuCols
	s.cpuCols = nil
	if len(fields) != len(cols) {
		return parse.Errorf(s.lineNo, "CPU line has %d values for %d columns %q", len(fields), len(cols), strings.Join(cols, " "))
	}
	cpu, err := parseCPU(cols, fields)
	if err != nil {
		return parse.AtLine(s.lineNo, err)
	}
	s.cur.CPU = cpu
	return nil
}

func (s *Scanner) deviceHeader(fields []string) (*Report, error) {
	t, err := newTable(fields)
	if err != nil {
		return nil, parse.AtLine(s.lineNo, err)
	}
	done := s.begin(partTable)
	s.table = t
	return done, nil
}

func (s *Scanner) deviceRow(fields []string) error {
	d, cpu, err := s.table.parseRow(fields, s.rows == 0)
	if err != nil {
		return parse.AtLine(s.lineNo, err)
	}
	if cpu != nil && s.cur.CPU == nil {
		s.cur.CPU = cpu
	}
	s.cur.Devices = append(s.cur.Devices, d)
	s.rows++
	return nil
}

// isStateChange matches the illumos notices printed between reports, such
// as "<<device added: sd3>>" (suppressed by -s).
func isStateChange(line string) bool {
	l := strings.TrimSpace(line)
	return strings.HasPrefix(l, "<<") && strings.HasSuffix(l, ">>")
}

func stateChange(line string) string {
	l := strings.TrimSpace(line)
	return strings.TrimSpace(l[2 : len(l)-2])
}

// isSysstatBanner matches the first line of sysstat output:
// "Linux 5.8.0-53-generic (ubuntu) 	12/02/2021 	_x86_64_	(2 CPU)".
func isSysstatBanner(fields []string) bool {
	n := len(fields)
	return n >= 3 && fields[n-1] == "CPU)" && strings.HasPrefix(fields[n-2], "(")
}

// isCPUTitle matches the title over a separate CPU block: "cpu", or
// "tty cpu" with -t (illumos -n, FreeBSD -C).
func isCPUTitle(fields []string) bool {
	for _, f := range fields {
		if f != "cpu" && f != "tty" {
			return false
		}
	}
	return fields[len(fields)-1] == "cpu"
}

func isCPUHeader(fields []string) bool {
	for _, f := range fields {
		if !sideColumns[f] {
			return false
		}
	}
	return true
}

// isDeviceHeader matches the column header of a device table, which names
// the device column "device" (illumos, FreeBSD) or "Device"/"Device:"
// (sysstat).
func isDeviceHeader(fields []string) bool {
	for _, f := range fields {
		switch f {
		case "device", "Device", "Device:":
			return true
		}
	}
	return false
}
