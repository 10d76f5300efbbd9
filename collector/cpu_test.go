package collector

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/procfs"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// The kernel thread names of a real OpenZFS 2.3.2 and 2.1.11 (Debian's
// zfs-dkms on Linux 6.1, 2 CPUs) while a compressed copy and a scrub ran:
// `ps -eL -o comm` of the children of kthreadd, one of each name.
var (
	openZFS23Threads = []string{
		"arc_evict", "arc_prune", "arc_reap", "dbu_evict", "dbuf_evict", "dp_sync_taskq", "dp_zil_clean_ta",
		"l2arc_feed", "mmp", "raidz_expand", "spl_delay_taskq", "spl_dynamic_tas", "spl_kmem_cache",
		"spl_system_task", "txg_quiesce", "txg_sync", "z_checkpoint_di", "z_cl_int", "z_cl_iss", "z_flush_int",
		"z_flush_iss", "z_fr_int", "z_fr_iss", "z_indirect_cond", "z_livelist_cond", "z_livelist_dest",
		"z_metaslab", "z_null_int", "z_null_iss", "z_prefetch", "z_rd_int", "z_rd_iss", "z_trim_int", "z_trim_iss",
		"z_unlinked_drai", "z_upgrade", "z_vdev_file", "z_wr_int", "z_wr_iss", "z_zrele", "z_zvol", "zvol_tq-0",
	}
	// What 2.1.11 has that 2.3.2 has not.
	openZFS21Threads = []string{"metaslab_group_", "z_ioctl_int", "z_ioctl_iss", "z_wr_int_h", "z_wr_iss_h", "zvol"}
	// Kernel threads of the same guests that are not ZFS.
	otherKernelThreads = []string{
		"acpi_thermal_pm", "ata_sff", "blkcg_punt_bio", "cpuhp/0", "cryptd", "devfreq_wq", "edac-poller",
		"ext4-rsv-conver", "inet_frag_wq", "ipv6_addrconf", "jbd2/vda-8", "kauditd", "kblockd", "kcompactd0",
		"kdevtmpfs", "khugepaged", "khungtaskd", "kintegrityd", "ksmd", "ksoftirqd/0", "kstrp", "kswapd0",
		"kthreadd", "kthrotld", "kworker/0:1H-kblockd", "kworker/u4:0-flush-254:0", "migration/1", "mld",
		"mm_percpu_wq", "netns", "oom_reaper", "quota_events_un", "rcu_gp", "rcu_preempt",
		"rcu_tasks_rude_kthread", "scsi_eh_0", "scsi_tmf_1", "slub_flushwq", "tpm_dev_wq", "writeback",
		"zswap-shrink",
	}
)

