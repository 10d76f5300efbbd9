package kstat

import (
	"io"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParsePoolState reads /proc/spl/kstat/zfs/<pool>/state (OpenZFS 0.7.10
// and later): one word such as "ONLINE" or "SUSPENDED". It returns the word
// lowercased, as the exporter's state labels are. Reading this file never
// blocks, unlike `zpool status` on a suspended pool.
func ParsePoolState(r io.Reader) (string, error) {
	word, err := singleWord(r, "pool state")
	if err != nil {
		return "", err
	}
	return strings.ToLower(word), nil
}

// ParsePoolGUID reads /proc/spl/kstat/zfs/<pool>/guid: the pool's GUID as
// one unsigned decimal number.
func ParsePoolGUID(r io.Reader) (uint64, error) {
	word, err := singleWord(r, "pool GUID")
	if err != nil {
		return 0, err
	}
	guid, err := strconv.ParseUint(word, 10, 64)
	if err != nil {
		return 0, parse.Errorf(1, "cannot parse pool GUID %q", word)
	}
	return guid, nil
}

// singleWord reads an input that holds one word on one line.
func singleWord(r io.Reader, what string) (string, error) {
	lines, err := readLines(r)
	if err != nil {
		return "", err
	}
	word := ""
	for i, line := range lines {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			continue
		case len(f) > 1 || word != "":
			return "", parse.Errorf(i+1, "want a single word for the %s, got %q", what, line)
		}
		word = f[0]
	}
	if word == "" {
		return "", parse.Errorf(len(lines)+1, "no %s", what)
	}
	return word, nil
}

// Table is a raw kstat printed as a table: an optional header, a line of
// column names, then rows. Linux prints <pool>/reads, <pool>/multihost,
// import_progress, dbgmsg and the *_bench kstats this way.
type Table struct {
	Header  *Header  `json:"header,omitempty"`
	Columns []string `json:"columns"`
	// Rows hold one cell per column. The last column takes the rest of
	// the line, spaces included (a dbgmsg message, a multihost vdev path);
	// a row shorter than the header has fewer cells.
	Rows [][]string `json:"rows"`
}

// ParseTable reads a raw kstat table. A table with no rows (history lists
// turned off, the default for <pool>/reads and <pool>/multihost) is valid.
// It does not understand dbufs, whose two header lines are split by "|".
func ParseTable(r io.Reader) (*Table, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	t := &Table{Rows: [][]string{}}
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if t.Columns == nil {
			if h, ok := parseHeader(line); ok && t.Header == nil {
				t.Header = h
				continue
			}
			t.Columns = strings.Fields(line)
			continue
		}
		t.Rows = append(t.Rows, splitRow(line, len(t.Columns)))
	}
	if t.Columns == nil {
		return nil, parse.Errorf(len(lines)+1, "no column header")
	}
	return t, nil
}

// splitRow splits line into at most n cells, the last taking the rest of
// the line without its trailing blanks.
func splitRow(line string, n int) []string {
	spans := fieldSpans(line)
	cells := make([]string, 0, min(len(spans), n))
	for i, s := range spans {
		if i == n-1 {
			cells = append(cells, strings.TrimRight(line[s.start:], " \t"))
			break
		}
		cells = append(cells, line[s.start:s.end])
	}
	return cells
}
