package hostgen

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ZFSAnswer is what zfs prints for a command line, and how it exits.
type ZFSAnswer struct {
	Stdout, Stderr []byte
	Status         int // the exit status: 0, 1 (a dataset zfs cannot open), 2 (a usage error)
	// Snapshots is whether the command walks the snapshots, which makes
	// zfs slow on a host of many: it lists or gets snapshots (-t
	// snapshot, -t all, or zfs get without -t) of every dataset (no
	// dataset named) or recursively (-r, -d but -d 0), as zfs list -t
	// snapshot DATASET does. Naming a snapshot does not walk the others.
	Snapshots bool
}

// AnswerZFS answers a zfs command line as zfs 2.3.2 or 2.4.4 would on the
// host in dir (written by Write with datasets), from the host's files:
//
//	zfs list [-Hp] [-j [--json-int]] [-r|-d max] [-o property[,...]] [-s property]... [-S property]... [-t type[,...]] [dataset|mountpoint]...
//	zfs get [-rHp] [-j [--json-int]] [-d max] [-o field[,...]] [-t type[,...]] [-s source[,...]] all|property[,...] [dataset|mountpoint]...
//
// in every form: scripted (-H) or as a table, exact (-p) or
// human-readable, JSON with or without --json-int. What zfs refuses (an
// unknown property, option, type or column) it refuses as zfs does, on
// stderr, with status 2; a dataset that does not exist is status 1. An
// error means no answer at all: a subcommand other than list and get
// (ErrNoAnswer), or a host without datasets (ErrNoDatasets). A large
// answer is better written as it is made, with ReadZFS.
func AnswerZFS(dir string, args []string) (ZFSAnswer, error) {
	q, err := ReadZFS(dir, args)
	if err != nil {
		return ZFSAnswer{}, err
	}
	var b bytes.Buffer
	stderr, status, err := q.Answer(&b)
	return ZFSAnswer{Stdout: b.Bytes(), Stderr: stderr, Status: status, Snapshots: q.Snapshots()}, err
}

// ZFSQuery is a zfs command line read against a host, to answer.
type ZFSQuery struct {
	a    *zfsRun
	refs []zref
}

// ReadZFS reads a zfs command line as AnswerZFS does, and finds what it
// covers among the host's datasets (and snapshots, where it walks them),
// but prints it only when asked: the stand-in waits in between.
func ReadZFS(dir string, args []string) (*ZFSQuery, error) {
	line := "zfs " + strings.Join(args, " ")
	if len(args) == 0 || args[0] != "list" && args[0] != "get" {
		return nil, fmt.Errorf("%s: %w", line, ErrNoAnswer)
	}
	h, err := loadZFS(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", line, err)
	}
	a := &zfsRun{h: h, get: args[0] == "get"}
	if !a.parse(args[1:]) {
		a.Status = 2
		return &ZFSQuery{a: a}, nil
	}
	// zfs walks the snapshots of every dataset it recurses into, or of
	// all of them.
	a.Snapshots = a.includeSnapshots() && (len(a.operands) == 0 || a.recurse && a.depth != 0)
	if a.Snapshots {
		if err := h.loadSnapshots(); err != nil {
			return nil, fmt.Errorf("%s: %w", line, err)
		}
	}
	return &ZFSQuery{a: a, refs: a.collect()}, nil
}

// Snapshots tells whether the command walks the snapshots (ZFSAnswer's
// Snapshots).
func (q *ZFSQuery) Snapshots() bool { return q.a.Snapshots }

// Status is the exit status the answer will have.
func (q *ZFSQuery) Status() int { return q.a.Status }

