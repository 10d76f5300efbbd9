package dataset

import (
	"strconv"
	"strings"
)

// List is the datasets zfs printed, and the properties it printed for
// each, in the order they were asked for.
type List struct {
	Properties []string
	Datasets   []Dataset
}

// Dataset is one dataset: its name and the value of each property of its
// List, as zfs printed it; "" where zfs printed no row for a property.
type Dataset struct {
	Name   string
	Values []string
}

// Pool is the pool a dataset is in: its name up to the first "/", "@" or
// "#".
func (d Dataset) Pool() string {
	if i := strings.IndexAny(d.Name, "/@#"); i >= 0 {
		return d.Name[:i]
	}
	return d.Name
}

// Column is the position of a property in the list, or -1.
func (l *List) Column(property string) int {
	for i, p := range l.Properties {
		if p == property {
			return i
		}
	}
	return -1
}

// Value is a dataset's value of the property at column, or "" when the
// list has no such column.
func (d Dataset) Value(column int) string {
	if column < 0 || column >= len(d.Values) {
		return ""
	}
	return d.Values[column]
}

// Number reads a value that `-p` prints exactly: a count of bytes, a
// time in seconds, or a ratio (which some releases print with a trailing
// "x", others without). A value zfs prints for "not set" or "does not
// apply" ("-", "none", "") is not a number: ok is false, and so is any
// other word, such as a human-readable "1.5M" of a zfs without -p.
func Number(s string) (v float64, ok bool) {
	s = strings.TrimSuffix(s, "x")
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] < '0' || digits[0] > '9' {
		return 0, false // also "Inf" and "NaN", which ParseFloat takes
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}
