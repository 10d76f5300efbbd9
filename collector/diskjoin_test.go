package collector

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// zpool prints a leaf by its path with the search directory stripped, and
// a whole disk without its partition; JSON status adds the full path.
func TestLeafLookups(t *testing.T) {
	for _, tc := range []struct {
		form, name, path string
		first            string   // the best look-up
		also             []string // further look-ups that must be among them
	}{
		{"kernel name", "sda", "", "disk/by-vdev/sda", []string{"sda", "disk/by-id/sda"}},
		{"absolute /dev path", "/dev/sda1", "/dev/sda1", "sda1", nil},
		{"by-id as printed, with JSON path", "virtio-zd03", "/dev/disk/by-id/virtio-zd03-part1", "disk/by-id/virtio-zd03-part1", []string{"disk/by-id/virtio-zd03"}},
		{"by-id as printed, text status", "virtio-zd03", "", "disk/by-vdev/virtio-zd03", []string{"disk/by-id/virtio-zd03"}},
		{"wwn", "wwn-0x5000c500a1b2c3d4", "", "disk/by-vdev/wwn-0x5000c500a1b2c3d4", []string{"disk/by-id/wwn-0x5000c500a1b2c3d4"}},
		{"ata partition", "ata-ST4000DM004-2CV104_ZFN0000A-part3", "", "disk/by-vdev/ata-ST4000DM004-2CV104_ZFN0000A-part3",
			[]string{"disk/by-id/ata-ST4000DM004-2CV104_ZFN0000A-part3", "disk/by-id/ata-ST4000DM004-2CV104_ZFN0000A"}},
		{"by-path", "pci-0000:00:1f.2-ata-1", "", "disk/by-vdev/pci-0000:00:1f.2-ata-1", []string{"disk/by-path/pci-0000:00:1f.2-ata-1"}},
		{"by-vdev alias", "A0", "/dev/disk/by-vdev/A0-part1", "disk/by-vdev/A0-part1", []string{"disk/by-vdev/A0"}},
		{"by-vdev alias as a full name", "/dev/disk/by-vdev/A0", "/dev/disk/by-vdev/A0", "disk/by-vdev/A0", nil},
		{"by-partuuid", "3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d", "", "disk/by-vdev/3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d", []string{"disk/by-partuuid/3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d"}},
		{"nvme partition", "nvme0n1p2", "", "disk/by-vdev/nvme0n1p2", []string{"nvme0n1p2"}},
		{"device-mapper", "vg0-zfs", "", "disk/by-vdev/vg0-zfs", []string{"mapper/vg0-zfs"}},
	} {
		t.Run(tc.form, func(t *testing.T) {
			got := leafLookups(tc.name, tc.path)
			if len(got) == 0 || got[0] != tc.first {
				t.Fatalf("leafLookups(%q, %q) = %q, want %q first", tc.name, tc.path, got, tc.first)
			}
			for _, want := range tc.also {
				if !slices.Contains(got, want) {
					t.Errorf("leafLookups(%q, %q) = %q, lacks %q", tc.name, tc.path, got, want)
				}
			}
			for i, p := range got {
				if slices.Contains(got[i+1:], p) {
					t.Errorf("%q looked up twice", p)
				}
			}
		})
	}
	// /dev itself comes last, as in zpool's search path.
	if got := leafLookups("sda", ""); got[len(got)-1] != "sda" {
		t.Errorf("leafLookups(sda) ends with %q, want /dev/sda", got[len(got)-1])
	}
}

