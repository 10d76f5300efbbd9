//go:build openzfsguest

// Package walk is the OpenZFS walk: tests that run as root inside the test
// bed's guest, against a real OpenZFS kernel module, with the data disks
// /dev/disk/by-id/virtio-zd01... Built on the host with
// `go test -c -tags openzfsguest`, run by the host test in testbed/openzfs.
// Each subtest is a scenario; a failure names the scenario and the metric.
package walk

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	zpoolparse "github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

var (
	exporterBin = flag.String("exporter", "/job/zpool_exporter", "the zpool_exporter binary")
	captureDir  = flag.String("capture", "", "write the outputs of zpool at each scenario here, as fixtures")
	expositions = flag.String("expositions", "", "write the exposition of each scenario here, for promtool on the host")
	debFile     = flag.String("deb", "", "the .deb of make dist, to install, run as the system's service and purge")
	benchBin    = flag.String("bench", "/job/zpool_bench", "the zpool_bench binary")
)

// keepExposition saves a scrape for `promtool check metrics`, which the
// guest does not have.
func keepExposition(t *testing.T, e *e2e.Exporter, name string) {
	t.Helper()
	if *expositions != "" {
		keepText(t, name, e.ScrapeText(t))
	}
}

func disk(n int) string { return fmt.Sprintf("/dev/disk/by-id/virtio-zd%02d", n) }

// leaf is how zpool names a whole-disk vdev given by its by-id path.
func leaf(n int) string { return fmt.Sprintf("virtio-zd%02d", n) }

// stuckAfter is how long the walk waits for a command: none takes
// minutes, and one that does is stuck. It is then left behind rather than
// waited for, as a process stuck in the kernel cannot be reaped even when
// killed; the guest is thrown away with it.
const stuckAfter = 5 * time.Minute

// command is a started command.
type command struct {
	line string
	cmd  *exec.Cmd
	out  bytes.Buffer
	done chan error
}

func start(t *testing.T, name string, args ...string) *command {
	t.Helper()
	c := &command{line: strings.Join(append([]string{name}, args...), " "), cmd: exec.Command(name, args...), done: make(chan error, 1)}
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", c.line, err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	return c
}

// wait waits for the command and says how it failed, if it did.
func (c *command) wait() error {
	if !c.ended(stuckAfter) {
		return fmt.Errorf("%s: still running after %s", c.line, stuckAfter)
	}
	if err := <-c.done; err != nil {
		return fmt.Errorf("%s: %v\n%s", c.line, err, c.out.String())
	}
	return nil
}

// ended waits at most limit for the command to end; one that has not is
// killed and left behind.
func (c *command) ended(limit time.Duration) bool {
	select {
	case err := <-c.done:
		c.done <- err // for wait
		return true
	case <-time.After(limit):
		_ = c.cmd.Process.Kill()
		return false
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	c := start(t, name, args...)
	if err := c.wait(); err != nil {
		t.Fatal(err)
	}
	return c.out.String()
}

func zpool(t *testing.T, args ...string) string { t.Helper(); return run(t, "zpool", args...) }

// background starts a command and returns a function that waits for it
// and fails the test if it failed.
func background(t *testing.T, name string, args ...string) (wait func()) {
	t.Helper()
	c := start(t, name, args...)
	return func() {
		t.Helper()
		if err := c.wait(); err != nil {
			t.Error(err)
		}
	}
}

// openzfs tells the module's version: "2.3.2" from `zfs version`.
func openzfs(t *testing.T) string {
	out := run(t, "zfs", "version")
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "zfs-kmod-"); ok {
			v, _, _ = strings.Cut(v, "-")
			return v
		}
	}
	t.Fatalf("no zfs-kmod version in %q", out)
	return ""
}

func atLeast(version string, major, minor int) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(parts[0])
	mi, _ := strconv.Atoi(parts[1])
	return ma > major || ma == major && mi >= minor
}

func writeRandom(t *testing.T, path string, mib int) {
	t.Helper()
	run(t, "dd", "if=/dev/urandom", "of="+path, "bs=1M", fmt.Sprint("count=", mib), "conv=fsync", "status=none")
}

func is(m e2e.Metrics, name string, labels map[string]string) bool {
	v, ok := m.Get(name, labels)
	return ok && v == 1
}

// capture writes the outputs of the commands the exporter runs, each
// headed by its command, as fixtures for the parsers' golden tests.
func capture(t *testing.T, scenario string) {
	if *captureDir == "" {
		return
	}
	out, err := exec.Command("timeout", "20", "zpool", "list", "-H", "-o", "name").Output()
	if err != nil {
		t.Errorf("capture: zpool list: %v", err)
	}
	pools := strings.Fields(string(out))
	cmds := [][]string{
		{"zpool", "status", "-j", "--json-int", "-t", "-i"}, {"zpool", "status", "-j", "--json-int"},
		{"zpool", "status", "-s", "-p", "-t", "-i"}, {"zpool", "status", "-s", "-p"}, {"zpool", "status", "-p"}, {"zpool", "status"},
		{"zpool", "list", "-v", "-Hp"}, {"zpool", "list", "-v"},
		{"zpool", "iostat", "-v"}, {"zpool", "get", "-Hp", "all"},
		{"zpool", "iostat", "-vHp", "-w"}, {"zpool", "iostat", "-vHp", "-r"}, {"zpool", "iostat", "-vHp", "-q"}, {"zpool", "iostat", "-v", "-w"}, {"zpool", "version"},
	}
	for _, p := range pools {
		cmds = append(cmds, []string{"zpool", "get", "-Hp", "all", p, "all-vdevs"})
	}
	// The kernel's events queue, whole, where the walk's faults have
	// just added to it: a few hundred KB each, so not at every scenario.
	if eventScenarios[scenario] {
		cmds = append(cmds, []string{"zpool", "events", "-v"}, []string{"zpool", "events", "-vH"})
	}
	for _, c := range cmds {
		captureCommand(t, scenario, c...)
	}
}

// eventScenarios are the scenarios whose capture holds `zpool events -v`:
// a resilver, checksum and data errors, a pulled disk, a slow disk.
var eventScenarios = map[string]bool{
	"04-resilvering": true, "07-data-errors": true, "08-suspended": true, "08-write-errors": true, "12-slow-disk": true,
}

// followEvents captures `zpool events -vf` from now until the walk ends,
// as "walk__zpool_events_-vf.txt": every event of the walk, as a follower
// reads them.
func followEvents(t *testing.T) {
	if *captureDir == "" {
		return
	}
	f, err := os.Create(filepath.Join(*captureDir, "walk__zpool_events_-vf.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "# command: zpool events -vf\n# scenario: walk\n# notes: followed from the creation of the walk's pools to its end, then killed\n# ---\n")
	cmd := exec.Command("zpool", "events", "-vf")
	cmd.Stdout = f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = f.Close()
	})
}

// captureCommand writes the output of one command, headed by it, beside
// capture's, in a file named after it.
func captureCommand(t *testing.T, scenario string, c ...string) {
	captureAs(t, scenario, strings.NewReplacer(" ", "_", "/", "%2F").Replace(strings.Join(c, " ")), c...)
}

// captureAs is captureCommand for a command line too long to name a file:
// the file is named after slug, and its header holds the command.
func captureAs(t *testing.T, scenario, slug string, c ...string) {
	if *captureDir == "" {
		return
	}
	// A zpool stuck in the kernel (a suspended pool on older releases)
	// must not stop the walk: exit 124 says it hung.
	out, err := exec.Command("timeout", append([]string{"20"}, c...)...).Output()
	status := 0
	if exit, ok := err.(*exec.ExitError); ok {
		status = exit.ExitCode()
	}
	line := strings.Join(c, " ")
	name := scenario + "__" + slug + ".txt"
	header := fmt.Sprintf("# command: %s\n# scenario: %s\n# exit: %d\n# ---\n", line, scenario, status)
	if err := os.WriteFile(filepath.Join(*captureDir, name), append([]byte(header), out...), 0o644); err != nil {
		t.Errorf("capture: %v", err)
	}
}

