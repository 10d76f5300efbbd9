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
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// kstatOnly runs the kstat collector alone over fsys, compares its
// exposition with golden, and checks that it succeeded and read the ARC.
func kstatOnly(t *testing.T, fsys fstest.MapFS, golden string) (*Exporter, []*dto.MetricFamily) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := testConfig(zfs.Config{Runner: nopRunner{}, Kstat: fsys, Now: func() time.Time { return testNow }}, Config{}, logger)
	e, err := New(cfg, logger, map[string]bool{"kstat": true})
	if err != nil {
		t.Fatal(err)
	}
	fams := gather(t, e)
	compareGolden(t, golden, exposition(t, fams))
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "kstat"}); v != 1 {
		t.Errorf("kstat collector failed")
	}
	if v, ok := value(fams, "zfs_arc_size_bytes", nil); !ok || v <= 0 {
		t.Errorf("zfs_arc_size_bytes = %v (present %v)", v, ok)
	}
	return e, fams
}

func TestKstatCollectorOpenZFS23(t *testing.T) {
	e, fams := kstatOnly(t, sample.KstatCaptures(t, "09-errors-repaired"), "testdata/kstat-openzfs-2.3-09-errors-repaired.prom")
	if _, ok := value(fams, "zfs_arc_hits_total", map[string]string{"kind": "demand_metadata"}); !ok {
		t.Errorf("no demand_metadata ARC hits")
	}
	// Every pool's root dataset has an objset kstat.
	for _, pool := range []string{"r10", "rz1", "scratch", "tank"} {
		if _, ok := value(fams, "zfs_dataset_write_bytes_total", map[string]string{"pool": pool, "dataset": pool}); !ok {
			t.Errorf("no write counter for dataset %s", pool)
		}
	}
	// The figures of the capture's zil, dmu_tx, abdstats, zfetchstats and
	// tank/iostats files.
	for _, w := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"zfs_zil_commits_total", nil, 17},
		{"zfs_zil_log_blocks_total", map[string]string{"class": "slog"}, 1},
		{"zfs_zil_log_written_bytes_total", map[string]string{"class": "normal"}, 12288},
		{"zfs_zil_commit_fallbacks_total", map[string]string{"reason": "stall"}, 0},
		{"zfs_dmu_tx_total", map[string]string{"result": "assigned"}, 26942},
		{"zfs_dmu_tx_total", map[string]string{"result": "quota"}, 146},
		{"zfs_abd_buffers", map[string]string{"kind": "scatter"}, 16487},
		{"zfs_abd_data_bytes", map[string]string{"kind": "linear"}, 61440},
		{"zfs_prefetch_hits_total", nil, 3356},
		{"zfs_prefetch_reordered_total", map[string]string{"kind": "past"}, 1534},
		{"zfs_pool_logical_write_bytes_total", map[string]string{"pool": "tank", "path": "arc"}, 268986732},
		{"zfs_pool_logical_read_operations_total", map[string]string{"pool": "tank", "path": "direct"}, 0},
		{"zfs_pool_trim_bytes_total", map[string]string{"pool": "r10", "kind": "auto", "result": "failed"}, 0},
	} {
		if v, ok := value(fams, w.name, w.labels); !ok || v != w.want {
			t.Errorf("%s%v = %v (present %v), want %v", w.name, w.labels, v, ok, w.want)
		}
	}
	if _, ok := value(fams, "zfs_zil_commit_fallbacks_total", map[string]string{"reason": "crash"}); ok {
		t.Error("a ZIL crash fallbacks counter although 2.3's zil kstat has none")
	}
	// OpenZFS 2.1 removed <pool>/io.
	if _, ok := value(fams, "zfs_pool_kstat_read_bytes_total", nil); ok {
		t.Error("pool I/O kstat series without any <pool>/io file")
	}
	if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// kstatGuest lays out the kstats the test bed's walk captured in one
