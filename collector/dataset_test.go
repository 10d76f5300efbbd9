package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// datasetExporterOver is the dataset collector alone over a replay. With
// snapshots, the replay's snapshots are listed once, each kept, before the
// exporter is returned.
func datasetExporterOver(t *testing.T, dir string, cfg Config, snapshots bool) *Exporter {
	t.Helper()
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg = testConfig(zfs.Config{Runner: replay, Location: time.UTC, Now: func() time.Time { return testNow }}, cfg, logger)
	if snapshots {
		cfg.Snapshots = NewSnapshotLister(cfg.ZFS, time.Minute, true, logger)
		if err := cfg.Snapshots.List(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	e, err := New(cfg, logger, map[string]bool{"dataset": true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// datasetFigure is a series a listing must give, with its value.
type datasetFigure struct {
	name   string
	labels map[string]string
	want   float64
}

// The dataset collector over a real zfs-fuse pool (zfs get -Hp, as zfs
// list takes no -p there) and over OpenZFS 2.3.2 (one zfs list -Hp, with a
// volume, an encrypted filesystem whose key is loaded, and the settings
// zfs-fuse lacks), with their snapshots: the golden exposition, lint, the
// figures zfs get -Hp printed at the same moment, and no series where zfs
// prints none.
func TestDatasetCollector(t *testing.T) {
	for _, c := range []struct {
		name, dir, golden string
		figures           []datasetFigure
		absent            [][2]string // metric, dataset
	}{{
		name: "zfs-fuse", dir: "../internal/zfs/dataset/testdata/zfs-fuse", golden: "dataset-zfs-fuse.prom",
		figures: []datasetFigure{
			{"zfs_dataset_quota_bytes", map[string]string{"dataset": "cds/quota"}, 67108864},
			{"zfs_dataset_reservation_bytes", map[string]string{"dataset": "cds/reserved"}, 16777216},
			{"zfs_dataset_compression_ratio", map[string]string{"dataset": "cds/gzip"}, 178.39},
			{"zfs_dataset_mounted", map[string]string{"dataset": "cds/clone"}, 1},
			{"zfs_exporter_datasets_left_out", nil, 0},
			// Snapshots @first and @second, taken 2 s apart.
			{"zfs_dataset_snapshots", map[string]string{"dataset": "cds/plain"}, 2},
			{"zfs_dataset_oldest_snapshot_timestamp_seconds", map[string]string{"dataset": "cds/plain"}, 1796218584},
			{"zfs_dataset_newest_snapshot_timestamp_seconds", map[string]string{"dataset": "cds/plain"}, 1796218586},
			{"zfs_dataset_snapshots_used_bytes", map[string]string{"dataset": "cds/plain"}, 90112},
			{"zfs_dataset_snapshots", map[string]string{"dataset": "cds/gzip"}, 0},
			{"zfs_snapshot_used_bytes", map[string]string{"dataset": "cds/plain", "snapshot": "first"}, 90112},
			{"zfs_snapshot_referenced_bytes", map[string]string{"dataset": "cds/plain", "snapshot": "second"}, 12713984},
			{"zfs_snapshot_creation_timestamp_seconds", map[string]string{"dataset": "cds/nested/child", "snapshot": "all"}, 1796218586},
			{"zfs_exporter_source_up", map[string]string{"source": "zfs_list_snapshots"}, 1},
		},
		absent: [][2]string{
			{"zfs_dataset_quota_bytes", "cds/plain"},                      // none
			{"zfs_dataset_volume_size_bytes", "cds/plain"},                // a filesystem
			{"zfs_dataset_key_available", "cds/plain"},                    // zfs-fuse has no encryption
			{"zfs_dataset_used_bytes", "cds/plain@first"},                 // a snapshot
			{"zfs_dataset_logical_used_bytes", "cds/plain"},               // unknown to zfs-fuse
			{"zfs_dataset_newest_snapshot_timestamp_seconds", "cds/gzip"}, // no snapshots
		},
	}, {
		name: "OpenZFS 2.3.2", dir: "../internal/zfs/dataset/testdata/openzfs-2.3-guest", golden: "dataset-openzfs-2.3.prom",
		figures: []datasetFigure{
			{"zfs_dataset_volume_size_bytes", map[string]string{"dataset": "mir/ds/vol"}, 16 << 20},
			{"zfs_dataset_info", map[string]string{"dataset": "mir/ds/vol", "type": "volume", "block_size": "16384", "atime": ""}, 1},
			{"zfs_dataset_key_available", map[string]string{"dataset": "mir/ds/enc"}, 1},
			{"zfs_dataset_info", map[string]string{"dataset": "mir/ds/enc", "encryption": "aes-256-gcm", "sync": "standard"}, 1},
			{"zfs_dataset_compression_ratio", map[string]string{"dataset": "mir/ds/gzip"}, 150.76},
			{"zfs_dataset_logical_used_bytes", map[string]string{"dataset": "mir/ds/gzip"}, 4862976},
			{"zfs_exporter_source_up", map[string]string{"source": "zfs_list"}, 1},
			{"zfs_exporter_command_runs_total", map[string]string{"command": "zfs list"}, 1},
			// @first, then @second of every dataset 3 s later.
			{"zfs_dataset_snapshots", map[string]string{"dataset": "mir/ds/quota"}, 2},
			{"zfs_dataset_oldest_snapshot_timestamp_seconds", map[string]string{"dataset": "mir/ds/quota"}, 1796220460},
			{"zfs_dataset_newest_snapshot_timestamp_seconds", map[string]string{"dataset": "mir/ds/quota"}, 1796220463},
			{"zfs_dataset_snapshots_used_bytes", map[string]string{"dataset": "mir/ds/quota"}, 13312},
			{"zfs_dataset_snapshots", map[string]string{"dataset": "mir/ds/vol"}, 1},
			{"zfs_dataset_snapshots", map[string]string{"dataset": "mir"}, 0},
			{"zfs_dataset_info", map[string]string{"dataset": "mir/ds/enc", "canmount": "on"}, 1},
			{"zfs_dataset_info", map[string]string{"dataset": "mir/ds/vol", "canmount": ""}, 1},
		},
		absent: [][2]string{
			{"zfs_dataset_quota_bytes", "mir/ds/vol"},         // "-"
			{"zfs_dataset_mounted", "mir/ds/vol"},             // "-"
			{"zfs_dataset_key_available", "mir/ds/quota"},     // not encrypted
			{"zfs_dataset_volume_size_bytes", "mir/ds/quota"}, // a filesystem
		},
	}} {
		t.Run(c.name, func(t *testing.T) {
			e := datasetExporterOver(t, c.dir, Config{}, true)
			fams := gather(t, e)
			compareGolden(t, filepath.Join("testdata", c.golden), exposition(t, withoutZpool(fams)))
			if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
			for _, f := range c.figures {
				if v, ok := value(fams, f.name, f.labels); !ok || v != f.want {
					t.Errorf("%s%v = %v (present %v), want %v", f.name, f.labels, v, ok, f.want)
				}
			}
			for _, a := range c.absent {
				if _, ok := value(fams, a[0], map[string]string{"dataset": a[1]}); ok {
					t.Errorf("%s for %s exported", a[0], a[1])
				}
			}
		})
	}
}

// The patterns choose datasets by name, then the cap keeps the first and
// counts the rest.
func TestDatasetCollectorPatternsAndCap(t *testing.T) {
	e := datasetExporterOver(t, "../internal/zfs/dataset/testdata/zfs-fuse", Config{DatasetInclude: regexp.MustCompile(`^cds/`), DatasetExclude: regexp.MustCompile(`nested`), DatasetMax: 3}, false)
	fams := gather(t, e)
	var got []string
	for _, f := range fams {
		if f.GetName() != "zfs_dataset_used_bytes" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "dataset" {
					got = append(got, l.GetValue())
				}
			}
		}
	}
	// cds/clone, cds/gzip and cds/plain pass; cds/quota and cds/reserved
	// are past the cap.
	if want := []string{"cds/clone", "cds/gzip", "cds/plain"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("datasets %v, want %v", got, want)
	}
	if v, _ := value(fams, "zfs_exporter_datasets_left_out", nil); v != 2 {
		t.Errorf("left out %v, want 2", v)
	}
}

// The depth limit leaves out datasets deeper than it below their pool's
// root dataset, and does not count them as left out by the cap.
func TestDatasetCollectorDepth(t *testing.T) {
	e := datasetExporterOver(t, "../internal/zfs/dataset/testdata/zfs-fuse", Config{DatasetDepth: 1}, false)
	fams := gather(t, e)
	for dataset, want := range map[string]bool{"cds": true, "cds/nested": true, "cds/plain": true, "cds/nested/child": false} {
		if _, ok := value(fams, "zfs_dataset_used_bytes", map[string]string{"dataset": dataset}); ok != want {
			t.Errorf("%s exported: %v, want %v", dataset, ok, want)
		}
	}
	if v, _ := value(fams, "zfs_exporter_datasets_left_out", nil); v != 0 {
		t.Errorf("left out %v, want 0", v)
	}
}

// On OpenZFS 2.3.2, the datasets listed as JSON give the series that the
// text of zfs list -Hp of the same moment gives: the JSON is asked for
// when the text cannot be read, here a capture whose last line is cut
// short, as a mountpoint that holds a newline would cut it.
func TestDatasetCollectorJSONAndTextAgree(t *testing.T) {
	const dir = "../internal/zfs/dataset/testdata/openzfs-2.3-guest"
	cut := t.TempDir()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) < 4 {
		t.Fatalf("captures %v: %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, "__zfs_list_-Hp.txt") {
			data = append(data[:bytes.LastIndexByte(bytes.TrimSuffix(data, []byte("\n")), '\t')], '\n')
		}
		if err := os.WriteFile(filepath.Join(cut, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The dataset series, and how many times each form of the listing ran.
	datasetSeries := func(dir string, runs map[string]uint64) (string, int) {
		var b strings.Builder
		n := 0
		e := datasetExporterOver(t, dir, Config{}, true)
		fams := gather(t, e)
		for _, f := range fams {
			if strings.HasPrefix(f.GetName(), "zfs_dataset_") {
				b.Write(exposition(t, []*dto.MetricFamily{f}))
				n += len(f.GetMetric())
			}
		}
		for listing, want := range runs {
			command := listing + " -t filesystem,volume -o " + strings.Join(zfs.DatasetProperties, ",")
			if n := e.cfg.Runner.(runner.StatsReporter).Stats()[command].Runs; n != want {
				t.Errorf("%s: %q ran %v times, want %v", dir, command, n, want)
			}
		}
		return b.String(), n
	}
	fromText, n := datasetSeries(dir, map[string]uint64{"zfs list -Hp": 1, "zfs list -j --json-int": 0})
	fromJSON, _ := datasetSeries(cut, map[string]uint64{"zfs list -Hp": 1, "zfs list -j --json-int": 1})
	if n < 150 {
		t.Errorf("%d dataset series from text, want those of 10 datasets", n)
	}
	if diff := cmp.Diff(fromText, fromJSON); diff != "" {
		t.Errorf("series from zfs list -Hp (-) and -j (+):\n%s", diff)
	}
}

// The dataset collector is on by default, and left out, not failing,
// over a replay that holds no outputs of zfs: a capture of zpool's alone
// has no datasets to show.
func TestDatasetCollectorLeftOutWithoutZfs(t *testing.T) {
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{"testdata/replay/zfs-fuse", false},
		{"../internal/zfs/dataset/testdata/zfs-fuse", true},
	} {
		replay, err := runner.NewReplay(c.dir)
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&log, nil))
		e, err := New(Config{ZFS: zfs.New(zfs.Config{Runner: replay}, logger), Runner: replay}, logger, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(e.Enabled(), "dataset"); got != c.want {
			t.Errorf("%s: dataset collector enabled = %v, want %v (enabled: %v)", c.dir, got, c.want, e.Enabled())
		}
		if said := strings.Contains(log.String(), "no outputs of zfs"); said == c.want {
			t.Errorf("%s: the log says why the collector is left out: %v, want %v; log:\n%s", c.dir, said, !c.want, &log)
		}
	}
}

// zfs hangs on a suspended pool, in a process no kill ends: the listing
// names the other pools, and runs not at all when zpool status hung. The
// snapshot lister holds back as long.
func TestDatasetCollectorSparesSuspendedPools(t *testing.T) {
	status, err := os.ReadFile("../internal/zfs/zpool/testdata/openzfs-2.3-guest/08-suspended__zpool_status_-j_--json-int.txt")
	if err != nil {
		t.Fatal(err)
	}
	listing, err := os.ReadFile("../internal/zfs/dataset/testdata/openzfs-2.3-guest/12-datasets__zfs_list_-Hp.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := bytes.Cut(listing, []byte("# ---\n"))
	line := "zfs list -r -Hp -t filesystem,volume -o " + strings.Join(zfs.DatasetProperties, ",") + " dr mir one r10 rz1"
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"zpool_status_-j_--json-int.txt": status,
		"zfs_list.txt":                   append([]byte("# command: "+line+"\n# ---\n"), body...),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := &hangingStatus{Runner: replay}
	logger := slog.New(slog.DiscardHandler)
	cfg := testConfig(zfs.Config{Runner: run, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{}, logger)
	cfg.Snapshots = NewSnapshotLister(cfg.ZFS, time.Minute, false, logger)
	e, err := New(cfg, logger, map[string]bool{"dataset": true})
	if err != nil {
		t.Fatal(err)
	}
	fams := gather(t, e)
	if v, ok := value(fams, "zfs_dataset_used_bytes", map[string]string{"dataset": "mir"}); !ok || v == 0 {
		t.Errorf("no space of mir from the listing of the pools that are not suspended")
	}
	if st := replay.Stats()[line]; st.Runs != 1 || st.Failures != 0 {
		t.Errorf("the listing of the other pools ran %+v, want once", st)
	}
	if err := cfg.Snapshots.List(context.Background()); errors.Is(err, errPoolsUnknown) {
		t.Errorf("the lister holds back with the pools known: %v", err)
	}

	run.hang.Store(true)
	e, err = New(cfg, logger, map[string]bool{"dataset": true})
	if err != nil {
		t.Fatal(err)
	}
	gather(t, e)
	zfsRuns := 0
	for l, st := range replay.Stats() {
		if strings.HasPrefix(l, "zfs ") {
			zfsRuns += int(st.Runs)
		}
	}
	if zfsRuns != 2 { // the first scrape's listing, and the lister's try
		t.Errorf("zfs ran %d times in all, want no run once zpool status hung", zfsRuns)
	}
	if err := cfg.Snapshots.List(context.Background()); !errors.Is(err, errPoolsUnknown) {
		t.Errorf("the lister lists though zpool status hung: %v", err)
	}
}

// hangingStatus answers zpool status as a hung zpool does once hang is
// set: killed at its deadline.
type hangingStatus struct {
	runner.Runner
	hang atomic.Bool
}

func (r *hangingStatus) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	if r.hang.Load() && len(cmd.Args) > 0 && cmd.Args[0] == "status" {
		return nil, &runner.Error{Command: cmd.Line(), ExitCode: -1, Err: runner.ErrTimeout}
	}
	return r.Runner.Run(ctx, cmd)
}

// withoutZpool leaves out of fams what the zpool status the dataset
// collector asks first left behind: these replays hold zfs's outputs
// alone, so status fails there, and a golden of the collector's is not
// the place for it.
func withoutZpool(fams []*dto.MetricFamily) []*dto.MetricFamily {
	var kept []*dto.MetricFamily
	for _, f := range fams {
		if f.GetName() == "zfs_exporter_capabilities_info" {
			continue
		}
		f.Metric = slices.DeleteFunc(f.Metric, func(m *dto.Metric) bool {
			for _, l := range m.GetLabel() {
				if l.GetName() == "command" && strings.HasPrefix(l.GetValue(), "zpool ") || l.GetName() == "source" && l.GetValue() == "zpool_status" {
					return true
				}
			}
			return false
		})
		if len(f.Metric) > 0 {
			kept = append(kept, f)
		}
	}
	return kept
}
