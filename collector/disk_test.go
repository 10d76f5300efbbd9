package collector

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// diskTestStatus has a leaf in every naming form the join knows, over the
// disks of testdata/disk-linux (see diskTree):
//
//	tank   mirror-0: sdb (wwn, JSON path), sdc (by-path)
//	       mirror-1: sdd (by-vdev), spare-1 [sde (/dev path), vdc (by-id)]
//	       special nvme0n1p1, log sda3 (ata ...-part3), cache vdb (by-id),
//	       spare vdc again (in use)
//	fast   nvme0n1p2 (the same disk as tank's special), sdg (by-partuuid),
//	       a disk that is gone, an unavailable leaf last seen as sdf1
//	files  a file on dm-0, a file on tmpfs
func diskTestStatus() *zpool.Status {
	disk := func(name, path, state string) *zpool.Vdev {
		return &zpool.Vdev{Name: name, Type: "disk", Class: zpool.ClassNormal, State: state, Path: path}
	}
	in := func(class string, v *zpool.Vdev) *zpool.Vdev { v.Class = class; return v }
	interior := func(name, typ string, children ...*zpool.Vdev) *zpool.Vdev {
		return &zpool.Vdev{Name: name, Type: typ, Class: zpool.ClassNormal, State: "online", Children: children}
	}
	return &zpool.Status{Pools: []*zpool.Pool{
		{Name: "tank", State: "degraded", Root: interior("tank", "root",
			interior("mirror-0", "mirror",
				disk("wwn-0x5000c500a1b2c3d4", "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4-part1", "online"),
				disk("pci-0000:00:1f.2-ata-3", "", "online")),
			interior("mirror-1", "mirror",
				disk("A0", "/dev/disk/by-vdev/A0-part1", "online"),
				interior("spare-1", "spare",
					disk("/dev/sde", "/dev/sde", "faulted"),
					disk("virtio-zs01", "", "online"))),
			in(zpool.ClassSpecial, disk("nvme0n1p1", "", "online")),
			in(zpool.ClassLog, disk("ata-SAMSUNG_MZ7LH240HAHQ_S45RNA0M000001-part3", "", "online")),
			in(zpool.ClassCache, disk("virtio-zd03", "/dev/disk/by-id/virtio-zd03-part1", "online")),
			in(zpool.ClassSpare, disk("virtio-zs01", "", "inuse")))},
		{Name: "fast", State: "degraded", Root: interior("fast", "root",
			disk("nvme0n1p2", "", "online"),
			disk("3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d", "/dev/disk/by-partuuid/3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d", "online"),
			disk("ata-GONE_0000", "", "online"),
			disk("9876543210987654321", "/dev/sdf1", "unavail"))},
		{Name: "files", State: "online", Root: interior("files", "root",
			&zpool.Vdev{Name: "/var/tmp/x/z1", Type: "file", Class: zpool.ClassNormal, State: "online"},
			&zpool.Vdev{Name: "/var/tmp/x/z2", Type: "file", Class: zpool.ClassNormal, State: "online"})},
	}}
}

// fixedStatus runs the exporter's collectors on a scrape whose zpool
// status is given, as Exporter.Scraper does.
type fixedStatus struct {
	e      *Exporter
	status *zpool.Status
}

func (f fixedStatus) Describe(chan<- *prometheus.Desc) {}

func (f fixedStatus) Collect(ch chan<- prometheus.Metric) {
	scrape := f.e.cfg.ZFS.NewScrapeWithStatus(f.status, nil)
	f.e.scraperFor(context.Background(), scrape).Collect(ch)
}

// failedStatus runs the exporter's collectors on a scrape whose zpool
// status failed with err.
type failedStatus struct {
	e   *Exporter
	err error
}

func (f failedStatus) Describe(chan<- *prometheus.Desc) {}

func (f failedStatus) Collect(ch chan<- prometheus.Metric) {
	scrape := f.e.cfg.ZFS.NewScrapeWithStatus(nil, f.err)
	f.e.scraperFor(context.Background(), scrape).Collect(ch)
}

func diskExporter(t *testing.T, all bool, logs *bytes.Buffer) *Exporter {
	t.Helper()
	devRoot, sysRoot := diskTree(t)
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := testConfig(zfs.Config{Runner: nopRunner{}, Now: func() time.Time { return testNow }}, Config{ProcRoot: "testdata/disk-linux/proc", SysRoot: sysRoot, DevRoot: devRoot, DiskAll: all}, logger)
	e, err := New(cfg, logger, map[string]bool{"disk": true})
	if err != nil {
		t.Fatal(err)
	}
	e.collectors["disk"].(*diskCollector).resolver.stat = fakeFileStat
	return e
}

