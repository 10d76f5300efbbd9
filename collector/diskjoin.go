package collector

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// This file finds the kernel block device (the name in /proc/diskstats)
// under each leaf vdev. zpool prints a leaf by its device path with the
// search directory stripped ("sda", "virtio-zd03", "A0") and, for a whole
// disk, without the partition ZFS made on it; JSON status adds the full
// path ("/dev/disk/by-id/virtio-zd03-part1"). The pure name rules come
// first, the look-ups under /dev and /sys after them.

// vdevSearchDirs are the directories, relative to /dev, in which zpool
// looks for a device by its short name: libzfs's default import path, in
// its order.
var vdevSearchDirs = []string{
	"disk/by-vdev",
	"mapper",
	"disk/by-partlabel",
	"disk/by-partuuid",
	"disk/by-label",
	"disk/by-uuid",
	"disk/by-id",
	"disk/by-path",
	"",
}

// isDiskLeaf tells the vdevs that sit on a device or a file: interior
// vdevs, holes, missing devices and dRAID distributed spares have none.
func isDiskLeaf(v *zpool.Vdev) bool {
	return len(v.Children) == 0 && (v.Type == "disk" || v.Type == "file")
}

// fileVdevPath returns the path of a file vdev: a file, or an absolute
// name outside /dev.
func fileVdevPath(v *zpool.Vdev) (string, bool) {
	for _, p := range []string{v.Path, v.Name} {
		if path.IsAbs(p) && !strings.HasPrefix(p, "/dev/") {
			return p, true
		}
	}
	if v.Type == "file" && v.Path != "" {
		return v.Path, true
	}
	return "", false
}

// leafLookups lists the paths, relative to /dev, that may name the device
// of a leaf, best first: the full path (JSON status, or an absolute name),
// then the name in each of zpool's search directories, then the same with
// a "-partN" suffix removed, in case udev has no link for the partition.
func leafLookups(name, devPath string) []string {
	var lookups []string
	add := func(p string) {
		p = path.Clean(p)
		for _, seen := range lookups {
			if seen == p {
				return
			}
		}
		lookups = append(lookups, p)
	}
	for _, p := range []string{devPath, name} {
		if rel, ok := strings.CutPrefix(p, "/dev/"); ok && rel != "" {
			add(rel)
		}
	}
	if name == "" || strings.Contains(name, "/") {
		return lookups
	}
	for _, dir := range vdevSearchDirs {
		add(path.Join(dir, name))
	}
	if disk, ok := stripLinkPartition(name); ok {
		for _, dir := range vdevSearchDirs {
			add(path.Join(dir, disk))
		}
	}
	return lookups
}

// stripLinkPartition removes the "-partN" suffix udev gives the links of
// partitions ("ata-ST4000-part3", "pci-0000:00:1f.2-ata-1-part1",
// "A0-part1").
func stripLinkPartition(link string) (string, bool) {
	i := strings.LastIndex(link, "-part")
	if i <= 0 || !allDigits(link[i+len("-part"):]) {
		return link, false
	}
	return link[:i], true
}

// partitionOf returns the whole disk of a kernel partition name, by the
// kernel's naming rule: a disk whose name ends in a digit numbers its
// partitions after a "p" ("nvme0n1p2", "mmcblk0p1", "zd0p1"), any other
// appends the number ("sda1", "vdb9", "xvda2"). The disk must be one of
// known, which tells "sda1" (a partition) from "loop1" or "nbd10" (disks).
func partitionOf(name string, known func(string) bool) (string, bool) {
	base := strings.TrimRight(name, "0123456789")
	if base == name || base == "" {
		return name, false
	}
	last := base[len(base)-1]
	switch {
	case last == 'p' && len(base) > 1 && isDigit(base[len(base)-2]):
		disk := base[:len(base)-1]
		if known(disk) {
			return disk, true
		}
	case 'a' <= last && last <= 'z':
		if known(base) {
			return base, true
		}
	}
	return name, false
}

// virtualDiskPrefixes name block devices that are no physical disk: loop
// devices, RAM disks, device-mapper targets, ZFS's own zvols and optical
// drives. They are reported only when they back a vdev.
var virtualDiskPrefixes = []string{"loop", "ram", "zram", "dm-", "zd", "sr", "fd"}

func isVirtualDisk(name string) bool {
	for _, p := range virtualDiskPrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && rest != "" && isDigit(rest[0]) {
			return true
		}
	}
	return false
}

