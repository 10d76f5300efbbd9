package zpool

import "fmt"

// MatchList pairs the rows of `zpool list -v` with the vdevs of a status
// read in the same scrape, by tree position within each section as
// MatchIostat pairs iostat's, and never by name alone: zpool before 2.1.3
// lists every mirror as a bare "mirror", and status may repeat a name
// (spare-0 under two dRAID vdevs). It returns the row of each vdev paired,
// with Depth and Class as status has them, and what it left out.
//
// The two commands do not run at the same instant. The rows of a pool
// that status lacks, of a section (logs, cache...) that status lacks, and
// of a section from the first row that does not fit the tree on (a disk
// attached, a spare taken in between) are left out, with a warning each;
// the rows before them, and the other sections and pools, are still
// paired. Vdevs that list does not show stay unpaired, without a warning.
// The indirect vdevs that removed devices leave, which list shows from
// 2.1.3 on and status may not, are skipped.
func MatchList(st *Status, rows []ListRow) (map[*Vdev]ListRow, []string) {
	m := make(map[*Vdev]ListRow)
	var warnings []string
	if st == nil {
		return m, []string{"no status to pair zpool list rows with"}
	}
	pools := make(map[string]*Pool, len(st.Pools))
	for _, p := range st.Pools {
		pools[p.Name] = p
	}
	keep := unlisted(st)
	seen := map[string]bool{}
	for len(rows) > 0 {
		n := 1 // up to the next pool's row
		for n < len(rows) && rows[n].Depth != 0 {
			n++
		}
		name, poolRows := rows[0].Pool, rows[:n]
		rows = rows[n:]
		p := pools[name]
		switch {
		case seen[name]:
			warnings = append(warnings, fmt.Sprintf("zpool list shows pool %q twice; its second rows are left out", name))
			continue
		case p == nil || p.Root == nil:
			warnings = append(warnings, fmt.Sprintf("zpool list shows pool %q, which zpool status does not; its rows are left out", name))
			continue
		}
		seen[name] = true
		var kept []ListRow
		for _, r := range poolRows {
			if keep(r.Name) {
				kept = append(kept, r)
			}
		}
		warnings = append(warnings, matchListPool(p, kept, m)...)
	}
	return m, warnings
}

// matchListPool pairs one pool's rows, section by section.
func matchListPool(p *Pool, rows []ListRow, m map[*Vdev]ListRow) []string {
	byClass := map[string][]ListRow{}
	var order []string
	for _, r := range rows {
		if _, ok := byClass[r.Class]; !ok {
			order = append(order, r.Class)
		}
		byClass[r.Class] = append(byClass[r.Class], r)
	}
	sections := expectedList(p)
	if len(byClass[ClassLog]) == 0 {
		sections = mergeLogs(sections) // ZoL 0.6 listed log devices among the others
	}
	var warnings []string
	for _, sec := range sections {
		warnings = append(warnings, matchListSection(p.Name, sec, byClass[sec.class], m)...)
		delete(byClass, sec.class)
	}
	for _, class := range order {
		if rest, ok := byClass[class]; ok {
			warnings = append(warnings, fmt.Sprintf("pool %s: zpool list shows a %s section (%q first), which zpool status does not; left out",
				p.Name, class, rest[0].Name))
		}
	}
	return warnings
}

// matchListSection pairs a section's rows with its vdevs in order, as long
// as each row fits its vdev.
func matchListSection(pool string, sec iostatSection, rows []ListRow, m map[*Vdev]ListRow) []string {
	i := 0
	for _, e := range sec.rows {
		if i < len(rows) && fits(e, IostatRow{Name: rows[i].Name, Depth: rows[i].Depth}) {
			row := rows[i]
			row.Depth, row.Class = e.depth, e.class
			m[e.vdev] = row
			i++
			continue
		}
		if e.optional {
			continue
		}
		if i < len(rows) {
			return []string{fmt.Sprintf("pool %s: zpool list row %q%s does not fit zpool status's %s vdev %q (depth %d): it and the %d rows after it in the %s section are left out",
				pool, rows[i].Name, listDepthNote(rows[i]), sec.class, e.vdev.Name, e.depth, len(rows)-i-1, sec.class)}
		}
		// Vdevs that list does not show (added since, or spares, which
		// ZoL 0.6 does not list) are left without a row: no row is lost.
		return nil
	}
	if i < len(rows) {
		return []string{fmt.Sprintf("pool %s: zpool list row %q%s and the %d rows after it in the %s section are not in zpool status; left out",
			pool, rows[i].Name, listDepthNote(rows[i]), len(rows)-i-1, sec.class)}
	}
	return nil
}

func listDepthNote(r ListRow) string {
	if r.Depth < 0 {
		return ""
	}
	return fmt.Sprintf(" (depth %d)", r.Depth)
}

// expectedList lists the sections of a pool as zpool list -v prints them:
// those of zpool iostat -v (the pool and its normal vdevs, then dedup,
// special, logs, cache), then the hot spares.
func expectedList(p *Pool) []iostatSection {
	sections := expectedIostat(p)
	var spares []expectedRow
	for _, top := range p.Root.Children {
		if iostatClass(top.Class) == ClassSpare {
			spares = appendSubtree(spares, top, 1, ClassSpare)
		}
	}
	if len(spares) > 0 {
		sections = append(sections, iostatSection{class: ClassSpare, rows: spares})
	}
	return sections
}
