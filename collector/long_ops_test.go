package collector

import (
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

const (
	mib = 1 << 20
	gib = 1 << 30
)

// publicStatus is a public status output of the zpool package's fixtures.
func publicStatus(name string) string {
	return filepath.Join("..", "internal", "zfs", "zpool", "testdata", "public", name)
}

// statusFixtureCollector sends what collectPool sends for each pool of a status
// fixture. A JSON status is estimated at now, as the client does: its
// removals and expansions carry no rate or time left.
func statusFixtureCollector(t *testing.T, fixture string, json bool, now time.Time) prometheus.Collector {
	t.Helper()
	st := parseStatusFixture(t, fixture, json)
	for _, p := range st.Pools {
		if len(p.Warnings) != 0 {
			t.Errorf("%s: pool %s: warnings %q", fixture, p.Name, p.Warnings)
		}
	}
	if json {
		st.Estimate(now)
	}
	return collectorFunc(func(ch chan<- prometheus.Metric) {
		for _, p := range st.Pools {
			collectPool(p, ch)
		}
	})
}

// fixtureMetrics gathers a status fixture, checks that the exposition
// lints clean, and compares it with its golden file when golden is set.
func fixtureMetrics(t *testing.T, fixture string, json bool, golden string) []*dto.MetricFamily {
	t.Helper()
	c := statusFixtureCollector(t, fixture, json, testNow)
	fams := gatherFrom(t, c)
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
	if golden != "" {
		compareGolden(t, filepath.Join("testdata", golden), exposition(t, fams))
	}
	return fams
}

type wantValue struct {
	metric string
	labels map[string]string
	value  float64
}

// checkValues checks each value, present and near what zpool printed.
func checkValues(t *testing.T, fams []*dto.MetricFamily, wants []wantValue) {
	t.Helper()
	for _, w := range wants {
		if got, ok := value(fams, w.metric, w.labels); !ok || !near(got, w.value) {
			t.Errorf("%s%v = %v (present %v), want %v", w.metric, w.labels, got, ok, w.value)
		}
	}
}

// checkAbsent checks that none of the series is there.
func checkAbsent(t *testing.T, fams []*dto.MetricFamily, labels map[string]string, metrics ...string) {
	t.Helper()
	for _, m := range metrics {
		if got, ok := value(fams, m, labels); ok {
			t.Errorf("%s%v = %v, want no series", m, labels, got)
		}
	}
}

func unix(t *testing.T, s string) float64 { return float64(utcTime(t, s).Unix()) }

func utcTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.DateTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// A removal in progress (FreeBSD, a real output):
//
//	remove: Evacuation of /dev/da0p4 in progress since Mon Jan 27 16:10:59 2025
//	        158M copied out of 698M at 39.4M/s, 22.57% done, 0h0m to go
//
// is a scan of function remove with no vdev: copied is issued.
func TestRemovalInProgressMetrics(t *testing.T) {
	fams := fixtureMetrics(t, publicStatus("remove-evacuation-in-progress-freebsd.txt"), false, "status-remove-in-progress-freebsd.prom")
	remove := map[string]string{"pool": "zroot", "function": "remove", "vdev": ""}
	checkValues(t, fams, []wantValue{
		{"zfs_scan_state", map[string]string{"pool": "zroot", "function": "remove", "state": "scanning"}, 1},
		{"zfs_scan_state", map[string]string{"pool": "zroot", "function": "remove", "state": "finished"}, 0},
		{"zfs_scan_issued_bytes", remove, 158 * mib},
		{"zfs_scan_total_bytes", remove, 698 * mib},
		{"zfs_scan_issue_rate_bytes_per_second", remove, 39.4 * mib},
		{"zfs_scan_progress_ratio", remove, 0.2257},
		{"zfs_scan_remaining_seconds", remove, 0},
		{"zfs_scan_start_time_seconds", remove, unix(t, "2025-01-27 16:10:59")},
		// The resilver before it is still there.
		{"zfs_scan_state", map[string]string{"pool": "zroot", "function": "resilver", "state": "finished"}, 1},
	})
	// Copying has no examining phase, and zpool printed no mapping memory.
	checkAbsent(t, fams, remove, "zfs_scan_examined_bytes", "zfs_scan_processed_bytes", "zfs_scan_errors",
		"zfs_scan_end_time_seconds", "zfs_scan_duration_seconds", "zfs_scan_waiting")
	checkAbsent(t, fams, map[string]string{"pool": "zroot"}, "zfs_pool_removal_mapping_memory_bytes",
		"zfs_pool_checkpoint_bytes", "zfs_vdev_trim_state", "zfs_vdev_initialize_state")
}

// A finished removal keeps its figures, with the memory of its mappings:
//
//	remove: Removal of vdev 0 copied 698M in 0h0m, completed on Mon Jan 27 16:11:11 2025
//	        10.1K memory used for removed device mappings
func TestRemovalFinishedMetrics(t *testing.T) {
	for _, c := range []struct {
		fixture, pool  string
		copied, memory float64
		end            string
	}{
		{"remove-finished-resilvering-freebsd.txt", "zroot", 698 * mib, 10.1 * kib, "2025-01-27 16:11:11"},
		{"remove-finished-o3x-blank-lines-stripped.txt", "zshrinky", 744 * mib, 18.2 * kib, "2023-04-26 00:08:13"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			fams := fixtureMetrics(t, publicStatus(c.fixture), false, "")
			remove := map[string]string{"pool": c.pool, "function": "remove", "vdev": ""}
			checkValues(t, fams, []wantValue{
				{"zfs_scan_state", map[string]string{"pool": c.pool, "function": "remove", "state": "finished"}, 1},
				{"zfs_scan_state", map[string]string{"pool": c.pool, "function": "remove", "state": "scanning"}, 0},
				{"zfs_scan_issued_bytes", remove, c.copied},
				{"zfs_scan_duration_seconds", remove, 0}, // "in 0h0m"
				{"zfs_scan_end_time_seconds", remove, unix(t, c.end)},
				{"zfs_pool_removal_mapping_memory_bytes", map[string]string{"pool": c.pool}, c.memory},
			})
			// Text prints neither the total nor the start of a finished removal.
			checkAbsent(t, fams, remove, "zfs_scan_total_bytes", "zfs_scan_start_time_seconds",
				"zfs_scan_progress_ratio", "zfs_scan_issue_rate_bytes_per_second", "zfs_scan_remaining_seconds")
		})
	}
}