// scenario (testdata/openzfs-VERSION-guest) at the paths their commands
// read.
func kstatGuest(t *testing.T, version, scenario string) fstest.MapFS {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "openzfs-"+version+"-guest", scenario+"__kstat-zfs-*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no kstat captures of %s on OpenZFS %s: %v", scenario, version, err)
	}
	fsys := fstest.MapFS{}
	for _, p := range paths {
		f := sample.MustRead(t, p)
		path, ok := strings.CutPrefix(f.Header["command"], "cat /proc/spl/kstat/zfs/")
		if !ok {
			t.Fatalf("%s: command %q reads no kstat", p, f.Header["command"])
		}
		fsys[path] = &fstest.MapFile{Data: f.Body}
	}
	return fsys
}

// OpenZFS 2.4.4's kstats, from the walk's data-errors scenario: what 2.3
// gave, and the ZIL's crash fallback that 2.4 added (2.3 has none, and
// no false 0 is exported there).
func TestKstatCollectorOpenZFS24(t *testing.T) {
	e, fams := kstatOnly(t, kstatGuest(t, "2.4", "07-data-errors"), "testdata/kstat-openzfs-2.4-07-data-errors.prom")
	if _, ok := value(fams, "zfs_zil_commit_fallbacks_total", map[string]string{"reason": "crash"}); !ok {
		t.Error("no ZIL crash fallbacks counter from 2.4's zil kstat")
	}
	for _, pool := range []string{"dr", "mir", "one", "r10", "rz1"} {
		if _, ok := value(fams, "zfs_dataset_write_bytes_total", map[string]string{"pool": pool, "dataset": pool}); !ok {
			t.Errorf("no write counter for dataset %s", pool)
		}
		if _, ok := value(fams, "zfs_pool_logical_write_bytes_total", map[string]string{"pool": pool, "path": "arc"}); !ok {
			t.Errorf("no logical write counter for pool %s", pool)
		}
	}
	if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", problems, err)
	}
}

// kstatCorpus lays out samples of corpus/kstat-linux as
// /proc/spl/kstat/zfs, each at the path its command reads.
func kstatCorpus(t *testing.T, names ...string) fstest.MapFS {
	t.Helper()
	dir := sample.Dir(t, "corpus/kstat-linux")
	fsys := fstest.MapFS{}
	for _, name := range names {
		f := sample.MustRead(t, filepath.Join(dir, name+".txt"))
		cmd, _, _ := strings.Cut(strings.TrimPrefix(f.Header["command"], "cat "), " ")
		path, ok := strings.CutPrefix(cmd, "/proc/spl/kstat/zfs/")
		if !ok {
			t.Fatalf("%s: command %q reads no kstat", name, f.Header["command"])
		}
		fsys[path] = &fstest.MapFile{Data: f.Body}
	}
	return fsys
}

