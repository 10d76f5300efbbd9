package collector

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/collector/internal/runner"
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

// Each committed txg is counted once, however many scrapes see it in the
// kernel's rolling history.
func TestTxgHistogramsCountEachTxgOnce(t *testing.T) {
	header := "txg      birth            state ndirty       nread        nwritten     reads    writes   otime        qtime        wtime        stime\n"
	row := func(txg int, state string, written, syncNs int) string {
		return fmt.Sprintf("%-8d %-16d %-5s %-12d %-12d %-12d %-8d %-8d %-12d %-12d %-12d %-12d\n", txg, 1000*txg, state, written, 0, written, 0, 10, int64(5000000000), 9000, 300000, syncNs)
	}
	arcstats := "1 1 0x01 2 96 1 2\nname                            type data\nhits                            4    1\nsize                            4    2\n"
	fsys := fstest.MapFS{"arcstats": &fstest.MapFile{Data: []byte(arcstats)}, "tank/txgs": &fstest.MapFile{Data: []byte(header + row(10, "C", 1<<20, 2_000_000) + row(11, "C", 4<<20, 300_000_000) + row(12, "S", 0, 0) + row(13, "O", 0, 0))}}
	h := newTxgHistory()
	count := func() (uint64, float64) {
		snap, err := procfsKstats{fsys}.snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ch := make(chan prometheus.Metric, 8)
		h.update(snap.txgs, ch)
		close(ch)
		for m := range ch {
			var pb dto.Metric
			_ = m.Write(&pb)
			if strings.Contains(m.Desc().String(), "txg_sync_seconds") {
				return pb.GetHistogram().GetSampleCount(), pb.GetHistogram().GetSampleSum()
			}
		}
		t.Fatal("no txg_sync_seconds histogram")
		return 0, 0
	}
	if n, sum := count(); n != 2 || math.Abs(sum-0.302) > 1e-9 {
		t.Errorf("first scrape: %d txgs, %v s; want 2 committed txgs, 0.302 s", n, sum)
	}
	if n, _ := count(); n != 2 {
		t.Errorf("a second scrape of the same history counted %d txgs, want still 2", n)
	}
	// txg 12 committed, 14 opened; 10 fell out of the history.
	fsys["tank/txgs"] = &fstest.MapFile{Data: []byte(header + row(11, "C", 4<<20, 300_000_000) + row(12, "C", 8<<20, 1_000_000_000) + row(13, "S", 0, 0) + row(14, "O", 0, 0))}
	if n, sum := count(); n != 3 || math.Abs(sum-1.302) > 1e-9 {
		t.Errorf("after txg 12 committed: %d txgs, %v s; want 3, 1.302 s", n, sum)
	}
}

// replayOf makes a replay directory answering one command line with the
// bodies of the given fixtures, one after the other.
func replayOf(t *testing.T, command string, fixtures ...string) *runner.Replay {
	t.Helper()
	var body strings.Builder
	for _, f := range fixtures {
		s, err := sample.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		body.Write(s.Body)
	}
	dir := t.TempDir()
	content := "# command: " + command + "\n# ---\n" + body.String()
	if err := os.WriteFile(filepath.Join(dir, "capture.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// FreeBSD and illumos give the same metric names as Linux.
func TestKstatCollectorOtherSystems(t *testing.T) {
	const td = "internal/kstat/testdata/"
	for _, tc := range []struct {
		os      string
		replay  *runner.Replay
		dataset bool
	}{
		{"freebsd", replayOf(t, "sysctl -q kstat.zfs", td+"freebsd-sysctl-arcstats.txt", td+"freebsd-sysctl-datasets.txt", td+"freebsd-sysctl-pool-state.txt"), true},
		{"illumos", replayOf(t, "kstat -p zfs:0:arcstats", td+"illumos-kstat-p-arcstats-pools.txt"), false},
	} {
		t.Run(tc.os, func(t *testing.T) {
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			src := NewSource(SourceConfig{Runner: tc.replay, KstatOS: tc.os, Now: func() time.Time { return testNow }}, logger)
			e, err := New(src, logger, map[string]bool{"kstat": true})
			if err != nil {
				t.Fatal(err)
			}
			fams := gather(t, e)
			if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "kstat"}); v != 1 {
				t.Errorf("kstat collector failed")
			}
			for _, name := range []string{"zfs_arc_size_bytes", "zfs_arc_target_size_bytes", "zfs_arc_max_size_bytes"} {
				if v, ok := value(fams, name, nil); !ok || v <= 0 {
					t.Errorf("%s = %v (present %v)", name, v, ok)
				}
			}
			if _, ok := value(fams, "zfs_arc_hits_total", map[string]string{"kind": "demand_data"}); !ok {
				t.Errorf("no demand_data ARC hits")
			}
			_, ok := value(fams, "zfs_dataset_write_bytes_total", nil)
			if ok != tc.dataset {
				t.Errorf("per-dataset counters present: %v, want %v", ok, tc.dataset)
			}
		})
	}
}