// A RAID-Z expansion in progress (OpenZFS 2.3, from a test-suite log):
//
//	expand: expansion of raidz2-0 in progress since Wed Aug  7 12:18:13 2024
//	  62.9M / 129M copied at 550K/s, 48.80% done, 00:02:02 to go
//
// is a scan of function expand on raidz2-0, not waiting.
func TestExpansionInProgressMetrics(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-status")
	fams := fixtureMetrics(t, filepath.Join(dir, "openzfs23-raidz-expand-in-progress-zts-log-prefixed.txt"), false, "status-expand-in-progress-openzfs23.prom")
	expand := map[string]string{"pool": "testpool", "function": "expand", "vdev": "raidz2-0"}
	checkValues(t, fams, []wantValue{
		{"zfs_scan_state", map[string]string{"pool": "testpool", "function": "expand", "vdev": "raidz2-0", "state": "scanning"}, 1},
		{"zfs_scan_issued_bytes", expand, 62.9 * mib},
		{"zfs_scan_total_bytes", expand, 129 * mib},
		{"zfs_scan_issue_rate_bytes_per_second", expand, 550 * kib},
		{"zfs_scan_progress_ratio", expand, 0.4880},
		{"zfs_scan_remaining_seconds", expand, 122},
		{"zfs_scan_start_time_seconds", expand, unix(t, "2024-08-07 12:18:13")},
		{"zfs_scan_waiting", expand, 0},
		// The scrub before it, with its error.
		{"zfs_scan_errors", map[string]string{"pool": "testpool", "function": "scrub"}, 1},
	})
	checkAbsent(t, fams, expand, "zfs_scan_examined_bytes", "zfs_scan_end_time_seconds", "zfs_scan_duration_seconds")
	checkAbsent(t, fams, map[string]string{"pool": "testpool"}, "zfs_pool_removal_mapping_memory_bytes")
}

