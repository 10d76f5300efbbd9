package collector

import (
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// joinCacheMaxAge bounds how long a join is kept while nothing it is
// stamped with changes: a file vdev's file system may be remounted on
// another device without a sign in diskstats or under /dev.
const joinCacheMaxAge = 5 * time.Minute

// linkSettleTime is how old the newest change under /dev must be for a
// join to be kept: a file system stamps times at the kernel's clock tick,
// so a link changed in the tick its directory was read leaves the same time.
const linkSettleTime = 2 * time.Second

// joinCache keeps the disk each leaf joined, and whether each diskstats
// entry is a partition, for as long as what they were found from is the
// same: the block devices the kernel lists and the links udev keeps under
// /dev. Following every leaf's links on every scrape was a fifth of a
// scrape's CPU at 1,000 leaves, to find the same disks.
type joinCache struct {
	stamp      uint64
	settled    bool // no change under /dev was recent when stamped
	made       time.Time
	leaves     map[leafKey]leafJoin
	partitions map[string]bool
}

// leafKey is what resolve reads of a leaf.
type leafKey struct{ name, path, typ string }

type leafJoin struct {
	device string
	err    error
}

// renew empties the cache unless it was stamped with stamp, settled, and
// less than joinCacheMaxAge before now.
func (c *joinCache) renew(stamp uint64, settled bool, now time.Time) {
	if c.leaves != nil && c.settled && c.stamp == stamp && now.Sub(c.made) < joinCacheMaxAge {
		return
	}
	c.stamp, c.settled, c.made = stamp, settled, now
	c.leaves = map[leafKey]leafJoin{}
	c.partitions = map[string]bool{}
}

func (c *joinCache) resolve(v *zpool.Vdev, resolve func(*zpool.Vdev) (string, error)) (string, error) {
	key := leafKey{v.Name, v.Path, v.Type}
	j, ok := c.leaves[key]
	if !ok {
		j.device, j.err = resolve(v)
		c.leaves[key] = j
	}
	return j.device, j.err
}

func (c *joinCache) isPartition(name string, isPartition func(string) bool) bool {
	p, ok := c.partitions[name]
	if !ok {
		p = isPartition(name)
		c.partitions[name] = p
	}
	return p
}

// joinStamp sums up what the joins are found from: the name and number of
// every block device in diskstats, and the modification time of /dev and
// of each directory of links zpool searches, which udev changes as it adds,
// removes or repoints a link. settled is false when one of those times is
// less than linkSettleTime before now.
func joinStamp(stats []blockdevice.Diskstats, devRoot string, now time.Time) (stamp uint64, settled bool) {
	h := fnv.New64a()
	var buf [8]byte
	word := func(x uint64) {
		binary.LittleEndian.PutUint64(buf[:], x)
		h.Write(buf[:])
	}
	for _, d := range stats {
		h.Write([]byte(d.DeviceName))
		word(uint64(d.MajorNumber)<<32 | uint64(d.MinorNumber))
	}
	settled = true
	for _, dir := range vdevSearchDirs {
		var mtime int64
		if fi, err := os.Stat(filepath.Join(devRoot, filepath.FromSlash(dir))); err == nil {
			mtime = fi.ModTime().UnixNano()
			settled = settled && now.Sub(fi.ModTime()) >= linkSettleTime
		}
		word(uint64(mtime))
	}
	return h.Sum64(), settled
}
