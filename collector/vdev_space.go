package collector

import (
	"context"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The space of each vdev has a collector of its own rather than a place in
// vdev_io beside ashift: it comes from another command, `zpool list -v`,
// one run for every pool, which zpools without vdev properties print too
// (OpenZFS before 2.2, FreeBSD's own ZFS, illumos). So it has its own
// success, duration and freshness, a zpool without it costs the I/O
// counters nothing, and it can be turned off alone.
func init() {
	register("vdev_space", true, "Space, fragmentation and expandable size of each pool, vdev and disk, from zpool list -v", newVdevSpaceCollector)
}

var (
	vdevSizeDesc = desc("vdev", "size_bytes",
		"Size of the vdev as zpool list -v shows it, raw, parity included: the top-level vdevs of the normal, special and dedup classes add up to the vdev named after the pool, the pool's size. "+
			"A disk below a top-level vdev has its device's size (OpenZFS 2.1.6 on).", "pool", "vdev")
	vdevAllocatedDesc = desc("vdev", "allocated_bytes",
		"Space allocated on the vdev, parity included, as zpool list -v shows it: the pool, its top-level vdevs, log and cache devices.", "pool", "vdev")
	vdevFreeDesc = desc("vdev", "free_bytes",
		"zfs_vdev_size_bytes less zfs_vdev_allocated_bytes, as zpool list -v shows it.", "pool", "vdev")
	vdevFragmentationDesc = desc("vdev", "fragmentation_ratio",
		"Fragmentation of the vdev's free space, 0 to 1, as zpool list -v shows it (FRAG): the pool, its top-level vdevs, log and cache devices.", "pool", "vdev")
	vdevExpandSizeDesc = desc("vdev", "expand_size_bytes",
		"Space the vdev would gain if grown to its devices' size (zpool online -e, or autoexpand), as zpool list -v shows it (EXPANDSZ); "+
			"no series while zpool shows none.", "pool", "vdev")
)

type vdevSpaceCollector struct{ logger *slog.Logger }

func newVdevSpaceCollector(_ Config, logger *slog.Logger) (Collector, error) {
	return vdevSpaceCollector{logger: logger}, nil
}

func (c vdevSpaceCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	// Once status has answered, as for the vdev properties: a suspended
	// pool that hangs zpool status would hang zpool list too. Its tree
	// names the rows.
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	rows, err := s.VdevList(ctx)
	if errors.Is(err, zfs.ErrNoVdevList) {
		return ErrNoData
	}
	if err != nil {
		return err
	}
	paired, warnings := zpool.MatchList(st, rows)
	for _, w := range warnings {
		c.logger.Warn("a row of zpool list -v is left out", "reason", w)
	}
	for _, p := range st.Pools {
		if p.Root == nil {
			continue
		}
		// A hot spare in use is listed twice, in its spare-N and among the
		// spares: its figures are sent once.
		p.Root.WalkOnce(func(v *zpool.Vdev, _ string, _ *zpool.Vdev) {
			if row, ok := paired[v]; ok {
				sendVdevSpace(ch, p.Name, v, row)
			}
		})
	}
	return nil
}

// sendVdevSpace sends the figures zpool printed for one vdev.
func sendVdevSpace(ch chan<- prometheus.Metric, pool string, v *zpool.Vdev, row zpool.ListRow) {
	send := func(d *prometheus.Desc, x *float64) {
		if x != nil {
			gauge(ch, d, *x, pool, v.Name)
		}
	}
	send(vdevSizeDesc, vdevSize(v, row))
	send(vdevAllocatedDesc, row.Allocated)
	send(vdevFreeDesc, row.Free)
	send(vdevFragmentationDesc, row.Fragmentation)
	send(vdevExpandSizeDesc, row.ExpandSize)
}

// vdevSize is the size sent for a vdev: what zpool list -v prints, but for
// a disk whose row has allocated and free too (a pool of one disk, a log
// or a cache device). From OpenZFS 2.1.6 such a row prints the device's size
// while allocated and free count the space ZFS allocates from, a few
// metaslabs less: their sum is what adds up to the pool's size and what
// zpool's CAP divides by.
func vdevSize(v *zpool.Vdev, row zpool.ListRow) *float64 {
	if len(v.Children) > 0 || row.Allocated == nil || row.Free == nil {
		return row.Size
	}
	space := *row.Allocated + *row.Free
	return &space
}
