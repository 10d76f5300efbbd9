package collector

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/sample"
)

// kstatCaptures lays out the OpenZFS 2.3.2 captures of one scenario as
// /proc/spl/kstat/zfs: "kstat-zfs-arcstats" is arcstats,
// "kstat-zfs-r10.state" is r10/state.
func kstatCaptures(t *testing.T, scenario string) fstest.MapFS {
	t.Helper()
	dir := sample.Dir(t, "captures/openzfs-2.3")
	fsys := fstest.MapFS{}
	for _, f := range sample.Glob(t, dir, scenario+"__kstat-zfs-*.txt") {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.Path), scenario+"__kstat-zfs-"), ".txt")
		if pool, file, ok := strings.Cut(name, "."); ok {
			name = pool + "/" + file
		}
		fsys[name] = &fstest.MapFile{Data: f.Body}
	}
	return fsys
}

func TestKstatCollectorOpenZFS23(t *testing.T) {
	fsys := kstatCaptures(t, "09-errors-repaired")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	src := NewSource(SourceConfig{Runner: nopRunner{}, Kstat: fsys, Now: func() time.Time { return testNow }}, logger)
	e, err := New(src, logger, map[string]bool{"kstat": true})
	if err != nil {
		t.Fatal(err)
	}
	fams := gather(t, e)
	compareGolden(t, "testdata/kstat-openzfs-2.3-09-errors-repaired.prom", exposition(t, fams))
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "kstat"}); v != 1 {
		t.Errorf("kstat collector failed")
	}
	if v, ok := value(fams, "zfs_arc_size_bytes", nil); !ok || v <= 0 {
		t.Errorf("zfs_arc_size_bytes = %v (present %v)", v, ok)
	}
	if _, ok := value(fams, "zfs_arc_hits_total", map[string]string{"kind": "demand_metadata"}); !ok {
		t.Errorf("no demand_metadata ARC hits")
	}
	// Every pool's root dataset has an objset kstat.
	for _, pool := range []string{"r10", "rz1", "scratch", "tank"} {
		if _, ok := value(fams, "zfs_dataset_write_bytes_total", map[string]string{"pool": pool, "dataset": pool}); !ok {
			t.Errorf("no write counter for dataset %s", pool)
		}
	}
}

// nopRunner fails every command, as a zpool that is missing would.
type nopRunner struct{}

func (nopRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	return nil, os.ErrNotExist
}

// When zpool status cannot answer, pool health still comes from the
// per-pool state kstats, and the freshness metrics say so.
func TestPoolStateFromKstatWhenStatusFails(t *testing.T) {
	fsys := kstatCaptures(t, "09-errors-repaired")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	src := NewSource(SourceConfig{Runner: nopRunner{}, Kstat: fsys, Now: func() time.Time { return testNow }}, logger)
	e, err := New(src, logger, map[string]bool{"status": true})
	if err != nil {
		t.Fatal(err)
	}
	fams := gather(t, e)
	if v, _ := value(fams, "zfs_pool_state", map[string]string{"pool": "r10", "state": "degraded"}); v != 1 {
		t.Errorf("r10 not degraded from its state kstat")
	}
	if v, _ := value(fams, "zfs_pool_state", map[string]string{"pool": "tank", "state": "online"}); v != 1 {
		t.Errorf("tank not online from its state kstat")
	}
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "status"}); v != 0 {
		t.Errorf("status collector reported success without zpool status")
	}
	if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": SourceStatus}); v != 0 {
		t.Errorf("source zpool_status up")
	}
	if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": SourceKstatState}); v != 1 {
		t.Errorf("source kstat_pool_state not up")
	}
}