// Answer writes what zfs prints on stdout to w, and returns what it
// prints on stderr and its exit status; err is w's.
func (q *ZFSQuery) Answer(w io.Writer) (stderr []byte, status int, err error) {
	a := q.a
	if a.Status == 2 { // refused
		return a.Stderr, a.Status, nil
	}
	out := bufio.NewWriterSize(w, 1<<16)
	refs := q.refs
	switch {
	case a.json && a.Status != 0: // zfs prints no JSON when it failed
	case a.json:
		a.printJSON(out, refs)
	case a.get:
		a.printGet(out, refs)
	default:
		a.printList(out, refs)
	}
	if !a.get && len(refs) == 0 && a.Status == 0 && !a.scripted {
		a.Stderr = append(a.Stderr, "no datasets available\n"...)
	}
	return a.Stderr, a.Status, out.Flush()
}

// zfsOut is where an answer is written.
type zfsOut interface {
	io.Writer
	io.ByteWriter
	io.StringWriter
}

// zfsRun is one command line of zfs list or get: its options, then its
// answer.
type zfsRun struct {
	ZFSAnswer
	h   *zfsHost
	get bool

	scripted, literal, json, jsonInt bool
	recurse                          bool
	depth                            int // -1: no limit
	types                            zfsType
	listsnaps                        bool     // zfs list without -t: snapshots only as the pool's listsnapshots says (off)
	props                            []column // printed, starting with the name for get and -o all
	all                              bool     // "all" properties: those zfs cannot get are left out
	sort                             []sortKey
	getColumns                       []string // of zfs get
	sources                          []string // of zfs get -s; nil for all
	operands                         []string
}

// column is a property asked for: one zfs knows, or a user property
// (with a colon), which the host's datasets do not have.
type column struct {
	p    *zfsProp
	user string
}

func (c column) name() string {
	if c.p == nil {
		return c.user
	}
	return c.p.name
}

type sortKey struct {
	c       column
	reverse bool
}

const (
	usageList = "\tlist [-Hp] [-j [--json-int]] [-r|-d max] [-o property[,...]] [-s property]...\n" +
		"\t    [-S property]... [-t type[,...]] [filesystem|volume|snapshot] ...\n"
	usageGet = "\tget [-rHp] [-j [--json-int]] [-d max] [-o \"all\" | field[,...]]\n" +
		"\t    [-t type[,...]] [-s source[,...]]\n" +
		"\t    <\"all\" | property[,...]> [filesystem|volume|snapshot|bookmark] ...\n"
)

// fail prints a message and zfs's usage, as usage(B_FALSE) does (but for
// the table of properties that follows it there).
func (a *zfsRun) fail(format string, args ...any) bool {
	usage := usageList
	if a.get {
		usage = usageGet
	}
	a.Stderr = fmt.Appendf(a.Stderr, format+"\n", args...)
	a.Stderr = append(a.Stderr, "usage:\n"+usage+"\nThe following properties are supported:\n\n\t(left out by the stand-in)\n"...)
	return false
}

// parse reads the options as getopt_long does, which takes them before,
// between or after the operands until "--".
func (a *zfsRun) parse(args []string) bool {
	a.depth = -1
	fields := "name,used,available,referenced,mountpoint"
	a.types = typeFilesystem | typeVolume | typeSnapshot
	a.listsnaps = !a.get
	typesGiven := false
	if a.get {
		a.getColumns = []string{"name", "property", "value", "source"}
	}
	takes := "Sdost" // options with an argument
	known := "jHSdoprst"
	if a.get {
		known = "djHorpst"
		takes = "dost"
	}
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			rest = append(rest, args[i+1:]...)
			i = len(args)
			continue
		case arg == "--json":
			a.json = true
			continue
		case arg == "--json-int":
			a.jsonInt, a.literal = true, true
			continue
		case strings.HasPrefix(arg, "--"):
			return a.fail("invalid option '%s'", strings.TrimPrefix(arg, "--"))
		case len(arg) < 2 || arg[0] != '-':
			rest = append(rest, arg)
			continue
		}
		for j := 1; j < len(arg); j++ {
			c := arg[j]
			if !strings.ContainsRune(known, rune(c)) {
				return a.fail("invalid option '%c'", c)
			}
			var value string
			if strings.ContainsRune(takes, rune(c)) {
				if j+1 < len(arg) {
					value = arg[j+1:]
				} else if i+1 < len(args) {
					i++
					value = args[i]
				} else {
					return a.fail("missing argument for '%c' option", c)
				}
				j = len(arg)
			}
			if !a.option(c, value, &fields, &typesGiven) {
				return false
			}
		}
	}
	if a.jsonInt && !a.json {
		return a.fail("'--json-int' only works with '-j' option")
	}
	if a.get {
		if len(rest) == 0 {
			return a.fail("missing property argument")
		}
		fields, rest = rest[0], rest[1:]
	} else if fields == "space" && !typesGiven {
		a.types &^= typeSnapshot
	}
	a.operands = rest
	// zfs list -t snapshot DATASET lists the dataset's snapshots.
	if (a.types == typeSnapshot) && len(rest) > 0 && !a.recurse && a.depth < 0 {
		a.recurse, a.depth = true, 1
	}
	return a.propertyList(fields)
}

