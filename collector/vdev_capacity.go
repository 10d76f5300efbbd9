package collector

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

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

// vdevAshiftProperties are the vdev properties read for vdev_capacity.go.
var vdevAshiftProperties = []string{"ashift"}

// collectVdevAshift sends the ashift of every vdev of the status tree
// that the vdev properties give one, but for the pool's root, whose 0 is
// no sector size.
func collectVdevAshift(p *zpool.Pool, props []zpool.Property, ch chan<- prometheus.Metric) error {
	printed := map[string]map[string]float64{}
	var bad error
	for _, prop := range props {
		if prop.Property != "ashift" {
			continue
		}
		v, ok, err := zpool.ParseSize(prop.Value)
		if err != nil {
			if bad == nil {
				bad = fmt.Errorf("pool %s: vdev %s: property %s: %w", p.Name, prop.Name, prop.Property, err)
			}
			continue
		}
		if !ok || v == 0 {
			continue // "-", or the root's 0
		}
		name := prop.Name
		if strings.HasPrefix(name, "root-") {
			name = p.Root.PrintedName()
		}
		printed[name] = map[string]float64{"ashift": v}
	}
	values := byUniqueName(p.Root, printed)
	p.Root.WalkOnce(func(v *zpool.Vdev, _ string, _ *zpool.Vdev) {
		if m, ok := values[v.Name]; ok {
			gauge(ch, vdevAshiftDesc, m["ashift"], p.Name, v.Name)
		}
	})
	return bad
}
