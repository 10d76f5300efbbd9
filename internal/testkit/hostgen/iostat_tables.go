package hostgen

import (
	"bufio"
	"math"
	"strconv"
)

// The tables of `zpool iostat -vHp -w` (latency), `-r` (request sizes) and
// `-q` (queue lengths), as OpenZFS 2.3.2 prints them: every pool's rows in
// print order, the pool, each mirror, its leaves. A leaf's counts are
// drawn from its position, a mirror's are its leaves' sums and a pool's
// its mirrors', as zpool adds them up.

const (
	latencyBuckets = 37 // 2^(i+1)-1 ns
	sizeBuckets    = 16 // 512<<i bytes
	latencyColumns = 11 // total, disk, syncq, asyncq wait (read, write); scrub, trim, rebuild
	sizeColumns    = 14 // sync/async read/write, scrub, trim, rebuild: individual, aggregated
	queueColumns   = 14 // the same classes: pending, active
)

// table is a histogram's counts, [bucket][column].
type table [][]uint64

func newTable(buckets, columns int) table {
	t := make(table, buckets)
	for i := range t {
		t[i] = make([]uint64, columns)
	}
	return t
}

func (t table) add(u table) {
	for i := range t {
		for j := range t[i] {
			t[i][j] += u[i][j]
		}
	}
}

// latencyPeaks is the bucket around which each -w column's I/Os lie, on a
// disk of the guest's kind: total and disk wait near half a millisecond,
// the queues near ten microseconds; trim and rebuild have none.
var latencyPeaks = [latencyColumns]int{19, 19, 18, 18, 13, 13, 14, 14, 15, -1, -1}

// sizePeaks is the bucket of each -r column's I/Os: 4 KiB individual,
// 16 to 128 KiB once aggregated; scrub reads 128 KiB; no trim, no rebuild.
var sizePeaks = [sizeColumns]int{3, 4, 3, 5, 3, 6, 3, 7, 8, 8, -1, -1, -1, -1}

// leafTable draws a leaf's counts: for each column a bell of some
// thousands of I/Os around its peak, varied by the leaf's index.
func leafTable(buckets int, peaks []int, index int) table {
	t := newTable(buckets, len(peaks))
	for j, peak := range peaks {
		if peak < 0 {
			continue
		}
		total := float64(2000 + (index*7919+j*104729)%3000)
		for i := range buckets {
			d := float64(i - peak)
			t[i][j] = uint64(math.Round(total * math.Exp(-d*d/4) / math.Sqrt(4*math.Pi)))
		}
	}
	return t
}

// writeIostatTables writes the -w (latency) or -r table of every pool,
// mirror and leaf, each after an empty line.
func writeIostatTables(w *bufio.Writer, h host, latency bool) {
	buckets, peaks := sizeBuckets, sizePeaks[:]
	if latency {
		buckets, peaks = latencyBuckets, latencyPeaks[:]
	}
	bound := func(i int) uint64 {
		if latency {
			return 1<<(i+1) - 1
		}
		return 512 << i
	}
	write := func(name string, t table) {
		w.WriteString("\n" + name + "\n")
		for i, row := range t {
			w.WriteString(strconv.FormatUint(bound(i), 10))
			for _, n := range row {
				w.WriteByte('\t')
				w.WriteString(strconv.FormatUint(n, 10))
			}
			w.WriteByte('\n')
		}
	}
	for _, p := range h.pools {
		poolTable := newTable(buckets, len(peaks))
		mirrors := make([]table, len(p.mirrors))
		leaves := make([][2]table, len(p.mirrors))
		for k, m := range p.mirrors {
			mirrors[k] = newTable(buckets, len(peaks))
			for s, l := range m.leaves {
				leaves[k][s] = leafTable(buckets, peaks, l.index)
				mirrors[k].add(leaves[k][s])
			}
			poolTable.add(mirrors[k])
		}
		write(p.name, poolTable)
		for k, m := range p.mirrors {
			write(m.name, mirrors[k])
			for s, l := range m.leaves {
				write(l.name, leaves[k][s])
			}
		}
	}
}

// writeIostatQueues writes `zpool iostat -vHp -q`: the six base columns
// (space, then operations and bytes a second since import) and the
// queues, idle but for a few async writes pending on the leaves.
func writeIostatQueues(w *bufio.Writer, h host) {
	row := func(name string, alloc, free int64, ops, pending uint64) {
		w.WriteString(name)
		for _, v := range []uint64{uint64(alloc), uint64(free), ops, 2 * ops, ops << 13, ops << 15} {
			w.WriteByte('\t')
			w.WriteString(strconv.FormatUint(v, 10))
		}
		for c := range queueColumns {
			var n uint64
			if c == 6 { // async_write pending
				n = pending
			}
			w.WriteByte('\t')
			w.WriteString(strconv.FormatUint(n, 10))
		}
		w.WriteByte('\n')
	}
	for _, p := range h.pools {
		size, allocated := poolSpace(p)
		var pending uint64
		for _, m := range p.mirrors {
			pending += 2 * uint64(m.leaves[0].index%3+m.leaves[1].index%3)
		}
		row(p.name, allocated, size-allocated, uint64(4*len(p.mirrors)), pending)
		for _, m := range p.mirrors {
			msize, mallocated := poolSpace(pool{mirrors: []mirror{m}})
			row(m.name, mallocated, msize-mallocated, 4, 2*uint64(m.leaves[0].index%3+m.leaves[1].index%3))
			for _, l := range m.leaves {
				row(l.name, 0, 0, 2, 2*uint64(l.index%3))
			}
		}
	}
}