func TestThreadFamily(t *testing.T) {
	for name, want := range map[string]string{
		"z_wr_iss":                 "z_wr_iss",
		"z_wr_int_0":               "z_wr_int", // one of several taskqs (count > 1 in spa_taskqs_init)
		"z_wr_int_12":              "z_wr_int",
		"z_wr_int_h":               "z_wr_int_h",
		"z_rd_int_1_3":             "z_rd_int", // FreeBSD: taskq 1, thread 3
		"z_wr_iss/3":               "z_wr_iss", // SPL 0.6: taskq thread 3
		"zvol_tq-0":                "zvol_tq",
		"metaslab_group_":          "metaslab_group", // cut to 15 characters
		"dp_zil_clean_taskq_":      "dp_zil_clean_taskq",
		"dp_zil_clean_ta":          "dp_zil_clean_ta",
		"z_unlinked_drai":          "z_unlinked_drai",
		"solthread 0xfffffff":      "solthread",
		"zvol zroot/vol0":          "zvol",
		"trim zroot":               "trim",
		"  txg_sync\n":             "txg_sync",
		"a_1__2":                   "a",
		"ksoftirqd/0":              "ksoftirqd",
		"kworker/u4:0-flush-254:0": "kworker/u4:0-flush-254:0",
		"kswapd0":                  "kswapd0",
		"_0":                       "",
		"":                         "",
	} {
		if got := threadFamily(name); got != want {
			t.Errorf("threadFamily(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestLinuxZFSFamily(t *testing.T) {
	want := map[string]string{"zvol_tq-0": "zvol_tq", "metaslab_group_": "metaslab_group"}
	for _, name := range slices.Concat(openZFS23Threads, openZFS21Threads,
		[]string{"z_wr_int_0", "z_wr_int_7", "z_rd_int_3", "z_fr_iss_2", "z_wr_iss/0", "zthr_procedure", "arc_reclaim", "spa_async", "z_iput"}) {
		family, ok := linuxZFSFamily(name)
		w, renamed := want[name]
		if !renamed {
			w = threadFamily(name)
		}
		if !ok || family != w {
			t.Errorf("linuxZFSFamily(%q) = %q, %v; want %q, true", name, family, ok, w)
		}
	}
	for _, name := range otherKernelThreads {
		if family, ok := linuxZFSFamily(name); ok {
			t.Errorf("kernel thread %q taken for ZFS family %q", name, family)
		}
	}
	// The families of a 2-CPU OpenZFS 2.3 host: the suffix of zvol_tq-0 goes.
	var families []string
	for _, name := range openZFS23Threads {
		family, _ := linuxZFSFamily(name)
		families = append(families, family)
	}
	if slices.Contains(families, "zvol_tq-0") || !slices.Contains(families, "zvol_tq") || len(slices.Compact(slices.Sorted(slices.Values(families)))) != len(openZFS23Threads) {
		t.Errorf("families of the 2.3 threads: %q", families)
	}
}

func TestLinuxEngineThreads(t *testing.T) {
	const kthread = 0x208040 // PF_KTHREAD and others, as kernel threads show them
	threads := linuxEngineThreads([]linuxTask{
		{PID: 430, Comm: "z_wr_iss", PPID: 2, Flags: kthread, STime: 262, Starttime: 7108},
		{PID: 600, Comm: "z_wr_iss", PPID: 2, Flags: kthread, STime: 206, Starttime: 8245},
		{PID: 431, Comm: "z_wr_int_0", PPID: 2, Flags: kthread, STime: 100},
		{PID: 432, Comm: "z_wr_int_1", PPID: 2, Flags: kthread, STime: 41},
		{PID: 456, Comm: "mmp", PPID: 2, Flags: kthread, UTime: 1, STime: 5},   // a tick booked as user
		{PID: 455, Comm: "txg_sync", PPID: 0, Flags: kthread, STime: 7},        // kernel thread by its flag alone
		{PID: 1207, Comm: "txg_sync", PPID: 1022, Flags: 0x400000, UTime: 250}, // a user process of that name
		{PID: 9, Comm: "kworker/0:1-events", PPID: 2, Flags: 0x4208060, STime: 999},
		{PID: 812, Comm: "zfs-fuse", PPID: 1, Flags: 0x400040, UTime: 1517, STime: 4032, Starttime: 2318},
		{PID: 813, Comm: "zfs-fuse", PPID: 2, Flags: kthread, STime: 1}, // no kernel thread is zfs-fuse
		{PID: 379, Comm: "zed", PPID: 1, Flags: 0x400100, UTime: 64, STime: 338},
	})
	if len(threads) != 7 || threads[0].ID != "430/7108" || threads[6] != (engineThread{ID: "812/2318", Family: "zfs-fuse", User: s(15.17), System: s(40.32), UserSpace: true}) {
		t.Errorf("threads: %+v", threads)
	}
	var totals engineTotals
	got := totals.update(threads)
	want := []engineFamily{
		{Name: "mmp", System: s(0.06)},
		{Name: "txg_sync", System: s(0.07)},
		{Name: "z_wr_int", System: s(1.41)},
		{Name: "z_wr_iss", System: s(4.68)},
		{Name: "zfs-fuse", User: s(15.17), System: s(40.32), UserSpace: true},
	}
	if !sameFamilies(got, want) {
		t.Errorf("families:\n%+v\nwant:\n%+v", got, want)
	}
}

// s turns seconds into a Duration, for tables of CPU times.
func s(seconds float64) time.Duration { return time.Duration(math.Round(seconds * 1e9)) }

func sameFamilies(got, want []engineFamily) bool {
	return slices.EqualFunc(got, want, func(a, b engineFamily) bool {
		return a == b
	})
}

// A family's time never goes down: a dynamic taskq thread that ends
// leaves the time it was last seen with, a reused ID is a new thread.
func TestEngineTotalsMonotonic(t *testing.T) {
	var totals engineTotals
	step := func(threads ...engineThread) map[string]engineFamily {
		out := map[string]engineFamily{}
		for _, f := range totals.update(threads) {
			out[f.Name] = f
		}
		return out
	}
	th := func(id, family string, system float64) engineThread {
		return engineThread{ID: id, Family: family, System: s(system)}
	}
	fuse := func(id string, user, system float64) engineThread {
		return engineThread{ID: id, Family: "zfs-fuse", User: s(user), System: s(system), UserSpace: true}
	}
	for i, c := range []struct {
		threads []engineThread
		want    map[string]float64 // system seconds by family
		user    float64            // zfs-fuse's user seconds
	}{
		{[]engineThread{th("430/7108", "z_wr_iss", 2), fuse("812/2318", 1, 3)}, map[string]float64{"z_wr_iss": 2, "zfs-fuse": 3}, 1},
		// Under load the taskq starts a second thread.
		{[]engineThread{th("430/7108", "z_wr_iss", 5), th("951/9000", "z_wr_iss", 4), fuse("812/2318", 1.5, 3)}, map[string]float64{"z_wr_iss": 9, "zfs-fuse": 3}, 1.5},
		// Idle again: the second thread ends with its 4 seconds.
		{[]engineThread{th("430/7108", "z_wr_iss", 5.5), fuse("812/2318", 2, 3.5)}, map[string]float64{"z_wr_iss": 9.5, "zfs-fuse": 3.5}, 2},
		// zfs-fuse restarts, and its PID comes back for a kernel thread
		// of another family.
		{[]engineThread{th("430/7108", "z_wr_iss", 5.5), fuse("815/9100", 0.5, 0.25), th("812/9200", "txg_sync", 1)},
			map[string]float64{"z_wr_iss": 9.5, "zfs-fuse": 3.75, "txg_sync": 1}, 2.5},
		// On FreeBSD and illumos IDs carry no start time: a time that
		// went back is another thread.
		{[]engineThread{th("430/7108", "z_wr_iss", 5.5), fuse("815/9100", 0.5, 0.25), th("812/9200", "txg_sync", 0.5)},
			map[string]float64{"z_wr_iss": 9.5, "zfs-fuse": 3.75, "txg_sync": 1.5}, 2.5},
		// Everything ends: the families stay, with their totals.
		{nil, map[string]float64{"z_wr_iss": 9.5, "zfs-fuse": 3.75, "txg_sync": 1.5}, 2.5},
	} {
		got := step(c.threads...)
		if len(got) != len(c.want) {
			t.Errorf("step %d: families %+v, want %v", i, got, c.want)
		}
		for name, system := range c.want {
			if f := got[name]; f.System != s(system) || f.UserSpace != (name == "zfs-fuse") {
				t.Errorf("step %d: %s = %+v, want system %v", i, name, f, system)
			}
		}
		if u := got["zfs-fuse"].User; u != s(c.user) {
			t.Errorf("step %d: zfs-fuse user %v, want %v", i, u, c.user)
		}
	}
}

func TestParsePsTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"00:00":          0,
		"00:08":          8 * time.Second,
		"03:42":          3*time.Minute + 42*time.Second,
		"11:53:20":       11*time.Hour + 53*time.Minute + 20*time.Second,
		"2-05:12:09":     2*24*time.Hour + 5*time.Hour + 12*time.Minute + 9*time.Second,
		"0:00.03":        30 * time.Millisecond,
		"12:41.36":       12*time.Minute + 41*time.Second + 360*time.Millisecond,
		"1234:05.00":     1234*time.Minute + 5*time.Second,
		"0:00.123456789": 123456789,
	} {
		got, err := parsePsTime(in)
		if err != nil || got != want {
			t.Errorf("parsePsTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-", "8", "1:2:3:4", "1:60", "a:00", "1e3:00", "+1:00", "0x1:00", "1.5:00", "00:1e1",
		"1-00:00", "-1:00", "1--02:00:00", "00:08,5", "Inf:00", "1:2:60", "0:00.1234567890", "0:00.", "4294967295:00:00"} {
		if got, err := parsePsTime(in); err == nil {
			t.Errorf("parsePsTime(%q) = %v, want an error", in, got)
		}
	}
}

func TestParseFreeBSDThreads(t *testing.T) {
	f := sample.MustRead(t, "testdata/cpu-freebsd/ps-axH.txt")
	rows, err := parseFreeBSDThreads(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 64 {
		t.Errorf("%d rows, want 64", len(rows))
	}
	for _, want := range []psRow{
		{ID: 100000, PPID: 0, CPU: s(0.03), Command: "kernel", Thread: "swapper"},
		{ID: 100004, PPID: 0, CPU: s(196*60 + 47.19), Command: "idle", Thread: "idle: cpu0"},
		{ID: 100008, PPID: 0, CPU: s(3.58), Command: "intr", Thread: "swi4: clock (0)"},
		{ID: 100006, PPID: 0, CPU: s(0.12), Command: "init"},
		{PPID: 0, CPU: s(12*60 + 41.36), Command: "zfskern", Thread: "z_wr_iss"},
		{PPID: 0, CPU: s(0), Command: "zfskern", Thread: "zvol zroot/vol0"},
		{ID: 101911, PPID: 892, CPU: s(0.01), Command: "sshd"},
	} {
		if !slices.ContainsFunc(rows, func(r psRow) bool {
			return (want.ID == 0 || r.ID == want.ID) && r.PPID == want.PPID && r.CPU == want.CPU && r.Command == want.Command && r.Thread == want.Thread
		}) {
			t.Errorf("no row %+v", want)
		}
	}
	threads := freebsdEngineThreads(rows)
	if len(threads) != 42 {
		t.Errorf("%d zfskern threads, want 42", len(threads))
	}
	var totals engineTotals
	got := totals.update(threads)
	want := []engineFamily{
		{Name: "arc_evict", System: s(0.86)}, {Name: "arc_prune"}, {Name: "arc_reap", System: s(0.12)},
		{Name: "dbu_evict"}, {Name: "dbuf_evict_thread", System: s(0.31)},
		{Name: "dp_sync_taskq", System: s(0.41)}, {Name: "dp_zil_clean_taskq"},
		{Name: "l2arc_feed_thread", System: s(0.07)}, {Name: "mmp_thread_enter"}, {Name: "solthread"},
		{Name: "trim", System: s(0.35)}, {Name: "txg_thread_enter", System: s(31.77)},
		{Name: "z_cl_int"}, {Name: "z_cl_iss"}, {Name: "z_fr_int"}, {Name: "z_fr_iss"},
		{Name: "z_ioctl_int"}, {Name: "z_ioctl_iss", System: s(0.41)}, {Name: "z_metaslab"},
		{Name: "z_null_int"}, {Name: "z_null_iss"}, {Name: "z_prefetch", System: s(0.06)},
		{Name: "z_rd_int", System: s(2.07)}, {Name: "z_rd_iss"}, {Name: "z_trim_int"}, {Name: "z_trim_iss"},
		{Name: "z_unlinked_drain"}, {Name: "z_upgrade"}, {Name: "z_vdev_file"},
		{Name: "z_wr_int", System: s(241.71)}, {Name: "z_wr_iss", System: s(761.36)},
		{Name: "z_zrele", System: s(0.01)}, {Name: "z_zvol"}, {Name: "zvol"},
	}
	if !sameFamilies(got, want) {
		t.Errorf("families:\n%+v\nwant:\n%+v", got, want)
	}
}

func TestParseSunOSProcesses(t *testing.T) {
	f := sample.MustRead(t, "testdata/cpu-illumos/ps-e.txt")
	rows, err := parseSunOSProcesses(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 18 || rows[0] != (psRow{ID: 0, PPID: 0, CPU: s(8), Command: "sched"}) || rows[15] != (psRow{ID: 4730, PPID: 4711, CPU: s(1), Command: "/usr/sbin/zpool"}) {
		t.Errorf("rows: %+v", rows)
	}
	// The user process named zpool-tank is no pool's.
	want := []engineFamily{
		{Name: "zpool-backup"},
		{Name: "zpool-tank", System: s(2*86400 + 5*3600 + 12*60 + 9)},
		{Name: "zpool-zones", System: s(11*3600 + 53*60 + 20)},
	}
	var totals engineTotals
	if got := totals.update(sunosEngineThreads(rows)); !sameFamilies(got, want) {
		t.Errorf("families:\n%+v\nwant:\n%+v", got, want)
	}
}

func TestParsePsErrors(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"100000     0   0:00.03 kernel/swapper\n100012     0   x:00.00 zfskern/arc_evict\n", `line 2: cannot parse CPU time "x:00.00"`},
		{"\n100000     0   0:00.03\n", `line 2: no command after the time "0:00.03"`},
		{"100006    -1   0:00.03 init\n", `line 1: cannot parse parent PID "-1"`},
		{"100006 zfskern 0:00.03 init\n", `line 1: cannot parse parent PID "zfskern"`},
		{"    0   0:00.03 kernel/swapper\n", `line 1: cannot parse parent PID "0:00.03"`},
		{"0x10     0   0:00.03 kernel/swapper\n", `line 1: cannot parse ID "0x10"`},
	} {
		rows, err := parseFreeBSDThreads(strings.NewReader(c.in))
		if err == nil || err.Error() != c.err || rows != nil {
			t.Errorf("parse(%q) = %v, %v; want error %q", c.in, rows, err, c.err)
		}
	}
	// A header, printed when the columns have titles, is no process; an
	// empty output is no error.
	rows, err := parseSunOSProcesses(strings.NewReader("  PID  PPID        TIME COMMAND\n    0     0       00:08 sched\n"))
	if err != nil || len(rows) != 1 {
		t.Errorf("with a header: %+v, %v", rows, err)
	}
	if rows, err := parseSunOSProcesses(strings.NewReader("")); err != nil || rows != nil {
		t.Errorf("empty output: %+v, %v", rows, err)
	}
}

// cpuExporter builds an exporter whose only collector is cpu, for os.
func cpuExporter(t *testing.T, cfg Config, configure func(*cpuCollector)) *Exporter {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	e, err := New(testConfig(zfs.Config{Runner: cfg.Runner, Now: func() time.Time { return testNow }}, cfg, logger), logger, map[string]bool{"cpu": true})
	if err != nil {
		t.Fatal(err)
	}
	if configure != nil {
		configure(e.collectors["cpu"].(*cpuCollector))
	}
	return e
}

func fixedHostCPU(modes map[string]float64) hostCPUFunc {
	return func(context.Context) (map[string]float64, error) { return modes, nil }
}

// replayOfText makes a replay directory answering command with out.
func replayOfText(t *testing.T, command, out string) *runner.Replay {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ps.txt"), []byte("# command: "+command+"\n# ---\n"+out), 0o644); err != nil {
		t.Fatal(err)
	}
	return cpuReplay(t, dir)
}

func cpuReplay(t *testing.T, dir string) *runner.Replay {
	t.Helper()
	r, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// checkCPUScrape compares a scrape with its golden exposition and lints it.
func checkCPUScrape(t *testing.T, e *Exporter, golden string) []*dto.MetricFamily {
	t.Helper()
	fams := gather(t, e)
	compareGolden(t, golden, exposition(t, fams))
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "cpu"}); v != 1 {
		t.Errorf("cpu collector failed")
	}
	if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
	return fams
}

// An OpenZFS 2.3 guest: kernel threads and /proc/stat as they were, plus
// user processes whose names hold spaces and parentheses, one of them
// "txg_sync) S 2 (" to pass for a kernel thread if comm were cut at its
// first parenthesis.
func TestCPUCollectorOpenZFS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("host CPU times come from /proc/stat on Linux only")
	}
	e := cpuExporter(t, Config{Runner: nopRunner{}, CPUOS: "linux", ProcRoot: "testdata/cpu-linux-openzfs/proc"}, nil)
	fams := checkCPUScrape(t, e, "testdata/cpu-linux-openzfs.prom")
	for labels, want := range map[[2]string]float64{
		{"z_wr_iss", "system"}:        4.68, // two pools: 262 + 206 ticks
		{"z_wr_int", "system"}:        2.23,
		{"z_rd_int", "system"}:        0.93,
		{"txg_sync", "system"}:        1.14, // not the 5.50 of the user process
		{"mmp", "system"}:             0.10, // with its tick of user time
		{"arc_evict", "system"}:       0.04,
		{"zvol_tq", "system"}:         0.01,
		{"dp_zil_clean_ta", "system"}: 0,
		{"spl_system_task", "system"}: 0,
	} {
		got, ok := value(fams, "zfs_engine_cpu_seconds_total", map[string]string{"family": labels[0], "mode": labels[1]})
		if !ok || !near(got, want) {
			t.Errorf("zfs_engine_cpu_seconds_total{family=%q,mode=%q} = %v (present %v), want %v", labels[0], labels[1], got, ok, want)
		}
	}
	if n := seriesCount(fams, "zfs_engine_cpu_seconds_total"); n != 9 {
		t.Errorf("%d engine series, want 9 (one per family, system mode only)", n)
	}
	for mode, want := range map[string]float64{"user": 52.21, "nice": 0, "system": 99.70, "idle": 42.18, "iowait": 4.09, "irq": 0, "softirq": 9.30, "steal": 0} {
		if got, ok := value(fams, "zfs_host_cpu_seconds_total", map[string]string{"mode": mode}); !ok || !near(got, want) {
			t.Errorf("zfs_host_cpu_seconds_total{mode=%q} = %v (present %v), want %v", mode, got, ok, want)
		}
	}
	if n := seriesCount(fams, "zfs_host_cpu_seconds_total"); n != 8 {
		t.Errorf("%d host modes, want 8", n)
	}
}