// series lists the label sets of a metric as "device pool vdev".
func diskSeries(families []*dto.MetricFamily, name string) []string {
	var out []string
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, p := range m.GetLabel() {
				l[p.GetName()] = p.GetValue()
			}
			out = append(out, l["device"]+" "+l["pool"]+" "+l["vdev"])
		}
	}
	return out
}

func TestDiskCollector(t *testing.T) {
	var logs bytes.Buffer
	e := diskExporter(t, true, &logs)
	c := fixedStatus{e, diskTestStatus()}
	fams := gatherFrom(t, c)
	compareGolden(t, filepath.Join("testdata", "disk-linux.prom"), exposition(t, fams))

	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "disk"}); v != 1 {
		t.Errorf("disk collector failed:\n%s", logs.String())
	}
	// Registry output is sorted by label values: device, pool, vdev.
	want := []string{
		"dm-0 files /var/tmp/x/z1",
		"nvme0n1 fast nvme0n1p2",
		"nvme0n1 tank nvme0n1p1",
		"sda tank ata-SAMSUNG_MZ7LH240HAHQ_S45RNA0M000001-part3",
		"sdb tank wwn-0x5000c500a1b2c3d4",
		"sdc tank pci-0000:00:1f.2-ata-3",
		"sdd tank A0",
		"sde tank /dev/sde",
		"sdf  ", // backs no pool: the leaf last seen on sdf1 is unavailable
		"sdg fast 3b9f5c2e-7d41-4a0b-9c6e-2f8d1a4b5c6d",
		"vdb tank virtio-zd03",
		"vdc tank virtio-zs01", // an active spare, printed twice, is one series
	}
	if got := diskSeries(fams, "zfs_disk_read_operations_total"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Figures of the whole disk, in base units: sdb's diskstats line is
	// 17755 reads, 2041825 sectors read, 79897 ms reading, 2 in flight,
	// 78770 ms busy, 118156 ms weighted.
	sdb := map[string]string{"device": "sdb"}
	for name, want := range map[string]float64{
		"zfs_disk_read_operations_total":          17755,
		"zfs_disk_write_operations_total":         38259,
		"zfs_disk_read_bytes_total":               2041825 * 512,
		"zfs_disk_write_bytes_total":              1683396 * 512,
		"zfs_disk_read_time_seconds_total":        79.897,
		"zfs_disk_write_time_seconds_total":       38.259,
		"zfs_disk_io_time_seconds_total":          78.770,
		"zfs_disk_io_time_weighted_seconds_total": 118.156,
		"zfs_disk_io_now":                         2,
	} {
		if got, ok := value(fams, name, sdb); !ok || got != want {
			t.Errorf("%s{device=sdb} = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for _, skipped := range []string{"loop0", "sr0", "zd0", "dm-1", "sda1", "vdb1", "nvme0n1p1"} {
		if _, ok := value(fams, "zfs_disk_read_operations_total", map[string]string{"device": skipped}); ok {
			t.Errorf("%s exported", skipped)
		}
	}
	for _, leaf := range []string{"ata-GONE_0000", "/var/tmp/x/z2"} {
		if !strings.Contains(logs.String(), leaf) {
			t.Errorf("the leaf %s that cannot be joined is not logged:\n%s", leaf, logs.String())
		}
	}
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("unjoined leaves logged above debug:\n%s", logs.String())
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

// Without DiskAll only disks under a vdev are reported.
func TestDiskCollectorOnlyPoolDisks(t *testing.T) {
	e := diskExporter(t, false, &bytes.Buffer{})
	fams := gatherFrom(t, fixedStatus{e, diskTestStatus()})
	got := diskSeries(fams, "zfs_disk_io_now")
	if len(got) != 11 {
		t.Errorf("%d series, want the 11 (device, pool, vdev) joins: %q", len(got), got)
	}
	if _, ok := value(fams, "zfs_disk_io_now", map[string]string{"device": "sdf"}); ok {
		t.Errorf("sdf, which backs no pool, exported without DiskAll")
	}
	// No pools: nothing to report, which is no failure.
	fams = gatherFrom(t, fixedStatus{e, &zpool.Status{}})
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "disk"}); v != 1 {
		t.Errorf("disk collector failed without pools")
	}
	if got := diskSeries(fams, "zfs_disk_io_now"); len(got) != 0 {
		t.Errorf("series without pools: %q", got)
	}
}

func TestDiskCollectorErrors(t *testing.T) {
	devRoot, sysRoot := diskTree(t)
	logger := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	procRoot := t.TempDir() // no diskstats in it
	cfg := testConfig(zfs.Config{Runner: nopRunner{}}, Config{ProcRoot: procRoot, SysRoot: sysRoot, DevRoot: devRoot}, logger)
	c, err := newDiskCollector(cfg.withDefaults(), logger)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 100)
	scrape := cfg.ZFS.NewScrapeWithStatus(diskTestStatus(), nil)
	// No diskstats at all is a replay without disks: no data, not a failure.
	err = c.Update(context.Background(), scrape, ch)
	if !errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), filepath.Join(procRoot, "diskstats")) {
		t.Errorf("missing diskstats: error %v is not ErrNoData naming the file", err)
	}
	// One that cannot be read is a failure.
	if err := os.Mkdir(filepath.Join(procRoot, "diskstats"), 0o755); err != nil {
		t.Fatal(err)
	}
	err = c.Update(context.Background(), scrape, ch)
	if err == nil || errors.Is(err, ErrNoData) || !strings.Contains(err.Error(), filepath.Join(procRoot, "diskstats")) {
		t.Errorf("unreadable diskstats: error %v is not a failure naming the file", err)
	}

	if len(ch) != 0 {
		t.Errorf("%d metrics sent by failed updates", len(ch))
	}
}