// option takes one option of list or get.
func (a *zfsRun) option(c byte, value string, fields *string, typesGiven *bool) bool {
	switch c {
	case 'H':
		a.scripted = true
	case 'p':
		a.literal = true
	case 'j':
		a.json = true
	case 'r':
		a.recurse = true
	case 'd':
		n, err := strconv.ParseInt(value, 0, 32)
		if err != nil {
			return a.fail("%s is not an integer", value)
		}
		if n < 0 {
			return a.fail("Depth can not be negative.")
		}
		a.recurse, a.depth = true, int(n)
	case 'o':
		if !a.get {
			*fields = value
			break
		}
		a.getColumns = nil
		for tok := range strings.SplitSeq(value, ",") {
			switch {
			case tok == "all" && len(a.getColumns) > 0:
				return a.fail("\"all\" conflicts with specific fields given to -o option")
			case tok == "all":
				a.getColumns = []string{"name", "property", "value", "received", "source"}
			case len(a.getColumns) == 5:
				return a.fail("too many fields given to -o option")
			case slices.Contains([]string{"name", "property", "value", "received", "source"}, tok):
				a.getColumns = append(a.getColumns, tok)
			default:
				return a.fail("invalid column name '%s'", tok)
			}
		}
	case 's', 'S':
		if a.get { // the sources to print
			a.sources = []string{}
			for tok := range strings.SplitSeq(value, ",") {
				if !slices.Contains([]string{"local", "default", "inherited", "received", "temporary", "none"}, tok) {
					return a.fail("invalid source '%s'", tok)
				}
				a.sources = append(a.sources, tok)
			}
			break
		}
		col, ok := a.resolve(value)
		if !ok {
			return a.fail("invalid property '%s'", value)
		}
		a.sort = append(a.sort, sortKey{col, c == 'S'})
	case 't':
		a.types, *typesGiven, a.listsnaps = 0, true, false
		for tok := range strings.SplitSeq(value, ",") {
			switch tok {
			case "filesystem", "fs":
				a.types |= typeFilesystem
			case "volume", "vol":
				a.types |= typeVolume
			case "snapshot", "snap":
				a.types |= typeSnapshot
			case "bookmark": // the host has none
			case "all":
				a.types |= typeFilesystem | typeVolume | typeSnapshot
			default:
				return a.fail("invalid type '%s'", tok)
			}
		}
	}
	return true
}

// resolve finds a property by its name, as zfs_name_to_prop does, or takes
// it for a user property.
func (a *zfsRun) resolve(name string) (column, bool) {
	if p := lookupProp(name, a.h.version); p != nil {
		return column{p: p}, true
	}
	userish := strings.Contains(name, ":")
	for _, prefix := range []string{"written@", "written#", "userused@", "userquota@", "groupused@", "groupquota@",
		"userobjused@", "userobjquota@", "groupobjused@", "groupobjquota@", "projectused@", "projectquota@",
		"projectobjused@", "projectobjquota@"} {
		userish = userish || strings.HasPrefix(name, prefix) && len(name) > len(prefix)
	}
	return column{user: name}, userish
}