// A zfs-fuse host: the daemon's user and system time, nothing from the
// kernel threads or the zpool command.
func TestCPUCollectorZFSFuse(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("host CPU times come from /proc/stat on Linux only")
	}
	e := cpuExporter(t, Config{Runner: nopRunner{}, CPUOS: "linux", ProcRoot: "testdata/cpu-linux-zfs-fuse/proc"}, nil)
	fams := checkCPUScrape(t, e, "testdata/cpu-linux-zfs-fuse.prom")
	if n := seriesCount(fams, "zfs_engine_cpu_seconds_total"); n != 2 {
		t.Errorf("%d engine series, want zfs-fuse's user and system", n)
	}
	if got, _ := value(fams, "zfs_engine_cpu_seconds_total", map[string]string{"family": "zfs-fuse", "mode": "user"}); !near(got, 15.17) {
		t.Errorf("zfs-fuse user time %v, want 15.17", got)
	}
	if got, _ := value(fams, "zfs_engine_cpu_seconds_total", map[string]string{"family": "zfs-fuse", "mode": "system"}); !near(got, 40.32) {
		t.Errorf("zfs-fuse system time %v, want 40.32", got)
	}
}

// FreeBSD's zfskern threads through ps, with host CPU times as gopsutil
// gives them there (kern.cp_time: no iowait, softirq or steal).
func TestCPUCollectorFreeBSD(t *testing.T) {
	e := cpuExporter(t, Config{Runner: cpuReplay(t, "testdata/cpu-freebsd"), CPUOS: "freebsd"}, func(c *cpuCollector) {
		c.hostCPU = fixedHostCPU(map[string]float64{"user": 4310.5, "nice": 2.25, "system": 1877.75, "irq": 40.5, "idle": 23614.125})
	})
	fams := checkCPUScrape(t, e, "testdata/cpu-freebsd.prom")
	if n := seriesCount(fams, "zfs_engine_cpu_seconds_total"); n != 34 {
		t.Errorf("%d engine series, want the 34 zfskern families", n)
	}
	if got, _ := value(fams, "zfs_engine_cpu_seconds_total", map[string]string{"family": "z_wr_int"}); !near(got, 241.71) {
		t.Errorf("z_wr_int %v, want 241.71 (two taskqs)", got)
	}
}

