package zpool

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ListRow is one row of `zpool list -v`: a pool's own row, or one of its
// vdevs'. A figure is nil where zpool printed "-" or has no such column.
// zpool prints "-" for what a vdev does not keep (a disk below a mirror
// has no allocated space of its own), for a fragmentation it cannot tell,
// and for an expandsize or a checkpoint of zero.
type ListRow struct {
	Pool string // the pool the row belongs to
	// Name is the pool's name on its own row and the vdev's as zpool
	// printed it on the others: before OpenZFS 2.1.3, a bare "mirror" for
	// every mirror.
	Name string
	// Depth is 0 for the pool's row, 1 for its top-level vdevs, 2 for
	// their children... and -1 for the vdev rows of -H, which zpool does
	// not indent: MatchList finds it.
	Depth int
	// Class is ClassNormal, or the class of the section row above the
	// vdev ("logs" is ClassLog); a section zpool names in a word this
	// parser does not know keeps that word.
	Class string

	// Space in bytes. A top-level vdev's Size is its share of the pool's
	// size, raw, with parity, as Allocated counts it. From OpenZFS 2.1.6, a
	// disk's Size is its device's size, while Allocated and Free of a disk
	// that is itself a top-level vdev count the space ZFS allocates from,
	// a little less.
	Size, Allocated, Free *float64
	Checkpoint            *float64 // bytes the pool's checkpoint holds
	ExpandSize            *float64 // bytes the vdev could grow by (autoexpand, zpool online -e)

	Fragmentation *float64 // of the free space, 0 to 1
	Capacity      *float64 // Allocated over the space allocated from, 0 to 1
	Dedup         *float64 // the pool's dedup ratio; vdev rows have none
	// Health is lowercased: "online", "degraded"..., "avail" or "inuse"
	// for hot spares; "" where not printed (vdev rows before 0.8).
	Health string
}

// ParseListVerbose reads `zpool list -v` printed with zpool's default
// columns, in every form the exporter runs it: scripted (-H), exact (-p)
// or not, and the table with its header that zpools without -H print. It
// reads `zpool list` without -v as well: pool rows only.
//
// A pool's row has the columns of the -o list, here the default one. Up
// to OpenZFS 2.4.0, vdev rows have a fixed set of their own whatever -o
// says (cmd/zpool/zpool_main.c, print_list_stats: "not compatible with
// '-o' <proplist> option"); from 2.4.1 they follow -o too. In every
// release read (ZoL 0.6.5 and 0.7, OpenZFS 0.8 to 2.4, illumos, the ZFS of
// FreeBSD 10 to 12, the Delphix fork) that fixed set is the start of the
// default list: NAME SIZE ALLOC FREE [CKPOINT] EXPANDSZ FRAG CAP, then
// DEDUP and HEALTH from 0.8. So a vdev row is read against the pool rows'
// columns, as far as it goes. The table names the columns in its header;
// -H output has none, and its columns are told by their number (see
// scriptedColumns).
//
// Vdevs of the dedup, special and log classes, cache devices and hot
// spares come after a section row ("logs  -  -  -"), which zpool prints
// with blanks even under -H, where vdev rows start with a tab.
func ParseListVerbose(r io.Reader) ([]ListRow, error) {
	var p listParser
	err := readOutput(r).eachLine(func(lineNo int, line string) error {
		return parse.AtLine(lineNo, p.line(line))
	})
	if err != nil {
		return nil, err
	}
	return p.rows, nil
}

// listParser is the state of ParseListVerbose between lines.
type listParser struct {
	columns []string // of a pool row; vdev rows have the first of them
	table   bool     // the columns came from a header, not from -H's count
	// alternate is the columns of an older -H set with the expandsize
	// and fragmentation figures the other way (see expandOrFragmentation).
	alternate []string
	pool      string // of the vdev rows that follow
	class     string // of the vdev rows that follow
	rows      []ListRow
}