// The kstat collector over real kstats of each OS, compared with golden
// expositions. Linux and FreeBSD are read from corpus samples laid out as
// the kernel shows them, FreeBSD and illumos through the replay runner.
func TestKstatCollectorGoldens(t *testing.T) {
	const td = "../internal/zfs/kstat/testdata/"
	freebsd := func(name string) string {
		return filepath.Join(sample.Dir(t, "corpus/kstat-freebsd"), name+".txt")
	}
	illumos := func(name string) string {
		return filepath.Join(sample.Dir(t, "corpus/kstat-illumos"), name+".txt")
	}
	for _, tc := range []struct {
		name   string
		os     string
		fsys   fstest.MapFS
		replay *runner.Replay
		want   map[string]float64 // series by name and labels, as in the exposition
		absent []string
	}{
		{
			// ZFS on Linux 0.6 and 0.7: three pools with <pool>/io, a
			// zil whose zil_itx_needcopy_bytes wrapped below zero.
			name: "linux-zol", os: "linux",
			fsys: kstatCorpus(t, "arcstats-zol065-node_exporter", "pool-io-kstat-io-pool1", "pool-io-kstat-io-poolz1",
				"pool-io-kstat-io-zol065-wide-values", "zil-zol075", "dmu_tx-zol06", "abdstats-zol075", "zfetchstats-zol06"),
			want: map[string]float64{
				`zfs_pool_kstat_read_bytes_total{pool="pool1"}`:                           1884160,
				`zfs_pool_kstat_write_operations_total{pool="poolz1"}`:                    25294,
				`zfs_pool_kstat_queue_busy_seconds_total{pool="pool1",queue="run"}`:       0.024168078,
				`zfs_pool_kstat_queue_weighted_seconds_total{pool="zstore",queue="wait"}`: 15480260.499887487,
				`zfs_zil_commits_total`:                          10,
				`zfs_zil_itx_write_bytes_total{kind="indirect"}`: 0,
				`zfs_dmu_tx_total{result="assigned"}`:            3532844,
				`zfs_prefetch_misses_total`:                      11,
				`zfs_abd_buffers{kind="scatter"}`:                1,
			},
			absent: []string{`zfs_zil_itx_write_bytes_total{kind="needcopy"}`, `zfs_zil_log_written_bytes_total{class="normal"}`,
				`zfs_dmu_tx_total{result="wrlog_delay"}`, `zfs_prefetch_reordered_total{kind="future"}`, `zfs_pool_trim_bytes_total{kind="manual",pool="pool1",result="written"}`},
		},
		{
			// OpenZFS 2.3, a busy host: 2.3 iostats, scatter ABD counts
			// that wrapped below zero.
			name: "linux-openzfs23", os: "linux",
			fsys: kstatCorpus(t, "arcstats-openzfs23-telegraf17578", "pool-iostats-openzfs23", "zil-openzfs23", "dmu_tx-openzfs23",
				"abdstats-openzfs23", "zfetchstats-openzfs23", "objset-openzfs23-zil-fields", "pool-txgs-openzfs23"),
			want: map[string]float64{
				`zfs_pool_logical_read_bytes_total{path="arc",pool="store"}`:               1191500436992,
				`zfs_pool_logical_write_operations_total{path="arc",pool="store"}`:         18742973,
				`zfs_pool_trim_extents_total{kind="simple",pool="store",result="skipped"}`: 0,
				`zfs_zil_commit_writers_total`:                                             52908517,
				`zfs_zil_itx_writes_total{kind="needcopy"}`:                                164945047,
				`zfs_zil_log_allocated_bytes_total{class="normal"}`:                        743618220032,
				`zfs_dmu_tx_total{result="dirty_delay"}`:                                   1834959,
				`zfs_abd_buffers{kind="linear"}`:                                           92773,
				`zfs_abd_scatter_waste_bytes`:                                              89159680,
				`zfs_prefetch_reordered_total{kind="stride"}`:                              18091715,
				`zfs_prefetch_max_streams_total`:                                           142905604,
				`zfs_prefetch_reads_active`:                                                0,
			},
			absent: []string{`zfs_abd_buffers{kind="scatter"}`, `zfs_abd_data_bytes{kind="scatter"}`, `zfs_pool_kstat_read_bytes_total{pool="store"}`},
		},
		{
			name: "freebsd", os: "freebsd",
			replay: replayOf(t, "sysctl -q kstat.zfs", freebsd("sysctl-arcstats-freebsd14-telegraf"), freebsd("sysctl-zfetchstats-freebsd14-telegraf"),
				td+"freebsd-sysctl-zil-dmu_tx-abdstats.txt", td+"freebsd-sysctl-iostats.txt", td+"freebsd-sysctl-datasets.txt", td+"freebsd-sysctl-pool-state.txt"),
			want: map[string]float64{
				`zfs_prefetch_hits_total`:                                                 6439,
				`zfs_prefetch_reads_issued_total`:                                         2197,
				`zfs_zil_log_blocks_total{class="slog"}`:                                  220417,
				`zfs_dmu_tx_total{result="dirty_over_max"}`:                               12,
				`zfs_abd_scatter_waste_bytes`:                                             626176,
				`zfs_pool_trim_bytes_total{kind="auto",pool="tank",result="written"}`:     4294967296,
				`zfs_pool_trim_extents_total{kind="manual",pool="tank",result="skipped"}`: 120,
			},
			absent: []string{`zfs_prefetch_reordered_total{kind="past"}`, `zfs_pool_logical_read_bytes_total{path="arc",pool="tank"}`},
		},
		{
			name: "illumos", os: "illumos",
			replay: replayOf(t, "kstat -p -m zfs -i 0", td+"illumos-kstat-p-abdstats-zfetchstats.txt", td+"illumos-kstat-p-arcstats-pools.txt"),
			want: map[string]float64{
				`zfs_pool_kstat_read_bytes_total{pool="tank"}`:                         5497558138880,
				`zfs_pool_kstat_write_operations_total{pool="rpool"}`:                  4410222,
				`zfs_pool_kstat_queue_weighted_seconds_total{pool="tank",queue="run"}`: 880412.331120055,
				`zfs_pool_kstat_queue_busy_seconds_total{pool="tank",queue="wait"}`:    120331.044210998,
				`zfs_pool_kstat_queue_length{pool="tank",queue="run"}`:                 7,
				`zfs_prefetch_max_streams_total`:                                       88120,
				`zfs_abd_data_bytes{kind="scatter"}`:                                   10744295424,
			},
			absent: []string{`zfs_zil_commits_total`, `zfs_dmu_tx_total{result="assigned"}`, `zfs_pool_trim_bytes_total{kind="manual",pool="tank",result="written"}`},
		},
		{
			// A truncated arcstats and nothing else: the ARC figures it
			// has, no other series.
			name: "illumos-2015", os: "illumos",
			replay: replayOf(t, "kstat -p -m zfs -i 0", illumos("kstat-p-zfs-arcstats-illumos-2015")),
			absent: []string{`zfs_pool_kstat_read_bytes_total{pool="rpool"}`, `zfs_prefetch_hits_total`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg := zfs.Config{Runner: nopRunner{}, KstatOS: tc.os, Now: func() time.Time { return testNow }}
			if tc.fsys != nil {
				cfg.Kstat = tc.fsys
			}
			if tc.replay != nil {
				cfg.Runner = tc.replay
			}
			e, err := New(testConfig(cfg, Config{}, logger), logger, map[string]bool{"kstat": true})
			if err != nil {
				t.Fatal(err)
			}
			fams := gather(t, e)
			compareGolden(t, "testdata/kstat-"+tc.name+".prom", exposition(t, fams))
			if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "kstat"}); v != 1 {
				t.Errorf("kstat collector failed")
			}
			series := seriesValues(fams)
			for s, want := range tc.want {
				if got, ok := series[s]; !ok || math.Abs(got-want) > 1e-9*math.Max(1, want) {
					t.Errorf("%s = %v (present %v), want %v", s, got, ok, want)
				}
			}
			for _, s := range tc.absent {
				if v, ok := series[s]; ok {
					t.Errorf("%s = %v, want no series", s, v)
				}
			}
			if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}
}