// illumos: one family per pool process. Without the iostat sampler there
// are no host CPU times, which is no failure.
func TestCPUCollectorIllumos(t *testing.T) {
	e := cpuExporter(t, Config{Runner: cpuReplay(t, "testdata/cpu-illumos"), CPUOS: "illumos"}, func(c *cpuCollector) { c.hostCPU = nil })
	fams := checkCPUScrape(t, e, "testdata/cpu-illumos.prom")
	if n := seriesCount(fams, "zfs_host_cpu_seconds_total"); n != 0 {
		t.Errorf("%d host series without a source", n)
	}

	// With the sampler: nothing before its first report, then its figures.
	sampler := &fakeCPUSampler{}
	e = cpuExporter(t, Config{Runner: cpuReplay(t, "testdata/cpu-illumos"), CPUOS: "solaris"}, func(c *cpuCollector) { c.hostCPU = hostCPUFrom(sampler) })
	fams = gather(t, e)
	if n := seriesCount(fams, "zfs_host_cpu_seconds_total"); n != 0 {
		t.Errorf("%d host series before the sampler's first report", n)
	}
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "cpu"}); v != 1 {
		t.Errorf("cpu collector failed while the sampler had no report")
	}
	sampler.modes = map[string]float64{"user": 12.5, "system": 30, "idle": 157.5, "dtrace": 0}
	fams = gather(t, e)
	if got, _ := value(fams, "zfs_host_cpu_seconds_total", map[string]string{"mode": "system"}); got != 30 || seriesCount(fams, "zfs_host_cpu_seconds_total") != 4 {
		t.Errorf("host CPU from the sampler: system %v, %d modes", got, seriesCount(fams, "zfs_host_cpu_seconds_total"))
	}
}

