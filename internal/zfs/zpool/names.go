package zpool

import (
	"path"
	"regexp"
	"strings"
)

// NameSeparator joins a vdev's name to its parent's where zpool's own name
// is not unique within the pool.
const NameSeparator = "/"

// qualifyNames makes every vdev name unique within the pool, and stable for
// as long as the vdev exists. zpool numbers spare-N and replacing-N by their
// place under their parent, so two dRAID vdevs each using a distributed
// spare both have a spare-0, and two raidz vdevs each replacing their first
// disk both have a replacing-0: below a top-level vdev these are named
// after their parent ("draid1-1/spare-0"). A leaf whose name an earlier
// vdev already took is named after its parent the same way; the copy of an
// active hot spare inside spare-N keeps the name of its entry in the spares
// section, which the collectors treat as one vdev. Printed keeps the name
// zpool printed, which other zpool commands know the vdev by.
func qualifyNames(root *Vdev) {
	if root == nil {
		return
	}
	spares := map[string]bool{}
	for _, top := range root.Children {
		if top.Class == ClassSpare && len(top.Children) == 0 {
			spares[top.Name] = true
		}
	}
	// Sized at once: a pool of a thousand leaves grew it a dozen times.
	taken := make(map[string]bool, countVdevs(root))
	taken[root.Name] = true
	var walk func(v *Vdev, depth int)
	walk = func(v *Vdev, depth int) {
		for _, c := range v.Children {
			qualify := false
			switch {
			case c.Printed != "":
				// Named already.
			case spares[c.Name]:
				// A hot spare's slot, or its copy in spare-N.
			case depth > 0 && (c.Type == "spare" || c.Type == "replacing"):
				qualify = true
			case taken[c.Name]:
				qualify = true
			}
			if qualify {
				c.Printed = c.Name
				c.Name = v.Name + NameSeparator + c.Name
			}
			taken[c.Name] = true
			walk(c, depth+1)
		}
	}
	walk(root, 0)
}

// PrintedName is the name zpool printed for the vdev.
func (v *Vdev) PrintedName() string {
	if v.Printed != "" {
		return v.Printed
	}
	return v.Name
}

// LeafName is the name zpool gives the leaf of a device path it did not
// print (an event's vdev_path, say): the path's last element, less the
// partition zpool made on a whole disk and leaves out of its name, "-part1"
// of a by-id link, "1" of sda1, "p1" of nvme0n1p1. A leaf of a partition
// the user gave keeps it: the two cannot be told apart from the path.
func LeafName(devicePath string) string {
	base := path.Base(devicePath)
	m := partitionName.FindStringSubmatch(base)
	if m == nil {
		return base
	}
	for _, disk := range m[1:] {
		if disk != "" {
			return disk
		}
	}
	return base
}

var partitionName = regexp.MustCompile(`^(?:(.+)-part[0-9]+|((?:sd|vd|xvd|hd)[a-z]+)[0-9]+|(nvme[0-9]+n[0-9]+)p[0-9]+)$`)

// lowerState is strings.ToLower for a state, without a new string each
// vdev for the usual ones.
func lowerState(s string) string {
	switch s {
	case "ONLINE":
		return "online"
	case "AVAIL":
		return "avail"
	}
	return strings.ToLower(s)
}

// countVdevs returns the number of vdevs of the tree under v, v included.
func countVdevs(v *Vdev) int {
	n := 1
	for _, c := range v.Children {
		n += countVdevs(c)
	}
	return n
}

// vdevBlocks hands out the vdevs of a tree from blocks of many: one
// allocation per block rather than one per vdev of a pool of a thousand
// leaves. Blocks double from 8 to 64 vdevs, so that a small host does not
// clear room for vdevs it does not have. A vdev keeps the others of its
// block alive; a tree is kept or dropped whole.
type vdevBlocks struct {
	free []Vdev
	size int // of the last block
}

// new returns a zero vdev.
func (b *vdevBlocks) new() *Vdev {
	if len(b.free) == 0 {
		b.size = min(max(2*b.size, 8), 64)
		b.free = make([]Vdev, b.size)
	}
	v := &b.free[0]
	b.free = b.free[1:]
	return v
}