// devNumber is a device's major and minor number.
type devNumber struct{ major, minor uint32 }

func (n devNumber) String() string { return fmt.Sprintf("%d:%d", n.major, n.minor) }

// linuxDevNumber splits a Linux dev_t (st_dev, st_rdev) as glibc's
// gnu_dev_major and gnu_dev_minor do.
func linuxDevNumber(dev uint64) devNumber {
	return devNumber{
		major: uint32((dev>>8)&0xfff | (dev>>32)&^uint64(0xfff)),
		minor: uint32(dev&0xff | (dev>>12)&^uint64(0xff)),
	}
}

// fileDevice is what stat tells about a path: the device its file system
// is on, and for a device node the device it is.
type fileDevice struct {
	dev      devNumber
	rdev     devNumber
	isDevice bool
}

// statDevice stats a path. It reads the numbers by reflection because
// syscall.Stat_t does not exist on every OS this package builds for, and
// its fields' types differ between Linux architectures.
func statDevice(p string) (fileDevice, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return fileDevice{}, err
	}
	st := reflect.Indirect(reflect.ValueOf(fi.Sys()))
	if st.Kind() != reflect.Struct {
		return fileDevice{}, fmt.Errorf("stat %s: no device numbers on this system", p)
	}
	dev, ok1 := uintField(st, "Dev")
	rdev, ok2 := uintField(st, "Rdev")
	if !ok1 || !ok2 {
		return fileDevice{}, fmt.Errorf("stat %s: no device numbers on this system", p)
	}
	return fileDevice{
		dev:      linuxDevNumber(dev),
		rdev:     linuxDevNumber(rdev),
		isDevice: fi.Mode()&os.ModeDevice != 0,
	}, nil
}

func uintField(v reflect.Value, name string) (uint64, bool) {
	f := v.FieldByName(name)
	switch {
	case !f.IsValid():
		return 0, false
	case f.CanUint():
		return f.Uint(), true
	case f.CanInt():
		return uint64(f.Int()), true
	}
	return 0, false
}

// diskResolver finds the whole disk under a leaf vdev by looking under
// /dev and /sys.
type diskResolver struct {
	devRoot string
	sysRoot string
	stat    func(string) (fileDevice, error)
	// dirs remembers which directories of links have no symlink in their
	// path (see follow). It is made afresh for each join (see forJoin):
	// nil, every link is checked by stat.
	dirs map[string]bool
}

// forJoin returns a copy of r that remembers, for one pass over the
// leaves, which directories of links are real paths.
func (r diskResolver) forJoin() diskResolver {
	r.dirs = map[string]bool{}
	return r
}

// blockDevices is what diskstats lists: kernel names and device numbers.
type blockDevices interface {
	has(name string) bool
	byNumber(n devNumber) (string, bool)
}

// resolve returns the kernel name of the whole disk under the leaf v.
func (r diskResolver) resolve(v *zpool.Vdev, devs blockDevices) (string, error) {
	if p, ok := fileVdevPath(v); ok {
		fd, err := r.stat(p)
		if err != nil {
			return "", err
		}
		name, ok := devs.byNumber(fd.dev)
		if !ok {
			return "", fmt.Errorf("%w: the file system of %s is on device %s, which is not in diskstats", errNoDevice, p, fd.dev)
		}
		return r.wholeDisk(name, devs), nil
	}
	for _, rel := range leafLookups(v.Name, v.Path) {
		if name, ok := r.lookup(filepath.Join(r.devRoot, filepath.FromSlash(rel)), devs); ok {
			return r.wholeDisk(name, devs), nil
		}
	}
	// Without /dev (a container that does not mount it), a kernel name
	// still joins.
	for _, p := range []string{v.Path, v.Name} {
		if name := path.Base(p); p != "" && devs.has(name) {
			return r.wholeDisk(name, devs), nil
		}
	}
	return "", fmt.Errorf("%w under %s", errNoDevice, r.devRoot)
}

// lookup follows a link under /dev to the kernel's name of the device. A
// node that is not named after the kernel's device is matched by its
// device number.
func (r diskResolver) lookup(p string, devs blockDevices) (string, bool) {
	real, err := r.follow(p)
	if err != nil {
		return "", false
	}
	if name := filepath.Base(real); devs.has(name) {
		return name, true
	}
	if fd, err := r.stat(real); err == nil && fd.isDevice {
		return devs.byNumber(fd.rdev)
	}
	return "", false
}