type fakeCPUSampler struct{ modes map[string]float64 }

func (s *fakeCPUSampler) CPUSeconds() (map[string]float64, bool) { return s.modes, s.modes != nil }

// A source that fails fails the collector; what the other one read is
// still reported.
func TestCPUCollectorErrors(t *testing.T) {
	host := fixedHostCPU(map[string]float64{"user": 1, "system": 2, "idle": 3})
	for _, c := range []struct {
		name        string
		cfg         Config
		hostCPU     hostCPUFunc
		success     float64
		host, total int // series
	}{
		{"unreadable procfs", Config{Runner: nopRunner{}, CPUOS: "linux", ProcRoot: "cpu_test.go"}, host, 0, 3, 3},
		// A replay directory without a proc tree.
		{"no procfs", Config{Runner: nopRunner{}, CPUOS: "linux", ProcRoot: t.TempDir() + "/missing"}, nil, 1, 0, 0},
		{"no ps", Config{Runner: nopRunner{}, CPUOS: "freebsd"}, host, 0, 3, 3},
		{"ps output of another format", Config{Runner: replayOfText(t, "ps -axH -o ppid= -o time= -o comm=",
			"  PID TT  STAT    TIME COMMAND\n    1  -  ILs  0:00.12 /sbin/init\n"), CPUOS: "freebsd"}, host, 0, 3, 3},
		{"ps fails", Config{Runner: replayOfText(t, "ps -axH -o lwp= -o ppid= -o time= -o comm=", ""), CPUOS: "illumos"}, host, 0, 3, 3},
		{"host CPU fails", Config{Runner: cpuReplay(t, "testdata/cpu-illumos"), CPUOS: "illumos"},
			func(context.Context) (map[string]float64, error) { return nil, errors.New("no CPU times") }, 0, 0, 3},
		{"nothing to read here", Config{Runner: nopRunner{}, CPUOS: "darwin"}, nil, 1, 0, 0},
		{"no ZFS threads", Config{Runner: nopRunner{}, CPUOS: "linux", ProcRoot: t.TempDir()}, nil, 1, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := cpuExporter(t, c.cfg, func(cc *cpuCollector) { cc.hostCPU = c.hostCPU })
			fams := gather(t, e)
			if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "cpu"}); v != c.success {
				t.Errorf("success %v, want %v", v, c.success)
			}
			host, engine := seriesCount(fams, "zfs_host_cpu_seconds_total"), seriesCount(fams, "zfs_engine_cpu_seconds_total")
			if host != c.host || host+engine != c.total {
				t.Errorf("%d host and %d engine series, want %d and %d", host, engine, c.host, c.total-c.host)
			}
		})
	}
}