func TestStripLinkPartition(t *testing.T) {
	for _, tc := range []struct {
		link, want string
		ok         bool
	}{
		{"ata-ST4000DM004-2CV104_ZFN0000A-part3", "ata-ST4000DM004-2CV104_ZFN0000A", true},
		{"virtio-zd03-part1", "virtio-zd03", true},
		{"pci-0000:00:1f.2-ata-1-part1", "pci-0000:00:1f.2-ata-1", true},
		{"A0-part9", "A0", true},
		{"wwn-0x5000c500a1b2c3d4-part12", "wwn-0x5000c500a1b2c3d4", true},
		{"wwn-0x5000c500a1b2c3d4", "wwn-0x5000c500a1b2c3d4", false},
		{"pci-0000:00:1f.2-ata-1", "pci-0000:00:1f.2-ata-1", false},
		{"disk-part", "disk-part", false},
		{"disk-partx1", "disk-partx1", false},
		{"-part1", "-part1", false},
	} {
		got, ok := stripLinkPartition(tc.link)
		if got != tc.want || ok != tc.ok {
			t.Errorf("stripLinkPartition(%q) = %q, %v; want %q, %v", tc.link, got, ok, tc.want, tc.ok)
		}
	}
}

func TestPartitionOf(t *testing.T) {
	disks := []string{"sda", "sdaa", "vdb", "xvda", "hda", "nvme0n1", "mmcblk0", "zd0", "md127", "loop1", "nbd1", "nbd10", "dm-0", "sr0"}
	known := func(name string) bool { return slices.Contains(disks, name) }
	for _, tc := range []struct {
		name, disk string
		ok         bool
	}{
		{"sda1", "sda", true},
		{"sda15", "sda", true},
		{"sdaa2", "sdaa", true},
		{"vdb9", "vdb", true},
		{"xvda1", "xvda", true},
		{"hda3", "hda", true},
		{"nvme0n1p2", "nvme0n1", true},
		{"mmcblk0p1", "mmcblk0", true},
		{"zd0p1", "zd0", true},
		{"md127p1", "md127", true},
		{"loop1p1", "loop1", true},
		// Disks whose names end in digits.
		{"sda", "sda", false},
		{"nvme0n1", "nvme0n1", false},
		{"loop1", "loop1", false},
		{"nbd10", "nbd10", false}, // not partition 0 of nbd1
		{"md127", "md127", false},
		{"dm-0", "dm-0", false},
		{"sr0", "sr0", false},
		{"zd0", "zd0", false},
		// A partition of a disk diskstats does not list stays as it is.
		{"sdz1", "sdz1", false},
		{"nvme1n1p1", "nvme1n1p1", false},
		{"", "", false},
		{"12", "12", false},
	} {
		disk, ok := partitionOf(tc.name, known)
		if disk != tc.disk || ok != tc.ok {
			t.Errorf("partitionOf(%q) = %q, %v; want %q, %v", tc.name, disk, ok, tc.disk, tc.ok)
		}
	}
}

func TestFileVdevPath(t *testing.T) {
	for _, tc := range []struct {
		v    zpool.Vdev
		path string
		ok   bool
	}{
		{zpool.Vdev{Name: "/var/tmp/x/z1", Type: "file"}, "/var/tmp/x/z1", true},
		{zpool.Vdev{Name: "/var/tmp/x/z1", Type: "file", Path: "/var/tmp/x/z1"}, "/var/tmp/x/z1", true},
		{zpool.Vdev{Name: "z1", Type: "file", Path: "/srv/pool/z1"}, "/srv/pool/z1", true},
		{zpool.Vdev{Name: "/dev/sda", Type: "disk", Path: "/dev/sda"}, "", false},
		{zpool.Vdev{Name: "virtio-zd03", Type: "disk", Path: "/dev/disk/by-id/virtio-zd03-part1"}, "", false},
		{zpool.Vdev{Name: "sda", Type: "disk"}, "", false},
	} {
		got, ok := fileVdevPath(&tc.v)
		if got != tc.path || ok != tc.ok {
			t.Errorf("fileVdevPath(%+v) = %q, %v; want %q, %v", tc.v, got, ok, tc.path, tc.ok)
		}
	}
}

