package zpool

import (
	"fmt"
	"strings"
	"testing"
)

// names lists "name (printed)" for every vdev below the root, depth first.
func names(root *Vdev) []string {
	var out []string
	var walk func(v *Vdev)
	walk = func(v *Vdev) {
		for _, c := range v.Children {
			out = append(out, fmt.Sprintf("%s (%s)", c.Name, c.PrintedName()))
			walk(c)
		}
	}
	walk(root)
	return out
}

func TestQualifyNames(t *testing.T) {
	pool := testPool("tank",
		normal(
			vd("draid1:2d:4c:1s-0", "draid1", vd("spare-0", "spare", leaf("sda"), leaf("draid1-0-0")), leaf("sdb")),
			vd("draid1:2d:4c:1s-1", "draid1", vd("spare-0", "spare", leaf("sde"), leaf("draid1-1-0")), leaf("sdf")),
			vd("raidz1-2", "raidz1", vd("replacing-0", "replacing", leaf("sdi"), leaf("sdy")), leaf("sdj")),
			vd("raidz1-3", "raidz1", vd("replacing-0", "replacing", leaf("sdm"), leaf("sdz")), leaf("sdn")),
			vd("mirror-4", "mirror", leaf("sdq"), vd("spare-1", "spare", leaf("sdr"), leaf("sds"))),
			vd("mirror-5", "mirror", leaf("sdq"), leaf("sdt")),       // a leaf name taken twice
			vd("replacing-6", "replacing", leaf("sdu"), leaf("sdv")), // a top-level disk being replaced
		),
		class(ClassSpare, leaf("draid1-0-0"), leaf("draid1-1-0"), leaf("sds")),
	)
	want := []string{
		"draid1:2d:4c:1s-0 (draid1:2d:4c:1s-0)",
		"draid1:2d:4c:1s-0/spare-0 (spare-0)",
		"sda (sda)",
		"draid1-0-0 (draid1-0-0)",
		"sdb (sdb)",
		"draid1:2d:4c:1s-1 (draid1:2d:4c:1s-1)",
		"draid1:2d:4c:1s-1/spare-0 (spare-0)",
		"sde (sde)",
		"draid1-1-0 (draid1-1-0)",
		"sdf (sdf)",
		"raidz1-2 (raidz1-2)",
		"raidz1-2/replacing-0 (replacing-0)",
		"sdi (sdi)",
		"sdy (sdy)",
		"sdj (sdj)",
		"raidz1-3 (raidz1-3)",
		"raidz1-3/replacing-0 (replacing-0)",
		"sdm (sdm)",
		"sdz (sdz)",
		"sdn (sdn)",
		"mirror-4 (mirror-4)",
		"sdq (sdq)",
		"mirror-4/spare-1 (spare-1)",
		"sdr (sdr)",
		"sds (sds)", // the active spare keeps its name: it is one vdev with its slot
		"mirror-5 (mirror-5)",
		"mirror-5/sdq (sdq)",
		"sdt (sdt)",
		"replacing-6 (replacing-6)",
		"sdu (sdu)",
		"sdv (sdv)",
		"draid1-0-0 (draid1-0-0)",
		"draid1-1-0 (draid1-1-0)",
		"sds (sds)",
	}
	if got := names(pool.Root); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("names:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A tree named already keeps its names.
	qualifyNames(pool.Root)
	if got := names(pool.Root); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("names after a second pass:\n%s", strings.Join(got, "\n"))
	}
}

// A device path names its leaf as zpool names a whole disk's: without the
// partition zpool made on it.
func TestLeafName(t *testing.T) {
	for path, want := range map[string]string{
		"/dev/disk/by-id/virtio-zd04-part1":              "virtio-zd04",
		"/dev/disk/by-id/ata-WDC_WD40EFRX-68N_WD-WCC7K1": "ata-WDC_WD40EFRX-68N_WD-WCC7K1",
		"/dev/sda1":             "sda",
		"/dev/xvdb9":            "xvdb",
		"/dev/nvme0n1p1":        "nvme0n1",
		"/dev/nvme0n1":          "nvme0n1",
		"/var/tmp/disk1":        "disk1",
		"/dev/gpt/zfs0":         "zfs0",
		"/dev/mapper/crypt-sdb": "crypt-sdb",
	} {
		if got := LeafName(path); got != want {
			t.Errorf("LeafName(%q) = %q, want %q", path, got, want)
		}
	}
}
