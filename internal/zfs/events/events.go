package events

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// Event is one event of the kernel's queue.
type Event struct {
	// EID numbers the event: one more than the event before it. Zero when
	// the payload was not printed (no -v).
	EID uint64
	// Class is the event's class: "ereport.fs.zfs.checksum",
	// "resource.fs.zfs.statechange", "sysevent.fs.zfs.resilver_start".
	Class string
	// Time is when the event was posted: the payload's seconds and
	// nanoseconds, else the time its first line gives in the local zone.
	Time     time.Time
	Pool     string // empty for an event of no pool
	PoolGUID uint64
	// VdevGUID, VdevPath and VdevType name the vdev the event is about;
	// zero and empty for an event of a pool. VdevPath is the leaf's
	// device ("/dev/disk/by-id/ata-...-part1").
	VdevGUID uint64
	VdevPath string
	VdevType string // "disk", "file", "mirror", "raidz", ...
	// VdevState is a state change's new state ("FAULTED", "ONLINE"), as
	// zpool names it.
	VdevState string
	// Dropped is how many events the kernel dropped from this reader's
	// queue just before this one.
	Dropped uint64
}

// Classes of the events the exporter gives a meaning to.
const (
	ClassChecksum       = "ereport.fs.zfs.checksum"
	ClassIO             = "ereport.fs.zfs.io"
	ClassDelay          = "ereport.fs.zfs.delay"
	ClassDeadman        = "ereport.fs.zfs.deadman"
	ClassData           = "ereport.fs.zfs.data"
	ClassStateChange    = "resource.fs.zfs.statechange"
	ClassResilverStart  = "sysevent.fs.zfs.resilver_start"
	ClassResilverFinish = "sysevent.fs.zfs.resilver_finish"
	ClassScrubStart     = "sysevent.fs.zfs.scrub_start"
	ClassScrubFinish    = "sysevent.fs.zfs.scrub_finish"
)

// maxLine bounds a line: a payload pair longer than this is no event's.
const maxLine = 1 << 20

// Reader reads events, one at a time, from `zpool events -v` or from its
// stream under -f.
type Reader struct {
	sc      *bufio.Scanner
	line    int
	ev      *Event // the event being read; nil between events
	seen    map[string]bool
	dropped uint64 // "dropped N events" not yet given to an event
	err     error
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{sc: sc}
}

// Parse reads every event of r.
func Parse(r io.Reader) ([]Event, error) {
	var evs []Event
	er := NewReader(r)
	for {
		ev, err := er.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		evs = append(evs, ev)
	}
}

// first is an event's first line: its time as ctime prints it, less the
// weekday, with nanoseconds, then its class after a space (a tab with -H).
var first = regexp.MustCompile(`^([A-Z][a-z]{2} [ 0-9][0-9] [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{9})[ \t](\S+)$`)

// lineTime is the layout of an event's first line's time.
const lineTime = "Jan _2 2006 15:04:05.000000000"

// pairIndent is the indent of the payload's own pairs.
const pairIndent = "        "

// Next returns the next event, io.EOF after the last, or the error that
// stopped the read: a parse error naming the line, or the reader's.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for r.sc.Scan() {
		r.line++
		if ev, done := r.take(r.sc.Bytes()); done {
			return ev, nil
		}
		if r.err != nil {
			return Event{}, r.err
		}
	}
	r.err = r.sc.Err()
	if errors.Is(r.err, bufio.ErrTooLong) {
		r.err = parse.Errorf(r.line+1, "a line longer than %d bytes", maxLine)
	}
	if r.err == nil {
		r.err = io.EOF
	}
	if r.ev != nil {
		// The last event, which no blank line ended (no -v, or a stream
		// cut short): given before the error.
		ev := *r.ev
		r.ev = nil
		return ev, nil
	}
	return Event{}, r.err
}