// captureKstats copies the kstats the exporter reads from
// /proc/spl/kstat/zfs into the kstat directory beside the captures:
// "<scenario>__kstat-zfs-arcstats.txt", "<scenario>__kstat-zfs-<pool>.state.txt".
func captureKstats(t *testing.T, scenario string) {
	if *captureDir == "" {
		return
	}
	const root = "/proc/spl/kstat/zfs"
	dir := filepath.Join(*captureDir, "kstat")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, pattern := range []string{"arcstats", "zil", "dmu_tx", "abdstats", "zfetchstats", "*/state", "*/iostats", "*/io", "*/txgs", "*/objset-*"} {
		m, _ := filepath.Glob(filepath.Join(root, pattern))
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // an objset gone since the listing
		}
		rel, _ := filepath.Rel(root, f)
		name := scenario + "__kstat-zfs-" + strings.Replace(rel, "/", ".", 1) + ".txt"
		header := fmt.Sprintf("# command: cat %s\n# scenario: %s\n# ---\n", f, scenario)
		if err := os.WriteFile(filepath.Join(dir, name), append([]byte(header), data...), 0o644); err != nil {
			t.Errorf("capture: %v", err)
		}
	}
}

// jsonLacksDraidState tells whether this zpool's JSON status leaves out
// the state of pool dr's dRAID vdev, as the exporter's own parser reads it.
func jsonLacksDraidState(t *testing.T) bool {
	t.Helper()
	st, err := zpoolparse.ParseStatusJSON(strings.NewReader(run(t, "zpool", "status", "-j", "--json-int", "dr")))
	if err != nil {
		t.Fatalf("zpool status -j: %v", err)
	}
	for _, p := range st.Pools {
		if p.Name == "dr" && p.Root != nil {
			for _, v := range p.Root.Children {
				if v.Name == "draid1:2d:5c:1s-0" {
					return v.State == ""
				}
			}
		}
	}
	t.Fatal("zpool status -j lists no dRAID vdev in pool dr")
	return false
}

