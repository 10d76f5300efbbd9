package hostgen

import (
	"bufio"
	"strconv"
	"strings"
)

// The rows of `zpool get -Hp all r10 all-vdevs` on OpenZFS 2.3.2 (the
// guest's 01-created scenario): root-0, mirror-0 and virtio-zd03. Every
// mirror of a generated pool is r10's mirror-0 and every leaf its
// virtio-zd03; the root adds up its mirrors.
var (
	rootVdevRows = parseRows(`
capacity	{capacity}	-
state	7	-
guid	{guid}	-
asize	0	-
psize	0	-
ashift	0	-
size	{size}	-
free	{free}	-
allocated	{allocated}	-
comment	-	default
expandsize	-	-
fragmentation	0%	-
bootsize	0	default
parity	0	-
path	-	default
devid	-	default
physpath	-	default
encpath	-	default
fru	-	default
parent	-	default
children	{children}	-
numchildren	{numchildren}	-
read_errors	0	-
write_errors	0	-
checksum_errors	0	-
initialize_errors	0	-
null_ops	0	-
read_ops	0	-
write_ops	0	-
free_ops	0	-
claim_ops	0	-
trim_ops	0	-
null_bytes	0	-
read_bytes	0	-
write_bytes	0	-
free_bytes	0	-
claim_bytes	0	-
trim_bytes	0	-
removing	off	-
allocating	on	default
failfast	on	default
checksum_n	-	default
checksum_t	-	default
io_n	-	default
io_t	-	default
slow_io_n	-	default
slow_io_t	-	default
trim_support	-	-
trim_errors	0	-
slow_ios	0	-
`)
	mirrorVdevRows = parseRows(`
capacity	1	-
state	7	-
guid	{guid}	-
asize	1058537472	-
psize	0	-
ashift	9	-
size	1006632960	-
free	993981440	-
allocated	12651520	-
comment	-	default
expandsize	-	-
fragmentation	0%	-
bootsize	0	default
parity	0	-
path	-	default
devid	-	default
physpath	-	default
encpath	-	default
fru	-	default
parent	{parent}	-
children	{children}	-
numchildren	2	-
read_errors	0	-
write_errors	0	-
checksum_errors	0	-
initialize_errors	0	-
null_ops	0	-
read_ops	62	-
write_ops	588	-
free_ops	0	-
claim_ops	0	-
trim_ops	0	-
null_bytes	0	-
read_bytes	3915776	-
write_bytes	28840960	-
free_bytes	0	-
claim_bytes	0	-
trim_bytes	0	-
removing	off	-
allocating	on	default
failfast	on	default
checksum_n	-	default
checksum_t	-	default
io_n	-	default
io_t	-	default
slow_io_n	-	default
slow_io_t	-	default
trim_support	-	-
trim_errors	0	-
slow_ios	0	-
`)
	leafVdevRows = parseRows(`
capacity	0	-
state	7	-
guid	{guid}	-
asize	1058537472	-
psize	1063256064	-
ashift	9	-
size	0	-
free	0	-
allocated	0	-
comment	-	default
expandsize	-	-
fragmentation	0%	-
bootsize	0	default
parity	0	-
path	{path}	-
devid	-	default
physpath	-	default
encpath	-	default
fru	-	default
parent	{parent}	-
children	-	default
numchildren	0	-
read_errors	0	-
write_errors	0	-
checksum_errors	0	-
initialize_errors	0	-
null_ops	0	-
read_ops	31	-
write_ops	294	-
free_ops	0	-
claim_ops	0	-
trim_ops	0	-
null_bytes	0	-
read_bytes	1957888	-
write_bytes	14420480	-
free_bytes	0	-
claim_bytes	0	-
trim_bytes	0	-
removing	off	-
allocating	-	-
failfast	on	default
checksum_n	-	default
checksum_t	-	default
io_n	-	default
io_t	-	default
slow_io_n	-	default
slow_io_t	-	default
trim_support	on	-
trim_errors	0	-
slow_ios	0	-
`)
)

// vdevRows24 are the rows OpenZFS 2.4.4 prints after 2.3.2's, for every
// vdev alike.
var vdevRows24 = parseRows("slow_io_events\ton\tdefault\n")

// Figures of r10's mirror-0 that the pool's own rows add up.
const (
	mirrorSize      = 1006632960
	mirrorAllocated = 12651520
)

// writeVdevProperties writes `zpool get -Hp all POOL all-vdevs`: the
// root, then each mirror followed by its leaves, as zpool walks the tree.
func writeVdevProperties(w *bufio.Writer, h host, p pool) {
	root, mirrorRows, leafRows := rootVdevRows, mirrorVdevRows, leafVdevRows
	if h.spec.Version == "2.4" {
		root, mirrorRows, leafRows = root.with(vdevRows24), mirrorRows.with(vdevRows24), leafRows.with(vdevRows24)
	}
	size, allocated := poolSpace(p)
	names := make([]string, len(p.mirrors))
	for i, m := range p.mirrors {
		names[i] = m.name
	}
	root.write(w, "root-0", map[string]string{
		"capacity":    strconv.FormatInt(allocated*100/size, 10),
		"guid":        strconv.FormatUint(p.guid, 10),
		"size":        strconv.FormatInt(size, 10),
		"free":        strconv.FormatInt(size-allocated, 10),
		"allocated":   strconv.FormatInt(allocated, 10),
		"children":    strings.Join(names, ","),
		"numchildren": strconv.Itoa(len(p.mirrors)),
	})
	for _, m := range p.mirrors {
		mirrorRows.write(w, m.name, map[string]string{
			"guid":     strconv.FormatUint(m.guid, 10),
			"parent":   p.name,
			"children": m.leaves[0].path() + "," + m.leaves[1].path(),
		})
		for _, l := range m.leaves {
			leafRows.write(w, l.name, map[string]string{
				"guid":   strconv.FormatUint(l.guid, 10),
				"path":   l.path(),
				"parent": m.name,
			})
		}
	}
}

// poolSpace is the size and allocated bytes of a pool: its mirrors'.
func poolSpace(p pool) (size, allocated int64) {
	n := int64(len(p.mirrors))
	return n * mirrorSize, n * mirrorAllocated
}
