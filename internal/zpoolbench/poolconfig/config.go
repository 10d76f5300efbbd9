// Package poolconfig reads what a benchmark run needs to know about the
// pool it ran on: the layout of its vdevs, ashift, compression, recordsize,
// state, and the ZFS version, so that runs on different layouts can be told
// apart and compared.
package poolconfig

// Config is a pool's configuration at the start of a run. Fields that could
// not be read are left at their zero value, and why is in Missing.
type Config struct {
	Pool string `json:"pool"`
	// Layout sums up the data vdevs and the other classes in one line,
	// e.g. "2 × mirror of 2", "raidz1 of 3", "stripe of 4",
	// "raidz2 of 6 + log mirror of 2 + cache 1 + spare 1".
	Layout string `json:"layout"`
	// Vdevs are the top-level vdevs of every class, in `zpool status`
	// order.
	Vdevs []Vdev `json:"vdevs"`
	// Ashift is the pool's ashift: the vdevs' own when they are known and
	// all alike, else the pool property. 0 when unknown.
	Ashift int `json:"ashift,omitempty"`
	// Compression and Recordsize are the root dataset's properties, as
	// zfs prints them ("lz4", "off"; bytes).
	Compression string `json:"compression,omitempty"`
	Recordsize  int64  `json:"recordsize_bytes,omitempty"`
	State       string `json:"state"` // lowercase: "online", "degraded"...
	// Version names the ZFS implementation and version, e.g.
	// "OpenZFS 2.3.2", "zfs-fuse 0.7.0".
	Version string `json:"version,omitempty"`
	// Missing says, for each field that could not be read, why.
	Missing []string `json:"missing,omitempty"`
}

// Vdev is one top-level vdev.
type Vdev struct {
	Name  string `json:"name"`  // as zpool status prints it: "mirror-0", "raidz1-1", a disk
	Type  string `json:"type"`  // mirror, raidz1, raidz2, raidz3, draid..., disk, file
	Class string `json:"class"` // normal, log, cache, spare, special, dedup
	Width int    `json:"width"` // leaves under it; 1 for a single disk
	State string `json:"state"` // lowercase
	// Ashift is the vdev's own ashift, 0 when unknown.
	Ashift int `json:"ashift,omitempty"`
}