func TestWalk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the walk runs as root inside the test bed's guest")
	}
	version := openzfs(t)
	modern := atLeast(version, 2, 2) // JSON status (2.3) and vdev properties (2.2)
	t.Logf("OpenZFS %s", version)
	if *captureDir != "" {
		if err := os.MkdirAll(*captureDir, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Not a TempDir, and no pool is destroyed at the end: removing it would
	// walk into the mounts of a pool whose zpool hangs (the pulled disk on
	// 2.1) and hang with them. The guest and its disks are thrown away
	// after the walk.
	mnt, err := os.MkdirTemp("/mnt", "walk")
	if err != nil {
		t.Fatal(err)
	}
	// The queue holds every event of the walk, for eventsAgree to compare
	// with the exporter's counts; eventsWrap makes it small for a while.
	setTunable(t, "zfs_zevent_len_max", "100000")
	followEvents(t)
	create := func(pool string, vdevs ...string) {
		zpool(t, append([]string{"create", "-f", "-m", filepath.Join(mnt, pool), pool}, vdevs...)...)
		writeRandom(t, filepath.Join(mnt, pool, "data"), 24)
	}
	create("mir", "mirror", disk(1), disk(2))
	create("r10", "mirror", disk(3), disk(4), "mirror", disk(5), disk(6))
	create("rz1", "raidz1", disk(7), disk(8), disk(9), "log", disk(10), "cache", disk(11), "spare", disk(12))
	create("dr", "draid1:2d:5c:1s", disk(13), disk(14), disk(15), disk(16), disk(17))
	pools := []string{"dr", "mir", "r10", "rz1"}
	capture(t, "01-created")
	captureKstats(t, "01-created")

	e := e2e.Start(t, *exporterBin, nil, "--zpool.iostat-interval=1s", "--scrape.timeout=20s")

	t.Run("capabilities", func(t *testing.T) {
		m := e.Scrape(t)
		format, vdevIO := "exact", "iostat_stream"
		if modern {
			format, vdevIO = "json", "vdev_properties"
		}
		if !atLeast(version, 2, 3) {
			format = "exact"
		}
		if !is(m, "zfs_exporter_capabilities_info", map[string]string{"status_format": format}) {
			t.Errorf("zfs_exporter_capabilities_info: status_format is not %q", format)
		}
		m = e.WaitFor(t, 20*time.Second, "vdev I/O source known", func(m e2e.Metrics) bool {
			return is(m, "zfs_exporter_capabilities_info", map[string]string{"vdev_io": vdevIO})
		})
		for _, p := range pools {
			if !is(m, "zfs_pool_state", map[string]string{"pool": p, "state": "online"}) {
				t.Errorf("pool %s: zfs_pool_state{state=online} != 1", p)
			}
		}
		if !is(m, "zfs_vdev_info", map[string]string{"pool": "dr", "vdev_type": "draid1", "vdev": "draid1:2d:5c:1s-0"}) {
			t.Errorf("dr: zfs_vdev_info has no draid1 vdev draid1:2d:5c:1s-0")
		}
		if !is(m, "zfs_vdev_state", map[string]string{"pool": "rz1", "vdev": leaf(12), "state": "avail"}) {
			t.Errorf("rz1: zfs_vdev_state of spare %s not avail", leaf(12))
		}
		for class, n := range map[string]int{"log": 10, "cache": 11, "spare": 12} {
			if !is(m, "zfs_vdev_info", map[string]string{"pool": "rz1", "vdev": leaf(n), "class": class}) {
				t.Errorf("rz1: zfs_vdev_info{vdev=%s} class is not %s", leaf(n), class)
			}
		}
		// OpenZFS 2.3.2's JSON has no state for a dRAID vdev, which the
		// exporter then reads from the text status at every scrape; the
		// JSON of 2.3.9 and 2.4 has it, and the text status is not read.
		textRuns := func(m e2e.Metrics) float64 {
			v, _ := m.Get("zfs_exporter_command_runs_total", map[string]string{"command": "zpool status -p"})
			return v
		}
		before, after := textRuns(m), textRuns(e.Scrape(t))
		if wantText := atLeast(version, 2, 3) && jsonLacksDraidState(t); (after > before) != wantText {
			t.Errorf("zpool status -p ran %v times in a scrape; want it run for the dRAID vdev's state: %v", after-before, wantText)
		}
		keepExposition(t, e, "01-created")
	})

	// Every release prints each vdev's space in zpool list -v, which the
	// vdev_space collector reads: the figures of rz1 (raidz1 with a log
	// and a cache device) and r10 as zpool prints them, the top-level
	// vdevs adding up to the pool.
	t.Run("vdev space from zpool list -v", func(t *testing.T) {
		m := e.Scrape(t)
		for _, pool := range []string{"r10", "rz1"} {
			rows, err := zpoolparse.ParseListVerbose(strings.NewReader(zpool(t, "list", "-v", "-Hp", pool)))
			if err != nil {
				t.Fatalf("zpool list -v -Hp %s: %v", pool, err)
			}
			printed := map[string]zpoolparse.ListRow{}
			for _, row := range rows {
				printed[row.Name] = row
			}
			var topLevel float64
			for _, info := range m.Series("zfs_vdev_info", map[string]string{"pool": pool, "parent": pool, "class": zpoolparse.ClassNormal}) {
				vdev := labelOf(info, "vdev")
				row, ok := printed[vdev]
				if !ok || row.Size == nil {
					t.Errorf("%s %s: zpool list -v prints no size", pool, vdev)
					continue
				}
				labels := map[string]string{"pool": pool, "vdev": vdev}
				size, ok := m.Get("zfs_vdev_size_bytes", labels)
				if !ok || size != *row.Size {
					t.Errorf("%s %s: zfs_vdev_size_bytes %v (present %v), zpool list -v prints %v", pool, vdev, size, ok, *row.Size)
				}
				topLevel += size
				if _, ok := m.Get("zfs_vdev_fragmentation_ratio", labels); !ok {
					t.Errorf("%s %s: no zfs_vdev_fragmentation_ratio", pool, vdev)
				}
			}
			if total, ok := m.Get("zfs_pool_size_bytes", map[string]string{"pool": pool}); !ok || topLevel != total {
				t.Errorf("%s: top-level vdevs add up to %v bytes, the pool has %v (present %v)", pool, topLevel, total, ok)
			}
		}
		for class, n := range map[string]int{"log": 10, "cache": 11} {
			if _, ok := m.Get("zfs_vdev_allocated_bytes", map[string]string{"pool": "rz1", "vdev": leaf(n)}); !ok {
				t.Errorf("rz1: no zfs_vdev_allocated_bytes for the %s device %s", class, leaf(n))
			}
		}
	})

	// The .deb of make dist, installed as a user would: it enables and
	// starts nothing; the user enables the service, whose hardened unit
	// (deploy/systemd's) the guest's systemd runs, and every collector
	// must work with no capabilities, a closed device policy and the file
	// system read-only. Purged, it leaves nothing behind.
	t.Run("package and its hardened unit", func(t *testing.T) {
		if *debFile == "" {
			t.Fatal("no -deb given")
		}
		const unit = "zpool_exporter.service"
		run(t, "dpkg", "-i", *debFile)
		for _, q := range [][2]string{{"is-enabled", "disabled"}, {"is-active", "inactive"}} {
			c := start(t, "systemctl", q[0], unit)
			_ = c.wait() // exits non-zero for both answers
			if got := strings.TrimSpace(c.out.String()); got != q[1] {
				t.Errorf("installed: systemctl %s %s says %q, want %q", q[0], unit, got, q[1])
			}
		}
		addr := e2e.FreeAddress(t)
		args := "ZPOOL_EXPORTER_ARGS=\"--web.listen-address=" + addr + " --zpool.iostat-interval=1s\"\n"
		if err := os.WriteFile("/etc/default/zpool_exporter", []byte(args), 0o644); err != nil {
			t.Fatal(err)
		}
		run(t, "systemctl", "enable", "--now", unit)
		t.Cleanup(func() {
			if t.Failed() {
				c := start(t, "journalctl", "--no-pager", "-u", unit)
				_ = c.wait()
				t.Logf("the unit's journal:\n%s", c.out.String())
			}
			run(t, "dpkg", "--purge", "zpool-exporter")
			c := start(t, "systemctl", "is-active", unit)
			_ = c.wait()
			if got := strings.TrimSpace(c.out.String()); got == "active" {
				t.Errorf("purged: the service still runs")
			}
			for _, path := range []string{"/usr/bin/zpool_exporter", "/etc/default/zpool_exporter", "/lib/systemd/system/" + unit,
				"/etc/systemd/system/multi-user.target.wants/" + unit} {
				if _, err := os.Lstat(path); err == nil {
					t.Errorf("purged: %s is still there", path)
				}
			}
		})
		svc := e2e.Attach(t, "http://"+addr, 60*time.Second)
		collectors := []string{"status", "properties", "vdev_io", "kstat", "disk", "cpu"}
		// Before 2.2 the vdev counters come from a zpool iostat stream,
		// which has nothing to give before its first report: a scrape
		// then succeeds without them.
		series := []string{"zfs_vdev_write_bytes_total", "zfs_arc_size_bytes", "zfs_disk_write_bytes_total", "zfs_engine_cpu_seconds_total"}
		var m e2e.Metrics
		for until := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
			m = svc.Scrape(t)
			var missing []string
			for _, c := range collectors {
				if !is(m, "zfs_exporter_collector_success", map[string]string{"collector": c}) {
					missing = append(missing, "collector_success{collector="+c+"}")
				}
			}
			for _, name := range series {
				if len(m.Series(name, nil)) == 0 {
					missing = append(missing, name)
				}
			}
			if len(missing) == 0 {
				break
			}
			if time.Now().After(until) {
				t.Fatalf("after 30s under the unit, still missing: %s", strings.Join(missing, ", "))
			}
		}
		for _, p := range pools {
			if !is(m, "zfs_pool_state", map[string]string{"pool": p, "state": "online"}) {
				t.Errorf("pool %s not online under the unit", p)
			}
		}
		// The service really runs with no capability at all.
		pid := strings.TrimSpace(run(t, "systemctl", "show", "--property=MainPID", "--value", "zpool_exporter.service"))
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for _, field := range []string{"CapEff", "CapPrm", "CapBnd"} {
			if !regexp.MustCompile(`(?m)^` + field + `:\s+0+$`).Match(status) {
				t.Errorf("the service's %s is not empty:\n%s", field, status)
			}
		}
	})

	t.Run("vdev counters equal vdev properties", func(t *testing.T) {
		if !modern {
			t.Skip("OpenZFS before 2.2 has no vdev properties: counters come from the zpool iostat stream")
		}
		m := e.Scrape(t)
		for _, p := range pools {
			out := zpool(t, "get", "-Hp", "read_bytes,write_bytes,read_ops,write_ops", p, "all-vdevs")
			checked := 0
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				f := strings.Split(line, "\t")
				if len(f) < 3 || f[2] == "-" {
					continue
				}
				vdev := f[0]
				if strings.HasPrefix(vdev, "root-") {
					continue // 0 here: the pool's row is checked below
				}
				want, _ := strconv.ParseFloat(f[2], 64)
				name := map[string]string{"read_bytes": "zfs_vdev_read_bytes_total", "write_bytes": "zfs_vdev_write_bytes_total",
					"read_ops": "zfs_vdev_read_operations_total", "write_ops": "zfs_vdev_write_operations_total"}[f[1]]
				got, ok := m.Get(name, map[string]string{"pool": p, "vdev": vdev})
				if !ok {
					t.Errorf("pool %s vdev %s: %s missing", p, vdev, name)
					continue
				}
				// Idle pools still sync now and then: allow what one
				// scrape can drift.
				if math.Abs(got-want) > math.Max(0.02*want, 64<<10) {
					t.Errorf("pool %s vdev %s: %s = %v, zpool get says %v", p, vdev, name, got, want)
				}
				checked++
			}
			if checked < 8 {
				t.Errorf("pool %s: only %d vdev counters compared", p, checked)
			}
			// OpenZFS keeps no counters in root-0: the pool's row is the
			// sum of its top-level vdevs, cache and spares left out.
			for _, name := range []string{"zfs_vdev_read_bytes_total", "zfs_vdev_write_bytes_total", "zfs_vdev_read_operations_total", "zfs_vdev_write_operations_total"} {
				top := 0.0
				for _, info := range m.Series("zfs_vdev_info", map[string]string{"pool": p, "parent": p}) {
					if class := e2e.Label(info, "class"); class != "cache" && class != "spare" {
						v, _ := m.Get(name, map[string]string{"pool": p, "vdev": e2e.Label(info, "vdev")})
						top += v
					}
				}
				if got, _ := m.Get(name, map[string]string{"pool": p, "vdev": p}); got != top || got == 0 && strings.Contains(name, "write") {
					t.Errorf("pool %s: %s of the pool's row = %v, its top-level vdevs sum to %v", p, name, got, top)
				}
			}
		}
	})

	t.Run("json and text agree", func(t *testing.T) {
		if !atLeast(version, 2, 3) {
			t.Skip("OpenZFS before 2.3 has no JSON status")
		}
		tm := textExporter(t).Scrape(t)
		jm := e.Scrape(t)
		compared := []string{"zfs_pool_state", "zfs_pool_data_errors", "zfs_vdev_state", "zfs_vdev_read_errors_total",
			"zfs_vdev_write_errors_total", "zfs_vdev_checksum_errors_total", "zfs_scan_state", "zfs_scan_end_time_seconds"}
		ts, js := flatten(tm, compared, nil), flatten(jm, compared, nil)
		diff(t, "text", ts, "json", js)
		ti := flatten(tm, []string{"zfs_vdev_info"}, []string{"path", "guid"})
		ji := flatten(jm, []string{"zfs_vdev_info"}, []string{"path", "guid"})
		diff(t, "text", ti, "json", ji)
	})

	t.Run("datasets", func(t *testing.T) { datasets(t, mnt) })

	t.Run("kstats, disks and CPU move while writing", func(t *testing.T) {
		dataset := map[string]string{"pool": "mir", "dataset": "mir"}
		diskLabels := map[string]string{"pool": "mir", "vdev": leaf(1)}
		before := e.Scrape(t)
		diskWritten0, ok := before.Get("zfs_disk_write_bytes_total", diskLabels)
		if !ok {
			t.Errorf("mir: no zfs_disk_write_bytes_total joined to vdev %s (a whole disk given by its by-id link)", leaf(1))
		}
		engine0 := sum(before, "zfs_engine_cpu_seconds_total", nil)
		host0 := sum(before, "zfs_host_cpu_seconds_total", nil)
		written0, ok := before.Get("zfs_dataset_write_bytes_total", dataset)
		if !ok {
			t.Fatalf("mir: zfs_dataset_write_bytes_total{dataset=mir} missing")
		}
		txgs0 := histogramCount(before, "zfs_pool_txg_written_bytes", "mir")
		writeRandom(t, filepath.Join(mnt, "mir", "more"), 32)
		time.Sleep(6 * time.Second) // a txg or two syncs
		after := e.Scrape(t)
		if written, _ := after.Get("zfs_dataset_write_bytes_total", dataset); written-written0 < 32<<20 {
			t.Errorf("mir: zfs_dataset_write_bytes_total grew by %v after writing 32 MiB", written-written0)
		}
		if txgs := histogramCount(after, "zfs_pool_txg_written_bytes", "mir"); txgs <= txgs0 {
			t.Errorf("mir: zfs_pool_txg_written_bytes counted %d txgs before and %d after writing", txgs0, txgs)
		}
		if written, _ := after.Get("zfs_disk_write_bytes_total", diskLabels); written-diskWritten0 < 32<<20 {
			t.Errorf("mir: zfs_disk_write_bytes_total{vdev=%s} grew by %v after writing 32 MiB to the mirror", leaf(1), written-diskWritten0)
		}
		if engine := sum(after, "zfs_engine_cpu_seconds_total", nil); engine <= engine0 {
			t.Errorf("zfs_engine_cpu_seconds_total summed over the ZFS thread families went from %v to %v while writing", engine0, engine)
		}
		if _, ok := after.Get("zfs_engine_cpu_seconds_total", map[string]string{"family": "txg_sync"}); !ok {
			t.Errorf("zfs_engine_cpu_seconds_total has no txg_sync family")
		}
		if host := sum(after, "zfs_host_cpu_seconds_total", nil); host <= host0 {
			t.Errorf("zfs_host_cpu_seconds_total summed over modes went from %v to %v", host0, host)
		}
		if v, ok := after.Get("zfs_arc_size_bytes", nil); !ok || v <= 0 {
			t.Errorf("zfs_arc_size_bytes = %v (present %v)", v, ok)
		}
		if sum(after, "zfs_arc_hits_total", nil) == 0 {
			t.Errorf("zfs_arc_hits_total is 0 for every kind")
		}
	})

	// zpool_bench on real OpenZFS: the same dd of 200 MiB on the mirror
	// and on the raid10, each in a benchmark window of an exporter of its
	// own, then the two runs compared. Here, while every pool is online
	// and the layouts are as created; the files written are removed and
	// their space freed before the next scenario, so that the resilver and
	// the rebuild that follow copy no more than before.
	t.Run("benchmark run", func(t *testing.T) {
		b := e2e.Start(t, *exporterBin, nil, "--web.enable-benchmark-api", "--zpool.iostat-interval=1s", "--scrape.timeout=20s")
		runs := t.TempDir()
		var ids []string
		for _, p := range []struct{ pool, layout string }{{"mir", "mirror of 2"}, {"r10", "2 × mirror of 2"}} {
			rep := benchRun(t, b.URL, runs, p.pool, filepath.Join(mnt, p.pool))
			ids = append(ids, rep.Run.ID)
			checkBenchReport(t, rep, p.pool, p.layout, version)
		}
		if len(ids) != 2 {
			return
		}
		cmp := benchCommand(t, "compare", "--runs.dir", runs, "--format", "json", ids[0], ids[1])
		if cmp.status != 0 {
			t.Fatalf("zpool_bench compare exited %d\n%s", cmp.status, cmp.stderr)
		}
		var c benchreport.Comparison
		if err := json.Unmarshal([]byte(cmp.stdout), &c); err != nil {
			t.Fatalf("the comparison's JSON: %v\n%s", err, cmp.stdout)
		}
		rows := map[string]benchreport.ComparedRow{}
		for _, r := range c.Rows {
			rows[r.Key] = r
		}
		written := rows["pool.write.bytes"]
		if len(written.Values) != 2 || len(written.Ratios) != 2 || written.Values[0] == nil || written.Values[1] == nil || written.Ratios[1] == nil {
			t.Fatalf("compare: no ratio row of the pools' written bytes: %+v", written)
		}
		want := *written.Values[1] / *written.Values[0]
		if got := *written.Ratios[1]; math.Abs(got-want) > 0.001*want {
			t.Errorf("compare: r10/mir written bytes ratio %.4f, want %.4f from its values", got, want)
		}
		t.Logf("compare: pool written bytes %.0f and %.0f, ratio %.3f", *written.Values[0], *written.Values[1], *written.Ratios[1])
		if layout := rows["config.layout"]; !layout.Differs || len(layout.Text) != 2 || layout.Text[0] != "mirror of 2" || layout.Text[1] != "2 × mirror of 2" {
			t.Errorf("compare: layout row %+v, want mirror of 2 and 2 × mirror of 2, marked as differing", layout)
		}
		if dd := rows["workload.dd wrote.bytes_per_second"]; len(dd.Ratios) != 2 || dd.Ratios[1] == nil {
			t.Errorf("compare: no ratio row of dd's own rate: %+v", dd)
		}
	})

	t.Run("slow disk", func(t *testing.T) { slowDisk(t, mnt) })

	t.Run("offline gives degraded", func(t *testing.T) {
		zpool(t, "offline", "r10", disk(4))
		m := e.Scrape(t)
		capture(t, "02-offline")
		if !is(m, "zfs_vdev_state", map[string]string{"pool": "r10", "vdev": leaf(4), "state": "offline"}) {
			t.Errorf("r10: zfs_vdev_state{vdev=%s,state=offline} != 1", leaf(4))
		}
		if !is(m, "zfs_vdev_state", map[string]string{"pool": "r10", "vdev": "mirror-0", "state": "degraded"}) {
			t.Errorf("r10: zfs_vdev_state{vdev=mirror-0,state=degraded} != 1")
		}
		if !is(m, "zfs_pool_state", map[string]string{"pool": "r10", "state": "degraded"}) {
			t.Errorf("r10: zfs_pool_state{state=degraded} != 1")
		}
		zpool(t, "online", "r10", disk(4))
		e.WaitFor(t, 60*time.Second, "r10 back online", func(m e2e.Metrics) bool {
			return is(m, "zfs_pool_state", map[string]string{"pool": "r10", "state": "online"})
		})
	})

	t.Run("paused scrub", func(t *testing.T) {
		// Slow reads of one side so that the scrub is still running when
		// it is paused.
		run(t, "zinject", "-d", leaf(1), "-D", "100:1", "mir")
		defer run(t, "zinject", "-c", "all")
		zpool(t, "scrub", "mir")
		zpool(t, "scrub", "-p", "mir")
		m := e.WaitFor(t, 30*time.Second, "mir: zfs_scan_state{function=scrub,state=paused} == 1", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", map[string]string{"pool": "mir", "function": "scrub", "state": "paused"})
		})
		capture(t, "03-scrub-paused")
		if _, ok := m.Get("zfs_scan_examined_bytes", map[string]string{"pool": "mir", "function": "scrub"}); !ok {
			t.Errorf("mir: paused scrub has no zfs_scan_examined_bytes")
		}
		zpool(t, "scrub", "-s", "mir")
		e.WaitFor(t, 30*time.Second, "mir: zfs_scan_state{function=scrub,state=canceled} == 1", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", map[string]string{"pool": "mir", "function": "scrub", "state": "canceled"})
		})
	})

	// progress watches a running scan over several scrapes: its issued
	// bytes grow, and it has a rate and a time left at some point.
	progress := func(t *testing.T, pool, function, scenario string) {
		t.Helper()
		captured := false
		labels := map[string]string{"pool": pool, "function": function}
		var issued []float64
		rate, left, fastest := false, false, 0.0
		deadline := time.Now().Add(5 * time.Minute)
		for time.Now().Before(deadline) {
			m := e.Scrape(t)
			if is(m, "zfs_scan_state", map[string]string{"pool": pool, "function": function, "state": "finished"}) {
				break
			}
			if v, ok := m.Get("zfs_scan_issued_bytes", labels); ok && is(m, "zfs_scan_state", map[string]string{"pool": pool, "function": function, "state": "scanning"}) {
				if !captured {
					capture(t, scenario)
					captured = true
				}
				issued = append(issued, v)
				if v, ok := m.Get("zfs_scan_issue_rate_bytes_per_second", labels); ok && v > 0 {
					rate, fastest = true, max(fastest, v)
				}
				if _, ok := m.Get("zfs_scan_remaining_seconds", labels); ok {
					left = true
				}
			}
			time.Sleep(time.Second)
		}
		grew := false
		for i := 1; i < len(issued); i++ {
			if issued[i] > issued[i-1] {
				grew = true
			}
		}
		if !grew {
			t.Errorf("%s %s: zfs_scan_issued_bytes did not grow between scrapes: %v", pool, function, issued)
		}
		if !rate {
			t.Errorf("%s %s: no zfs_scan_issue_rate_bytes_per_second while running", pool, function)
		}
		// zpool itself gives no time left below 10 MiB/s ("no estimated
		// completion time"), and none for a rebuild.
		if !left && function != "rebuild" && fastest >= 10<<20 {
			t.Errorf("%s %s: no zfs_scan_remaining_seconds while running at %.0f B/s", pool, function, fastest)
		}
	}

	// The host throttles writes to zd18 and zd19 to 1 and 2 MiB/s, so that
	// the resilver and the rebuild onto them run for about a minute. zpool
	// replace waits for its labels to be written to the new disk, behind
	// the scan's own writes, so it runs in the background while the
	// exporter watches.
	t.Run("healing resilver", func(t *testing.T) {
		wait := background(t, "zpool", "replace", "mir", disk(2), disk(18))
		defer wait()
		progress(t, "mir", "resilver", "04-resilvering")
		m := e.WaitFor(t, 5*time.Minute, "mir: resilver finished", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", map[string]string{"pool": "mir", "function": "resilver", "state": "finished"})
		})
		// JSON gives each vdev's share; the text status only the pool's.
		if atLeast(version, 2, 3) {
			if v, ok := m.Get("zfs_vdev_resilvered_bytes", map[string]string{"pool": "mir", "vdev": leaf(18)}); !ok || v <= 0 {
				t.Errorf("mir: zfs_vdev_resilvered_bytes{vdev=%s} = %v (present %v), want > 0", leaf(18), v, ok)
			}
		}
		if v, ok := m.Get("zfs_scan_processed_bytes", map[string]string{"pool": "mir", "function": "resilver"}); !ok || v < 16<<20 {
			t.Errorf("mir: zfs_scan_processed_bytes{function=resilver} = %v (present %v), want the mirror's data", v, ok)
		}
	})

	t.Run("sequential rebuild", func(t *testing.T) {
		// About 90 MiB on mirror-1 at 2 MiB/s, for a rebuild of about 45 s,
		// of which zpool status hangs for the first 10 to 20.
		writeRandom(t, filepath.Join(mnt, "r10", "more"), 160)
		// zpool replace waits for a txg while it holds the lock every
		// zpool command takes, and that txg writes to the slow new disk
		// behind the rebuild's own writes: zpool status hangs meanwhile.
		// Fewer bytes in flight than the default 64 MiB shorten that.
		setTunable(t, "zfs_rebuild_vdev_limit", "1048576")
		wait := background(t, "zpool", "replace", "-s", "r10", disk(6), disk(19))
		defer wait()
		progress(t, "r10", "rebuild", "05-rebuilding")
		m := e.WaitFor(t, 5*time.Minute, "r10: rebuild of mirror-1 finished", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", map[string]string{"pool": "r10", "function": "rebuild", "vdev": "mirror-1", "state": "finished"})
		})
		if _, ok := m.Get("zfs_scan_duration_seconds", map[string]string{"pool": "r10", "function": "rebuild", "vdev": "mirror-1"}); !ok {
			t.Errorf("r10: finished rebuild has no zfs_scan_duration_seconds")
		}
	})

	t.Run("hot spare attached by zed", func(t *testing.T) {
		zpool(t, "offline", "-f", "rz1", disk(8))
		inuse := map[string]string{"pool": "rz1", "vdev": leaf(12), "state": "inuse"}
		var m e2e.Metrics
		for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
			if m = e.Scrape(t); is(m, "zfs_vdev_state", inuse) {
				break
			}
			if time.Now().After(deadline) {
				// Show why: is zed running, and what did it see?
				zed, _ := exec.Command("pgrep", "-a", "zed").CombinedOutput()
				status, _ := exec.Command("zpool", "status", "rz1").CombinedOutput()
				events, _ := exec.Command("sh", "-c", "zpool events | tail -20").CombinedOutput()
				t.Fatalf("after 2m0s: rz1: spare %s not inuse\nzed: %s\n%s\n%s", leaf(12), zed, status, events)
			}
		}
		capture(t, "06-spare-inuse")
		spares := 0
		for _, s := range m.Series("zfs_vdev_info", map[string]string{"pool": "rz1", "vdev_type": "spare"}) {
			if strings.HasPrefix(e2e.Label(s, "vdev"), "raidz1-0/spare-") {
				spares++
			}
		}
		if spares != 1 {
			t.Errorf("rz1: %d spare-N vdevs in zfs_vdev_info, want 1", spares)
		}
		if !is(m, "zfs_vdev_state", map[string]string{"pool": "rz1", "vdev": leaf(8), "state": "faulted"}) {
			t.Errorf("rz1: zfs_vdev_state{vdev=%s,state=faulted} != 1", leaf(8))
		}
		zpool(t, "clear", "rz1")
		zpool(t, "online", "rz1", disk(8))
		e.WaitFor(t, 2*time.Minute, "rz1: spare available again", func(m e2e.Metrics) bool {
			return is(m, "zfs_vdev_state", map[string]string{"pool": "rz1", "vdev": leaf(12), "state": "avail"})
		})
	})

	t.Run("duplicate vdev names", func(t *testing.T) { duplicateNames(t, e, mnt) })

	t.Run("long operations", func(t *testing.T) { longOperations(t, e, mnt, version) })

	t.Run("data and checksum errors", func(t *testing.T) {
		pool := "one"
		zpool(t, "create", "-f", "-o", "failmode=continue", "-O", "primarycache=metadata", "-m", filepath.Join(mnt, pool), pool, disk(20))
		file := filepath.Join(mnt, pool, "data")
		writeRandom(t, file, 64)
		// Overwrite the middle of the disk, away from the labels.
		run(t, "dd", "if=/dev/urandom", "of="+disk(20), "bs=1M", "seek=96", "count=256", "conv=notrunc,fsync", "status=none")
		_ = exec.Command("cat", file).Run() // reading back finds the damage
		zpool(t, "scrub", "-w", pool)
		m := e.WaitFor(t, time.Minute, "one: scrub finished", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", map[string]string{"pool": pool, "function": "scrub", "state": "finished"})
		})
		capture(t, "07-data-errors")
		captureKstats(t, "07-data-errors")
		if v, ok := m.Get("zfs_pool_data_errors", map[string]string{"pool": pool}); !ok || v <= 0 {
			t.Errorf("one: zfs_pool_data_errors = %v (present %v), want > 0", v, ok)
		}
		if v, ok := m.Get("zfs_vdev_checksum_errors_total", map[string]string{"pool": pool, "vdev": leaf(20)}); !ok || v <= 0 {
			t.Errorf("one: zfs_vdev_checksum_errors_total{vdev=%s} = %v (present %v), want > 0", leaf(20), v, ok)
		}
		zpool(t, "clear", pool)
		m = e.Scrape(t)
		if v, _ := m.Get("zfs_vdev_checksum_errors_total", map[string]string{"pool": pool, "vdev": leaf(20)}); v != 0 {
			t.Errorf("one: zfs_vdev_checksum_errors_total{vdev=%s} = %v after zpool clear, want 0", leaf(20), v)
		}
		keepExposition(t, e, "07-data-errors")
	})

	// Before the pulled disk, after which zpool may hang.
	t.Run("events agree with zpool events", func(t *testing.T) { eventsAgree(t, e) })
	t.Run("events queue wraps", func(t *testing.T) { eventsWrap(t, "mir") })

	t.Run("disk pulled from a failmode=wait pool", func(t *testing.T) {
		pool := "pulled"
		zpool(t, "create", "-f", "-o", "failmode=wait", "-m", filepath.Join(mnt, pool), pool, disk(21))
		writeRandom(t, filepath.Join(mnt, pool, "before"), 8)
		// The disk goes while idle: a request still in flight when the
		// device is removed may never end, and then zpool hangs rather
		// than the pool suspending (that case is checked too, below).
		zpool(t, "sync", pool)
		waitIdle(t, disk(21))
		device := pciDevice(t, disk(21))
		writeSysfs(t, filepath.Join(device, "remove"), "1")
		// A write finds the disk gone; with failmode=wait it blocks until
		// the pool is cleared.
		writing := background(t, "dd", "if=/dev/urandom", "of="+filepath.Join(mnt, pool, "after"), "bs=1M", "count=8", "conv=fsync", "status=none")
		// What follows depends on the release and on timing: the pool
		// suspends and zpool still answers (2.3); the pool stays ONLINE
		// while its writes fail and are retried, the failures counted
		// against the disk (2.1); or zpool itself hangs in the kernel (now
		// and then on either).
		stateFile := filepath.Join("/proc/spl/kstat/zfs", pool, "state")
		outcome := waitPulled(t, e, pool)
		t.Logf("disk pulled: %s", outcome)
		switch outcome {
		case pulledHung:
			hungZpool(t, pool)
			return
		case pulledSuspended:
			suspended := map[string]string{"pool": pool, "state": "suspended"}
			m := e.WaitFor(t, 30*time.Second, "pulled: zfs_pool_state{state=suspended} == 1", func(m e2e.Metrics) bool {
				return is(m, "zfs_pool_state", suspended)
			})
			capture(t, "08-suspended")
			keepExposition(t, e, "08-suspended")
			if v, ok := m.Get("zfs_exporter_source_up", map[string]string{"source": "zpool_status"}); !ok || v != 1 {
				t.Errorf("zfs_exporter_source_up{source=zpool_status} = %v (present %v): zpool status answers on a suspended pool", v, ok)
			}
		case pulledFailing:
			m := e.Scrape(t)
			capture(t, "08-write-errors")
			keepExposition(t, e, "08-write-errors")
			if !is(m, "zfs_pool_state", map[string]string{"pool": pool, "state": "online"}) {
				t.Errorf("pulled: zfs_pool_state{state=online} != 1 while the kernel's state kstat says ONLINE")
			}
			if v, _ := m.Get("zfs_pool_data_errors", map[string]string{"pool": pool}); v <= 0 {
				t.Logf("pulled: no data errors yet (zfs_pool_data_errors = %v)", v)
			}
		}
		state, err := os.ReadFile(stateFile)
		if err != nil {
			t.Fatal(err)
		}
		kernelState := map[string]string{"pool": pool, "state": strings.ToLower(strings.TrimSpace(string(state)))}

		// OpenZFS 2.3 answers zpool status, get and list on a suspended
		// pool; older releases and pools stuck deeper can hang them in
		// the kernel. A zpool whose status never returns stands in for
		// that here, over the real pool and its real kstats.
		hung := filepath.Join(t.TempDir(), "zpool-hung")
		script := "#!/bin/sh\n[ \"$1\" = status ] && exec sleep 3600\nexec zpool \"$@\"\n"
		if err := os.WriteFile(hung, []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
		const deadline = pulledDeadline
		h := e2e.Start(t, *exporterBin, nil, "--zpool.command="+hung, "--zpool.iostat-interval=0", "--scrape.timeout="+deadline.String())
		for i := range 3 {
			began := time.Now()
			hm := h.Scrape(t)
			if took := time.Since(began); took > deadline+pulledSlack {
				t.Errorf("scrape %d over a hung zpool status took %s, deadline %s", i, took.Round(time.Millisecond), deadline)
			}
			if !is(hm, "zfs_pool_state", kernelState) {
				t.Errorf("scrape %d over a hung zpool status: zfs_pool_state%v != 1 (from the kstat state file)", i, kernelState)
			}
			if v, _ := hm.Get("zfs_exporter_source_up", map[string]string{"source": "zpool_status"}); v != 0 {
				t.Errorf("scrape %d: zfs_exporter_source_up{source=zpool_status} = %v over a hung zpool status, want 0", i, v)
			}
			if !is(hm, "zfs_exporter_source_up", map[string]string{"source": "kstat_pool_state"}) {
				t.Errorf("scrape %d: zfs_exporter_source_up{source=kstat_pool_state} != 1", i)
			}
		}
		// The runner kills a timed-out zpool and starts no other while it
		// has not exited: at most the last one may still be going away.
		out, _ := exec.Command("pgrep", "-fc", "sleep 3600").Output()
		if n, _ := strconv.Atoi(strings.TrimSpace(string(out))); n > 1 {
			t.Errorf("%d hung zpool status processes after 3 scrapes, want at most 1", n)
		}
		if t.Failed() {
			diagnoseHang(t, h)
		}
		if outcome != pulledSuspended {
			// Writes to the gone disk are stuck in the kernel, and so
			// would a zpool clear be: the guest is thrown away instead.
			return
		}

		// The disk comes back: a PCI rescan finds it, zpool clear resumes
		// the pool and the blocked write completes.
		writeSysfs(t, "/sys/bus/pci/rescan", "1")
		run(t, "udevadm", "settle")
		zpool(t, "clear", pool)
		e.WaitFor(t, time.Minute, "pulled: back online after zpool clear", func(m e2e.Metrics) bool {
			return is(m, "zfs_pool_state", map[string]string{"pool": pool, "state": "online"})
		})
		writing()
	})
}