func TestCPUCollectorDefault(t *testing.T) {
	for goos, want := range map[string]bool{"linux": true, "freebsd": true, "illumos": true, "solaris": true, "darwin": false, "windows": false} {
		if got := cpuCollectorDefault(goos); got != want {
			t.Errorf("cpuCollectorDefault(%q) = %v, want %v", goos, got, want)
		}
	}
	if _, ok := factories["cpu"]; !ok {
		t.Fatal("cpu collector not registered")
	}
	if factories["cpu"].defaultEnabled != cpuCollectorDefault(runtime.GOOS) {
		t.Errorf("cpu collector enabled by default on %s: %v", runtime.GOOS, factories["cpu"].defaultEnabled)
	}
}

func seriesCount(families []*dto.MetricFamily, name string) int {
	for _, mf := range families {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

func FuzzParseFreeBSDThreads(f *testing.F) {
	fuzzSeedPs(f, "testdata/cpu-freebsd/ps-axH.txt")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := parseFreeBSDThreads(strings.NewReader(in))
		checkPsRows(t, rows, err)
		for _, th := range freebsdEngineThreads(rows) {
			if th.Family == "" || th.Family != threadFamily(th.Family) || th.UserSpace || th.System < 0 {
				t.Errorf("thread %+v", th)
			}
		}
	})
}

