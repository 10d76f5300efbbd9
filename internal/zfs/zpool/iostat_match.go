package zpool

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// iostatClassOrder is the order in which zpool iostat -v prints the class
// sections after the normal vdevs (older zpool knows only logs and cache,
// in the same order). Spares are never printed.
var iostatClassOrder = []string{ClassDedup, ClassSpecial, ClassLog, ClassCache}

// expectedRow is a vdev as zpool iostat -v would print it.
type expectedRow struct {
	vdev  *Vdev
	depth int
	class string // of its top-level vdev, as iostat sections go
	pool  string // the pool's name, for its root: the pool row carries it
	// optional vdevs may be absent from iostat: indirect vdevs of removed
	// devices, which some versions skip.
	optional bool
}

// iostatSection is one class section of a pool, in print order. The
// normal section starts with the pool row.
type iostatSection struct {
	class string
	rows  []expectedRow
}

// MatchIostat pairs the rows of one pool in an iostat report with the
// vdevs of the same pool in `zpool status`, by tree position within each
// class section and never by name: old zpool prints a bare "mirror" for
// every mirror and "spare" for status's "spare-2". Names still serve as a
// check: interior vdevs must be of the same type, leaves must have the
// same name (or path), and any difference in shape, such as a vdev added
// between the two commands, is an error rather than a wrong pairing.
//
// The pool row is paired with pool.Root. Hot spares are absent from
// iostat and stay unpaired. rows may be text rows (Depth >= 0) or -H rows,
// which are returned with Pool and Depth filled in. Returned rows carry
// the class of their vdev in status, also where iostat printed no section
// (-H, or old zpool listing log devices among the others).
func MatchIostat(pool *Pool, rows []IostatRow) (map[*Vdev]IostatRow, error) {
	m := make(map[*Vdev]IostatRow)
	if pool != nil {
		keep := unlisted(&Status{Pools: []*Pool{pool}})
		rows = filterRows(rows, func(r IostatRow) bool { return keep(r.Name) })
	}
	if err := matchPool(pool, rows, m); err != nil {
		return nil, err
	}
	return m, nil
}

// MatchIostatReport pairs every row of an iostat report with the pools of
// a status. Text rows are grouped by their Pool; -H rows, whose pool is
// unknown past the first, are split by walking each pool's tree in turn,
// and come back with Pool and Depth filled in. A pool of the report
// that status lacks is an error; pools of status that the report lacks
// are left out.
func MatchIostatReport(st *Status, rows []IostatRow) (map[*Vdev]IostatRow, error) {
	lookup, err := poolLookup(st)
	if err != nil {
		return nil, err
	}
	keep := unlisted(st)
	rows = filterRows(rows, func(r IostatRow) bool { return keep(r.Name) })
	m := make(map[*Vdev]IostatRow)
	if !isScripted(rows) {
		for len(rows) > 0 {
			n := 1
			for n < len(rows) && rows[n].Pool == rows[0].Pool {
				n++
			}
			p, err := lookup(rows[0].Pool)
			if err != nil {
				return nil, err
			}
			if err := matchPool(p, rows[:n], m); err != nil {
				return nil, err
			}
			rows = rows[n:]
		}
		return m, nil
	}
	for len(rows) > 0 {
		p, err := lookup(rows[0].Name)
		if err != nil {
			return nil, err
		}
		n, err := matchScripted(p, rows, m, true)
		if err != nil {
			return nil, err
		}
		rows = rows[n:]
	}
	return m, nil
}

// MatchIostatTables pairs the tables of `zpool iostat -vH -w` or `-r`,
// named in print order, with the vdevs of a status, and returns the index
// of each vdev's table. It walks the pools' trees as MatchIostatReport
// does with -H rows, but by the tree alone: these outputs print an empty
// line before every table, so none marks where a class section begins.
func MatchIostatTables(st *Status, names []string) (map[*Vdev]int, error) {
	lookup, err := poolLookup(st)
	if err != nil {
		return nil, err
	}
	// The tables of indirect vdevs are left out: table i of rows is
	// table tables[i] of the output.
	keep := unlisted(st)
	var rows []IostatRow
	var tables []int
	for i, name := range names {
		if keep(name) {
			rows = append(rows, IostatRow{Name: name, Depth: -1})
			tables = append(tables, i)
		}
	}
	m := make(map[*Vdev]IostatRow)
	index := make(map[*Vdev]int, len(rows))
	for next := 0; next < len(rows); {
		p, err := lookup(rows[next].Name)
		if err != nil {
			return nil, err
		}
		n, err := matchScripted(p, rows[next:], m, false)
		if err != nil {
			return nil, err
		}
		// The rows were taken in the order of the pool's expected rows:
		// each vdev matched has the next one.
		start := next
		for _, sec := range expectedIostat(p) {
			for _, e := range sec.rows {
				if _, ok := m[e.vdev]; ok {
					index[e.vdev] = tables[next]
					next++
				}
			}
		}
		if next-start != n || n == 0 {
			return nil, fmt.Errorf("pool %s: %d tables matched to %d vdevs", p.Name, n, next-start)
		}
	}
	return index, nil
}

