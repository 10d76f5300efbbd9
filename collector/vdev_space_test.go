package collector

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// vdevSpaceFamilies are the families of vdev_space.go.
var vdevSpaceFamilies = []string{
	"zfs_vdev_allocated_bytes", "zfs_vdev_expand_size_bytes", "zfs_vdev_fragmentation_ratio",
	"zfs_vdev_free_bytes", "zfs_vdev_size_bytes",
}

// vdevSpaceExporter is the vdev_space collector over run, with the
// collectors named in also.
func vdevSpaceExporter(t *testing.T, run runner.Runner, logger *slog.Logger, also ...string) *Exporter {
	t.Helper()
	enabled := map[string]bool{"vdev_space": true}
	for _, name := range also {
		enabled[name] = true
	}
	e, err := New(testConfig(zfs.Config{Runner: run, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{}, logger), logger, enabled)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// ownFamilies keeps the families of vdev_space.go, for a golden small
// enough to review.
func ownFamilies(fams []*dto.MetricFamily) []*dto.MetricFamily {
	return slices.DeleteFunc(slices.Clone(fams), func(f *dto.MetricFamily) bool {
		return !slices.Contains(vdevSpaceFamilies, f.GetName())
	})
}

// spaceCase is a zpool list -v output and the status of the same moment.
type spaceCase struct {
	name   string
	status func(t *testing.T) *zpool.Status
	list   func(t *testing.T) string // the capture's path
}

func fixed(p string) func(*testing.T) string { return func(*testing.T) string { return p } }

// ownSpaceCases are the zpool package's outputs: every allocation class,
// in the 2.3 and 2.4 forms, and the guest's pools whose names repeat.
var ownSpaceCases = []spaceCase{
	{"classes", textStatus("../internal/zfs/zpool/testdata/status-classes-slow.txt"), fixed("../internal/zfs/zpool/testdata/list-v-Hp-classes.txt")},
	{"classes-2.4", textStatus("../internal/zfs/zpool/testdata/status-classes-slow.txt"), fixed("../internal/zfs/zpool/testdata/list-v-Hp-classes-2.4.txt")},
	{"duplicate-names", jsonStatus(guestDir("2.3") + "/10-duplicate-names__zpool_status_-j_--json-int.txt"), fixed("../internal/zfs/zpool/testdata/list-v-Hp-duplicate-names.txt")},
}

func textStatus(path string) func(t *testing.T) *zpool.Status {
	return func(t *testing.T) *zpool.Status {
		st, err := zpool.ParseStatus(bytes.NewReader(sample.MustRead(t, path).Body), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
}

func jsonStatus(path string) func(t *testing.T) *zpool.Status {
	return func(t *testing.T) *zpool.Status {
		st, err := zpool.ParseStatusJSON(bytes.NewReader(sample.MustRead(t, path).Body))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
}

// scrapeSpace scrapes the vdev_space collector of a host whose zpool list
// -v -Hp prints the capture at list, with st as the scrape's status.
func scrapeSpace(t *testing.T, st *zpool.Status, list string) []*dto.MetricFamily {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, runner.CaptureFileName("zpool list -v -Hp")), sample.MustRead(t, list).Body, 0o644); err != nil {
		t.Fatal(err)
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	e := vdevSpaceExporter(t, replay, slog.New(slog.DiscardHandler))
	fams := gatherFrom(t, e.scraperFor(context.Background(), e.cfg.ZFS.NewScrapeWithStatus(st, nil)))
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "vdev_space"}); v != 1 {
		t.Errorf("vdev_space failed")
	}
	return fams
}

// The collector's series over the package's own outputs, as reviewed in
// their goldens; the 2.4 form gives the 2.3 form's series.
func TestVdevSpaceOwnOutputs(t *testing.T) {
	var classes []byte
	for _, c := range ownSpaceCases {
		t.Run(c.name, func(t *testing.T) {
			got := exposition(t, ownFamilies(scrapeSpace(t, c.status(t), c.list(t))))
			switch c.name {
			case "classes":
				classes = got
			case "classes-2.4":
				if !bytes.Equal(got, classes) {
					t.Errorf("the 2.4 form gives other series than the 2.3 form:\n%s", got)
				}
				return
			}
			compareGolden(t, filepath.Join("testdata", "vdev-space-"+c.name+".prom"), got)
		})
	}
}

// The OpenZFS 2.3.2 captures, replayed as the exporter runs: JSON status
// and zpool list -v -Hp, scenario after scenario.
func TestVdevSpaceOpenZFS23(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	scenarios := []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"}
	replay, err := runner.NewReplayWithOptions(dir, runner.ReplayOptions{Scenarios: scenarios})
	if err != nil {
		t.Fatal(err)
	}
	e := vdevSpaceExporter(t, replay, slog.New(slog.DiscardHandler), "status")
	for _, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			fams := gatherFrom(t, e.Scraper(context.Background()))
			for _, c := range []string{"status", "vdev_space"} {
				if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": c}); v != 1 {
					t.Errorf("collector %s failed", c)
				}
			}
			if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": zfs.SourceVdevList}); v != 1 {
				t.Errorf("source %s not up", zfs.SourceVdevList)
			}
			// The series are in the exporter's golden of the scenario
			// (TestOpenZFS23Replay).
			if n := len(series(fams, "zfs_vdev_size_bytes", map[string]string{"pool": "rz1"})); n != 8 {
				t.Errorf("rz1: %d sizes, want 8: the pool, raidz1-0, its 3 disks, the log, the cache device and the spare", n)
			}
			if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", err, problems)
			}
		})
		replay.Advance()
	}
}

