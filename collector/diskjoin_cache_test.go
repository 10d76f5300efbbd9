package collector

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/procfs/blockdevice"
)

// ageDevTree sets the times of every directory under devRoot an hour back,
// as on a host whose links udev made at boot.
func ageDevTree(t *testing.T, devRoot string) {
	t.Helper()
	past := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(devRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, past, past)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A scrape finds each leaf's disk again only when the block devices or
// the links under /dev have changed since the last one.
func TestDiskJoinKeptUntilDevicesChange(t *testing.T) {
	var logs bytes.Buffer
	e := diskExporter(t, true, &logs)
	dc := e.collectors["disk"].(*diskCollector)
	stats := 0
	dc.resolver.stat = func(p string) (fileDevice, error) {
		stats++
		return fakeFileStat(p)
	}
	devRoot := dc.resolver.devRoot
	ageDevTree(t, devRoot)
	scrape := func() []string {
		t.Helper()
		stats = 0
		return diskSeries(gatherFrom(t, fixedStatus{e, diskTestStatus()}), "zfs_disk_io_now")
	}

	first := scrape()
	if stats == 0 {
		t.Fatal("the first scrape looked up no file vdev")
	}
	if !slices.Contains(first, "vdc tank virtio-zs01") {
		t.Fatalf("the spare virtio-zs01 does not join vdc: %q", first)
	}
	if again := scrape(); stats != 0 || !slices.Equal(again, first) {
		t.Errorf("with nothing changed, the second scrape looked %d paths up and joined %q, want none and %q", stats, again, first)
	}

	// udev repoints the spare's link to another disk.
	link := filepath.Join(devRoot, "disk", "by-id", "virtio-zs01")
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	symlink(t, link, "../../vdb")
	moved := scrape()
	if stats == 0 || !slices.Contains(moved, "vdb tank virtio-zs01") {
		t.Errorf("after the link moved, the scrape looked %d paths up and joined %q, want virtio-zs01 on vdb", stats, moved)
	}
}

func TestJoinStamp(t *testing.T) {
	devRoot := t.TempDir()
	byID := filepath.Join(devRoot, "disk", "by-id")
	if err := os.MkdirAll(byID, 0o755); err != nil {
		t.Fatal(err)
	}
	ageDevTree(t, devRoot)
	now := time.Now()
	sda := blockdevice.Diskstats{Info: blockdevice.Info{MajorNumber: 8, MinorNumber: 0, DeviceName: "sda"}}
	sdb := blockdevice.Diskstats{Info: blockdevice.Info{MajorNumber: 8, MinorNumber: 16, DeviceName: "sdb"}}
	sdbAsSdc := blockdevice.Diskstats{Info: blockdevice.Info{MajorNumber: 8, MinorNumber: 16, DeviceName: "sdc"}}

	base, settled := joinStamp([]blockdevice.Diskstats{sda, sdb}, devRoot, now)
	if !settled {
		t.Error("links made an hour ago are not settled")
	}
	if again, _ := joinStamp([]blockdevice.Diskstats{sda, sdb}, devRoot, now); again != base {
		t.Error("the same devices and links give another stamp")
	}
	for name, stats := range map[string][]blockdevice.Diskstats{
		"a disk gone":    {sda},
		"a disk renamed": {sda, sdbAsSdc},
	} {
		if s, _ := joinStamp(stats, devRoot, now); s == base {
			t.Errorf("%s: same stamp", name)
		}
	}
	if err := os.Symlink("../../sdb", filepath.Join(byID, "wwn-1")); err != nil {
		t.Skipf("cannot make symlinks here: %v", err)
	}
	s, settled := joinStamp([]blockdevice.Diskstats{sda, sdb}, devRoot, time.Now())
	if s == base {
		t.Error("a new link under /dev/disk/by-id gives the same stamp")
	}
	if settled {
		t.Error("a link made just now is settled")
	}
}

func TestJoinCacheRenew(t *testing.T) {
	now := time.Now()
	var c joinCache
	c.renew(1, true, now)
	c.leaves[leafKey{name: "sda"}] = leafJoin{device: "sda"}
	kept := func() bool { _, ok := c.leaves[leafKey{name: "sda"}]; return ok }

	if c.renew(1, true, now.Add(time.Minute)); !kept() {
		t.Error("a settled cache with the same stamp was emptied")
	}
	if c.renew(1, true, now.Add(joinCacheMaxAge)); kept() {
		t.Error("a cache older than joinCacheMaxAge was kept")
	}
	c.leaves[leafKey{name: "sda"}] = leafJoin{device: "sda"}
	if c.renew(2, true, now.Add(joinCacheMaxAge+time.Second)); kept() {
		t.Error("a cache with another stamp was kept")
	}
	c.renew(3, false, now)
	c.leaves[leafKey{name: "sda"}] = leafJoin{device: "sda"}
	if c.renew(3, true, now.Add(time.Second)); kept() {
		t.Error("a cache stamped while links were changing was kept")
	}
}