func TestIsDiskLeaf(t *testing.T) {
	leaf := &zpool.Vdev{Name: "sda", Type: "disk"}
	for _, tc := range []struct {
		v    *zpool.Vdev
		want bool
	}{
		{leaf, true},
		{&zpool.Vdev{Name: "/var/tmp/z1", Type: "file"}, true},
		{&zpool.Vdev{Name: "mirror-0", Type: "mirror", Children: []*zpool.Vdev{leaf}}, false},
		{&zpool.Vdev{Name: "tank", Type: "root", Children: []*zpool.Vdev{leaf}}, false},
		{&zpool.Vdev{Name: "draid1-0-0", Type: "dspare"}, false},
		{&zpool.Vdev{Name: "hole", Type: "hole"}, false},
		{&zpool.Vdev{Name: "12345", Type: "missing"}, false},
	} {
		if got := isDiskLeaf(tc.v); got != tc.want {
			t.Errorf("isDiskLeaf(%s %s) = %v", tc.v.Type, tc.v.Name, got)
		}
	}
}

func TestIsVirtualDisk(t *testing.T) {
	for name, want := range map[string]bool{
		"loop0": true, "loop12": true, "ram0": true, "zram0": true, "dm-3": true, "zd16": true, "sr0": true, "fd0": true,
		"sda": false, "vdb": false, "nvme0n1": false, "md127": false, "loop": false, "dm-": false, "zdisk": false, "sdram0": false,
	} {
		if got := isVirtualDisk(name); got != want {
			t.Errorf("isVirtualDisk(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestLinuxDevNumber(t *testing.T) {
	for _, tc := range []struct {
		dev  uint64
		want devNumber
	}{
		{0x0803, devNumber{8, 3}},
		{0x10301, devNumber{259, 1}},
		{0xfe11, devNumber{254, 17}},
		{0x10fe2c, devNumber{254, 300}},          // minor above 255
		{0x0000100000000000, devNumber{4096, 0}}, // major above 4095
		{0x2d, devNumber{0, 45}},                 // an anonymous device (tmpfs)
	} {
		if got := linuxDevNumber(tc.dev); got != tc.want {
			t.Errorf("linuxDevNumber(%#x) = %v, want %v", tc.dev, got, tc.want)
		}
	}
}

// /dev/null is character device 1:3 on every Linux.
func TestStatDevice(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux device numbers")
	}
	fd, err := statDevice("/dev/null")
	if err != nil {
		t.Skip(err)
	}
	if !fd.isDevice || fd.rdev != (devNumber{1, 3}) {
		t.Errorf("stat /dev/null = %+v, want a device 1:3", fd)
	}
	f := filepath.Join(t.TempDir(), "z1")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if fd, err := statDevice(f); err != nil || fd.isDevice {
		t.Errorf("stat of a file = %+v, %v; want no device node and no error", fd, err)
	}
	if _, err := statDevice(f + ".missing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of a missing file: %v", err)
	}
}

// diskTree lays out /dev and /sys in a temp dir for the devices of
// testdata/disk-linux/proc/diskstats, with relative links as udev makes
// them. Device nodes are empty files, which the look-ups match by name.
// The NVMe disk has no sysfs entries, so its partitions are told by the
// kernel's naming rule.
func diskTree(t *testing.T) (devRoot, sysRoot string) {
	t.Helper()
	root := t.TempDir()
	devRoot, sysRoot = filepath.Join(root, "dev"), filepath.Join(root, "sys")
	partitions := map[string][]string{
		"sda": {"sda1", "sda2", "sda3"}, "sdb": {"sdb1", "sdb9"}, "sdc": nil, "sdd": {"sdd1", "sdd9"},
		"sde": {"sde1", "sde9"}, "sdf": {"sdf1"}, "sdg": {"sdg1"}, "vdb": {"vdb1", "vdb9"}, "vdc": {"vdc1", "vdc9"},
		"loop0": nil, "loop1": nil, "sr0": nil, "dm-0": nil, "dm-1": nil, "zd0": nil,
	}
	for disk, parts := range partitions {
		dir := filepath.Join(sysRoot, "devices", "platform", "block", disk)
		mkfile(t, filepath.Join(dir, "size"))
		symlink(t, filepath.Join(sysRoot, "class", "block", disk), "../../devices/platform/block/"+disk)
		mkfile(t, filepath.Join(devRoot, disk))
		for _, part := range parts {
			mkfile(t, filepath.Join(dir, part, "partition"))
			symlink(t, filepath.Join(sysRoot, "class", "block", part), "../../devices/platform/block/"+disk+"/"+part)
			mkfile(t, filepath.Join(devRoot, part))
		}
	}
	for _, node := range []string{"nvme0n1", "nvme0n1p1", "nvme0n1p2"} {
		mkfile(t, filepath.Join(devRoot, node))
	}
	for link, target := range map[string]string{
		"disk/by-id/wwn-0x5000c500a1b2c3d4":                        "../../sdb",
		"disk/by-id/wwn-0x5000c500a1b2c3d4-part1":                  "../../sdb1",
		"disk/by-id/wwn-0x5000c500a1b2c3d4-part9":                  "../../sdb9",
		"disk/by-id/ata-SAMSUNG_MZ7LH240HAHQ_S45RNA0M000001":       "../../sda",
		"disk/by-id/ata-SAMSUNG_MZ7LH240HAHQ_S45RNA0M000001-part3": "../../sda3",
		"disk/by-id/virtio-zd03":                                   "../../vdb",
		"disk/by-id/virtio-zd03-part1":                             "../../vdb1",
		"disk/by-id/virtio-zs01":                                   "../../vdc",
		"disk/by-id/virtio-zs01-part1":                             "../../vdc1",
		"disk/by-id/nvme-Samsung_SSD_980_1TB_S649NF0R000001":       "../../nvme0n1",
		"disk/by-id/nvme-Samsung_SSD_980_1TB_S649NF0R000001-part2": "../../nvme0n1p2",
		"disk/by-id/dm-name-vg0-zfs":                               "../../dm-0",
		"disk/by-path/pci-0000:00:1f.2-ata-3":                      "../../sdc",
		"disk/by-vdev/A0":                                          "../../sdd",
		"disk/by-vdev/A0-part1":                                    "../../sdd1",
		"disk/by-partuuid/3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d":    "../../sdg1",
		"mapper/vg0-zfs":                                           "../dm-0",
		// A partition whose link udev has not made yet.
		"disk/by-id/ata-ST4000DM004-2CV104_ZFN0000A": "../../sdf",
	} {
		symlink(t, filepath.Join(devRoot, filepath.FromSlash(link)), target)
	}
	return devRoot, sysRoot
}

func mkfile(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, link, target string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make symlinks here: %v", err)
	}
}