// TRIM annotations of `zpool status -t`, from real outputs: a state set
// per leaf whose TRIM ran, progress and time where printed; nothing for
// interior vdevs nor for a leaf that cannot TRIM.
func TestVdevTrimCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-status")
	leaf := func(pool, vdev string) map[string]string { return map[string]string{"pool": pool, "vdev": vdev} }
	state := func(pool, vdev, s string) map[string]string {
		return map[string]string{"pool": pool, "vdev": vdev, "state": s}
	}
	t.Run("started, unsupported", func(t *testing.T) {
		// sdd  ONLINE  0 0 0  (0% trimmed, started at Thu 21 Feb 2019 07:32:44 PM UTC)
		// scsi-36000c290f7e3d3e0c3644005631d8107  ONLINE  0 0 0  (trim unsupported)
		fams := fixtureMetrics(t, filepath.Join(dir, "zol08dev-t-trim-two-pools-locale-date.txt"), false, "")
		const pool1, pool2, scsi = "rpool73ac2ec5b7134ca192b020681ab913d8", "vpool2", "scsi-36000c290f7e3d3e0c3644005631d8107"
		checkValues(t, fams, []wantValue{
			{"zfs_vdev_trim_state", state(pool1, "sdd", "active"), 1},
			{"zfs_vdev_trim_state", state(pool1, "sdd", "complete"), 0},
			{"zfs_vdev_trim_progress_ratio", leaf(pool1, "sdd"), 0},
			{"zfs_vdev_trim_start_time_seconds", leaf(pool1, "sdd"), unix(t, "2019-02-21 19:32:44")},
		})
		checkAbsent(t, fams, leaf(pool2, scsi), "zfs_vdev_trim_state", "zfs_vdev_trim_progress_ratio", "zfs_vdev_trim_start_time_seconds")
		// Text prints no bytes or errors; nothing said of initialization.
		checkAbsent(t, fams, leaf(pool1, "sdd"), "zfs_vdev_trim_done_bytes", "zfs_vdev_trim_total_bytes",
			"zfs_vdev_trim_errors", "zfs_vdev_trim_end_time_seconds", "zfs_vdev_initialize_state")
		checkAbsent(t, fams, leaf(pool1, pool1), "zfs_vdev_trim_state")
	})
	t.Run("completed, logs", func(t *testing.T) {
		// /var/tmp/vdev1, /var/tmp/log: (100% trimmed, completed at Wed 20 Feb 2019 06:12:21 PM PST)
		fams := fixtureMetrics(t, filepath.Join(dir, "zol08dev-t-trimmed-completed-logs-tab-trailing.txt"), false, "")
		end := unix(t, "2019-02-20 18:12:21") // local time, read in the location given
		var wants []wantValue
		for _, v := range []string{"/var/tmp/vdev1", "/var/tmp/log"} {
			wants = append(wants,
				wantValue{"zfs_vdev_trim_state", state("tank", v, "complete"), 1},
				wantValue{"zfs_vdev_trim_progress_ratio", leaf("tank", v), 1},
				wantValue{"zfs_vdev_trim_end_time_seconds", leaf("tank", v), end})
		}
		checkValues(t, fams, wants)
		checkAbsent(t, fams, leaf("tank", "/var/tmp/vdev1"), "zfs_vdev_trim_start_time_seconds")
		checkAbsent(t, fams, leaf("tank", "vdd"), "zfs_vdev_trim_state") // (trim unsupported)
	})
	t.Run("unsupported, mirror", func(t *testing.T) {
		fams := fixtureMetrics(t, filepath.Join(dir, "openzfs226-t-trim-unsupported-mirror-complete.txt"), false, "")
		for _, v := range []string{"sda3", "sdb3", "mirror-0"} {
			checkAbsent(t, fams, leaf("rpool", v), "zfs_vdev_trim_state")
		}
		checkAbsent(t, fams, leaf("rpool", "rpool"), "zfs_vdev_trim_state")
	})
}

