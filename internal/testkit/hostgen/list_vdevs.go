package hostgen

import (
	"bufio"
	"strconv"
)

// The rows of `zpool list -v -Hp` as OpenZFS 2.3.2 prints them for r10 of
// the captures, a stripe of mirrors: the pool's row in the default
// columns, then each mirror's and its disks', each after a tab. Up to
// OpenZFS 2.4.0 a vdev row has its own ten columns, whatever the pool's
// (no ALTROOT); from 2.4.1 it follows the column list, so 2.4.4 ends it
// with ALTROOT's "-" (cmd/zpool/zpool_main.c, collect_list_stats). A disk
// shows its device's size and no space of its own.
var (
	listPoolRow   = parseRows("{name}\t{size}\t{allocated}\t{free}\t-\t-\t1\t{capacity}\t1.00\tONLINE\t-\n")
	listMirrorRow = parseRows("\t{name}\t{size}\t{allocated}\t{free}\t-\t-\t1\t{capacity}\t-\tONLINE\n")
	listLeafRow   = parseRows("\t{name}\t1063256064\t-\t-\t-\t-\t-\t-\t-\tONLINE\n")
)

// writeVdevList writes `zpool list -v -Hp`: every pool, in the order
// zpool lists them (by name), with its mirrors and their leaves.
func writeVdevList(w *bufio.Writer, h host) {
	mirrorRow, leafRow := listMirrorRow, listLeafRow
	if h.spec.Version == "2.4" {
		mirrorRow, leafRow = withAltroot(mirrorRow), withAltroot(leafRow)
	}
	space := func(name string, size, allocated int64) map[string]string {
		return map[string]string{
			"name":      name,
			"size":      strconv.FormatInt(size, 10),
			"allocated": strconv.FormatInt(allocated, 10),
			"free":      strconv.FormatInt(size-allocated, 10),
			"capacity":  strconv.FormatInt(allocated*100/size, 10),
		}
	}
	for _, p := range h.pools {
		size, allocated := poolSpace(p)
		listPoolRow.write(w, "", space(p.name, size, allocated))
		for _, m := range p.mirrors {
			mirrorRow.write(w, "", space(m.name, mirrorSize, mirrorAllocated))
			for _, l := range m.leaves {
				leafRow.write(w, "", map[string]string{"name": l.name})
			}
		}
	}
}

// withAltroot returns the rows with ALTROOT's "-" after their last column.
func withAltroot(r rows) rows {
	out := make(rows, len(r))
	for i, row := range r {
		out[i] = append(row[:len(row):len(row)], "-")
	}
	return out
}