// fakeFileStat answers stat for the file vdevs of the tests: z1 sits on
// the file system of dm-0 (253:0), z2 on tmpfs (0:45), which is no block
// device.
func fakeFileStat(p string) (fileDevice, error) {
	switch p {
	case "/var/tmp/x/z1":
		return fileDevice{dev: devNumber{253, 0}}, nil
	case "/var/tmp/x/z2":
		return fileDevice{dev: devNumber{0, 45}}, nil
	case "/var/tmp/x/z3":
		return fileDevice{}, os.ErrNotExist
	}
	return statDevice(p)
}

func testDiskIndex(t *testing.T) *diskIndex {
	t.Helper()
	c := &diskCollector{procRoot: "testdata/disk-linux/proc"}
	stats, err := c.readDiskstats()
	if err != nil {
		t.Fatal(err)
	}
	return newDiskIndex(stats)
}

func TestResolveLeaves(t *testing.T) {
	devRoot, sysRoot := diskTree(t)
	r := diskResolver{devRoot: devRoot, sysRoot: sysRoot, stat: fakeFileStat}
	devs := testDiskIndex(t)
	for _, tc := range []struct {
		form string
		v    zpool.Vdev
		want string // "" when the leaf cannot be joined
	}{
		{"kernel name", zpool.Vdev{Name: "sdc", Type: "disk"}, "sdc"},
		{"kernel partition", zpool.Vdev{Name: "sda3", Type: "disk"}, "sda"},
		{"absolute /dev path", zpool.Vdev{Name: "/dev/sde", Type: "disk", Path: "/dev/sde"}, "sde"},
		{"absolute /dev partition", zpool.Vdev{Name: "/dev/sde1", Type: "disk", Path: "/dev/sde1"}, "sde"},
		{"by-id, JSON path", zpool.Vdev{Name: "virtio-zd03", Type: "disk", Path: "/dev/disk/by-id/virtio-zd03-part1"}, "vdb"},
		{"by-id, text", zpool.Vdev{Name: "virtio-zd03", Type: "disk"}, "vdb"},
		{"wwn", zpool.Vdev{Name: "wwn-0x5000c500a1b2c3d4", Type: "disk"}, "sdb"},
		{"wwn partition", zpool.Vdev{Name: "wwn-0x5000c500a1b2c3d4-part9", Type: "disk"}, "sdb"},
		{"ata partition", zpool.Vdev{Name: "ata-SAMSUNG_MZ7LH240HAHQ_S45RNA0M000001-part3", Type: "disk"}, "sda"},
		{"ata partition without its link", zpool.Vdev{Name: "ata-ST4000DM004-2CV104_ZFN0000A-part1", Type: "disk"}, "sdf"},
		{"by-path", zpool.Vdev{Name: "pci-0000:00:1f.2-ata-3", Type: "disk"}, "sdc"},
		{"by-vdev alias", zpool.Vdev{Name: "A0", Type: "disk", Path: "/dev/disk/by-vdev/A0-part1"}, "sdd"},
		{"by-vdev full path", zpool.Vdev{Name: "/dev/disk/by-vdev/A0-part1", Type: "disk"}, "sdd"},
		{"by-partuuid", zpool.Vdev{Name: "3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d", Type: "disk"}, "sdg"},
		{"nvme partition by name rule", zpool.Vdev{Name: "nvme0n1p2", Type: "disk"}, "nvme0n1"},
		{"nvme by-id", zpool.Vdev{Name: "nvme-Samsung_SSD_980_1TB_S649NF0R000001", Type: "disk", Path: "/dev/disk/by-id/nvme-Samsung_SSD_980_1TB_S649NF0R000001-part2"}, "nvme0n1"},
		{"device-mapper", zpool.Vdev{Name: "vg0-zfs", Type: "disk"}, "dm-0"},
		{"file on a disk", zpool.Vdev{Name: "/var/tmp/x/z1", Type: "file"}, "dm-0"},
		{"file on tmpfs", zpool.Vdev{Name: "/var/tmp/x/z2", Type: "file"}, ""},
		{"file gone", zpool.Vdev{Name: "/var/tmp/x/z3", Type: "file"}, ""},
		{"no such device", zpool.Vdev{Name: "ata-GONE_0000", Type: "disk"}, ""},
		{"no such partition", zpool.Vdev{Name: "sdz1", Type: "disk", Path: "/dev/sdz1"}, ""},
	} {
		t.Run(tc.form, func(t *testing.T) {
			got, err := r.resolve(&tc.v, devs)
			if tc.want == "" {
				if err == nil {
					t.Errorf("resolve(%s) = %q, want an error", tc.v.Name, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("resolve(%s) = %q, %v; want %q", tc.v.Name, got, err, tc.want)
			}
		})
	}
	// Without /dev, kernel names still join.
	bare := diskResolver{devRoot: filepath.Join(devRoot, "missing"), sysRoot: sysRoot, stat: fakeFileStat}
	if got, err := bare.resolve(&zpool.Vdev{Name: "vdb1", Type: "disk", Path: "/dev/vdb1"}, devs); err != nil || got != "vdb" {
		t.Errorf("resolve(vdb1) without /dev = %q, %v; want vdb", got, err)
	}
	if _, err := bare.resolve(&zpool.Vdev{Name: "virtio-zd03", Type: "disk"}, devs); !errors.Is(err, errNoDevice) {
		t.Errorf("resolve(virtio-zd03) without /dev: %v, want errNoDevice", err)
	}
}

// sysfs decides what a partition is; the name rule only fills in for
// devices sysfs does not list.
func TestIsPartition(t *testing.T) {
	devRoot, sysRoot := diskTree(t)
	r := diskResolver{devRoot: devRoot, sysRoot: sysRoot, stat: fakeFileStat}
	devs := testDiskIndex(t)
	for name, want := range map[string]bool{
		"sda": false, "sda1": true, "sdb9": true, "vdb": false, "vdb1": true, "nvme0n1": false, "nvme0n1p1": true,
		"loop0": false, "dm-0": false, "zd0": false, "sr0": false,
	} {
		if got := r.isPartition(name, devs); got != want {
			t.Errorf("isPartition(%s) = %v, want %v", name, got, want)
		}
	}
	// A partition sysfs files under a disk of another name.
	mkfile(t, filepath.Join(sysRoot, "devices", "platform", "block", "sdc", "weird0", "partition"))
	symlink(t, filepath.Join(sysRoot, "class", "block", "sdc7"), "../../devices/platform/block/sdc/weird0")
	if got := r.wholeDisk("sdc7", devs); got != "sdc" {
		t.Errorf("wholeDisk(sdc7) = %q, want sdc from sysfs", got)
	}
	// The directory that holds a link's target tells, in one readlink: a
	// partition of sdc whose "partition" file cannot be read is still
	// sdc's, and a whole disk under a directory that is no block device
	// (an NVMe controller's) is its own.
	if err := os.MkdirAll(filepath.Join(sysRoot, "devices", "platform", "block", "sdc", "sdc8"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(sysRoot, "class", "block", "sdc8"), "../../devices/platform/block/sdc/sdc8")
	if got := r.wholeDisk("sdc8", devs); got != "sdc" {
		t.Errorf("wholeDisk(sdc8) = %q, want sdc from where sysfs puts it", got)
	}
	if err := os.MkdirAll(filepath.Join(sysRoot, "devices", "pci", "nvme", "nvme0", "sdb"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(sysRoot, "class", "block", "sdb")); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(sysRoot, "class", "block", "sdb"), "../../devices/pci/nvme/nvme0/sdb")
	if r.isPartition("sdb", devs) {
		t.Error("isPartition(sdb) under a controller's directory = true, want false")
	}
}

// follow takes a link's target without stating the link when the
// directory it is in has no symlink in its path and the target's ".."
// components lead. These trees break each condition in turn: a directory
// of links that is itself a link, whose ".." then leads elsewhere than the
// lexical join, and a sysfs entry whose target goes up after a name that
// is a link. follow must find the real path all the same, and the join
// the right disk under a partition.
func TestFollowSymlinkedDirectories(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	devRoot, sysRoot := filepath.Join(root, "dev"), filepath.Join(root, "sys")
	// /dev/disk/by-id is a link to elsewhere/by-id: its links' "../../"
	// lead to root, not to /dev. Both places hold a node1, of two devices.
	mkfile(t, filepath.Join(root, "elsewhere", "by-id", "keep"))
	symlink(t, filepath.Join(devRoot, "disk", "by-id"), "../../elsewhere/by-id")
	symlink(t, filepath.Join(root, "elsewhere", "by-id", "virtio-A-part1"), "../../node1")
	mkfile(t, filepath.Join(root, "node1"))
	mkfile(t, filepath.Join(devRoot, "node1"))
	// A directory of links that is a real path, and a link in it.
	symlink(t, filepath.Join(devRoot, "disk", "by-path", "pci-B-part1"), "../../node2")
	mkfile(t, filepath.Join(devRoot, "node2"))
	// sysfs: sdb1's target goes up out of "hop", a link into sdb's
	// directory, so that its partition sits under sdb; the lexical join
	// puts it under sda, where a decoy stands.
	for _, part := range []string{"sda/sda1", "sdb/sdb1"} {
		mkfile(t, filepath.Join(sysRoot, "devices", "platform", "block", filepath.FromSlash(part), "partition"))
	}
	if err := os.MkdirAll(filepath.Join(sysRoot, "devices", "platform", "block", "sdb", "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(sysRoot, "devices", "platform", "block", "sda", "hop"), "../sdb/sub")
	mkfile(t, filepath.Join(sysRoot, "devices", "platform", "block", "sda", "sdb1", "partition"))
	symlink(t, filepath.Join(sysRoot, "class", "block", "sdb1"), "../../devices/platform/block/sda/hop/../sdb1")
	symlink(t, filepath.Join(sysRoot, "class", "block", "sda1"), "../../devices/platform/block/sda/sda1")
	symlink(t, filepath.Join(sysRoot, "class", "block", "sdb"), "../../devices/platform/block/sdb")

	r := diskResolver{devRoot: devRoot, sysRoot: sysRoot, stat: func(p string) (fileDevice, error) {
		switch p {
		case filepath.Join(root, "node1"):
			return fileDevice{isDevice: true, rdev: devNumber{8, 17}}, nil // sdb1
		case filepath.Join(devRoot, "node1"), filepath.Join(devRoot, "node2"):
			return fileDevice{isDevice: true, rdev: devNumber{8, 1}}, nil // sda1
		}
		return fileDevice{}, os.ErrNotExist
	}}.forJoin()
	for _, p := range []string{
		filepath.Join(devRoot, "disk", "by-id", "virtio-A-part1"),
		filepath.Join(devRoot, "disk", "by-path", "pci-B-part1"),
		filepath.Join(sysRoot, "class", "block", "sdb1"),
		filepath.Join(sysRoot, "class", "block", "sda1"),
	} {
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := r.follow(p); err != nil || got != want {
			t.Errorf("follow(%s) = %q, %v; want %q", p, got, err, want)
		}
	}
	devs := testDiskIndex(t)
	for _, tc := range []struct {
		v    zpool.Vdev
		want string
	}{
		{zpool.Vdev{Name: "virtio-A", Type: "disk", Path: "/dev/disk/by-id/virtio-A-part1"}, "sdb"},
		{zpool.Vdev{Name: "pci-B", Type: "disk", Path: "/dev/disk/by-path/pci-B-part1"}, "sda"},
	} {
		if got, err := r.resolve(&tc.v, devs); err != nil || got != tc.want {
			t.Errorf("resolve(%s) = %q, %v; want %q", tc.v.Path, got, err, tc.want)
		}
	}
}

func TestDotDotsLead(t *testing.T) {
	for _, tc := range []struct {
		link   string
		up, ok bool
	}{
		{"sda", false, true},
		{"../../sda", true, true},
		{"./../sda", true, true},
		{"../../devices/pci0000:00/virtio26/block/vda/vda1", true, true},
		{"/dev/sda", false, true},
		{"../a/../sda", true, false},
		{"a/../sda", true, false},
		{"a/..", true, false},
		{"..", true, true},
		{"a//b/./c", false, true},
	} {
		if up, ok := dotDotsLead(tc.link); up != tc.up || ok != tc.ok {
			t.Errorf("dotDotsLead(%q) = %v, %v; want %v, %v", tc.link, up, ok, tc.up, tc.ok)
		}
	}
}