// zpool status -t -i speaks of every leaf; only a TRIM or initialization
// that ran gives series. Of the guest's two leaves, the first was trimming
// and never initialized, the second initializing (suspended) and never
// trimmed; text and JSON alike.
func TestVdevOpsOnlyWhereTheyRan(t *testing.T) {
	const dir = "../internal/zfs/zpool/testdata/openzfs-2.3-guest/"
	const f05, f06 = "/var/tmp/ops4056635769/f05", "/var/tmp/ops4056635769/f06"
	for _, c := range []struct {
		fixture string
		json    bool
	}{
		{"18-trim-initialize__zpool_status_-t_-i_opr.txt", false},
		{"18-trim-initialize__zpool_status_-j_--json-int_-t_-i_opr.txt", true},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			st := parseStatusFixture(t, dir+c.fixture, c.json)
			said := map[string]string{}
			st.Pools[0].Root.Walk(func(v *zpool.Vdev, _ string) {
				if v.Trim != nil && v.Initialize != nil {
					said[v.Name] = v.Trim.State + "/" + v.Initialize.State
				}
			})
			if want := map[string]string{f05: "active/none", f06: "none/suspended"}; !maps.Equal(said, want) {
				t.Fatalf("parsed TRIM/initialize states %v, want %v", said, want)
			}
			fams := fixtureMetrics(t, dir+c.fixture, c.json, "")
			leaf := func(v string) map[string]string { return map[string]string{"pool": "opr", "vdev": v} }
			state := func(v, s string) map[string]string { return map[string]string{"pool": "opr", "vdev": v, "state": s} }
			checkValues(t, fams, []wantValue{
				{"zfs_vdev_trim_state", state(f05, "active"), 1},
				{"zfs_vdev_initialize_state", state(f06, "suspended"), 1},
				{"zfs_vdev_initialize_state", state(f06, "active"), 0},
			})
			checkAbsent(t, fams, leaf(f05), "zfs_vdev_initialize_state")
			checkAbsent(t, fams, leaf(f06), "zfs_vdev_trim_state")
		})
	}
}

// The untrimmed leaves of a real OpenZFS 2.3.2 (`zpool status -s -t -p`)
// give no TRIM series, while the parser reads each as untrimmed.
func TestVdevTrimCapture(t *testing.T) {
	fixture := filepath.Join(sample.Dir(t, "captures/openzfs-2.3"), "09-errors-repaired__zpool-status-s-t-p.txt")
	untrimmed := 0
	for _, p := range parseStatusFixture(t, fixture, false).Pools {
		p.Root.Walk(func(v *zpool.Vdev, _ string) {
			if v.Trim != nil && v.Trim.State == zpool.VdevOpNone {
				untrimmed++
			}
		})
	}
	if untrimmed < 10 {
		t.Errorf("%d untrimmed leaves parsed, want the capture's 10 or more", untrimmed)
	}
	for _, mf := range fixtureMetrics(t, fixture, false, "") {
		if mf.GetName() == "zfs_vdev_trim_state" {
			t.Errorf("%d zfs_vdev_trim_state series for leaves never trimmed", len(mf.GetMetric()))
		}
	}
}

// statusOpsDir holds one state of three pools as `zpool status -t -i`
// and `zpool status -j --json-int -t -i` print it, written from
// zpool_main.c (no public output of these fields in JSON was found): a
// removal, an expansion, a checkpoint, TRIMs and an initialization.
const statusOpsDir = "testdata/status-ops"

