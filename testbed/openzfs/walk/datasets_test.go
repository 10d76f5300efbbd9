//go:build openzfsguest

package walk

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// datasets checks the dataset collector on a real OpenZFS: under pool mir,
// datasets with a quota and a refquota, reservations, gzip, a volume and
// an encrypted filesystem, whose figures are those of `zfs get -Hp` around
// the exporter's run; then the encrypted one's key is unloaded. They are
// destroyed at the end, leaving the pool as the later scenarios expect.
func datasets(t *testing.T, mnt string) {
	const base = "mir/ds"
	e2e.ZFS(t, "create", base)
	t.Cleanup(func() {
		if out, err := exec.Command("zfs", "destroy", "-r", base).CombinedOutput(); err != nil {
			t.Errorf("zfs destroy -r %s: %v: %s", base, err, out)
		}
	})
	e2e.ZFS(t, "create", "-o", "quota=64M", "-o", "refquota=32M", base+"/quota")
	e2e.ZFS(t, "create", "-o", "reservation=16M", "-o", "refreservation=8M", base+"/reserved")
	e2e.ZFS(t, "create", "-o", "compression=gzip", base+"/gzip")
	e2e.ZFS(t, "create", "-V", "16M", base+"/vol")
	key := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(key, []byte("walk dataset passphrase\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e2e.ZFS(t, "create", "-o", "encryption=on", "-o", "keyformat=passphrase", "-o", "keylocation=file://"+key, base+"/enc")
	// A mountpoint of two lines goes on over two lines of zfs list -H:
	// the exporter reads them as one dataset, with no JSON to ask for
	// before OpenZFS 2.3 and none needed after.
	oddMountpoint := filepath.Join(mnt, "odd\nmountpoint")
	e2e.ZFS(t, "create", "-o", "mountpoint="+oddMountpoint, base+"/odd")
	writeRandom(t, filepath.Join(mnt, "mir", "ds", "quota", "data"), 8)
	if err := os.WriteFile(filepath.Join(mnt, "mir", "ds", "gzip", "text"), []byte(strings.Repeat("zpool_exporter datasets\n", 200000)), 0o644); err != nil {
		t.Fatal(err)
	}
	// Snapshots taken over time: creation times are in seconds.
	e2e.ZFS(t, "snapshot", base+"/quota@first")
	time.Sleep(1100 * time.Millisecond)
	writeRandom(t, filepath.Join(mnt, "mir", "ds", "quota", "more"), 2)
	e2e.ZFS(t, "snapshot", "-r", base+"@second")
	run(t, "sync")
	captureDatasets(t, "12-datasets")

	var props []string
	for p := range e2e.DatasetFigures {
		props = append(props, p)
	}
	get := func() string {
		return e2e.ZFS(t, "get", "-Hp", "-r", "-o", "name,property,value", strings.Join(props, ","), base)
	}
	once := func() e2e.Metrics {
		t.Helper()
		out, err := exec.Command(*exporterBin, "--once", "--collector.dataset", "--collector.dataset.include=^"+base+"($|/)").Output()
		if err != nil {
			t.Fatalf("--once: %v", err)
		}
		return e2e.Parse(t, string(out))
	}
	snapshots := func() string {
		return e2e.ZFS(t, "get", "-Hp", "-r", "-o", "name,property,value", "creation,used", base)
	}
	var m e2e.Metrics
	var before, snapshotsBefore string
	// Available space is the pool's, and moves for a moment as ZFS frees
	// blocks in the background with nothing written: a run that read
	// such a moment is run again, and one that never agrees is reported.
	for try := 0; ; try++ {
		before, snapshotsBefore = get(), snapshots()
		m = once()
		stable := get() == before && snapshots() == snapshotsBefore
		if mismatches, _ := e2e.DatasetMismatches(m, before); stable && len(mismatches) == 0 {
			break
		}
		if try == 10 {
			if !stable {
				t.Fatal("zfs get never gave the same figures twice around the exporter's run")
			}
			break
		}
		time.Sleep(time.Second)
	}
	if n := e2e.CompareDatasets(t, m, before); n < 50 {
		t.Errorf("%d figures compared, want those of 6 datasets", n)
	}
	// The text was read, the mountpoint of two lines with it: the
	// figures above came through it, and JSON was never asked for.
	for _, c := range m.Series("zfs_exporter_command_runs_total", nil) {
		if e2e.Label(c, "command") == "zfs list -j" && e2e.Value(c) > 0 {
			t.Errorf("the datasets were listed with %s: the text was not read", e2e.Label(c, "command"))
		}
	}
	// As in every label, the control character becomes U+FFFD.
	if _, ok := m.Get("zfs_dataset_info", map[string]string{"dataset": base + "/odd", "mountpoint": strings.ReplaceAll(oddMountpoint, "\n", "\uFFFD")}); !ok {
		t.Errorf("no zfs_dataset_info of %s/odd with its mountpoint of two lines", base)
	}
	if n := e2e.CompareSnapshots(t, m, snapshotsBefore); n != 7 {
		t.Errorf("snapshots of %d datasets compared, want 7", n)
	}
	for _, c := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"zfs_dataset_volume_size_bytes", map[string]string{"dataset": base + "/vol"}, 16 << 20},
		{"zfs_dataset_info", map[string]string{"dataset": base + "/vol", "type": "volume"}, 1},
		{"zfs_dataset_info", map[string]string{"dataset": base + "/enc", "encryption": "aes-256-gcm", "canmount": "on"}, 1},
		{"zfs_dataset_key_available", map[string]string{"dataset": base + "/enc"}, 1},
		{"zfs_dataset_mounted", map[string]string{"dataset": base + "/enc"}, 1},
		{"zfs_exporter_source_up", map[string]string{"source": zfs.SourceDatasets}, 1},
		{"zfs_exporter_source_up", map[string]string{"source": zfs.SourceSnapshots}, 1},
		{"zfs_dataset_snapshots", map[string]string{"dataset": base + "/quota"}, 2},
		{"zfs_dataset_snapshots", map[string]string{"dataset": base + "/vol"}, 1},
	} {
		if v, ok := m.Get(c.metric, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.metric, c.labels, v, ok, c.want)
		}
	}
	if _, ok := m.Get("zfs_dataset_key_available", map[string]string{"dataset": base + "/quota"}); ok {
		t.Errorf("a key status for %s/quota, which is not encrypted", base)
	}

	e2e.ZFS(t, "unmount", base+"/enc")
	e2e.ZFS(t, "unload-key", base+"/enc")
	m = once()
	for metric, want := range map[string]float64{"zfs_dataset_key_available": 0, "zfs_dataset_mounted": 0} {
		if v, ok := m.Get(metric, map[string]string{"dataset": base + "/enc"}); !ok || v != want {
			t.Errorf("with the key unloaded, %s = %v (present %v), want %v", metric, v, ok, want)
		}
	}
	e2e.ZFS(t, "load-key", base+"/enc")
}

// captureDatasets writes the dataset and snapshot listings the exporter
// reads, text and JSON, as captureAs does.
func captureDatasets(t *testing.T, scenario string) {
	captureAs(t, scenario, "zfs_list_-Hp", "zfs", "list", "-Hp", "-t", "filesystem,volume", "-o", strings.Join(zfs.DatasetProperties, ","))
	captureAs(t, scenario, "zfs_list_-j", "zfs", "list", "-j", "--json-int", "-t", "filesystem,volume", "-o", strings.Join(zfs.DatasetProperties, ","))
	captureAs(t, scenario, "zfs_get_-Hp", "zfs", "get", "-Hp", "-o", "name,property,value", strings.Join(zfs.DatasetProperties[1:], ","))
	captureAs(t, scenario, "zfs_list_-Hp_snapshots", "zfs", "list", "-Hp", "-t", "snapshot", "-o", strings.Join(zfs.SnapshotProperties, ","))
	captureAs(t, scenario, "zfs_list_-j_snapshots", "zfs", "list", "-j", "--json-int", "-t", "snapshot", "-o", strings.Join(zfs.SnapshotProperties, ","))
}