// propertyList reads the properties asked for, as zprop_get_list does:
// "all" for every visible one (after the name), "space" for the space
// accounting ones.
func (a *zfsRun) propertyList(fields string) bool {
	nameCol := column{p: lookupProp("name", a.h.version)}
	if fields == "all" {
		a.all = true
		a.props = []column{nameCol}
		for _, p := range zfsProps {
			if p.visible && p.in(a.h.version) {
				a.props = append(a.props, column{p: p})
			}
		}
		return true
	}
	if fields == "" {
		return a.fail("bad property list: no properties specified")
	}
	if a.get { // the name that heads the list, which zfs get does not print
		a.props = []column{nameCol}
	}
	for tok := range strings.SplitSeq(fields, ",") {
		names := []string{tok}
		if tok == "space" {
			names = []string{"name", "avail", "used", "usedbysnapshots", "usedbydataset", "usedbyrefreservation", "usedbychildren"}
		}
		for _, n := range names {
			c, ok := a.resolve(n)
			if !ok {
				return a.fail("bad property list: invalid property '%s'", n)
			}
			a.props = append(a.props, c)
		}
	}
	return true
}

// includeSnapshots tells whether the command walks the datasets'
// snapshots (zfs_include_snapshots): when its types include them, but for
// zfs list without -t, which follows the pools' listsnapshots (off).
func (a *zfsRun) includeSnapshots() bool {
	return a.types&typeSnapshot != 0 && !a.listsnaps
}

// collect finds the datasets and snapshots the command covers, in zfs's
// order: as sorted, else by name with each dataset's snapshots after it,
// oldest first. Those it cannot open are reported on stderr.
func (a *zfsRun) collect() []zref {
	h := a.h
	snaps := a.includeSnapshots()
	var refs []zref
	// add adds a dataset at a depth of the recursion, and its snapshots
	// one deeper.
	add := func(ds int32, depth int) {
		if a.depth >= 0 && depth > a.depth {
			return
		}
		if a.types&h.dsType(ds) != 0 {
			refs = append(refs, zref{ds, -1})
		}
		if snaps && (a.depth < 0 || depth < a.depth) {
			for s := h.snapStart[ds]; s < h.snapStart[ds]+h.snapCount[ds]; s++ {
				refs = append(refs, zref{ds, s})
			}
		}
	}
	if len(a.operands) == 0 { // every pool, recursively
		for i := range int32(len(h.ds.rows)) {
			add(i, strings.Count(h.ds.rows[i][0], "/"))
		}
	}
	for _, op := range a.operands {
		r, ok := a.open(op)
		if !ok {
			continue
		}
		if r.isSnapshot() || !a.recurse || a.depth == 0 {
			if a.types&h.typeOf(r) != 0 || r.isSnapshot() && snaps {
				refs = append(refs, r)
			}
			continue
		}
		name := h.ds.rows[r.ds][0]
		base := strings.Count(name, "/")
		for i := range int32(len(h.ds.rows)) {
			if n := h.ds.rows[i][0]; i == r.ds || strings.HasPrefix(n, name+"/") {
				add(i, strings.Count(n, "/")-base)
			}
		}
	}
	if len(a.operands) > 0 {
		slices.SortFunc(refs, func(x, y zref) int { return cmp.Or(cmp.Compare(x.ds, y.ds), cmp.Compare(x.snap, y.snap)) })
		refs = slices.Compact(refs)
	}
	if len(a.sort) > 0 {
		slices.SortStableFunc(refs, a.compare)
	}
	return refs
}