// The scrape deadline of the exporters that watch a pulled disk, and how
// far past it a scrape may answer. Generous for an emulated guest: with the
// disk gone, OpenZFS 2.1 spins write threads at nice -20 and zed works
// through the errors, and user space gets little of the guest's CPUs.
const (
	pulledDeadline = 8 * time.Second
	pulledSlack    = 4 * time.Second
)

// What a pulled disk did to its pool.
type pulledOutcome int

const (
	pulledSuspended pulledOutcome = iota // the kernel suspended the pool; zpool answers
	pulledFailing                        // ONLINE, with write errors on the disk that keep on
	pulledHung                           // zpool status does not return
)

func (o pulledOutcome) String() string {
	return [...]string{"the pool suspended", "the writes fail while the pool stays online", "zpool hangs"}[o]
}

// waitPulled waits for what a pulled disk does to its pool. Write errors
// come before a suspension, so they count as the outcome only when the pool
// is still not suspended 30 s after they appeared.
func waitPulled(t *testing.T, e *e2e.Exporter, pool string) pulledOutcome {
	t.Helper()
	stateFile := filepath.Join("/proc/spl/kstat/zfs", pool, "state")
	var failingSince time.Time
	for deadline := time.Now().Add(90 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if state, _ := os.ReadFile(stateFile); strings.TrimSpace(string(state)) == "SUSPENDED" {
			return pulledSuspended
		}
		if !start(t, "zpool", "status", pool).ended(10 * time.Second) {
			return pulledHung
		}
		m := e.Scrape(t)
		if v, _ := m.Get("zfs_vdev_write_errors_total", map[string]string{"pool": pool, "vdev": leaf(21)}); v > 0 && failingSince.IsZero() {
			failingSince = time.Now()
		}
		if !failingSince.IsZero() && time.Since(failingSince) > 30*time.Second {
			return pulledFailing
		}
	}
	state, _ := os.ReadFile(stateFile)
	more, _ := exec.Command("sh", "-c", "zpool status "+pool+"; ps -eo pid,stat,wchan:32,args | grep '[d]d if'; dmesg | tail -20").CombinedOutput()
	t.Fatalf("after 1m30s pool %s is not suspended, has no write errors and zpool answers: the kernel says %q\n%s", pool, strings.TrimSpace(string(state)), more)
	return pulledSuspended
}

