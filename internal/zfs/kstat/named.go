package kstat

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// DataType is the type of one named kstat entry (KSTAT_DATA_*), the middle
// column of a Linux named kstat.
type DataType int

// Data types as the SPL numbers them.
const (
	DataChar   DataType = 0 // up to 16 bytes of text, printed padded
	DataInt32  DataType = 1
	DataUint32 DataType = 2
	DataInt64  DataType = 3 // for example arcstats memory_available_bytes, which goes negative
	DataUint64 DataType = 4 // nearly every ZFS counter and size
	DataLong   DataType = 5
	DataUlong  DataType = 6
	DataString DataType = 7 // for example objset dataset_name
)

// Numeric reports whether entries of type t hold a number.
func (t DataType) Numeric() bool { return t >= DataInt32 && t <= DataUlong }

// signed reports whether numbers of type t can be negative.
func (t DataType) signed() bool { return t == DataInt32 || t == DataInt64 || t == DataLong }

// Named is one Linux named kstat: an optional header, then its entries in
// the order the kernel printed them.
type Named struct {
	Header  *Header `json:"header,omitempty"`
	Entries []Entry `json:"entries"`
}

// Entry is one "name type data" row.
type Entry struct {
	Name string   `json:"name"` // may contain spaces: dmu_tx_assign has "1 ns", "2 ns", ...
	Type DataType `json:"type"`
	// Value is the number of a numeric entry as a float64, exact up to
	// 2^53; 0 for text.
	Value float64 `json:"value"`
	// Int and Uint hold the exact value of signed and unsigned entries.
	Int  int64  `json:"int,omitempty"`
	Uint uint64 `json:"uint,omitempty"`
	// String is the text of char and string entries, and the raw value of
	// an entry whose type this package does not know.
	String string `json:"string,omitempty"`
}

// Lookup returns the first entry called name.
func (n *Named) Lookup(name string) (Entry, bool) {
	for _, e := range n.Entries {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// Values returns every numeric entry by name.
func (n *Named) Values() map[string]float64 {
	v := make(map[string]float64, len(n.Entries))
	for _, e := range n.Entries {
		if e.Type.Numeric() {
			v[e.Name] = e.Value
		}
	}
	return v
}

// ParseNamed reads a Linux named kstat such as /proc/spl/kstat/zfs/arcstats:
// an optional header line, the "name type data" line, then one entry a line.
// An empty input is a kstat with no entries: when a kstat has none (a
// dmu_tx_assign histogram whose buckets are all zero), the SPL prints
// nothing at all, not even its header.
func ParseNamed(r io.Reader) (*Named, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	n := &Named{Entries: []Entry{}}
	columns, empty := false, true
	for i, line := range lines {
		lineNo := i + 1
		if strings.TrimSpace(line) == "" {
			continue
		}
		empty = false
		if !columns {
			if h, ok := parseHeader(line); ok && n.Header == nil {
				n.Header = h
				continue
			}
			if !isNamedColumns(line) {
				return nil, parse.Errorf(lineNo, "want the %q column header of a named kstat, got %q", "name type data", line)
			}
			columns = true
			continue
		}
		e, err := parseEntry(line)
		if err != nil {
			return nil, parse.AtLine(lineNo, err)
		}
		n.Entries = append(n.Entries, e)
	}
	if !columns && !empty {
		return nil, parse.Errorf(len(lines)+1, "no %q column header: not a named kstat", "name type data")
	}
	return n, nil
}

func isNamedColumns(line string) bool {
	f := strings.Fields(line)
	return len(f) == 3 && f[0] == "name" && f[1] == "type" && f[2] == "data"
}

// parseEntry reads one "name type data" row. The SPL prints it as
// "%-31s %-4d " and the value, so the name may hold spaces ("1 ns") and a
// string value may too ("tank/vm images"): the type is the first field
// after the name that is a small number, and the value is the rest.
func parseEntry(line string) (Entry, error) {
	spans := fieldSpans(line)
	for k := 1; k < len(spans); k++ {
		t, ok := parseDataType(line[spans[k].start:spans[k].end])
		if !ok {
			continue
		}
		name := strings.TrimSpace(line[:spans[k].start])
		if name == "" {
			// The field before the type was white space other than blanks
			// (a form feed): nothing to name the entry by.
			return Entry{}, fmt.Errorf("no name before the type in %q", line)
		}
		value := strings.TrimLeft(line[spans[k].end:], " \t")
		return newEntry(name, t, value)
	}
	return Entry{}, fmt.Errorf("want %q, got %q", "name type value", line)
}

// parseDataType reads a type column: KSTAT_DATA_* numbers are below 100.
func parseDataType(s string) (DataType, bool) {
	if len(s) == 0 || len(s) > 2 {
		return 0, false
	}
	t, err := strconv.Atoi(s)
	if err != nil || t < 0 {
		return 0, false
	}
	return DataType(t), true
}

func newEntry(name string, t DataType, raw string) (Entry, error) {
	e := Entry{Name: name, Type: t}
	switch {
	case t == DataChar:
		e.String = strings.TrimRight(raw, " ") // printed as %-16s
	case t == DataString:
		e.String = raw
	case t.Numeric():
		raw = strings.TrimRight(raw, " \t")
		if t.signed() {
			v, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return Entry{}, fmt.Errorf("cannot parse signed value %q of %q", raw, name)
			}
			e.Int, e.Value = v, float64(v)
		} else {
			v, err := strconv.ParseUint(raw, 10, 64)
			if err != nil {
				return Entry{}, fmt.Errorf("cannot parse unsigned value %q of %q", raw, name)
			}
			e.Uint, e.Value = v, float64(v)
		}
	default:
		// A type newer than this package: keep the text, and the number
		// when it is one.
		e.String = raw
		if v, ok := parseNumber(strings.TrimSpace(raw)); ok {
			e.Value = v
		}
	}
	return e, nil
}