// nopRunner fails every command, as a zpool that is missing would.
type nopRunner struct{}

func (nopRunner) Run(context.Context, runner.Command) ([]byte, error) {
	return nil, os.ErrNotExist
}

// When zpool status cannot answer, pool health still comes from the
// per-pool state kstats, and the freshness metrics say so.
func TestPoolStateFromKstatWhenStatusFails(t *testing.T) {
	fsys := sample.KstatCaptures(t, "09-errors-repaired")
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := testConfig(zfs.Config{Runner: nopRunner{}, Kstat: fsys, Now: func() time.Time { return testNow }}, Config{}, logger)
	e, err := New(cfg, logger, map[string]bool{"status": true})
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
	if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": zfs.SourceStatus}); v != 0 {
		t.Errorf("source zpool_status up")
	}
	if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": zfs.SourceKstatState}); v != 1 {
		t.Errorf("source kstat_pool_state not up")
	}
}

// hangingRunner stands for a zpool stuck in the kernel: it answers only
// when its deadline has passed, and late after that on a machine so busy
// that the kill takes effect only a while later.
type hangingRunner struct{ late time.Duration }

func (r hangingRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	<-ctx.Done()
	time.Sleep(r.late)
	return nil, fmt.Errorf("%s %s: %w", cmd.Path, strings.Join(cmd.Args, " "), runner.ErrTimeout)
}

