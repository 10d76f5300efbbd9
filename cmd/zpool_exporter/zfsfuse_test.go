package main

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// These tests drive the built exporter against real pools of zfs-fuse
// (ZFS pool version 23), which the CI script installs and starts. They
// need root and a running zfs-fuse daemon.

// leafWrites sums zfs_vdev_write_bytes_total over the leaves of a pool.
func leafWrites(m e2e.Metrics, pool string) (float64, int) {
	sum, n := 0.0, 0
	for _, info := range m.Series("zfs_vdev_info", map[string]string{"pool": pool}) {
		if typ := e2e.Label(info, "vdev_type"); typ != "file" && typ != "disk" {
			continue
		}
		if v, ok := m.Get("zfs_vdev_write_bytes_total", map[string]string{"pool": pool, "vdev": e2e.Label(info, "vdev")}); ok {
			sum += v
			n++
		}
	}
	return sum, n
}

func stateIs(m e2e.Metrics, metric string, labels map[string]string) bool {
	v, ok := m.Get(metric, labels)
	return ok && v == 1
}

func TestZFSFuseMirrorWriteCounters(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	pool, mnt := z.Create("mirror", "mirror", z.Disk("m1", 512), z.Disk("m2", 512))
	e := e2e.Start(t, exporterBin, nil, "--zpool.iostat-interval=1s")

	// The stream skips its first report; wait until counters exist.
	m := e.WaitFor(t, 30*time.Second, "leaf write counters of "+pool, func(m e2e.Metrics) bool {
		_, n := leafWrites(m, pool)
		return n == 2
	})
	before, _ := leafWrites(m, pool)
	// The file vdevs live on the disk under z.Dir: the disk collector
	// joins it to them, with the whole disk's figures.
	disk := m.Series("zfs_disk_write_bytes_total", map[string]string{"pool": pool})
	if len(disk) == 0 {
		t.Fatalf("no zfs_disk_write_bytes_total series joined to the file vdevs of %s", pool)
	}
	diskLabels := map[string]string{"pool": pool, "vdev": e2e.Label(disk[0], "vdev"), "device": e2e.Label(disk[0], "device")}
	diskBefore := e2e.Value(disk[0])
	engine := map[string]string{"family": "zfs-fuse"}
	engineBefore, ok := sumSeries(m, "zfs_engine_cpu_seconds_total", engine)
	if !ok {
		t.Errorf("no zfs_engine_cpu_seconds_total{family=zfs-fuse}: the daemon's CPU is not counted")
	}
	hostBefore, _ := sumSeries(m, "zfs_host_cpu_seconds_total", nil)

	const mib = 200
	e2e.WriteRandom(t, filepath.Join(mnt, "data"), mib)

	// Wait until the counters stop growing: zfs-fuse flushes a little
	// after sync returns, and the stream reports once a second.
	var after float64
	last, still := -1.0, 0
	deadline := time.Now().Add(90 * time.Second)
	for still < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Second)
		after, _ = leafWrites(e.Scrape(t), pool)
		if after == last {
			still++
		} else {
			still = 0
		}
		last = after
	}
	written := after - before
	ratio := written / (mib << 20)
	t.Logf("leaves of the mirror wrote %.1f MiB for %d MiB of data: %.3f x", written/(1<<20), mib, ratio)
	if ratio < 1.8 || ratio > 2.5 {
		t.Errorf("leaf write counters grew by %.3f x the data written, want between 1.8 x and 2.5 x", ratio)
	}
	m = e.Scrape(t)
	diskAfter, _ := m.Get("zfs_disk_write_bytes_total", diskLabels)
	t.Logf("disk %s under the file vdevs wrote %.1f MiB meanwhile", diskLabels["device"], (diskAfter-diskBefore)/(1<<20))
	if diskAfter-diskBefore < mib<<20 {
		t.Errorf("zfs_disk_write_bytes_total%v grew by %.1f MiB while %d MiB went to the mirror on it", diskLabels, (diskAfter-diskBefore)/(1<<20), mib)
	}
	if after, _ := sumSeries(m, "zfs_engine_cpu_seconds_total", engine); after <= engineBefore {
		t.Errorf("zfs_engine_cpu_seconds_total{family=zfs-fuse} went from %v to %v while the daemon wrote %d MiB", engineBefore, after, mib)
	}
	if after, _ := sumSeries(m, "zfs_host_cpu_seconds_total", nil); after <= hostBefore {
		t.Errorf("zfs_host_cpu_seconds_total summed over modes went from %v to %v", hostBefore, after)
	}
	text := e.ScrapeText(t)
	e2e.PromtoolCheck(t, text)
}