// A disk's figures need no pool: when zpool status fails, the disks are
// still reported and the collector succeeds. Disks joined in an earlier
// scrape keep their pool and vdev labels, so that their series go on;
// before any join, every physical disk is reported without them, as with
// DiskAll.
func TestDiskCollectorWhenStatusFails(t *testing.T) {
	var logs bytes.Buffer
	e := diskExporter(t, false, &logs)
	statusErr := errors.New("zpool status: timed out")
	success := func(fams []*dto.MetricFamily) float64 {
		v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "disk"})
		return v
	}

	fams := gatherFrom(t, failedStatus{e, statusErr})
	got := diskSeries(fams, "zfs_disk_read_operations_total")
	want := []string{"nvme0n1  ", "sda  ", "sdb  ", "sdc  ", "sdd  ", "sde  ", "sdf  ", "sdg  ", "vdb  ", "vdc  "}
	if success(fams) != 1 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("status failing from the start: success %v, series\n%s\nwant every disk without pool and vdev:\n%s\nlog:\n%s",
			success(fams), strings.Join(got, "\n"), strings.Join(want, "\n"), logs.String())
	}

	joined := diskSeries(gatherFrom(t, fixedStatus{e, diskTestStatus()}), "zfs_disk_read_operations_total")
	fams = gatherFrom(t, failedStatus{e, statusErr})
	got = diskSeries(fams, "zfs_disk_read_operations_total")
	if success(fams) != 1 || len(got) != 11 || strings.Join(got, "\n") != strings.Join(joined, "\n") {
		t.Errorf("status failing after a join: success %v, series\n%s\nwant those of the join:\n%s",
			success(fams), strings.Join(got, "\n"), strings.Join(joined, "\n"))
	}
	if v, ok := value(fams, "zfs_disk_read_operations_total", map[string]string{"device": "sdb", "pool": "tank"}); !ok || v != 17755 {
		t.Errorf("sdb's reads under tank = %v (present %v), want 17755 from diskstats", v, ok)
	}
	if strings.Contains(logs.String(), "level=ERROR") || strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("the disk collector logged above debug; the status collector reports the failure:\n%s", logs.String())
	}
}

func TestDiskCollectorDefaults(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	e, err := New(testConfig(zfs.Config{Runner: nopRunner{}}, Config{}, logger), logger, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if e.cfg.ProcRoot != "/proc" || e.cfg.SysRoot != "/sys" || e.cfg.DevRoot != "/dev" {
		t.Errorf("roots default to %q %q %q", e.cfg.ProcRoot, e.cfg.SysRoot, e.cfg.DevRoot)
	}
	f, ok := factories["disk"]
	if !ok || f.help == "" {
		t.Fatal("disk collector not registered")
	}
}