// A zpool that hangs uses up its time, not the scrape's: zpool commands
// end a little before the scrape's deadline, and the kstat fallback
// answers in what is left. When zpool gives up only after the scrape's
// deadline, the states are still there: on Linux they are read beside
// zpool status, not after it. A zpool that takes a second to go once
// killed (as in an emulated guest under load) is not waited for.
func TestPoolStateFromKstatWhenStatusHangs(t *testing.T) {
	for _, late := range []time.Duration{0, 150 * time.Millisecond, time.Second} {
		t.Run(fmt.Sprintf("ends %s late", late), func(t *testing.T) {
			fsys := sample.KstatCaptures(t, "09-errors-repaired")
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg := testConfig(zfs.Config{Runner: hangingRunner{late: late}, Kstat: fsys, Now: func() time.Time { return testNow }}, Config{}, logger)
			e, err := New(cfg, logger, map[string]bool{"status": true})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			fams := gatherFrom(t, e.Scraper(ctx))
			if late == 0 && ctx.Err() != nil {
				t.Errorf("the scrape ran past its deadline")
			}
			if v, _ := value(fams, "zfs_pool_state", map[string]string{"pool": "r10", "state": "degraded"}); v != 1 {
				t.Errorf("r10 not degraded from its state kstat while zpool status hangs")
			}
			if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": zfs.SourceStatus}); v != 0 {
				t.Errorf("source zpool_status up while it hangs")
			}
			if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": zfs.SourceKstatState}); v != 1 {
				t.Errorf("source kstat_pool_state not up")
			}
		})
	}
}

// countingRunner hangs like hangingRunner and counts the commands started.
type countingRunner struct {
	mu    sync.Mutex
	lines map[string]int
}

func (r *countingRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	r.mu.Lock()
	r.lines[strings.Join(cmd.Args, " ")]++
	r.mu.Unlock()
	return hangingRunner{}.Run(ctx, cmd)
}

// Collectors that waited for a capability detection that timed out take
// its error: one hung probe per scrape, not one after the other, which
// would leave the kstat fallback no time.
func TestFailedDetectionIsNotRepeatedWithinAScrape(t *testing.T) {
	r := &countingRunner{lines: map[string]int{}}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := testConfig(zfs.Config{Runner: r, Now: func() time.Time { return testNow }}, Config{}, logger)
	e, err := New(cfg, logger, map[string]bool{"status": true, "properties": true, "vdev_io": true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	gatherFrom(t, e.Scraper(ctx))
	if n := r.lines["status -j --json-int -t -i"]; n != 1 {
		t.Errorf("the first status probe ran %d times in one scrape, want 1", n)
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
	client := zfs.New(zfs.Config{Runner: nopRunner{}, Kstat: fsys, KstatOS: "linux"}, slog.New(slog.DiscardHandler))
	h := newTxgHistory()
	count := func() (uint64, float64) {
		snap, err := client.Kstats(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		ch := make(chan prometheus.Metric, 8)
		h.update(snap.Txgs, ch)
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
		s := sample.MustRead(t, f)
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
	const td = "../internal/zfs/kstat/testdata/"
	for _, tc := range []struct {
		os      string
		replay  *runner.Replay
		dataset bool
	}{
		{"freebsd", replayOf(t, "sysctl -q kstat.zfs", td+"freebsd-sysctl-arcstats.txt", td+"freebsd-sysctl-datasets.txt", td+"freebsd-sysctl-pool-state.txt"), true},
		{"illumos", replayOf(t, "kstat -p -m zfs -i 0", td+"illumos-kstat-p-arcstats-pools.txt"), false},
	} {
		t.Run(tc.os, func(t *testing.T) {
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg := testConfig(zfs.Config{Runner: tc.replay, KstatOS: tc.os, Now: func() time.Time { return testNow }}, Config{}, logger)
			e, err := New(cfg, logger, map[string]bool{"kstat": true})
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

// seriesValues returns every gauge and counter by its series as the
// exposition writes it: name{label="value",...}, labels in name order.
func seriesValues(fams []*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range fams {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			key := mf.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			out[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return out
}
