package collector

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The space of each vdev comes from the vdev properties that vdev_io reads
// (OpenZFS 2.2 on), in the same zpool run as its counters.
var (
	vdevSizeDesc = desc("vdev", "size_bytes",
		"Space of the vdev, from its property size (OpenZFS 2.2 on): after parity on raidz and dRAID, where zpool list -v shows the raw size. "+
			"Top-level vdevs only, and the vdev named after the pool: the pool less its log vdevs.", "pool", "vdev")
	vdevAllocatedDesc = desc("vdev", "allocated_bytes",
		"Space allocated on the vdev, parity included, from its property allocated (OpenZFS 2.2 on). "+
			"Top-level vdevs only, and the vdev named after the pool: the pool less its log vdevs.", "pool", "vdev")
	vdevFreeDesc = desc("vdev", "free_bytes",
		"zfs_vdev_size_bytes less zfs_vdev_allocated_bytes, from the vdev property free (OpenZFS 2.2 on): on raidz and dRAID, "+
			"less than zpool list -v shows, as size leaves parity out and allocated counts it.", "pool", "vdev")
	vdevAshiftDesc = desc("vdev", "ashift",
		"Base-2 logarithm of the vdev's sector size, its smallest allocation (vdev property ashift; OpenZFS 2.2 on).", "pool", "vdev")
)

// vdevCapacityProperties are the vdev properties of the space gauges.
//
// The vdev properties fragmentation and expandsize are not among them: up
// to OpenZFS 2.4 at least, they read the vdev's own statistics, where ZFS
// never stores those two figures (vdev_get_stats computes them into a copy
// for zpool list -v), so every vdev reads 0% and "-" whatever its state
// (openzfs/zfs#16459; in the 2.3.2 captures, 0% against the 13% to 19% of
// zpool list -v).
var vdevCapacityProperties = []string{"size", "allocated", "free", "ashift"}

// vdevSpaceProperties are the properties ZFS keeps for the pool's root and
// its top-level vdevs only: the disks below a top-level vdev read 0.
var vdevSpaceProperties = []string{"size", "allocated", "free"}

var vdevCapacityDescs = map[string]*prometheus.Desc{
	"size":      vdevSizeDesc,
	"allocated": vdevAllocatedDesc,
	"free":      vdevFreeDesc,
	"ashift":    vdevAshiftDesc,
}

// collectVdevCapacity sends the space gauges of every vdev of the status
// tree that the vdev properties give them for. Only numbers that zpool
// printed are sent, and only where ZFS keeps them: size, allocated and free
// for the pool's root and its top-level vdevs (not cache devices nor
// spares, whose rows OpenZFS 2.2 to 2.4 refuse anyway); ashift where it is
// not 0 (the root has none). Nothing is summed from children.
func collectVdevCapacity(p *zpool.Pool, props []zpool.Property, ch chan<- prometheus.Metric) error {
	printed := map[string]map[string]float64{}
	var bad error
	for _, prop := range props {
		if !slices.Contains(vdevCapacityProperties, prop.Property) {
			continue
		}
		v, ok, err := zpool.ParseSize(prop.Value)
		if err != nil {
			if bad == nil {
				bad = fmt.Errorf("pool %s: vdev %s: property %s: %w", p.Name, prop.Name, prop.Property, err)
			}
			continue
		}
		if !ok {
			continue // "-"
		}
		name := prop.Name
		if strings.HasPrefix(name, "root-") {
			name = p.Root.PrintedName()
		}
		if printed[name] == nil {
			printed[name] = map[string]float64{}
		}
		printed[name][prop.Property] = v
	}
	values := byUniqueName(p.Root, printed)
	p.Root.WalkOnce(func(v *zpool.Vdev, _ string, _ *zpool.Vdev) {
		m, ok := values[v.Name]
		if !ok {
			return
		}
		keepsSpace := v == p.Root || slices.Contains(p.Root.Children, v) && v.Class != zpool.ClassCache && v.Class != zpool.ClassSpare
		for _, prop := range vdevCapacityProperties {
			x, ok := m[prop]
			switch {
			case !ok:
				continue
			case slices.Contains(vdevSpaceProperties, prop) && !keepsSpace:
				continue
			case prop == "free" && x > m["size"]:
				// free is size less allocated, two unsigned numbers that
				// count a raidz vdev's parity differently: when the
				// allocations outgrow the size, it wraps around.
				continue
			case prop == "ashift" && x == 0:
				continue
			}
			gauge(ch, vdevCapacityDescs[prop], x, p.Name, v.Name)
		}
	})
	return bad
}