// scriptedColumns are the default columns of `zpool list`, by their
// number, for -H output, which prints no header. The sets of 10 and 9
// columns hold EXPANDSZ and FRAG in either order, or either of them: see
// expandOrFragmentation.
var scriptedColumns = map[int][]string{
	// OpenZFS 0.8 on, FreeBSD 11.2 on, illumos 2018 on, the Delphix fork.
	11: {"name", "size", "allocated", "free", "checkpoint", "expandsize", "fragmentation", "capacity", "dedupratio", "health", "altroot"},
	// ZoL 0.6.5 and 0.7, FreeBSD 10 and 11, illumos 2014 to 2018; some
	// FreeBSD 10 and illumos builds of 2014 print FRAG first.
	10: {"name", "size", "allocated", "free", "expandsize", "fragmentation", "capacity", "dedupratio", "health", "altroot"},
	// illumos 2012 to 2014 (EXPANDSZ); ZoL 0.6.3 and 0.6.4 (FRAG).
	9: {"name", "size", "allocated", "free", "expandsize", "capacity", "dedupratio", "health", "altroot"},
	// OpenSolaris, Oracle Solaris, zfs-fuse.
	8: {"name", "size", "allocated", "free", "capacity", "dedupratio", "health", "altroot"},
}

// listSectionClasses maps the words of section rows to classes. zpool
// 0.7 and older say "log", later "logs".
var listSectionClasses = map[string]string{
	"logs":    ClassLog,
	"log":     ClassLog,
	"cache":   ClassCache,
	"spare":   ClassSpare,
	"spares":  ClassSpare,
	"special": ClassSpecial,
	"dedup":   ClassDedup,
}

func (p *listParser) line(line string) error {
	text := strings.TrimRight(line, " \t")
	if text == "" || text == "no pools available" {
		return nil
	}
	if columns := listTableColumns(text); columns != nil && text[0] == 'N' && !strings.Contains(text, "\t") {
		p.columns, p.table, p.alternate = columns, true, nil
		return nil
	}
	if !p.table {
		return p.scriptedLine(text)
	}
	fields := strings.Fields(text)
	indent := len(text) - len(strings.TrimLeft(text, " \t"))
	switch {
	case indent == 0 && isClassRow(fields):
		return p.section(fields[0])
	case indent == 0:
		return p.poolRow(fields)
	}
	return p.vdevRow(fields, max(1, indent/2))
}

// scriptedLine reads a line of -H output: a pool's row, a vdev's (after a
// tab) or a section row (in blanks).
func (p *listParser) scriptedLine(text string) error {
	switch {
	case !strings.Contains(text, "\t"):
		if fields := strings.Fields(text); isClassRow(fields) {
			return p.section(fields[0])
		}
		return fmt.Errorf("neither a header nor a row of zpool list -H: %q", text)
	case text[0] == '\t':
		return p.vdevRow(strings.Split(text[1:], "\t"), -1)
	}
	fields := strings.Split(text, "\t")
	if p.columns == nil {
		columns, ok := scriptedColumns[len(fields)]
		if !ok {
			return fmt.Errorf("%d columns: not a set zpool list prints by default: %q", len(fields), text)
		}
		p.columns, p.alternate = columns, alternateColumns(columns)
	}
	return p.poolRow(fields)
}

func (p *listParser) section(word string) error {
	if p.pool == "" {
		return fmt.Errorf("section %q before any pool", word)
	}
	p.class = word
	if class, ok := listSectionClasses[word]; ok {
		p.class = class
	}
	return nil
}

func (p *listParser) poolRow(fields []string) error {
	n := len(p.columns)
	switch {
	case len(fields) > n && p.table:
		// An altroot with blanks in it: the last column takes the rest.
		fields = append(fields[:n-1:n-1], strings.Join(fields[n-1:], " "))
	case len(fields) != n:
		return fmt.Errorf("pool row of %d columns, want %d (%s)", len(fields), n, strings.Join(p.columns, ","))
	}
	row := ListRow{Pool: fields[0], Name: fields[0], Class: ClassNormal}
	if err := p.fill(&row, fields); err != nil {
		return err
	}
	p.pool, p.class = row.Name, ClassNormal
	p.rows = append(p.rows, row)
	return nil
}