// hungZpool follows a pulled disk where zpool itself hangs in the kernel
// (status, get, destroy) while the pool's state kstat still reads as
// before: an exporter over the real zpool answers every scrape within its
// deadline, says zpool status is down, and takes the pools' health from
// the kstats. The guest is powered off afterwards, pool and all.
func hungZpool(t *testing.T, pool string) {
	const deadline = pulledDeadline
	e := e2e.Start(t, *exporterBin, nil, "--zpool.iostat-interval=0", "--scrape.timeout="+deadline.String(), "--log.level=debug")
	var m e2e.Metrics
	for until := time.Now().Add(3 * time.Minute); ; time.Sleep(time.Second) {
		began := time.Now()
		m = e.Scrape(t)
		if took := time.Since(began); took > deadline+pulledSlack {
			t.Errorf("a scrape from %s took %s, deadline %s; collectors: %s", began.UTC().Format("15:04:05.000"), took.Round(time.Millisecond), deadline, collectorTimes(m))
		}
		statusUp, _ := m.Get("zfs_exporter_source_up", map[string]string{"source": "zpool_status"})
		if statusUp == 0 && is(m, "zfs_exporter_source_up", map[string]string{"source": "kstat_pool_state"}) {
			break
		}
		if time.Now().After(until) {
			t.Fatalf("after 3m0s zpool status still answers (zfs_exporter_source_up{source=zpool_status} = %v) or the kstat fallback does not", statusUp)
		}
	}
	t.Cleanup(func() {
		if t.Failed() {
			diagnoseHang(t, e)
		}
	})
	state, err := os.ReadFile(filepath.Join("/proc/spl/kstat/zfs", pool, "state"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"pool": pool, "state": strings.ToLower(strings.TrimSpace(string(state)))}
	if !is(m, "zfs_pool_state", want) {
		t.Errorf("zfs_pool_state%v != 1 while zpool hangs (the kernel's state kstat says %s)", want, strings.TrimSpace(string(state)))
	}
	if !is(m, "zfs_pool_state", map[string]string{"pool": "mir", "state": "online"}) {
		t.Errorf("mir: zfs_pool_state{state=online} != 1 from the kstat fallback")
	}
}

// collectorTimes lists each collector's duration and success in a scrape.
func collectorTimes(m e2e.Metrics) string {
	var parts []string
	for _, s := range m.Series("zfs_exporter_collector_duration_seconds", nil) {
		name := e2e.Label(s, "collector")
		ok, _ := m.Get("zfs_exporter_collector_success", map[string]string{"collector": name})
		parts = append(parts, fmt.Sprintf("%s %.2fs success=%v", name, e2e.Value(s), ok))
	}
	return strings.Join(parts, ", ")
}

// diagnoseHang logs where a slow exporter waits: the kernel stack of each
// of its threads, the processes stuck in the kernel, and its goroutines.
func diagnoseHang(t *testing.T, e *e2e.Exporter) {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", e.Pid()))
	for _, task := range tasks {
		comm, _ := os.ReadFile(filepath.Join(task, "comm"))
		wchan, _ := os.ReadFile(filepath.Join(task, "wchan"))
		stack, _ := os.ReadFile(filepath.Join(task, "stack"))
		t.Logf("exporter thread %s (%s) waits in %s:\n%s", filepath.Base(task), strings.TrimSpace(string(comm)), wchan, stack)
	}
	ps, _ := exec.Command("sh", "-c", "ps -eo pid,stat,wchan:32,args | awk 'NR==1 || $2 ~ /D/'; for p in $(ps -eo pid=,stat= | awk '$2 ~ /D/ {print $1}'); do echo \"== $p\"; cat /proc/$p/stack; done").CombinedOutput()
	t.Logf("processes in uninterruptible sleep, and where:\n%s", ps)
	busy, _ := exec.Command("sh", "-c", "cat /proc/loadavg; ps -eo pid,stat,pcpu,time,comm --sort=-time | head -25").CombinedOutput()
	t.Logf("load and the processes that used the most CPU:\n%s", busy)
	t.Logf("exporter log and goroutines:\n%s", e.Quit(t))
}

// waitIdle waits until the block device under disk has no request in
// flight.
func waitIdle(t *testing.T, disk string) {
	t.Helper()
	dev, err := filepath.EvalSymlinks(disk)
	if err != nil {
		t.Fatal(err)
	}
	inflight := filepath.Join("/sys/block", filepath.Base(dev), "inflight")
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if data, err := os.ReadFile(inflight); err == nil && len(strings.Fields(string(data))) == 2 && strings.Fields(string(data))[0] == "0" && strings.Fields(string(data))[1] == "0" {
			return
		}
	}
	t.Logf("%s still has requests in flight after 10 s", dev)
}

