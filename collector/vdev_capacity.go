package collector

// The ashift of each vdev comes from the vdev properties that vdev_io reads
// (OpenZFS 2.2 on), in the same zpool run as its counters. The space of
// vdevs comes from zpool list -v (vdev_space.go) instead: there the size
// of a raidz or dRAID vdev is raw as its allocations are, where the
// property size leaves parity out, and zpool list -v has the
// fragmentation and expandsize that the vdev properties of those names
// read as 0% and "-" on every vdev, up to OpenZFS 2.4 at least (ZFS never
// stores them in the vdev's own statistics: openzfs/zfs#16459).
var vdevAshiftDesc = desc("vdev", "ashift",
	"Base-2 logarithm of the vdev's sector size, its smallest allocation (vdev property ashift; OpenZFS 2.2 on).", "pool", "vdev")

// vdevAshiftProperties are the vdev properties read for the ashift gauge.
var vdevAshiftProperties = []string{"ashift"}