// indirectName is the name of the indirect vdev a removed device leaves
// ("indirect-1"): zpool iostat lists it among its pool's vdevs, idle,
// where zpool status shows nothing.
var indirectName = regexp.MustCompile(`^indirect-[0-9]+$`)

// unlisted returns a test that keeps the iostat rows to match with st: all
// but those of indirect vdevs that st does not show.
func unlisted(st *Status) func(name string) bool {
	shown := map[string]bool{}
	if st != nil {
		for _, p := range st.Pools {
			shown[p.Name] = true
			if p.Root != nil {
				p.Root.Walk(func(v *Vdev, _ string) { shown[v.Name], shown[v.PrintedName()] = true, true })
			}
		}
	}
	return func(name string) bool { return shown[name] || !indirectName.MatchString(name) }
}

func filterRows(rows []IostatRow, keep func(IostatRow) bool) []IostatRow {
	out := rows[:0:0]
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// poolLookup returns the pools of st by name, each to be found once: a
// report shows a pool once.
func poolLookup(st *Status) (func(name string) (*Pool, error), error) {
	if st == nil {
		return nil, fmt.Errorf("no status to match iostat rows against")
	}
	pools := make(map[string]*Pool, len(st.Pools))
	for _, p := range st.Pools {
		pools[p.Name] = p
	}
	matched := make(map[string]bool)
	return func(name string) (*Pool, error) {
		p := pools[name]
		switch {
		case matched[name]:
			return nil, fmt.Errorf("iostat shows pool %q twice in one report", name)
		case p == nil:
			return nil, fmt.Errorf("iostat shows pool %q, which status does not", name)
		case p.Root == nil:
			return nil, fmt.Errorf("pool %s: no status tree to match iostat rows against", name)
		}
		matched[name] = true
		return p, nil
	}, nil
}

func isScripted(rows []IostatRow) bool {
	for _, r := range rows {
		if r.Depth < 0 {
			return true
		}
	}
	return false
}

func matchPool(pool *Pool, rows []IostatRow, m map[*Vdev]IostatRow) error {
	if pool == nil || pool.Root == nil {
		return fmt.Errorf("no status tree to match iostat rows against")
	}
	if isScripted(rows) {
		n, err := matchScripted(pool, rows, m, true)
		if err == nil && n < len(rows) {
			err = fmt.Errorf("pool %s: iostat row %d %q is not in status", pool.Name, n+1, rows[n].Name)
		}
		return err
	}
	return matchText(pool, rows, m)
}

// matchText matches rows whose class and depth were printed.
func matchText(pool *Pool, rows []IostatRow, m map[*Vdev]IostatRow) error {
	if len(rows) == 0 || rows[0].Depth != 0 || rows[0].Name != pool.Name {
		return fmt.Errorf("pool %s: iostat rows do not start with the pool row", pool.Name)
	}
	byClass := make(map[string][]IostatRow)
	for _, r := range rows {
		byClass[r.Class] = append(byClass[r.Class], r)
	}
	sections := expectedIostat(pool)
	if len(byClass[ClassLog]) == 0 {
		sections = mergeLogs(sections) // old zpool listed logs among the vdevs
	}
	for _, sec := range sections {
		if err := matchSection(pool.Name, sec, byClass[sec.class], m); err != nil {
			return err
		}
		delete(byClass, sec.class)
	}
	for class, rest := range byClass {
		return fmt.Errorf("pool %s: iostat shows %q in a %s section, which status does not have",
			pool.Name, rest[0].Name, class)
	}
	return nil
}

// matchScripted matches -H rows from the start of rows and returns how
// many belong to pool: its normal rows, then one section per class. In
// sectioned output, each section is begun by an empty line (Break);
// otherwise sections are told by the vdevs that fit them.
func matchScripted(pool *Pool, rows []IostatRow, m map[*Vdev]IostatRow, sectioned bool) (int, error) {
	sections := expectedIostat(pool)
	consumed := 0
	for i, sec := range sections {
		if sectioned && i > 0 && (consumed >= len(rows) || !rows[consumed].Break) {
			return 0, fmt.Errorf("pool %s: iostat has no %s section where status has %q",
				pool.Name, sec.class, sec.rows[0].vdev.Name)
		}
		n := sectionLen(sec, rows[consumed:], sectioned)
		if err := matchSection(pool.Name, sec, rows[consumed:consumed+n], m); err != nil {
			return 0, err
		}
		consumed += n
	}
	if sectioned && consumed < len(rows) && rows[consumed].Break {
		return 0, fmt.Errorf("pool %s: iostat has a section starting at %q that status does not have",
			pool.Name, rows[consumed].Name)
	}
	return consumed, nil
}

// sectionLen is how many of rows a -H section spans: up to the next empty
// line where those mark sections, and no more than the section's vdevs
// (the next pool follows without one); otherwise as far as they fit.
func sectionLen(sec iostatSection, rows []IostatRow, sectioned bool) int {
	n := 0
	if !sectioned {
		for _, e := range sec.rows {
			if n < len(rows) && fits(e, rows[n]) {
				n++
			} else if !e.optional {
				break
			}
		}
		return n
	}
	for n < len(rows) && n < len(sec.rows) && (n == 0 || !rows[n].Break) {
		n++
	}
	return n
}

func matchSection(pool string, sec iostatSection, rows []IostatRow, m map[*Vdev]IostatRow) error {
	i := 0
	for _, e := range sec.rows {
		if i < len(rows) && fits(e, rows[i]) {
			row := rows[i]
			if row.Depth < 0 {
				row.Pool, row.Depth = pool, e.depth
			}
			row.Class = e.class
			m[e.vdev] = row
			i++
			continue
		}
		if e.optional {
			continue
		}
		if i >= len(rows) {
			return fmt.Errorf("pool %s: status has %s vdev %q (depth %d) that iostat does not show",
				pool, sec.class, e.vdev.Name, e.depth)
		}
		return fmt.Errorf("pool %s: iostat row %q%s does not match status vdev %q (depth %d) in the %s section",
			pool, rows[i].Name, depthNote(rows[i]), e.vdev.Name, e.depth, sec.class)
	}
	if i < len(rows) {
		return fmt.Errorf("pool %s: iostat row %q%s in the %s section is not in status",
			pool, rows[i].Name, depthNote(rows[i]), sec.class)
	}
	return nil
}

func depthNote(r IostatRow) string {
	if r.Depth < 0 {
		return ""
	}
	return fmt.Sprintf(" (depth %d)", r.Depth)
}

// fits tells whether row can be the iostat line of e.
func fits(e expectedRow, row IostatRow) bool {
	if row.Depth >= 0 && row.Depth != e.depth {
		return false
	}
	v := e.vdev
	switch {
	case e.depth == 0:
		return row.Name == e.pool
	case len(v.Children) > 0:
		kind := vdevKind(row.Name)
		return kind == vdevKind(v.PrintedName()) || kind == vdevKind(v.Type)
	}
	return sameLeaf(row.Name, v)
}

// vdevKind reduces an interior vdev name to its type without parity or
// index: "raidz1-0", "raidz1" and "raidz" give "raidz";
// "draid1:4d:11c:1s-0" gives "draid".
func vdevKind(name string) string {
	name, _, _ = strings.Cut(name, ":")
	if i := strings.LastIndexByte(name, '-'); i > 0 && isDigits(name[i+1:]) {
		name = name[:i]
	}
	return strings.TrimRight(name, "0123456789")
}

// isDigits tells whether s is one or more decimal digits.
func isDigits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// sameLeaf compares a leaf as iostat names it with status: the same
// name, or the same device when one of the commands printed full paths
// (-P).
func sameLeaf(name string, v *Vdev) bool {
	if name == v.PrintedName() || name == v.Path || (v.GUID != "" && name == v.GUID) {
		return true
	}
	base := path.Base(name)
	return base == path.Base(v.PrintedName()) || (v.Path != "" && base == path.Base(v.Path))
}

// expectedIostat lists the sections of pool as zpool iostat -v prints
// them: the pool and its normal vdevs, then dedup, special, logs, cache.
func expectedIostat(pool *Pool) []iostatSection {
	byClass := make(map[string][]expectedRow)
	for _, top := range pool.Root.Children {
		class := iostatClass(top.Class)
		if class == ClassSpare {
			continue
		}
		byClass[class] = appendSubtree(byClass[class], top, 1, class)
	}
	root := expectedRow{vdev: pool.Root, depth: 0, class: ClassNormal, pool: pool.Name}
	sections := []iostatSection{{class: ClassNormal, rows: append([]expectedRow{root}, byClass[ClassNormal]...)}}
	for _, class := range iostatClassOrder {
		if len(byClass[class]) > 0 {
			sections = append(sections, iostatSection{class: class, rows: byClass[class]})
		}
	}
	return sections
}

func appendSubtree(rows []expectedRow, v *Vdev, depth int, class string) []expectedRow {
	if v.Type == "hole" {
		return rows
	}
	rows = append(rows, expectedRow{vdev: v, depth: depth, class: class, optional: v.Type == "indirect"})
	for _, c := range v.Children {
		rows = appendSubtree(rows, c, depth+1, class)
	}
	return rows
}

// iostatClass maps status classes to the sections of iostat ("" and
// unknown classes are normal; JSON says "l2cache" for cache devices).
func iostatClass(class string) string {
	switch class {
	case ClassLog, ClassCache, ClassSpare, ClassSpecial, ClassDedup:
		return class
	case "logs":
		return ClassLog
	case "l2cache":
		return ClassCache
	case "spares":
		return ClassSpare
	}
	return ClassNormal
}

// mergeLogs appends the log section to the normal one, for outputs that
// print log devices among the others without a "logs" header.
func mergeLogs(sections []iostatSection) []iostatSection {
	for i, sec := range sections {
		if sec.class == ClassLog && i > 0 {
			sections[0].rows = append(sections[0].rows, sec.rows...)
			return append(sections[:i:i], sections[i+1:]...)
		}
	}
	return sections
}