// pciDevice returns the sysfs directory of the PCI device behind a disk:
// writing 1 to its remove file pulls the disk out of the guest.
func pciDevice(t *testing.T, disk string) string {
	t.Helper()
	dev, err := filepath.EvalSymlinks(disk)
	if err != nil {
		t.Fatal(err)
	}
	// /sys/block/vdX/device is the virtio device; its parent the PCI one.
	virtio, err := filepath.EvalSymlinks(filepath.Join("/sys/block", filepath.Base(dev), "device"))
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(virtio)
}

// setTunable sets a zfs module parameter for the rest of the test.
func setTunable(t *testing.T, name, value string) {
	t.Helper()
	path := filepath.Join("/sys/module/zfs/parameters", name)
	old, err := os.ReadFile(path)
	if err != nil {
		t.Logf("no tunable %s in this release: %v", name, err)
		return
	}
	writeSysfs(t, path, value)
	t.Cleanup(func() { writeSysfs(t, path, strings.TrimSpace(string(old))) })
}

func writeSysfs(t *testing.T, path, value string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(value), 0o200); err != nil {
		t.Fatal(err)
	}
}

// sum adds up the series of name that have the labels given.
func sum(m e2e.Metrics, name string, labels map[string]string) float64 {
	total := 0.0
	for _, s := range m.Series(name, labels) {
		total += e2e.Value(s)
	}
	return total
}