// sumSeries adds up the series of name with the labels given, and tells
// whether there was any.
func sumSeries(m e2e.Metrics, name string, labels map[string]string) (float64, bool) {
	series := m.Series(name, labels)
	total := 0.0
	for _, s := range series {
		total += e2e.Value(s)
	}
	return total, len(series) > 0
}

func TestZFSFuseFaults(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	disks := []string{z.Disk("z1", 128), z.Disk("z2", 128), z.Disk("z3", 128), z.Disk("z4", 128)}
	pool, mnt := z.Create("raidz", "raidz1", disks[0], disks[1], disks[2], "spare", disks[3])
	other, _ := z.Create("other", z.Disk("o1", 128))
	e2e.WriteRandom(t, filepath.Join(mnt, "data"), 48)
	e := e2e.Start(t, exporterBin, nil, "--zpool.iostat-interval=1s")

	m := e.Scrape(t)
	for _, p := range []string{pool, other} {
		if !stateIs(m, "zfs_pool_state", map[string]string{"pool": p, "state": "online"}) {
			t.Fatalf("pool %s not reported online", p)
		}
	}
	if !stateIs(m, "zfs_vdev_state", map[string]string{"pool": pool, "vdev": disks[3], "state": "avail"}) {
		t.Errorf("hot spare %s not reported avail", disks[3])
	}

	t.Run("offline gives degraded", func(t *testing.T) {
		e2e.Zpool(t, "offline", pool, disks[1])
		m := e.Scrape(t)
		if !stateIs(m, "zfs_vdev_state", map[string]string{"pool": pool, "vdev": disks[1], "state": "offline"}) {
			t.Errorf("vdev %s not reported offline at the next scrape", disks[1])
		}
		if !stateIs(m, "zfs_pool_state", map[string]string{"pool": pool, "state": "degraded"}) {
			t.Errorf("pool %s not reported degraded at the next scrape", pool)
		}
		if !stateIs(m, "zfs_vdev_state", map[string]string{"pool": pool, "vdev": "raidz1-0", "state": "degraded"}) {
			t.Errorf("raidz1-0 not reported degraded")
		}
		e2e.Zpool(t, "online", pool, disks[1])
		e.WaitFor(t, 30*time.Second, "pool back online", func(m e2e.Metrics) bool {
			return stateIs(m, "zfs_pool_state", map[string]string{"pool": pool, "state": "online"})
		})
	})

	t.Run("replace with hot spare", func(t *testing.T) {
		e2e.Zpool(t, "replace", pool, disks[2], disks[3])
		m := e.WaitFor(t, 30*time.Second, "spare in use", func(m e2e.Metrics) bool {
			return stateIs(m, "zfs_vdev_state", map[string]string{"pool": pool, "vdev": disks[3], "state": "inuse"})
		})
		spares := 0
		for _, info := range m.Series("zfs_vdev_info", map[string]string{"pool": pool, "vdev_type": "spare"}) {
			if !strings.HasPrefix(e2e.Label(info, "vdev"), "raidz1-0/spare-") {
				t.Errorf("spare vdev named %q, want raidz1-0/spare-N", e2e.Label(info, "vdev"))
			}
			if e2e.Label(info, "parent") != "raidz1-0" {
				t.Errorf("spare vdev's parent is %q, want raidz1-0", e2e.Label(info, "parent"))
			}
			spares++
		}
		if spares != 1 {
			t.Errorf("found %d spare-N vdevs, want 1", spares)
		}
		if _, ok := m.Get("zfs_scan_end_time_seconds", map[string]string{"pool": pool, "function": "resilver"}); !ok {
			t.Errorf("no resilver end time after the spare resilvered")
		}
		e2e.Zpool(t, "detach", pool, disks[3])
		e.WaitFor(t, 30*time.Second, "spare available again", func(m e2e.Metrics) bool {
			return stateIs(m, "zfs_vdev_state", map[string]string{"pool": pool, "vdev": disks[3], "state": "avail"})
		})
	})

	t.Run("checksum errors after corruption and scrub", func(t *testing.T) {
		began := time.Now().Add(-2 * time.Second).Unix()
		// Overwrite the middle of one leaf, away from the labels at both ends.
		f, err := os.OpenFile(disks[0], os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		junk := make([]byte, 48<<20)
		_, _ = rand.Read(junk)
		if _, err := f.WriteAt(junk, 8<<20); err != nil {
			t.Fatal(err)
		}
		f.Close()
		e2e.Zpool(t, "scrub", pool)
		m := e.WaitFor(t, 60*time.Second, "scrub finished", func(m e2e.Metrics) bool {
			return stateIs(m, "zfs_scan_state", map[string]string{"pool": pool, "function": "scrub", "state": "finished"})
		})
		cksum, ok := m.Get("zfs_vdev_checksum_errors_total", map[string]string{"pool": pool, "vdev": disks[0]})
		if !ok || cksum <= 0 {
			t.Errorf("checksum errors of %s = %v (present %v), want > 0", disks[0], cksum, ok)
		}
		end, ok := m.Get("zfs_scan_end_time_seconds", map[string]string{"pool": pool, "function": "scrub"})
		if !ok || int64(end) < began {
			t.Errorf("scrub end time = %v (present %v), want after %d", end, ok, began)
		}
		if _, ok := m.Get("zfs_scan_errors", map[string]string{"pool": pool, "function": "scrub"}); !ok {
			t.Errorf("no scrub error count")
		}
		if v, ok := m.Get("zfs_vdev_repaired_bytes", map[string]string{"pool": pool, "vdev": disks[0]}); !ok || v <= 0 {
			t.Errorf("repaired bytes of %s = %v (present %v), want > 0", disks[0], v, ok)
		}
		e2e.PromtoolCheck(t, e.ScrapeText(t))
		e2e.Zpool(t, "clear", pool)
	})

	t.Run("destroyed pool disappears", func(t *testing.T) {
		e2e.Zpool(t, "destroy", "-f", other)
		m := e.Scrape(t)
		for name, mf := range m {
			for _, s := range mf.GetMetric() {
				if e2e.Label(s, "pool") == other {
					t.Errorf("series %s{pool=%q} still exported after destroy", name, other)
				}
			}
		}
		if !stateIs(m, "zfs_pool_state", map[string]string{"pool": pool, "state": "online"}) {
			t.Errorf("pool %s no longer reported after another pool was destroyed", pool)
		}
		if v, ok := m.Get("zfs_exporter_collector_success", map[string]string{"collector": "status"}); !ok || v != 1 {
			t.Errorf("status collector success = %v, %v after destroy", v, ok)
		}
	})
}

// Every figure the dataset collector exports for a real zfs-fuse pool is
// what `zfs get -Hp` prints for the same dataset, read before and after
// the exporter's run and unchanged between them; a quota or reservation
// that is not set gives no series.
func TestZFSFuseDatasets(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	pool, mnt := z.Create("ds", z.Disk("d1", 256))
	e2e.ZFS(t, "create", "-o", "quota=64M", "-o", "refquota=32M", pool+"/quota")
	e2e.ZFS(t, "create", "-o", "reservation=16M", "-o", "refreservation=8M", pool+"/reserved")
	e2e.ZFS(t, "create", "-o", "compression=gzip", pool+"/gzip")
	e2e.WriteRandom(t, filepath.Join(mnt, "quota", "data"), 12)
	if err := os.WriteFile(filepath.Join(mnt, "gzip", "text"), []byte(strings.Repeat("zpool_exporter datasets\n", 200000)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Snapshots taken over time: creation times are in seconds.
	e2e.ZFS(t, "snapshot", pool+"/quota@first")
	time.Sleep(1100 * time.Millisecond)
	e2e.WriteRandom(t, filepath.Join(mnt, "quota", "more"), 2)
	e2e.ZFS(t, "snapshot", pool+"/quota@second")

	// The figures zfs-fuse knows.
	props := []string{"used", "available", "referenced", "usedbydataset", "usedbychildren", "usedbysnapshots",
		"usedbyrefreservation", "quota", "refquota", "reservation", "refreservation", "compressratio"}
	get := func(props ...string) string {
		return e2e.ZFS(t, append([]string{"get", "-Hp", "-r", "-o", "name,property,value", strings.Join(props, ",")}, pool)...)
	}
	var out, before, snapshots string
	var m e2e.Metrics
	for try := 0; ; try++ {
		before, snapshots = get(props...), get("creation", "used")
		var errOut string
		var code int
		out, errOut, code = runBinary(t, "--once", "--collector.dataset", "--collector.dataset.include=^"+pool+"($|/)")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		m = e2e.Parse(t, out)
		stable := get(props...) == before && get("creation", "used") == snapshots
		if mismatches, _ := e2e.DatasetMismatches(m, before); stable && len(mismatches) == 0 {
			break
		}
		if try == 10 {
			if !stable {
				t.Fatal("zfs get never gave the same figures twice around the exporter's run")
			}
			break
		}
		time.Sleep(time.Second) // zfs-fuse settles its figures a little after writes
	}
	checked := e2e.CompareDatasets(t, m, before)
	if checked < 35 {
		t.Errorf("%d figures checked, want those of 4 datasets", checked)
	}
	if n := e2e.CompareSnapshots(t, m, snapshots); n != 4 {
		t.Errorf("snapshots of %d datasets compared, want 4", n)
	}
	if v, ok := m.Get("zfs_dataset_snapshots", map[string]string{"dataset": pool + "/quota"}); !ok || v != 2 {
		t.Errorf("snapshots of %s/quota: %v (present %v), want 2", pool, v, ok)
	}
	if v, ok := m.Get("zfs_dataset_quota_bytes", map[string]string{"dataset": pool + "/quota"}); !ok || v != 64<<20 {
		t.Errorf("quota of %s/quota: %v (present %v), want 64 MiB", pool, v, ok)
	}
	for _, source := range []string{"zfs_list", "zfs_list_snapshots"} {
		if v, ok := m.Get("zfs_exporter_source_up", map[string]string{"source": source}); !ok || v != 1 {
			t.Errorf("%s source up: %v (present %v)", source, v, ok)
		}
	}
}

// Served, the exporter lists snapshots in the background, every
// --collector.dataset.snapshot-interval: a snapshot taken while it runs
// shows in a later scrape, with its exact creation time, and per snapshot
// with --collector.dataset.per-snapshot.
func TestZFSFuseSnapshotsInTheBackground(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	pool, _ := z.Create("snap", z.Disk("d1", 128))
	e2e.ZFS(t, "create", pool+"/home")
	e2e.ZFS(t, "snapshot", pool+"/home@hourly-1")
	e := e2e.Start(t, exporterBin, nil, "--collector.dataset", "--collector.dataset.include=^"+pool+"($|/)",
		"--collector.dataset.snapshot-interval=1s", "--collector.dataset.per-snapshot")
	home := map[string]string{"dataset": pool + "/home"}
	e.WaitFor(t, 20*time.Second, "one snapshot of "+pool+"/home", func(m e2e.Metrics) bool {
		v, ok := m.Get("zfs_dataset_snapshots", home)
		return ok && v == 1
	})
	time.Sleep(1100 * time.Millisecond)
	e2e.ZFS(t, "snapshot", pool+"/home@hourly-2")
	m := e.WaitFor(t, 20*time.Second, "the second snapshot of "+pool+"/home", func(m e2e.Metrics) bool {
		v, ok := m.Get("zfs_dataset_snapshots", home)
		return ok && v == 2
	})
	creation := strings.TrimSpace(e2e.ZFS(t, "get", "-Hp", "-o", "value", "creation", pool+"/home@hourly-2"))
	want, err := strconv.ParseFloat(creation, 64)
	if err != nil {
		t.Fatalf("creation %q: %v", creation, err)
	}
	if v, _ := m.Get("zfs_dataset_newest_snapshot_timestamp_seconds", home); v != want {
		t.Errorf("newest snapshot of %s/home at %v, zfs says %v", pool, v, want)
	}
	if v, ok := m.Get("zfs_snapshot_creation_timestamp_seconds", map[string]string{"dataset": pool + "/home", "snapshot": "hourly-2"}); !ok || v != want {
		t.Errorf("per snapshot: hourly-2 created %v (present %v), zfs says %v", v, ok, want)
	}
	if v, ok := m.Get("zfs_exporter_source_up", map[string]string{"source": "zfs_list_snapshots"}); !ok || v != 1 {
		t.Errorf("zfs_list_snapshots source up: %v (present %v)", v, ok)
	}
	if n := e2e.CompareSnapshots(t, m, e2e.ZFS(t, "get", "-Hp", "-r", "-o", "name,property,value", "creation,used", pool)); n != 2 {
		t.Errorf("snapshots of %d datasets compared, want 2", n)
	}
	e.Quit(t)
}