// The JSON and the text of the same state give the same series, the
// rates and times left that the client estimates from JSON included;
// JSON alone carries the bytes and errors of TRIM and initialization.
func TestLongOpsTextAndJSONAgree(t *testing.T) {
	jsonFams := fixtureMetrics(t, filepath.Join(statusOpsDir, "json-int.txt"), true, "status-ops-json.prom")
	textFams := fixtureMetrics(t, filepath.Join(statusOpsDir, "text.txt"), false, "")
	var names []string
	for _, mf := range jsonFams {
		if n := mf.GetName(); strings.HasPrefix(n, "zfs_scan_") || strings.HasPrefix(n, "zfs_pool_checkpoint_") ||
			strings.HasPrefix(n, "zfs_pool_removal_") || strings.HasPrefix(n, "zfs_vdev_trim_") || strings.HasPrefix(n, "zfs_vdev_initialize_") {
			names = append(names, n)
		}
	}
	jsonOnly := map[string]bool{
		"zfs_vdev_trim_done_bytes": true, "zfs_vdev_trim_total_bytes": true, "zfs_vdev_trim_errors": true,
		"zfs_vdev_initialize_done_bytes": true, "zfs_vdev_initialize_total_bytes": true, "zfs_vdev_initialize_errors": true,
	}
	text, json := flatten(textFams, names, nil), flatten(jsonFams, names, nil)
	if len(json) < 45 {
		t.Fatalf("only %d series from JSON: %v", len(json), names)
	}
	for series, jv := range json {
		name, _, _ := strings.Cut(series, "{")
		tv, ok := text[series]
		switch {
		case jsonOnly[name]:
			if ok {
				t.Errorf("%s = %v from text, which prints no such figure", series, tv)
			}
		case !ok:
			t.Errorf("%s = %v from JSON, missing from text", series, jv)
		// Text prints whole percents of bytes*100/(total+1), rounded down:
		// 24% for 256M of 1G, a point below the share JSON gives.
		case strings.HasSuffix(name, "_progress_ratio") && strings.HasPrefix(name, "zfs_vdev_"):
			if tv > jv || jv-tv > 0.01+1e-9 {
				t.Errorf("%s = %v from text, %v from JSON", series, tv, jv)
			}
		case !near(tv, jv):
			t.Errorf("%s = %v from text, %v from JSON", series, tv, jv)
		}
	}
	for series, v := range text {
		if _, ok := json[series]; !ok {
			t.Errorf("%s = %v from text, missing from JSON", series, v)
		}
	}
	// The figures themselves, as the text prints them.
	remove := map[string]string{"pool": "shrink", "function": "remove", "vdev": ""}
	expand := map[string]string{"pool": "wide", "function": "expand", "vdev": "raidz1-0"}
	checkValues(t, jsonFams, []wantValue{
		{"zfs_scan_issue_rate_bytes_per_second", remove, mib}, // 1M/s
		{"zfs_scan_remaining_seconds", remove, 300},           // 0h5m to go
		{"zfs_scan_progress_ratio", remove, 0.25},             // 25.00% done
		{"zfs_pool_removal_mapping_memory_bytes", map[string]string{"pool": "shrink"}, 3.5 * kib},
		{"zfs_scan_issue_rate_bytes_per_second", expand, mib}, // 1M/s
		{"zfs_scan_remaining_seconds", expand, 51*60 + 12},    // 00:51:12 to go
		{"zfs_scan_issued_bytes", expand, gib},                // 1G / 4G copied
		{"zfs_scan_total_bytes", expand, 4 * gib},
		{"zfs_scan_waiting", expand, 0},
		{"zfs_pool_checkpoint_bytes", map[string]string{"pool": "safe"}, 468 * kib},
		{"zfs_pool_checkpoint_created_timestamp_seconds", map[string]string{"pool": "safe"}, unix(t, "2026-11-30 07:00:00")},
		{"zfs_pool_checkpoint_discarding", map[string]string{"pool": "safe"}, 0},
		{"zfs_vdev_trim_state", map[string]string{"pool": "wide", "vdev": "sdb", "state": "suspended"}, 1},
		{"zfs_vdev_trim_progress_ratio", map[string]string{"pool": "wide", "vdev": "sdb"}, 0.25},
		{"zfs_vdev_trim_done_bytes", map[string]string{"pool": "wide", "vdev": "sdb"}, 256 * mib},
		{"zfs_vdev_trim_total_bytes", map[string]string{"pool": "wide", "vdev": "sdb"}, gib},
		{"zfs_vdev_trim_errors", map[string]string{"pool": "wide", "vdev": "sdb"}, 0},
		{"zfs_vdev_initialize_state", map[string]string{"pool": "wide", "vdev": "sdd", "state": "active"}, 1},
		{"zfs_vdev_initialize_progress_ratio", map[string]string{"pool": "wide", "vdev": "sdd"}, 0.5},
		{"zfs_vdev_initialize_start_time_seconds", map[string]string{"pool": "wide", "vdev": "sdd"}, unix(t, "2026-11-30 07:55:00")},
	})
	// Never initialized, and cannot TRIM: nothing to follow.
	checkAbsent(t, jsonFams, map[string]string{"pool": "safe", "vdev": "sde"}, "zfs_vdev_initialize_state")
	checkAbsent(t, jsonFams, map[string]string{"pool": "wide", "vdev": "sdc"}, "zfs_vdev_trim_state")
	// No checkpoint, no checkpoint series.
	checkAbsent(t, jsonFams, map[string]string{"pool": "wide"}, "zfs_pool_checkpoint_bytes", "zfs_pool_checkpoint_discarding")
	checkAbsent(t, jsonFams, map[string]string{"pool": "wide", "vdev": "raidz1-0"}, "zfs_vdev_trim_state", "zfs_vdev_initialize_state")
}