// histogramCount returns the sample count of a pool's histogram.
func histogramCount(m e2e.Metrics, name, pool string) uint64 {
	for _, s := range m.Series(name, map[string]string{"pool": pool}) {
		return s.GetHistogram().GetSampleCount()
	}
	return 0
}

// flatten turns metrics into "name{label=value,...}" -> value for the
// names given, leaving out the labels dropped.
func flatten(m e2e.Metrics, names, dropped []string) map[string]float64 {
	out := map[string]float64{}
	for _, name := range names {
		for _, s := range m.Series(name, nil) {
			var b strings.Builder
			b.WriteString(name + "{")
			for _, l := range s.GetLabel() {
				if !slices.Contains(dropped, l.GetName()) {
					fmt.Fprintf(&b, "%s=%q,", l.GetName(), l.GetValue())
				}
			}
			b.WriteString("}")
			out[b.String()] = e2e.Value(s)
		}
	}
	return out
}

func diff(t *testing.T, an string, a map[string]float64, bn string, b map[string]float64) {
	t.Helper()
	for k, v := range a {
		if w, ok := b[k]; !ok {
			t.Errorf("%s = %v from %s, missing from %s", k, v, an, bn)
		} else if w != v {
			t.Errorf("%s = %v from %s, %v from %s", k, v, an, w, bn)
		}
	}
	for k, v := range b {
		if _, ok := a[k]; !ok {
			t.Errorf("%s = %v from %s, missing from %s", k, v, bn, an)
		}
	}
}

