package zpool

// Walk calls visit for v and every vdev below it, depth first in print
// order, with the name of its parent ("" for v itself).
func (v *Vdev) Walk(visit func(v *Vdev, parent string)) {
	v.walk("", visit)
}

func (v *Vdev) walk(parent string, visit func(v *Vdev, parent string)) {
	visit(v, parent)
	for _, c := range v.Children {
		c.walk(v.Name, visit)
	}
}

// WalkOnce is Walk visiting each vdev once. zpool lists a hot spare that
// stands in for a disk twice: in the spares section (INUSE), and inside
// the spare-N vdev with the disk it replaces. WalkOnce visits it as that
// copy in the tree, with spare its entry in the spares section, and skips
// the entry; spare is nil for every other vdev. v is the pool's root.
func (v *Vdev) WalkOnce(visit func(v *Vdev, parent string, spare *Vdev)) {
	active := v.activeSpares()
	v.Walk(func(c *Vdev, parent string) {
		spare, ok := active[c.Name]
		if ok && c == spare {
			return // visited as the copy that stands in
		}
		visit(c, parent, spare)
	})
}

// activeSpares returns the spares section's entries of the hot spares that
// stand in for a disk, by name.
func (v *Vdev) activeSpares() map[string]*Vdev {
	entries := map[string]*Vdev{}
	for _, top := range v.Children {
		if top.Class == ClassSpare {
			entries[top.Name] = top
		}
	}
	// The copy inside spare-N is told from the entry by identity, not by
	// class: JSON may call both "spare".
	active := map[string]*Vdev{}
	v.Walk(func(c *Vdev, _ string) {
		if entry, ok := entries[c.Name]; ok && c != entry {
			active[c.Name] = entry
		}
	})
	return active
}