// The figures mean what zpool list -v's do, so that they add up: the
// top-level vdevs of the normal, special and dedup classes make the pool's
// size (which zpool get size says too), allocated over size is zpool's
// CAP, raw on raidz as on mirrors, and free is size less allocated. A
// pool of one disk, whose row prints the device's size, a log and a cache
// device are the cases where SIZE alone would not.
func TestVdevSpaceAddsUp(t *testing.T) {
	cases := slices.Clone(ownSpaceCases)
	for _, scenario := range []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"} {
		cases = append(cases, spaceCase{"openzfs-2.3-" + scenario,
			func(t *testing.T) *zpool.Status {
				return jsonStatus(filepath.Join(sample.Dir(t, "captures/openzfs-2.3"), scenario+"__zpool-status-j-json-int.txt"))(t)
			},
			func(t *testing.T) string {
				return filepath.Join(sample.Dir(t, "captures/openzfs-2.3"), scenario+"__zpool-list-v-Hp.txt")
			}})
	}
	// The test bed's guests of 2.1.11, 2.3.2 and 2.4.4, where they hold
	// zpool list -v.
	guestLists, err := filepath.Glob("../internal/zfs/zpool/testdata/openzfs-*-guest/*__zpool_list_-v_-Hp.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range guestLists {
		scenario := strings.TrimSuffix(list, "__zpool_list_-v_-Hp.txt")
		cases = append(cases, spaceCase{filepath.Base(filepath.Dir(list)) + "-" + filepath.Base(scenario), textStatus(scenario + "__zpool_status.txt"), fixed(list)})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st, list := c.status(t), c.list(t)
			fams := scrapeSpace(t, st, list)
			rows, err := zpool.ParseListVerbose(bytes.NewReader(sample.MustRead(t, list).Body))
			if err != nil {
				t.Fatal(err)
			}
			listed := map[string]zpool.ListRow{} // pool/name as printed; names that repeat are left out
			seen := map[string]int{}
			for _, r := range rows {
				seen[r.Pool+"/"+r.Name]++
				listed[r.Pool+"/"+r.Name] = r
			}
			get := func(metric, pool, vdev string) (float64, bool) {
				return value(fams, metric, map[string]string{"pool": pool, "vdev": vdev})
			}
			checked := 0
			for _, p := range st.Pools {
				pool, ok := get("zfs_vdev_size_bytes", p.Name, p.Name)
				if !ok {
					continue // not listed
				}
				sum := 0.0
				for _, top := range p.Root.Children {
					if top.Class == zpool.ClassNormal || top.Class == zpool.ClassSpecial || top.Class == zpool.ClassDedup {
						size, ok := get("zfs_vdev_size_bytes", p.Name, top.Name)
						if !ok {
							t.Errorf("%s %s: no size", p.Name, top.Name)
						}
						sum += size
					}
				}
				if sum != pool || pool != *listed[p.Name+"/"+p.Name].Size {
					t.Errorf("%s: top-level vdevs add up to %v, the pool's row is %v, zpool list's SIZE %v", p.Name, sum, pool, *listed[p.Name+"/"+p.Name].Size)
				}
				p.Root.Walk(func(v *zpool.Vdev, _ string) {
					size, hasSize := get("zfs_vdev_size_bytes", p.Name, v.Name)
					allocated, hasAllocated := get("zfs_vdev_allocated_bytes", p.Name, v.Name)
					free, hasFree := get("zfs_vdev_free_bytes", p.Name, v.Name)
					row, ok := listed[p.Name+"/"+v.PrintedName()]
					if !hasSize || !hasAllocated || !ok || seen[p.Name+"/"+v.PrintedName()] > 1 {
						return
					}
					checked++
					if !hasFree || free != size-allocated {
						t.Errorf("%s %s: free %v, size less allocated %v", p.Name, v.Name, free, size-allocated)
					}
					if row.Capacity == nil {
						return
					}
					if cap := math.Floor(allocated * 100 / size); cap != math.Round(*row.Capacity*100) {
						t.Errorf("%s %s: allocated over size is %v%%, zpool list's CAP %v%%", p.Name, v.Name, cap, *row.Capacity*100)
					}
				})
			}
			if checked == 0 {
				t.Error("no vdev checked")
			}
		})
	}
}