// duplicateNames builds the layouts in which zpool prints one name for two
// vdevs of a pool: two dRAID vdevs each using its distributed spare (two
// spare-0) and two raidz1 vdevs each replacing its first disk (two
// replacing-0, held by a suspended resilver). File vdevs leave the data
// disks to the other scenarios.
func duplicateNames(t *testing.T, e *e2e.Exporter, mnt string) {
	dir, err := os.MkdirTemp("/var/tmp", "dup")
	if err != nil {
		t.Fatal(err)
	}
	file := func(n int) string {
		path := filepath.Join(dir, fmt.Sprintf("f%02d", n))
		if _, err := os.Stat(path); err != nil {
			sparseFile(t, path, 256<<20)
		}
		return path
	}
	create := func(pool string, vdevs ...string) {
		zpool(t, append([]string{"create", "-f", "-m", filepath.Join(mnt, pool), pool}, vdevs...)...)
		writeRandom(t, filepath.Join(mnt, pool, "data"), 8)
		zpool(t, "sync", pool)
	}
	create("dupd", "draid1:2d:4c:1s", file(1), file(2), file(3), file(4), "draid1:2d:4c:1s", file(5), file(6), file(7), file(8))
	defer zpool(t, "destroy", "-f", "dupd")
	// A plain offline: zed attaches a spare by itself to a faulted disk
	// (offline -f), and the replace would then find the spare busy.
	for _, r := range [][2]string{{file(1), "draid1-0-0"}, {file(5), "draid1-1-0"}} {
		zpool(t, "offline", "dupd", r[0])
		zpool(t, "replace", "dupd", r[0], r[1])
	}
	zpool(t, "wait", "-t", "resilver", "dupd")

	create("dupr", "raidz1", file(9), file(10), file(11), "raidz1", file(12), file(13), file(14))
	defer zpool(t, "destroy", "-f", "dupr")
	setTunable(t, "zfs_scan_suspend_progress", "1") // the resilver waits: replacing-0 stays
	zpool(t, "replace", "dupr", file(9), file(15))
	zpool(t, "replace", "dupr", file(12), file(16))
	capture(t, "10-duplicate-names")

	m := e.Scrape(t)
	keepExposition(t, e, "10-duplicate-names")
	for _, want := range []struct{ pool, vdev, typ, parent string }{
		{"dupd", "draid1:2d:4c:1s-0/spare-0", "spare", "draid1:2d:4c:1s-0"},
		{"dupd", "draid1:2d:4c:1s-1/spare-0", "spare", "draid1:2d:4c:1s-1"},
		{"dupd", "draid1-0-0", "dspare", "draid1:2d:4c:1s-0/spare-0"},
		{"dupd", "draid1-1-0", "dspare", "draid1:2d:4c:1s-1/spare-0"},
		{"dupd", file(1), "file", "draid1:2d:4c:1s-0/spare-0"},
		{"dupr", "raidz1-0/replacing-0", "replacing", "raidz1-0"},
		{"dupr", "raidz1-1/replacing-0", "replacing", "raidz1-1"},
		{"dupr", file(15), "file", "raidz1-0/replacing-0"},
		{"dupr", file(16), "file", "raidz1-1/replacing-0"},
	} {
		labels := map[string]string{"pool": want.pool, "vdev": want.vdev, "vdev_type": want.typ, "parent": want.parent}
		if !is(m, "zfs_vdev_info", labels) {
			t.Errorf("no zfs_vdev_info%v; the pool's vdevs: %v", labels, vdevNames(m, want.pool))
		}
	}
	for _, labels := range []map[string]string{
		{"pool": "dupd", "vdev": "draid1-0-0", "state": "inuse"},
		{"pool": "dupd", "vdev": "draid1-1-0", "state": "inuse"},
		{"pool": "dupd", "vdev": file(5), "state": "offline"},
		{"pool": "dupr", "vdev": "raidz1-1/replacing-0", "state": "online"},
	} {
		if !is(m, "zfs_vdev_state", labels) {
			t.Errorf("zfs_vdev_state%v != 1", labels)
		}
	}
	if n := sum(m, "zfs_exporter_dropped_series_total", nil); n != 0 {
		t.Errorf("%v series dropped, want none", n)
	}
	for _, c := range []string{"status", "properties", "vdev_io"} {
		if v, _ := m.Get("zfs_exporter_collector_success", map[string]string{"collector": c}); v != 1 {
			t.Errorf("collector %s failed", c)
		}
	}
	setTunable(t, "zfs_scan_suspend_progress", "0")
}

// vdevNames lists the vdevs of a pool in zfs_vdev_info, for messages.
func vdevNames(m e2e.Metrics, pool string) []string {
	var names []string
	for _, s := range m.Series("zfs_vdev_info", map[string]string{"pool": pool}) {
		names = append(names, e2e.Label(s, "vdev")+"<"+e2e.Label(s, "parent"))
	}
	slices.Sort(names)
	return names
}

// sparseFile makes a sparse file of size bytes for a file vdev.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err == nil {
		err = f.Truncate(size)
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// labelOf is the value of a series' label, "" when it has none.
func labelOf(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