func FuzzParseSunOSProcesses(f *testing.F) {
	fuzzSeedPs(f, "testdata/cpu-illumos/ps-e.txt")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := parseSunOSProcesses(strings.NewReader(in))
		checkPsRows(t, rows, err)
		for _, th := range sunosEngineThreads(rows) {
			if !zpoolProcess(th.Family) || th.System < 0 {
				t.Errorf("thread %+v", th)
			}
		}
	})
}

func fuzzSeedPs(f *testing.F, fixture string) {
	for _, path := range []string{"testdata/cpu-freebsd/ps-axH.txt", "testdata/cpu-illumos/ps-e.txt"} {
		s, err := sample.Read(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(s.Body))
		if path == fixture {
			for _, line := range strings.Split(string(s.Body), "\n") {
				f.Add(line + "\n")
			}
		}
	}
	f.Add("  PID  PPID        TIME COMMAND\n")
	f.Add("    5     0 1-00:00:00 zpool-x\n100012     0 0:00.01 zfskern/z_wr_int_0_1\n")
}

func checkPsRows(t *testing.T, rows []psRow, err error) {
	t.Helper()
	if err != nil && rows != nil {
		t.Errorf("rows %+v with error %v", rows, err)
	}
	for _, r := range rows {
		if r.Command == "" || r.CPU < 0 || r.PPID < 0 || r.ID < 0 {
			t.Errorf("row %+v", r)
		}
	}
}

