package zpool

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParseGet reads `zpool get` output: the scripted form (-H, tab-separated
// name, property, value and source) and the table that old versions and
// zfs-fuse print (a "NAME  PROPERTY  VALUE  SOURCE" header, then
// space-aligned columns). It reads vdev properties too (`zpool get -Hp all
// POOL all-vdevs`), where Name is the vdev ("root-0", "mirror-0").
//
// In the table, a value wider than its column pushes the source right, so
// rows are split on blanks: the value is everything between the property
// and the last word.
//
// The strings of the properties share the memory of the output, which is
// read whole.
func ParseGet(r io.Reader) ([]Property, error) {
	return ParseGetFunc(r, nil)
}

// ParseGetFunc is ParseGet returning only the rows whose property keep
// accepts, or every row when keep is nil: a caller that reads a few of
// the 75 properties of each vdev does not hold all of them. Every row is
// still checked, so that output ParseGet rejects is rejected here too.
func ParseGetFunc(r io.Reader, keep func(property string) bool) ([]Property, error) {
	var (
		props   []Property
		columns int  // columns of the table header; 0 for -H output
		sawRow  bool // whether a row was read, kept or not
	)
	out := readOutput(r)
	err := out.eachLine(func(lineNo int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		if !sawRow && columns == 0 {
			if n := getHeaderColumns(line); n > 0 {
				columns = n
				return nil
			}
		}
		p, err := parseGetRow(line, columns)
		if err != nil {
			return parse.AtLine(lineNo, err)
		}
		sawRow = true
		if keep != nil && !keep(p.Property) {
			return nil
		}
		if props == nil && keep == nil {
			// One row a line: growing the slice row by row was most of
			// the cost of 75,000 rows of vdev properties.
			props = make([]Property, 0, out.lines())
		}
		props = append(props, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return props, nil
}

// getHeaderColumns returns the number of columns of a `zpool get` table
// header ("NAME PROPERTY VALUE [SOURCE]"), or 0 when line is not one.
func getHeaderColumns(line string) int {
	if strings.Contains(line, "\t") {
		return 0
	}
	f := strings.Fields(line)
	if len(f) < 3 || len(f) > 4 || f[0] != "NAME" || f[1] != "PROPERTY" || f[2] != "VALUE" {
		return 0
	}
	if len(f) == 4 && f[3] != "SOURCE" {
		return 0
	}
	return len(f)
}

func parseGetRow(line string, columns int) (Property, error) {
	if columns == 0 && strings.Count(line, "\t") >= 2 {
		return parseGetScripted(line)
	}
	sep := "\t"
	fields := strings.Split(line, sep)
	if columns > 0 || len(fields) == 1 {
		// Table rows, and -H output whose tabs a paste turned into spaces.
		sep = " "
		fields = strings.Fields(line)
	}
	if len(fields) < 3 {
		return Property{}, fmt.Errorf("want name, property, value and source, got %d fields in %q", len(fields), line)
	}
	p := Property{Name: fields[0], Property: fields[1]}
	switch {
	case columns == 3:
		p.Value = strings.Join(fields[2:], sep)
	case len(fields) == 3 && columns == 0:
		p.Value = fields[2] // -o name,property,value
	case len(fields) == 3:
		p.Source = fields[2] // an empty value in the table
	default:
		p.Value = strings.Join(fields[2:len(fields)-1], sep)
		p.Source = fields[len(fields)-1]
	}
	if p.Name == "" || p.Property == "" {
		return Property{}, fmt.Errorf("empty name or property in %q", line)
	}
	return p, nil
}

// parseGetScripted reads a row of -H output, of three tab-separated
// fields or more, as parseGetRow would but without a slice of its fields:
// the value is everything between the second tab and the last.
func parseGetScripted(line string) (Property, error) {
	name, rest, _ := strings.Cut(line, "\t")
	property, rest, _ := strings.Cut(rest, "\t")
	p := Property{Name: name, Property: property, Value: rest}
	if i := strings.LastIndexByte(rest, '\t'); i >= 0 {
		p.Value, p.Source = rest[:i], rest[i+1:]
	}
	if p.Name == "" || p.Property == "" {
		return Property{}, fmt.Errorf("empty name or property in %q", line)
	}
	return p, nil
}

// ParseList reads `zpool list -H[p] -o col,...` output: one tab-separated
// row per pool, keyed by columns (the names given to -o, in order). Rows
// whose tabs became spaces in a paste are split on blanks. The vdev rows of
// `-v` (indented by a tab) and its class rows ("logs  -  -") are skipped.
func ParseList(r io.Reader, columns []string) ([]map[string]string, error) {
	var rows []map[string]string
	err := readOutput(r).eachLine(func(lineNo int, line string) error {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "\t") {
			return nil
		}
		var fields []string
		if strings.Contains(line, "\t") {
			fields = strings.Split(line, "\t")
		} else {
			fields = strings.Fields(line)
			if len(fields) != len(columns) && isClassRow(fields) {
				return nil
			}
		}
		if len(fields) != len(columns) {
			return parse.Errorf(lineNo, "%d fields, want %d (%s)", len(fields), len(columns), strings.Join(columns, ","))
		}
		rows = append(rows, zipRow(columns, fields))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// zipRow pairs column names with the fields of one row.
func zipRow(columns, fields []string) map[string]string {
	row := make(map[string]string, len(columns))
	for i, c := range columns {
		row[c] = fields[i]
	}
	return row
}

// isClassRow tells a class row of `zpool list -v` ("logs", "cache",
// "spare"... followed by dashes only) from a pool row.
func isClassRow(fields []string) bool {
	if len(fields) < 2 {
		return false
	}
	for _, f := range fields[1:] {
		if f != "-" {
			return false
		}
	}
	return true
}

// listHeaderNames maps the headers of the `zpool list` table to the
// property names that -o takes, so that both forms give the same keys.
// USED and AVAIL are the pre-2009 names of ALLOC and FREE.
var listHeaderNames = map[string]string{
	"ALLOC":    "allocated",
	"USED":     "allocated",
	"AVAIL":    "free",
	"CKPOINT":  "checkpoint",
	"EXPANDSZ": "expandsize",
	"FRAG":     "fragmentation",
	"CAP":      "capacity",
	"DEDUP":    "dedupratio",
}

// ParseListTable reads the human-oriented `zpool list [-v] [-p]` table:
// column names come from its header row, as property names ("ALLOC" is
// "allocated", "CAP" is "capacity"). Only pool rows are returned: the
// indented vdev rows and the class rows of -v are skipped.
func ParseListTable(r io.Reader) ([]map[string]string, error) {
	var (
		columns []string
		rows    []map[string]string
	)
	err := readOutput(r).eachLine(func(lineNo int, line string) error {
		if strings.TrimSpace(line) == "" {
			return nil
		}
		if columns == nil {
			columns = listTableColumns(line)
			if columns == nil {
				return parse.Errorf(lineNo, "want a header starting with NAME, got %q", line)
			}
			return nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil // a vdev row of -v
		}
		fields := strings.Fields(line)
		if len(fields) != len(columns) {
			if isClassRow(fields) {
				return nil
			}
			return parse.Errorf(lineNo, "%d fields, want %d (%s)", len(fields), len(columns), strings.Join(columns, ","))
		}
		rows = append(rows, zipRow(columns, fields))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return rows, nil
}

func listTableColumns(header string) []string {
	f := strings.Fields(header)
	if len(f) < 2 || f[0] != "NAME" {
		return nil
	}
	cols := make([]string, len(f))
	for i, h := range f {
		if name, ok := listHeaderNames[h]; ok {
			cols[i] = name
		} else {
			cols[i] = strings.ToLower(h)
		}
	}
	return cols
}

// ParseRatio reads a ratio as zpool prints it: "1.00x" or "1.00" (dedup,
// compression) is a ratio, "12%" is 0.12. "-" and "" are no value: ok is
// false.
func ParseRatio(s string) (v float64, ok bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "-" {
		return 0, false, nil
	}
	scale := 1.0
	switch {
	case strings.HasSuffix(s, "x"):
		s = strings.TrimSuffix(s, "x")
	case strings.HasSuffix(s, "%"):
		s, scale = strings.TrimSuffix(s, "%"), 0.01
	}
	f, err := parseDecimal(s)
	if err != nil {
		return 0, false, parse.Errorf(0, "invalid ratio %q", s)
	}
	return f * scale, true, nil
}

// ParsePercent reads a percentage column (capacity, fragmentation) as a
// ratio: "21%" and the bare "21" that -p prints are both 0.21.
func ParsePercent(s string) (v float64, ok bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "-" {
		return 0, false, nil
	}
	f, err := parseDecimal(strings.TrimSuffix(s, "%"))
	if err != nil {
		return 0, false, parse.Errorf(0, "invalid percentage %q", s)
	}
	return f / 100, true, nil
}

// parseDecimal reads a finite number, with a decimal point or comma.
func parseDecimal(s string) (float64, error) {
	f, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	if err != nil || f != f || f > 1e300 || f < -1e300 {
		return 0, fmt.Errorf("invalid number %q", s)
	}
	return f, nil
}

// vdevStateNames are the names zpool gives the vdev_state_t numbers that
// `zpool get -p state ... all-vdevs` prints (zpool_state_to_name).
var vdevStateNames = map[string]string{
	"0": "unknown",
	"1": "offline", // closed
	"2": "offline",
	"3": "removed",
	"4": "unavail", // can't open
	"5": "faulted",
	"6": "degraded",
	"7": "online", // healthy
}

// ParseHealth returns a pool or vdev state as a lowercase word: the health
// column and property ("ONLINE"), or the number that -p prints for the
// vdev state property ("7").
func ParseHealth(s string) string {
	s = strings.TrimSpace(s)
	if name, ok := vdevStateNames[s]; ok {
		return name
	}
	return strings.ToLower(s)
}
