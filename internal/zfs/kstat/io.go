package kstat

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// IO is a KSTAT_TYPE_IO kstat: the pool-wide I/O counters that Linux
// printed in /proc/spl/kstat/zfs/<pool>/io until OpenZFS 2.1 and that
// illumos and Solaris still export as zfs:0:<pool>. The wait queue is
// ZFS's queue of I/Os not yet issued, the run queue the I/Os in flight.
type IO struct {
	NRead    uint64 `json:"nread"`    // bytes read
	NWritten uint64 `json:"nwritten"` // bytes written
	Reads    uint64 `json:"reads"`    // read operations
	Writes   uint64 `json:"writes"`   // write operations
	// WTime is the time the wait queue was not empty, WLenTime its length
	// integrated over time (so WLenTime/elapsed is the average length),
	// WUpdate the time since boot of its last change. RTime, RLenTime and
	// RUpdate are the same for the run queue.
	WTime    time.Duration `json:"wtime"`
	WLenTime time.Duration `json:"wlentime"`
	WUpdate  time.Duration `json:"wupdate"`
	RTime    time.Duration `json:"rtime"`
	RLenTime time.Duration `json:"rlentime"`
	RUpdate  time.Duration `json:"rupdate"`
	WCnt     uint64        `json:"wcnt"` // I/Os in the wait queue now
	RCnt     uint64        `json:"rcnt"` // I/Os in the run queue now
}

// ParseIO reads a Linux KSTAT_TYPE_IO kstat (/proc/spl/kstat/zfs/<pool>/io):
// a header, a line of column names, and one row of values, where times are
// nanoseconds. Columns are matched by name; wide values push the row out of
// line with the names, which does not matter here.
func ParseIO(r io.Reader) (*IO, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	var columns []string
	var counters *IO
	for i, line := range lines {
		lineNo := i + 1
		if strings.TrimSpace(line) == "" {
			continue
		}
		switch {
		case columns == nil:
			if _, ok := parseHeader(line); ok {
				continue
			}
			columns = strings.Fields(line)
			if !slices.Contains(columns, "nread") {
				return nil, parse.Errorf(lineNo, "want the column names of an I/O kstat (nread nwritten ...), got %q", line)
			}
		case counters != nil:
			return nil, parse.Errorf(lineNo, "an I/O kstat has one row, found another: %q", line)
		default:
			if counters, err = parseIORow(columns, strings.Fields(line)); err != nil {
				return nil, parse.AtLine(lineNo, err)
			}
		}
	}
	if counters == nil {
		return nil, parse.Errorf(len(lines)+1, "no row of I/O counters")
	}
	return counters, nil
}

func parseIORow(columns, values []string) (*IO, error) {
	if len(values) != len(columns) {
		return nil, fmt.Errorf("%d values for the %d columns %v", len(values), len(columns), columns)
	}
	counters := &IO{}
	for i, col := range columns {
		v, err := strconv.ParseUint(values[i], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("cannot parse %s %q", col, values[i])
		}
		counters.set(col, v, time.Duration(v))
	}
	return counters, nil
}

// set stores one statistic. illumos calls the update times wlastupdate and
// rlastupdate, the Linux column header wupdate and rupdate. Unknown names
// are ignored.
func (c *IO) set(name string, n uint64, d time.Duration) {
	switch name {
	case "nread":
		c.NRead = n
	case "nwritten":
		c.NWritten = n
	case "reads":
		c.Reads = n
	case "writes":
		c.Writes = n
	case "wtime":
		c.WTime = d
	case "wlentime":
		c.WLenTime = d
	case "wupdate", "wlastupdate":
		c.WUpdate = d
	case "rtime":
		c.RTime = d
	case "rlentime":
		c.RLenTime = d
	case "rupdate", "rlastupdate":
		c.RUpdate = d
	case "wcnt":
		c.WCnt = n
	case "rcnt":
		c.RCnt = n
	}
}