func FuzzThreadFamily(f *testing.F) {
	for _, name := range slices.Concat(openZFS23Threads, openZFS21Threads, otherKernelThreads, []string{"z_rd_int_1_3", "solthread 0xfffffff", "a_1__2"}) {
		f.Add(name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		family := threadFamily(name)
		if again := threadFamily(family); again != family {
			t.Errorf("threadFamily(%q) = %q, but threadFamily(%q) = %q", name, family, family, again)
		}
		if fam, ok := linuxZFSFamily(name); ok && (fam == "" || fam != family) {
			t.Errorf("linuxZFSFamily(%q) = %q, threadFamily %q", name, fam, family)
		}
	})
}

// The stat of every process is read and parsed here rather than by
// procfs's Proc.Stat: both must keep the same tasks with the same fields,
// over the fixtures and, on Linux, the processes running now.
func TestParseLinuxTaskAsProcfs(t *testing.T) {
	roots := []string{"testdata/cpu-linux-openzfs/proc", "testdata/cpu-linux-zfs-fuse/proc"}
	if runtime.GOOS == "linux" {
		roots = append(roots, "/proc")
	}
	buf := make([]byte, procStatMax)
	for _, root := range roots {
		fs, err := procfs.NewFS(root)
		if err != nil {
			t.Fatal(err)
		}
		procs, err := fs.AllProcs()
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for _, p := range procs {
			st, serr := p.Stat()
			data, ok := readProcStat(filepath.Join(root, strconv.Itoa(p.PID), "stat"), buf)
			if serr != nil || !ok {
				continue // exited meanwhile, or unreadable to both
			}
			got, ok := parseLinuxTask(p.PID, data)
			want := linuxTask{PID: st.PID, Comm: st.Comm, PPID: st.PPID, Flags: st.Flags, UTime: st.UTime, STime: st.STime, Starttime: st.Starttime}
			// A running process's times move between the two reads.
			got.UTime, got.STime, want.UTime, want.STime = 0, 0, 0, 0
			if root != "/proc" && (!ok || got != want) {
				t.Errorf("%s/%d: %+v, %v; procfs %+v", root, p.PID, got, ok, want)
			}
			if root == "/proc" && (!ok || got.Comm != want.Comm || got.PPID != want.PPID || got.Starttime != want.Starttime) {
				t.Errorf("%s/%d: %+v, %v; procfs %+v", root, p.PID, got, ok, want)
			}
			compared++
		}
		if compared == 0 {
			t.Errorf("%s: no process compared", root)
		}
	}
	for _, tc := range []struct {
		line string
		want linuxTask
		ok   bool
	}{
		{"7 (a (b) c) S 2 0 0 0 -1 2129984 0 0 0 0 3 40 0 0 20 0 1 0 55 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0\n",
			linuxTask{PID: 7, Comm: "a (b) c", PPID: 2, Flags: 2129984, UTime: 3, STime: 40, Starttime: 55}, true},
		{"7 (short) S 2 0 0 0 -1 2129984 0 0 0 0 3 40\n", linuxTask{}, false},
		{"7 (bad) S x 0 0 0 -1 2129984 0 0 0 0 3 40 0 0 20 0 1 0 55 0 0 18446744073709551615 0 0 0 0 0 0 0 2147483647 0 0 0 0 17 1 0 0 0 0 0\n", linuxTask{}, false},
		{"7 no name", linuxTask{}, false},
	} {
		if got, ok := parseLinuxTask(7, []byte(tc.line)); got != tc.want || ok != tc.ok {
			t.Errorf("parseLinuxTask(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}