// open finds a dataset or snapshot named on the command line, or a
// filesystem by its mountpoint, as zfs_path_to_zhandle does.
func (a *zfsRun) open(name string) (zref, bool) {
	h := a.h
	fail := func(why string) (zref, bool) {
		a.Stderr = fmt.Appendf(a.Stderr, "cannot open '%s': %s\n", name, why)
		a.Status = 1
		return zref{}, false
	}
	var r zref
	if strings.HasPrefix(name, "/") {
		col, ok := h.ds.column["mountpoint"]
		found := false
		for i, row := range h.ds.rows {
			if ok && row[col] == name {
				r, found = zref{int32(i), -1}, true
				break
			}
		}
		if !found {
			return fail("No such file or directory")
		}
	} else {
		dsName, snap, isSnap := strings.Cut(name, "@")
		ds, ok := h.byName[dsName]
		if !ok {
			return fail("dataset does not exist")
		}
		r = zref{ds, -1}
		if isSnap {
			if h.loadSnapshots() != nil {
				return fail("dataset does not exist")
			}
			r.snap = -1
			for s := h.snapStart[ds]; s < h.snapStart[ds]+h.snapCount[ds]; s++ {
				if h.snaps.rows[s][0][1:] == snap {
					r.snap = s
				}
			}
			if r.snap < 0 {
				return fail("dataset does not exist")
			}
		}
	}
	argtype := a.types
	if a.recurse {
		argtype |= typeFilesystem
		if a.types&typeSnapshot != 0 {
			argtype |= typeVolume
		}
	}
	if argtype&h.typeOf(r) == 0 {
		return fail("operation not applicable to datasets of this type")
	}
	return r, true
}