// The pools' own rows are zpool get's size, allocated and free of the
// same scrape's pool properties, where the captures hold both.
func TestVdevSpacePoolRowIsThePool(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	replay, err := runner.NewReplayWithOptions(dir, runner.ReplayOptions{Scenarios: []string{"04-scrubbed-healthy"}})
	if err != nil {
		t.Fatal(err)
	}
	fams := gatherFrom(t, vdevSpaceExporter(t, replay, slog.New(slog.DiscardHandler), "status", "properties").Scraper(context.Background()))
	for _, pool := range []string{"r10", "rz1", "scratch", "tank"} {
		want, ok := value(fams, "zfs_pool_size_bytes", map[string]string{"pool": pool})
		got, _ := value(fams, "zfs_vdev_size_bytes", map[string]string{"pool": pool, "vdev": pool})
		if !ok || got != want {
			t.Errorf("%s: the pool's row %v, zfs_pool_size_bytes %v", pool, got, want)
		}
	}
}

// A change between zpool status and zpool list costs the rows it makes
// unfit, with a warning, and the collector still succeeds.
func TestVdevSpaceChangedBetweenCommands(t *testing.T) {
	dir := t.TempDir()
	list := sample.MustRead(t, "../internal/zfs/zpool/testdata/list-v-Hp-duplicate-names.txt").Body
	// A pool created between the two commands, and dupr's first raidz
	// given a disk after status had run.
	list = append([]byte("born\t100\t10\t90\t-\t-\t1\t10\t1.00\tONLINE\t-\n\tsdz\t110\t10\t90\t-\t-\t1\t10\t-\tONLINE\n"), list...)
	list = bytes.Replace(list, []byte("\t/var/tmp/dup1984221827/f11\t"), []byte("\tsdy\t268435456\t-\t-\t-\t-\t-\t-\t-\tONLINE\n\t/var/tmp/dup1984221827/f11\t"), 1)
	if err := os.WriteFile(filepath.Join(dir, runner.CaptureFileName("zpool list -v -Hp")), list, 0o644); err != nil {
		t.Fatal(err)
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	e := vdevSpaceExporter(t, replay, slog.New(slog.NewTextHandler(&logged, nil)))
	st := jsonStatus(guestDir("2.3") + "/10-duplicate-names__zpool_status_-j_--json-int.txt")(t)
	fams := gatherFrom(t, e.scraperFor(context.Background(), e.cfg.ZFS.NewScrapeWithStatus(st, nil)))
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "vdev_space"}); v != 1 {
		t.Errorf("vdev_space failed")
	}
	for _, want := range []string{`pool \"born\", which zpool status does not`, `row \"sdy\" does not fit`} {
		if !strings.Contains(logged.String(), want) {
			t.Errorf("no warning with %s in:\n%s", want, logged.String())
		}
	}
	has := func(pool, vdev string) bool {
		_, ok := value(fams, "zfs_vdev_size_bytes", map[string]string{"pool": pool, "vdev": vdev})
		return ok
	}
	for _, c := range []struct {
		pool, vdev string
		want       bool
	}{
		{"born", "born", false}, {"dr", "dr", true}, {"dupd", "draid1:2d:4c:1s-1/spare-0", false},
		{"dupr", "/var/tmp/dup1984221827/f10", true}, {"dupr", "/var/tmp/dup1984221827/f11", false}, {"dupr", "raidz1-1", false},
	} {
		if got := has(c.pool, c.vdev); got != c.want {
			t.Errorf("%s %s: series %v, want %v", c.pool, c.vdev, got, c.want)
		}
	}
}

// A zpool that lists no vdevs (zfs-fuse, and a replay without the
// command) is no failure, gives no series and is not asked again; output
// that cannot be read fails the collector alone, naming its command and
// line.
func TestVdevSpaceWithoutZpoolList(t *testing.T) {
	replay, err := runner.NewReplay("testdata/replay/zfs-fuse/000")
	if err != nil {
		t.Fatal(err)
	}
	e := vdevSpaceExporter(t, replay, slog.New(slog.DiscardHandler), "status")
	for range 3 {
		fams := gatherFrom(t, e.Scraper(context.Background()))
		if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "vdev_space"}); v != 1 {
			t.Errorf("vdev_space failed on a zpool without zpool list -v")
		}
		if len(ownFamilies(fams)) > 0 {
			t.Errorf("series of a zpool without zpool list -v: %v", ownFamilies(fams))
		}
	}
	runs := uint64(0)
	for line, st := range replay.Stats() {
		if strings.HasPrefix(line, "zpool list") {
			runs += st.Runs
		}
	}
	if runs != 3 {
		t.Errorf("zpool list ran %d times over 3 scrapes, want each form once", runs)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, runner.CaptureFileName("zpool list -v -Hp")), []byte("tank\tmuch\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if replay, err = runner.NewReplay(dir); err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	e = vdevSpaceExporter(t, replay, slog.New(slog.NewTextHandler(&logged, nil)))
	st := textStatus("../internal/zfs/zpool/testdata/status-classes-slow.txt")(t)
	fams := gatherFrom(t, e.scraperFor(context.Background(), e.cfg.ZFS.NewScrapeWithStatus(st, nil)))
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "vdev_space"}); v != 0 {
		t.Errorf("vdev_space succeeded over output it cannot read")
	}
	if !strings.Contains(logged.String(), "zpool list -v -Hp") || !strings.Contains(logged.String(), "line 1") {
		t.Errorf("the error names neither the command nor the line:\n%s", logged.String())
	}
}
