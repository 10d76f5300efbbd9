package hostgen

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// The figures of a virtio disk in the disk collector's diskstats fixture
// (collector/testdata/disk-linux): vdb, its ZFS partition vdb1 and the
// partition ZFS reserves at its end, vdb9. Every generated disk has them.
const (
	diskFigures      = "60153 3260 13835190 270688 118203 13073 24468021 413710 0 456265 684398 0 0 0 0 453 73"
	partitionFigures = "58348 3162 13420134 262567 114656 12680 23733980 401298 0 442577 663866 0 0 0 0 0 0"
	reservedFigures  = "60 3 13835 270 118 13 24468 413 0 456 684 0 0 0 0 0 0"
	idleFigures      = "0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0"
)

// virtioMajor is the block major the guest's virtio disks had; each disk
// has 16 minors, for its partitions.
const virtioMajor = 254

// writeDiskstats writes /proc/diskstats: the system disk vda, each leaf's
// disk with its two partitions, and the loop devices a Debian guest has.
func writeDiskstats(w *bufio.Writer, h host) {
	line := func(major, minor int, name, figures string) {
		fmt.Fprintf(w, "%4d %7d %s %s\n", major, minor, name, figures)
	}
	line(virtioMajor, 0, "vda", diskFigures)
	for _, p := range h.pools {
		for _, m := range p.mirrors {
			for _, l := range m.leaves {
				minor := (l.index + 1) * 16
				line(virtioMajor, minor, l.disk, diskFigures)
				line(virtioMajor, minor+1, l.disk+"1", partitionFigures)
				line(virtioMajor, minor+9, l.disk+"9", reservedFigures)
			}
		}
	}
	for i := range 8 {
		line(7, i, "loop"+strconv.Itoa(i), idleFigures)
	}
}

// writeDeviceTree lays out what the disk join looks up for each leaf: its
// links under /dev/disk/by-id (the disk and both partitions), the device
// nodes they point to (empty files: the join reads names, not devices),
// and the disk's and partitions' entries in /sys/class/block, a partition
// beneath its disk's directory as sysfs has it.
func writeDeviceTree(dir string, h host) error {
	for _, p := range h.pools {
		for _, m := range p.mirrors {
			for _, l := range m.leaves {
				if err := writeDiskNodes(dir, l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func writeDiskNodes(dir string, l leaf) error {
	device := filepath.Join("devices", "pci0000:00", "virtio"+strconv.Itoa(l.index+1), "block", l.disk)
	for _, part := range []string{"", "1", "9"} {
		name := l.disk + part
		link := l.name
		sysEntry := device
		if part != "" {
			link += "-part" + part
			sysEntry = filepath.Join(device, name)
			if err := writeFile(filepath.Join(dir, "sys", sysEntry, "partition"), part+"\n"); err != nil {
				return err
			}
		}
		if err := writeFile(filepath.Join(dir, "dev", name), ""); err != nil {
			return err
		}
		if err := symlink(filepath.Join("..", "..", name), filepath.Join(dir, "dev", "disk", "by-id", link)); err != nil {
			return err
		}
		if err := symlink(filepath.Join("..", "..", sysEntry), filepath.Join(dir, "sys", "class", "block", name)); err != nil {
			return err
		}
	}
	return nil
}

func symlink(target, link string) error {
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	return os.Symlink(target, link)
}

func writeFile(path, contents string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(contents), 0o644)
}
