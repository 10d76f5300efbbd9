package hostgen

import (
	"fmt"
	"strconv"
)

// Spec is the layout of a generated host.
type Spec struct {
	Pools  int // pools, each a stripe of 2-way mirrors
	Leaves int // leaves (disks) per pool, an even number
	// Version is the OpenZFS release whose rows are written: "2.3"
	// (2.3.2) or "2.4" (2.4.4). They differ in a few rows, not in format.
	Version string
	// Datasets is how many filesystems and volumes the pools have in all,
	// their root datasets counted, and Snapshots how many snapshots; zero
	// for none: the host is then written without zfs/ (see zfs_gen.go).
	Datasets, Snapshots int
}

// Versions are the releases a host can be written as.
var Versions = []string{"2.3", "2.4"}

func (s Spec) check() error {
	switch {
	case s.Pools < 1:
		return fmt.Errorf("a host needs at least one pool, not %d", s.Pools)
	case s.Leaves < 2 || s.Leaves%2 != 0:
		return fmt.Errorf("pools are stripes of 2-way mirrors: leaves per pool must be even and at least 2, not %d", s.Leaves)
	case s.Version != "2.3" && s.Version != "2.4":
		return fmt.Errorf("OpenZFS %q: only %v can be written", s.Version, Versions)
	case s.Datasets < 0 || s.Snapshots < 0:
		return fmt.Errorf("%d datasets, %d snapshots: not counts", s.Datasets, s.Snapshots)
	case s.Datasets > 0 && s.Datasets < s.Pools:
		return fmt.Errorf("each pool has its root dataset: %d pools need at least %d datasets, not %d", s.Pools, s.Pools, s.Datasets)
	case s.Snapshots > 0 && s.Datasets == 0:
		return fmt.Errorf("%d snapshots of no datasets", s.Snapshots)
	case s.Snapshots > s.Datasets*snapshotDays*24*60:
		return fmt.Errorf("%d snapshots of %d datasets: at most one a minute over %d days each", s.Snapshots, s.Datasets, snapshotDays)
	}
	return nil
}

// host is the layout of a Spec, with every name and GUID.
type host struct {
	spec  Spec
	pools []pool
}

type pool struct {
	name     string
	guid     uint64
	loadGUID uint64
	mirrors  []mirror
}

type mirror struct {
	name   string // "mirror-0"
	guid   uint64
	leaves [2]leaf
}

type leaf struct {
	name  string // "virtio-zd0001", as zpool prints it
	guid  uint64
	disk  string // the kernel's name of the disk: "vdb"
	index int    // among all the host's leaves, from 0
}

// path is the leaf's device: the partition ZFS made on the whole disk.
func (l leaf) path() string { return "/dev/disk/by-id/" + l.name + "-part1" }

// layout names every pool, vdev and disk. Names are as in the guest's
// captures, widened: pools "tank0"..., leaves virtio-zdNN numbered across
// the host from 01, on the virtio disks vdb, vdc... (vda is the system
// disk). GUIDs are fixed by the position, so that two runs write the same
// host.
func layout(s Spec) host {
	h := host{spec: s}
	poolDigits := len(strconv.Itoa(s.Pools - 1))
	leafDigits := max(2, len(strconv.Itoa(s.Pools*s.Leaves)))
	n := 0
	for p := range s.Pools {
		pl := pool{
			name:     fmt.Sprintf("tank%0*d", poolDigits, p),
			guid:     guid(uint64(p), 0),
			loadGUID: guid(uint64(p), 1),
		}
		for m := range s.Leaves / 2 {
			mr := mirror{name: "mirror-" + strconv.Itoa(m), guid: guid(uint64(p), uint64(2+3*m))}
			for i := range mr.leaves {
				mr.leaves[i] = leaf{
					name:  fmt.Sprintf("virtio-zd%0*d", leafDigits, n+1),
					guid:  guid(uint64(p), uint64(3+3*m+i)),
					disk:  "vd" + diskLetters(n+1),
					index: n,
				}
				n++
			}
			pl.mirrors = append(pl.mirrors, mr)
		}
		h.pools = append(h.pools, pl)
	}
	return h
}

// diskLetters names the n-th disk (from 0) as the kernel does: a..z,
// aa..zz, aaa...
func diskLetters(n int) string {
	var b []byte
	for n++; n > 0; n = (n - 1) / 26 {
		b = append([]byte{byte('a' + (n-1)%26)}, b...)
	}
	return string(b)
}

// guid is a pseudo-random 64-bit GUID (splitmix64) for a vdev of a pool.
func guid(pool, vdev uint64) uint64 {
	z := pool<<32 + vdev + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