// The forms no fixture above shows: a checkpoint being discarded, an
// expansion waiting for a resilver, a finished expansion, a canceled
// removal (zpool_main.c's wordings, as the zpool package reads them).
func TestLongOpsForms(t *testing.T) {
	pool := &zpool.Pool{Name: "tank", State: "online",
		Removal:    &zpool.Removal{State: zpool.ScanCanceled, Vdev: "/dev/sdb", End: utcTime(t, "2026-11-30 07:04:12"), MappingMemory: fp(3.41 * mib)},
		Checkpoint: &zpool.Checkpoint{State: zpool.CheckpointDiscarding, Space: fp(1.21 * mib)},
		Expansion: &zpool.Expansion{State: zpool.ScanScanning, Vdev: "raidz1-0", Start: utcTime(t, "2026-11-30 07:04:12"),
			Copied: fp(1.02 * gib), Total: fp(3 * gib), Rate: fp(12 * mib), Progress: fp(0.34), WaitingForResilver: true},
	}
	c := collectorFunc(func(ch chan<- prometheus.Metric) { collectPool(pool, ch) })
	fams := gatherFrom(t, c)
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
	expand := map[string]string{"pool": "tank", "function": "expand", "vdev": "raidz1-0"}
	remove := map[string]string{"pool": "tank", "function": "remove", "vdev": ""}
	checkValues(t, fams, []wantValue{
		{"zfs_scan_state", map[string]string{"pool": "tank", "function": "remove", "state": "canceled"}, 1},
		{"zfs_scan_end_time_seconds", remove, unix(t, "2026-11-30 07:04:12")},
		{"zfs_pool_removal_mapping_memory_bytes", map[string]string{"pool": "tank"}, 3.41 * mib},
		{"zfs_pool_checkpoint_bytes", map[string]string{"pool": "tank"}, 1.21 * mib},
		{"zfs_pool_checkpoint_discarding", map[string]string{"pool": "tank"}, 1},
		// Waiting is not a state of its own: the kernel's is scanning.
		{"zfs_scan_state", map[string]string{"pool": "tank", "function": "expand", "state": "scanning"}, 1},
		{"zfs_scan_waiting", expand, 1},
	})
	checkAbsent(t, fams, map[string]string{"pool": "tank"}, "zfs_pool_checkpoint_created_timestamp_seconds")
	checkAbsent(t, fams, expand, "zfs_scan_remaining_seconds")
	checkAbsent(t, fams, remove, "zfs_scan_issued_bytes", "zfs_scan_waiting")

	// A finished expansion has no waiting series: zpool tells the wait
	// only while it runs.
	pool = &zpool.Pool{Name: "tank", State: "online", Expansion: &zpool.Expansion{State: zpool.ScanFinished, Vdev: "raidz1-0",
		End: utcTime(t, "2026-11-30 07:04:12"), Copied: fp(1.5 * gib), Duration: fp(86400 + 62)}}
	fams = gatherFrom(t, collectorFunc(func(ch chan<- prometheus.Metric) { collectPool(pool, ch) }))
	checkValues(t, fams, []wantValue{
		{"zfs_scan_state", map[string]string{"pool": "tank", "function": "expand", "state": "finished"}, 1},
		{"zfs_scan_duration_seconds", expand, 86400 + 62},
		{"zfs_scan_issued_bytes", expand, 1.5 * gib},
	})
	checkAbsent(t, fams, expand, "zfs_scan_waiting")
}

func fp(v float64) *float64 { return &v }
