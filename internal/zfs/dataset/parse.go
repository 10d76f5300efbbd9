package dataset

import (
	"fmt"
	"io"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParseList reads `zfs list -H -o PROPERTIES`: a line a dataset, its
// values separated by tabs in the order of properties, whose first must be
// "name". The last value may hold tabs (a mountpoint can), so a line has
// at least as many tabs as separate the properties and everything past
// the last separator belongs to the last property. When that last
// property is the mountpoint, which may hold newlines too, a line without
// a tab goes on with the one before; a line with tabs but too few for a
// dataset is an error, as it reads like one cut short.
func ParseList(r io.Reader, properties []string) (*List, error) {
	if len(properties) == 0 || properties[0] != "name" {
		return nil, errNameFirst(properties)
	}
	l := &List{Properties: properties[1:]}
	last := len(l.Properties) - 1
	err := eachLine(r, func(lineNo int, line string) error {
		fields := strings.SplitN(line, "\t", len(properties))
		if n := len(l.Datasets); len(fields) == 1 && len(properties) > 1 && n > 0 && mayHoldNewline(l.Properties[last]) {
			l.Datasets[n-1].Values[last] += "\n" + line
			return nil
		}
		if len(fields) != len(properties) {
			return parse.Errorf(lineNo, "%d fields, want %d (%s): %q", len(fields), len(properties), strings.Join(properties, ","), line)
		}
		if fields[0] == "" {
			return parse.Errorf(lineNo, "no dataset name: %q", line)
		}
		l.Datasets = append(l.Datasets, Dataset{Name: fields[0], Values: fields[1:]})
		return nil
	})
	return l, err
}

// ParseGet reads `zfs get -H -o name,property,value PROPERTIES`: a line a
// property of a dataset, separated by tabs, the rows of one dataset
// together. The datasets come out in the order zfs printed them, each with
// the values of properties in that order; a property zfs printed no row
// for is "". A value may hold tabs, and a mountpoint newlines: a line
// without a tab after a mountpoint's row goes on with it.
func ParseGet(r io.Reader, properties []string) (*List, error) {
	l := &List{Properties: properties}
	column := make(map[string]int, len(properties))
	for i, p := range properties {
		column[p] = i
	}
	prev := -1 // the column of the last row read
	err := eachLine(r, func(lineNo int, line string) error {
		name, rest, ok1 := strings.Cut(line, "\t")
		property, value, ok2 := strings.Cut(rest, "\t")
		if n := len(l.Datasets); !ok1 && n > 0 && prev >= 0 && mayHoldNewline(properties[prev]) {
			l.Datasets[n-1].Values[prev] += "\n" + line
			return nil
		}
		if !ok1 || !ok2 || name == "" {
			return parse.Errorf(lineNo, "want a name, a property and a value separated by tabs: %q", line)
		}
		i, ok := column[property]
		if !ok {
			return parse.Errorf(lineNo, "property %q was not asked for", property)
		}
		n := len(l.Datasets)
		if n == 0 || l.Datasets[n-1].Name != name {
			l.Datasets = append(l.Datasets, Dataset{Name: name, Values: make([]string, len(properties))})
			n++
		}
		l.Datasets[n-1].Values[i] = value
		prev = i
		return nil
	})
	return l, err
}

// errNameFirst refuses properties that do not start with "name": the
// caller's mistake, not output a parser could not read.
func errNameFirst(properties []string) error {
	return fmt.Errorf("the first property must be name, not %q", properties)
}

// mayHoldNewline tells the properties whose values may go on over lines
// of text: a mountpoint is any path.
func mayHoldNewline(property string) bool {
	return property == "mountpoint"
}

// eachLine calls fn with each line that is not blank, numbered from 1,
// its trailing "\r" trimmed. The output is read whole into one string, of
// which lines and the values cut from them are substrings: a listing of
// 10,000 datasets is some 300,000 lines of zfs get. A failed read is
// returned after the lines read before it, as the reader's error, not a
// parse error.
func eachLine(r io.Reader, fn func(lineNo int, line string) error) error {
	text, err := readAll(r)
	lineNo := 0
	for line := range strings.Lines(text) {
		lineNo++
		line = strings.TrimRight(line, "\r\n")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if err := fn(lineNo, line); err != nil {
			return err
		}
	}
	if err != nil {
		return fmt.Errorf("after line %d: %w", lineNo, err)
	}
	return nil
}

// readAll reads r whole into one string, grown once when r knows its
// length (the client hands over a bytes.Reader), and returns what it read
// before an error too.
func readAll(r io.Reader) (string, error) {
	var b strings.Builder
	if l, ok := r.(interface{ Len() int }); ok {
		b.Grow(l.Len())
	}
	_, err := io.Copy(&b, r)
	return b.String(), err
}