// follow returns the real path of p. Most vdev paths are one link to the
// device node (/dev/disk/by-id/X -> ../../sda), and most entries of
// /sys/class/block one link to the device's directory: such a link is read, and
// its target taken when it is no link and the very file p leads to, where
// EvalSymlinks takes a system call per component of the path, which at a
// thousand leaves was a third of a --once.
//
// The target joined lexically to p's directory is the file p leads to when
// its ".." components, if any, all come first and that directory has no
// symlink in its path: the kernel then walks up the same directories the
// lexical join does. That is known once per directory (see realDir), and
// a link is read in two system calls. Any other link is checked by
// stating p, in three.
func (r diskResolver) follow(p string) (string, error) {
	if _, target, exact, err := r.readLink(p); err == nil {
		if fi, err := os.Lstat(target); err == nil && fi.Mode()&os.ModeSymlink == 0 {
			if exact {
				return target, nil
			}
			if pi, err := os.Stat(p); err == nil && os.SameFile(fi, pi) {
				return target, nil
			}
		}
	}
	return filepath.EvalSymlinks(p)
}

// readLink reads the link p, and joins its target to p's directory. exact
// tells that the join is where the kernel's walk ends: the target's ".."
// components, if any, all come first and that directory has no symlink in
// its path (see realDir), so they go up the same directories.
func (r diskResolver) readLink(p string) (link, target string, exact bool, err error) {
	if link, err = os.Readlink(p); err != nil {
		return "", "", false, err
	}
	up, ok := dotDotsLead(link)
	if filepath.IsAbs(link) {
		return link, link, ok, nil // "/" has no symlink in its path
	}
	dir := filepath.Dir(p)
	return link, filepath.Join(dir, link), ok && (!up || r.realDir(dir)), nil
}

// dotDotsLead tells whether the ".." components of a link's target, if
// any, all come before its names (a "." or an empty component is neither),
// and whether there are any.
func dotDotsLead(link string) (up, ok bool) {
	named := false
	for elem := range strings.SplitSeq(link, "/") {
		switch elem {
		case "..":
			if named {
				return true, false
			}
			up = true
		case ".", "":
		default:
			named = true
		}
	}
	return up, true
}

// realDir tells whether dir is its own real path, remembered for the join.
func (r diskResolver) realDir(dir string) bool {
	real, ok := r.dirs[dir]
	if !ok {
		resolved, err := filepath.EvalSymlinks(dir)
		real = err == nil && resolved == dir
		if r.dirs != nil {
			r.dirs[dir] = real
		}
	}
	return real
}

// wholeDisk maps a partition to its disk. sysfs knows: a partition has a
// "partition" file and sits in its disk's directory. Without a sysfs entry
// the kernel's naming rule decides.
func (r diskResolver) wholeDisk(name string, devs blockDevices) string {
	if disk, ok := r.partitionInSysfs(name, devs); ok {
		return disk
	}
	if _, err := os.Lstat(filepath.Join(r.sysRoot, "class", "block", name)); err == nil {
		return name
	}
	disk, _ := partitionOf(name, devs.has)
	return disk
}

func (r diskResolver) partitionInSysfs(name string, devs blockDevices) (string, bool) {
	entry := filepath.Join(r.sysRoot, "class", "block", name)
	if parent, ok := r.linkParent(entry); ok {
		return parent, devs.has(parent)
	}
	if _, err := os.Stat(filepath.Join(entry, "partition")); err != nil {
		return "", false
	}
	real, err := r.follow(entry)
	if err != nil {
		return "", false
	}
	disk := filepath.Base(filepath.Dir(real))
	return disk, devs.has(disk)
}

// linkParent reads the link of a /sys/class/block entry in one system
// call and returns the name of the directory that holds its target, when
// that is the lexical join of the two (see follow). A block device's
// directory holds no other block device than its partitions, so that name
// is the disk of a partition, and no block device for a whole disk
// ("block", or its controller's). The long way, a stat of the entry's
// "partition" file, of the link and of its target, took three of a
// partition leaf's five system calls at a --once, each a walk of a long
// sysfs path.
func (r diskResolver) linkParent(entry string) (string, bool) {
	link, target, exact, err := r.readLink(entry)
	if err != nil || !exact || filepath.IsAbs(link) {
		return "", false
	}
	return filepath.Base(filepath.Dir(target)), true
}

// isPartition tells whether a diskstats entry is a partition.
func (r diskResolver) isPartition(name string, devs blockDevices) bool {
	return r.wholeDisk(name, devs) != name
}
