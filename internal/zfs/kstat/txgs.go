package kstat

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// Txg is one row of a pool's transaction group history,
// /proc/spl/kstat/zfs/<pool>/txgs (kept for the last zfs_txg_history txgs,
// 100 by default).
type Txg struct {
	TXG uint64 `json:"txg"`
	// Birth is the time since boot when the txg opened.
	Birth time.Duration `json:"birth"`
	// State is where the txg is now: "open", "quiescing",
	// "wait_for_sync", "syncing" or "committed" ("birth" is never
	// printed). An unknown letter is kept as printed.
	State string `json:"state"`
	// The I/O counters are filled in once the txg has synced.
	NDirty   uint64 `json:"ndirty"`   // dirty bytes the txg carried
	NRead    uint64 `json:"nread"`    // bytes read while syncing
	NWritten uint64 `json:"nwritten"` // bytes written while syncing
	Reads    uint64 `json:"reads"`    // read operations while syncing
	Writes   uint64 `json:"writes"`   // write operations while syncing
	// How long the txg spent in each state; zero for a state not yet
	// left. Releases before 0.6.4 have no wtime column (Wait is zero).
	Open    time.Duration `json:"otime"`
	Quiesce time.Duration `json:"qtime"`
	Wait    time.Duration `json:"wtime"`
	Sync    time.Duration `json:"stime"`
}

// txgStates names the letters spa_txg_history_show prints: each is the
// state a txg is in, the previous one having completed.
var txgStates = map[string]string{
	"B": "birth",
	"O": "open",
	"Q": "quiescing",
	"W": "wait_for_sync",
	"S": "syncing",
	"C": "committed",
}

// ParseTxgs reads a txg history: a line of column names, then one txg a
// line, oldest first. Columns are found by name, because their set and
// order changed (0.6.3 printed "txg state birth ... otime qtime stime", with
// a kstat header before it). A history with no rows (zfs_txg_history=0) is
// valid.
func ParseTxgs(r io.Reader) ([]Txg, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	var columns []string
	txgs := []Txg{}
	for i, line := range lines {
		lineNo := i + 1
		if strings.TrimSpace(line) == "" {
			continue
		}
		if columns == nil {
			if _, ok := parseHeader(line); ok {
				continue
			}
			columns = strings.Fields(line)
			if columns[0] != "txg" {
				return nil, parse.Errorf(lineNo, "want the column names of a txg history (txg birth state ...), got %q", line)
			}
			continue
		}
		txg, err := parseTxg(columns, strings.Fields(line))
		if err != nil {
			return nil, parse.AtLine(lineNo, err)
		}
		txgs = append(txgs, txg)
	}
	if columns == nil {
		return nil, parse.Errorf(len(lines)+1, "no column names: not a txg history")
	}
	return txgs, nil
}

func parseTxg(columns, values []string) (Txg, error) {
	if len(values) != len(columns) {
		return Txg{}, fmt.Errorf("%d values for the %d columns of the txg history", len(values), len(columns))
	}
	var t Txg
	for i, col := range columns {
		if col == "state" {
			t.State = txgStateName(values[i])
			continue
		}
		if !txgCounters[col] {
			continue // a column this package does not know
		}
		v, err := strconv.ParseUint(values[i], 10, 64)
		if err != nil {
			return Txg{}, fmt.Errorf("cannot parse %s %q", col, values[i])
		}
		t.set(col, v)
	}
	return t, nil
}

// txgCounters are the numeric columns Txg holds.
var txgCounters = map[string]bool{
	"txg": true, "birth": true, "ndirty": true, "nread": true, "nwritten": true,
	"reads": true, "writes": true, "otime": true, "qtime": true, "wtime": true, "stime": true,
}

func txgStateName(letter string) string {
	if name, ok := txgStates[letter]; ok {
		return name
	}
	return letter
}

// set stores one of the txgCounters columns.
func (t *Txg) set(col string, v uint64) {
	d := time.Duration(v)
	switch col {
	case "txg":
		t.TXG = v
	case "birth":
		t.Birth = d
	case "ndirty":
		t.NDirty = v
	case "nread":
		t.NRead = v
	case "nwritten":
		t.NWritten = v
	case "reads":
		t.Reads = v
	case "writes":
		t.Writes = v
	case "otime":
		t.Open = d
	case "qtime":
		t.Quiesce = d
	case "wtime":
		t.Wait = d
	case "stime":
		t.Sync = d
	}
}