// take reads one line. It returns an event when the line ended one.
func (r *Reader) take(line []byte) (Event, bool) {
	if len(bytes.TrimSpace(line)) == 0 {
		return r.end()
	}
	if m := first.FindSubmatch(line); m != nil {
		ev := &Event{Class: string(m[2]), Dropped: r.dropped}
		r.dropped = 0
		clear(r.seen)
		if t, err := time.ParseInLocation(lineTime, string(m[1]), time.Local); err == nil {
			ev.Time = t
		}
		if r.ev != nil {
			// Without -v, an event is a single line.
			done, _ := r.end()
			r.ev = ev
			return done, true
		}
		r.ev = ev
		return Event{}, false
	}
	if n, ok := droppedLine(line); ok {
		r.dropped += n
		return Event{}, false
	}
	if r.ev == nil {
		if bytes.HasPrefix(line, []byte("TIME ")) && bytes.HasSuffix(line, []byte(" CLASS")) {
			return Event{}, false // the heading, without -H
		}
		r.err = parse.Errorf(r.line, "%w: %q is no event", parse.ErrUnexpected, parse.Clip(string(line)))
		return Event{}, false
	}
	r.pair(string(line))
	return Event{}, false
}

// end ends the event being read, if there is one.
func (r *Reader) end() (Event, bool) {
	if r.ev == nil {
		return Event{}, false
	}
	ev := *r.ev
	r.ev = nil
	return ev, true
}

// droppedLine reads "dropped N events", which zpool prints before the
// event that follows the gap.
func droppedLine(line []byte) (uint64, bool) {
	s, ok := strings.CutPrefix(string(line), "dropped ")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, " events")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// pair reads a line of the payload into the event being read. Lines of
// embedded nvlists (deeper), their ends, and a string's later lines are
// passed over.
func (r *Reader) pair(line string) {
	rest, ok := strings.CutPrefix(line, pairIndent)
	if !ok || rest == "" || rest[0] == ' ' {
		return
	}
	name, value, ok := strings.Cut(rest, " = ")
	if !ok || r.seen[name] {
		// The first of a name is the payload's own: a later one can only
		// be a string's later line made to look like a pair.
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[name] = true
	ev := r.ev
	switch name {
	case "eid":
		ev.EID, _ = hex(value)
	case "class":
		if s, ok := quoted(value); ok && s != "" {
			ev.Class = s
		}
	case "time":
		// Seconds and nanoseconds, both in hex: "0x6930e1b2 0x2a4f1e3c ".
		f := strings.Fields(value)
		if len(f) == 2 {
			sec, err1 := hex(f[0])
			nsec, err2 := hex(f[1])
			if err1 == nil && err2 == nil && sec < 1<<62 && nsec < 1e9 {
				ev.Time = time.Unix(int64(sec), int64(nsec)).UTC()
			}
		}
	case "pool":
		ev.Pool, _ = quoted(value)
	case "pool_guid":
		ev.PoolGUID, _ = hex(value)
	case "vdev_guid":
		ev.VdevGUID, _ = hex(value)
	case "vdev_path":
		ev.VdevPath, _ = quoted(value)
	case "vdev_type":
		ev.VdevType, _ = quoted(value)
	case "vdev_state":
		// A name and its number: "FAULTED" (0x5).
		if s, _, ok := strings.Cut(value, " ("); ok {
			ev.VdevState, _ = quoted(s)
		} else {
			ev.VdevState, _ = quoted(value)
		}
	}
}

// quoted is a string as zpool prints it: between quotes, not escaped.
func quoted(v string) (string, bool) {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return "", false
	}
	return v[1 : len(v)-1], true
}

// hex reads a number that zpool prints as 0x followed by hex digits.
func hex(v string) (uint64, error) {
	s, ok := strings.CutPrefix(strings.TrimSpace(v), "0x")
	if !ok {
		return 0, fmt.Errorf("%q is not a hex number", v)
	}
	return strconv.ParseUint(s, 16, 64)
}