func (p *listParser) vdevRow(fields []string, depth int) error {
	switch {
	case p.pool == "":
		return fmt.Errorf("vdev %q before any pool", fields[0])
	case len(fields) < 2 || len(fields) > len(p.columns) || fields[0] == "":
		return fmt.Errorf("vdev row of %d columns, want 2 to %d (%s): %q",
			len(fields), len(p.columns), strings.Join(p.columns, ","), strings.Join(fields, " "))
	}
	row := ListRow{Pool: p.pool, Name: fields[0], Depth: depth, Class: p.class}
	if err := p.fill(&row, fields); err != nil {
		return err
	}
	p.rows = append(p.rows, row)
	return nil
}

// fill sets the row's figures from its fields, in the parser's columns.
func (p *listParser) fill(row *ListRow, fields []string) error {
	columns := p.columns
	if p.alternate != nil && expandOrFragmentation(fields) {
		columns = p.alternate
	}
	for i, value := range fields[1:] {
		if err := row.set(columns[i+1], value); err != nil {
			return fmt.Errorf("%s of %s: %w", columns[i+1], row.Name, err)
		}
	}
	return nil
}

// alternateColumns returns the -H columns with expandsize read as
// fragmentation and fragmentation as expandsize, for the older sets that
// print them either way; nil for the others.
func alternateColumns(columns []string) []string {
	if len(columns) != 10 && len(columns) != 9 {
		return nil
	}
	alt := make([]string, len(columns))
	for i, c := range columns {
		switch c {
		case "expandsize":
			alt[i] = "fragmentation"
		case "fragmentation":
			alt[i] = "expandsize"
		default:
			alt[i] = c
		}
	}
	return alt
}

// expandOrFragmentation tells, for a -H row of an older column set, that
// its fifth field, which the set reads as expandsize, is the
// fragmentation (and the sixth the expandsize, if the set has both). A
// fragmentation is a percentage, "3%" or under -p 0 to 100, and an
// expandsize is "-" or whole metaslabs, 128 KiB at the least: the two
// cannot be taken one for the other.
func expandOrFragmentation(fields []string) bool {
	if len(fields) < 5 {
		return false
	}
	if isPercentage(fields[4]) {
		return true
	}
	return len(fields) > 5 && fields[5] != "-" && !isPercentage(fields[5])
}

func isPercentage(s string) bool {
	if strings.HasSuffix(s, "%") {
		return true
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return err == nil && n <= 100
}

// set reads the value of one column into the row; columns the row has no
// field for (altroot, and any zpool may add) are skipped.
func (r *ListRow) set(column, value string) error {
	var err error
	switch column {
	case "size":
		r.Size, err = listFigure(value, ParseSize)
	case "allocated":
		r.Allocated, err = listFigure(value, ParseSize)
	case "free":
		r.Free, err = listFigure(value, ParseSize)
	case "checkpoint":
		r.Checkpoint, err = listFigure(value, ParseSize)
	case "expandsize":
		r.ExpandSize, err = listFigure(value, ParseSize)
	case "fragmentation":
		r.Fragmentation, err = listFigure(value, ParsePercent)
	case "capacity":
		r.Capacity, err = listFigure(value, ParsePercent)
	case "dedupratio":
		r.Dedup, err = listFigure(value, ParseRatio)
	case "health":
		if value != "-" {
			r.Health = ParseHealth(value)
		}
	}
	return err
}

// listFigure reads a figure with read: nil for "-", an error for what is
// not a finite number of zero or more.
func listFigure(value string, read func(string) (float64, bool, error)) (*float64, error) {
	v, ok, err := read(value)
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, nil
	case math.IsNaN(v) || math.IsInf(v, 0) || v < 0:
		return nil, fmt.Errorf("not a figure: %q", value)
	}
	return &v, nil
}