// compare orders by the sort columns as zfs_sort does: numbers as
// numbers, strings byte for byte, where a property does not apply last
// whichever the direction.
func (a *zfsRun) compare(x, y zref) int {
	for _, k := range a.sort {
		xv, xok := a.sortValue(x, k.c)
		yv, yok := a.sortValue(y, k.c)
		switch {
		case !xok && !yok:
			continue
		case !xok:
			return 1
		case !yok:
			return -1
		}
		var c int
		if xs, ok := xv.(string); ok {
			c = strings.Compare(xs, yv.(string))
		} else {
			c = cmp.Compare(xv.(uint64), yv.(uint64))
		}
		if k.reverse {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

func (a *zfsRun) sortValue(r zref, c column) (any, bool) {
	if c.p == nil {
		return nil, false
	}
	v, _, state := a.h.lookup(r, c.p)
	if c.p.name == "name" || !c.p.numeric() {
		return v, state == propValue
	}
	if state == propNotType {
		return nil, false
	}
	switch {
	case v == "none":
		return uint64(1<<64 - 1), true
	case c.p.kind == kindRatio:
		whole, frac, _ := strings.Cut(v, ".")
		n, _ := strconv.ParseUint(whole+frac, 10, 64)
		return n, true
	}
	n, _ := strconv.ParseUint(v, 10, 64)
	return n, true
}

// value is a property of r as zfs prints it, with its source.
func (a *zfsRun) value(r zref, c column, literal bool) (value, source string, state propState) {
	if c.p == nil {
		return "-", "-", propNone
	}
	v, src, state := a.h.lookup(r, c.p)
	if state != propValue {
		return "-", "-", state
	}
	return c.p.format(v, literal), src, state
}

// printList prints zfs list's rows: scripted, or as a table under its
// header.
func (a *zfsRun) printList(b zfsOut, refs []zref) {
	if a.scripted {
		for _, r := range refs {
			for i, c := range a.props {
				if i > 0 {
					b.WriteByte('\t')
				}
				v, _, _ := a.value(r, c, a.literal)
				b.WriteString(v)
			}
			b.WriteByte('\n')
		}
		return
	}
	if len(refs) == 0 {
		return
	}
	widths := make([]int, len(a.props))
	cells := make([][]string, len(refs))
	for i, c := range a.props {
		fixed := false
		if c.p != nil {
			widths[i], fixed = c.p.minWidth()
		} else {
			widths[i] = len(c.user)
		}
		for j, r := range refs {
			if cells[j] == nil {
				cells[j] = make([]string, len(a.props))
			}
			v, _, state := a.value(r, c, a.literal)
			cells[j][i] = v
			if state == propValue && (!fixed || a.literal) {
				widths[i] = max(widths[i], len(v))
			}
		}
	}
	row := func(values []string) {
		for i, c := range a.props {
			if i > 0 {
				b.WriteString("  ")
			}
			right := c.p != nil && c.p.rightAligned()
			pad := strings.Repeat(" ", max(0, widths[i]-len(values[i])))
			switch {
			case i == len(a.props)-1 && !right:
				b.WriteString(values[i])
			case right:
				b.WriteString(pad + values[i])
			default:
				b.WriteString(values[i] + pad)
			}
		}
		b.WriteByte('\n')
	}
	header := make([]string, len(a.props))
	for i, c := range a.props {
		if c.p != nil {
			header[i] = c.p.column
		} else {
			header[i] = strings.ToUpper(c.user)
		}
	}
	row(header)
	for _, cells := range cells {
		row(cells)
	}
}

// sourceClass is the kind of a source as zfs get -s names it.
func sourceClass(source string) string {
	switch {
	case source == "-":
		return "none"
	case strings.HasPrefix(source, "inherited from "):
		return "inherited"
	}
	return source
}

// printGet prints zfs get's rows, a property a line: scripted, or as a
// table under its header.
func (a *zfsRun) printGet(b zfsOut, refs []zref) {
	type line struct{ name, property, value, source string }
	var lines []line
	emit := func(l line, widths map[string]int) {
		for i, col := range a.getColumns {
			var s string
			switch col {
			case "name":
				s = l.name
			case "property":
				s = l.property
			case "value":
				s = l.value
			case "received":
				s = "-"
			case "source":
				s = l.source
			}
			switch {
			case i == len(a.getColumns)-1:
				b.WriteString(s)
			case a.scripted:
				b.WriteString(s)
				b.WriteByte('\t')
			default:
				b.WriteString(s)
				b.WriteString(strings.Repeat(" ", max(0, widths[col]-len(s))+2))
			}
		}
		b.WriteByte('\n')
	}
	each := func(fn func(line)) {
		for _, r := range refs {
			name := a.h.name(r)
			for _, c := range a.props[1:] {
				v, src, state := a.value(r, c, a.literal)
				if state != propValue && a.all {
					continue
				}
				if a.sources != nil && !slices.Contains(a.sources, sourceClass(src)) {
					continue
				}
				fn(line{name, c.name(), v, src})
			}
		}
	}
	if a.scripted {
		each(func(l line) { emit(l, nil) })
		return
	}
	each(func(l line) { lines = append(lines, l) })
	if len(lines) == 0 {
		return
	}
	// The widths of zprop_print_headers: the columns' titles, the longest
	// property name, the widest of the properties' columns as zfs list
	// sizes them (without -p: zfs get does not tell it), the longest
	// name, and for the source the longest name inherited from.
	widths := map[string]int{"name": 4, "property": 8, "value": 5, "received": 8, "source": 6}
	nameWidth := 4
	for _, r := range refs {
		nameWidth = max(nameWidth, len(a.h.name(r)))
	}
	for i, c := range a.props {
		widths["property"] = max(widths["property"], len(c.name()))
		if i == 0 {
			continue
		}
		w, fixed := len(c.user), false
		if c.p != nil {
			w, fixed = c.p.minWidth()
		}
		if !fixed {
			for _, r := range refs {
				if v, _, state := a.value(r, c, false); state == propValue {
					w = max(w, len(v))
				}
			}
		}
		widths["value"] = max(widths["value"], w)
	}
	if nameWidth > 4 {
		widths["name"], widths["source"] = nameWidth, nameWidth+len("inherited from")
	}
	for i, col := range a.getColumns {
		title := map[string]string{"name": "NAME", "property": "PROPERTY", "value": "VALUE", "received": "RECEIVED", "source": "SOURCE"}[col]
		if i == len(a.getColumns)-1 {
			b.WriteString(title)
		} else {
			b.WriteString(title + strings.Repeat(" ", max(0, widths[col]-len(title))+2))
		}
	}
	b.WriteByte('\n')
	for _, l := range lines {
		emit(l, widths)
	}
}

// printJSON prints zfs list -j or zfs get -j: an object of the datasets,
// each with its properties, their values (numbers with --json-int) and
// sources. zfs list gives a property that does not apply to the dataset
// the source of the property before it (collect_dataset does not reset
// it); zfs get gives it none.
func (a *zfsRun) printJSON(b zfsOut, refs []zref) {
	var props bytes.Buffer
	command := "zfs list"
	if a.get {
		command = "zfs get"
	}
	b.WriteString(`{"output_version":{"command":"` + command + `","vers_major":0,"vers_minor":1},"datasets":{`)
	first := true
	createtxg := lookupProp("createtxg", a.h.version)
	for _, r := range refs {
		name := a.h.name(r)
		props.Reset()
		source, n := "-", 0
		for i, c := range a.props {
			// zfs list leaves the name out; zfs get the name heading its
			// list, but not one asked for.
			if a.get && i == 0 || !a.get && c.p != nil && c.p.name == "name" {
				continue
			}
			v, src, state := a.value(r, c, a.literal)
			switch {
			case a.get && state != propValue && a.all:
				continue
			case a.get:
				source = src
			case state == propNotType, c.p == nil:
				// keeps the source before
			default:
				source = src
			}
			if a.get && a.sources != nil && !slices.Contains(a.sources, sourceClass(source)) {
				continue
			}
			if n > 0 {
				props.WriteByte(',')
			}
			n++
			jsonString(&props, c.name())
			props.WriteString(`:{"value":`)
			if a.jsonInt && v != "" && strings.Trim(v, "0123456789") == "" {
				props.WriteString(v)
			} else {
				jsonString(&props, v)
			}
			props.WriteString(`,"source":`)
			jsonSource(&props, source)
			props.WriteByte('}')
		}
		if a.get && n == 0 {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		jsonString(b, name)
		b.WriteString(`:{"name":`)
		jsonString(b, name)
		b.WriteString(`,"type":"` + typeNames[a.h.typeOf(r)][1] + `","pool":`)
		jsonString(b, a.h.pool(r))
		b.WriteString(`,"createtxg":`)
		txg, _, _ := a.h.lookup(r, createtxg)
		if a.jsonInt {
			b.WriteString(txg)
		} else {
			jsonString(b, txg)
		}
		if r.isSnapshot() {
			ds, snap, _ := strings.Cut(name, "@")
			b.WriteString(`,"dataset":`)
			jsonString(b, ds)
			b.WriteString(`,"snapshot_name":`)
			jsonString(b, snap)
		}
		b.WriteString(`,"properties":{`)
		b.Write(props.Bytes())
		b.WriteString("}}")
	}
	b.WriteString("}}\n")
}

// jsonSource writes a source as zprop_nvlist_one_property does.
func jsonSource(b zfsOut, source string) {
	typ, data := strings.ToUpper(source), "-"
	switch {
	case source == "-":
		typ = "NONE"
	case strings.HasPrefix(source, "inherited from "):
		typ, data = "INHERITED", strings.TrimPrefix(source, "inherited from ")
	}
	b.WriteString(`{"type":"` + typ + `","data":`)
	jsonString(b, data)
	b.WriteByte('}')
}

// jsonString writes a string as nvlist_print_json does.
func jsonString(b zfsOut, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
