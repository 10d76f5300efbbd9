package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The mixin's committed outputs, relative to this package.
const mixinDir = "../../dashboards/out"

// The end-to-end test of the dashboards and alerts: Debian's Prometheus
// scrapes, every second, the exporter watching real zfs-fuse pools, and
// exporters replaying real outputs of what zfs-fuse cannot show (ARC, txg,
// dataset and pool I/O kstats, vdev properties, JSON status, running
// scans). Every dashboard query and recording rule must return series,
// and real faults must fire their alerts through Alertmanager to a
// webhook.
func TestPrometheusDashboardsAndAlerts(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	prometheusBin := lookPath(t, "prometheus", "prometheus")
	alertmanagerBin := lookPath(t, "prometheus-alertmanager", "prometheus-alertmanager")
	losetup := lookPath(t, "losetup", "mount")
	blockdev := lookPath(t, "blockdev", "util-linux")
	began := time.Now()
	phase := began
	logPhase := func(what string) {
		t.Logf("%s took %s", what, time.Since(phase).Round(100*time.Millisecond))
		phase = time.Now()
	}

	// zfs-fuse takes only whole disks as cache devices, and a loop device
	// made read-only under a live pool gives real write errors.
	cacheDev := loopDevice(t, z, losetup, blockdev, "cache", 64)
	flakyA, flakyB := loopDevice(t, z, losetup, blockdev, "flaky-a", 128), loopDevice(t, z, losetup, blockdev, "flaky-b", 128)
	mirror, mirrorMnt := z.Create("mirror", "mirror", z.Disk("m1", 256), z.Disk("m2", 256), "cache", cacheDev)
	raidz, raidzMnt := z.Create("raidz", "raidz1", z.Disk("r1", 128), z.Disk("r2", 128), z.Disk("r3", 128), "spare", z.Disk("r4", 128))
	stripe, stripeMnt := z.Create("stripe", z.Disk("s1", 128), z.Disk("s2", 128))
	flaky, flakyMnt := z.Create("flaky", "mirror", flakyA, flakyB)
	mirrorLeaf := filepath.Join(z.Dir, "m1")
	raidzLeaf := filepath.Join(z.Dir, "r1")
	e2e.WriteRandom(t, filepath.Join(raidzMnt, "data"), 48)
	e2e.WriteRandom(t, filepath.Join(flakyMnt, "before"), 4)
	// A dataset with a quota and a refquota, and a snapshot, for the
	// datasets dashboard and the quota alert.
	quotaDS := stripe + "/quota"
	e2e.ZFS(t, "create", "-o", "quota=32M", "-o", "refquota=40M", quotaDS)
	e2e.ZFS(t, "snapshot", quotaDS+"@start")
	logPhase("creating the zfs-fuse pools")

	// The replays: real OpenZFS 2.3.2 pools in three states with their
	// kstats, and a healing resilver and a sequential rebuild in progress
	// from the test bed's guest.
	captures := sample.Dir(t, "captures/openzfs-2.3")
	capturesReplay := captureReplay(t, captures, "env", "04-scrubbed-healthy", "09-errors-repaired", "11-cleared")
	writeKstats(t, captures, "04-scrubbed-healthy", filepath.Join(capturesReplay, "kstat"))
	// The pool I/O kstat (<pool>/io, with its wait and run queues) left
	// Linux in OpenZFS 2.1: a real one from ZFS on Linux 0.6.5.
	poolIO := sample.MustRead(t, filepath.Join(sample.Dir(t, "corpus/kstat-linux"), "pool-io-kstat-io-pool1.txt"))
	writeKstat(t, filepath.Join(capturesReplay, "kstat"), poolIO)
	const guestCaptures = "../../internal/zfs/zpool/testdata/openzfs-2.3-guest"
	guestReplay := captureReplay(t, guestCaptures, "", "04-resilvering", "05-rebuilding", "13-expanding", "16-removed", "17-checkpoint")
	// A TRIM and an initialization in progress, read with zpool status -t
	// -i, which the scenarios above were captured without.
	opsReplay := captureReplay(t, guestCaptures, "", "18-trim-initialize")
	// The JSON status of 2.3 gives a scan's time left only while it runs
	// fast at the moment of the scrape, which a replay hours later is
	// not; text status prints it. A resilver on ZFS on Linux 0.6.
	textReplay := t.TempDir()
	resilver := sample.MustRead(t, filepath.Join(sample.Dir(t, "corpus/zpool-status"), "zol063-resilver-logs-mirror-cache-mixed-indent.txt"))
	if err := os.WriteFile(filepath.Join(textReplay, "status.txt"), append([]byte("# command: zpool status\n# ---\n"), resilver.Body...), 0o644); err != nil {
		t.Fatal(err)
	}

	host := e2e.Start(t, exporterBin, nil, "--zpool.iostat-interval=1s", "--web.enable-benchmark-api",
		"--collector.dataset", "--collector.dataset.snapshot-interval=2s", "--collector.dataset.per-snapshot")
	// A replay has no disks or CPU to show: those come from the zfs-fuse
	// exporter.
	replayArgs := []string{"--zpool.replay-step=4s", "--zpool.iostat-interval=1s", "--no-collector.disk", "--no-collector.cpu", "--collector.vdev_latency"}
	replay23 := e2e.Start(t, exporterBin, nil, append([]string{"--zpool.replay-dir=" + capturesReplay}, replayArgs...)...)
	// The guest's replay also sends what the I/O board's detail row reads,
	// each family behind a flag; the others send the defaults alone.
	replayGuest := e2e.Start(t, exporterBin, nil, append([]string{"--zpool.replay-dir=" + guestReplay,
		"--collector.vdev_latency.request-sizes", "--collector.vdev_latency.queue-lengths", "--collector.vdev_latency.queue-wait"}, replayArgs...)...)
	replayOps := e2e.Start(t, exporterBin, nil, append([]string{"--zpool.replay-dir=" + opsReplay}, replayArgs...)...)
	// That capture holds zpool status and nothing else.
	replayText := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+textReplay,
		"--no-collector.disk", "--no-collector.cpu", "--no-collector.kstat", "--no-collector.properties", "--no-collector.vdev_io")

	hook := newWebhook(t)
	am := startAlertmanager(t, alertmanagerBin, hook.url)
	prom := startPrometheus(t, prometheusBin, am.addr, host, replay23, replayGuest, replayOps, replayText)
	logPhase("starting the exporters, Alertmanager and Prometheus")

	pools := map[string]string{"mirror": mirror, "raidz": raidz, "stripe": stripe, "flaky": flaky}
	prom.waitSeries(t, 60*time.Second, "all five targets up", `count(up{job="zfs"} == 1) == 5`)
	// Counters must be seen at zero before they move, or increase() has
	// nothing to start from; the iostat stream skips its first report.
	for _, p := range pools {
		prom.waitSeries(t, 60*time.Second, "write counters and error counters of "+p,
			fmt.Sprintf(`count_over_time(zfs_vdev_write_errors_total{pool=%q}[1m]) >= 2 and on (instance, pool, vdev) zfs_vdev_write_bytes_total`, p))
	}
	logPhase("waiting for the first samples")

	// Load: writes on every pool while Prometheus scrapes, write errors
	// on a disk gone read-only, checksum errors repaired by a scrub, the
	// replayed kstats moving on; all of it inside a benchmark window, which
	// the benchmark dashboard draws as an annotation.
	resp, err := http.Post(host.URL+"/api/v1/benchmark/windows", "application/json",
		strings.NewReader(fmt.Sprintf(`{"name": "end-to-end writes", "pool": %q}`, mirror)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("starting a benchmark window: %s", resp.Status)
	}
	if out, err := exec.Command(blockdev, "--setro", flakyB).CombinedOutput(); err != nil {
		t.Fatalf("blockdev --setro %s: %v\n%s", flakyB, err, out)
	}
	e2e.WriteRandom(t, filepath.Join(flakyMnt, "after"), 8)
	e2e.WriteRandom(t, filepath.Join(mirrorMnt, "data"), 32)
	e2e.WriteRandom(t, filepath.Join(stripeMnt, "data"), 32)
	writeKstats(t, captures, "09-errors-repaired", filepath.Join(capturesReplay, "kstat"))
	corruptMiddle(t, raidzLeaf, 8<<20, 32<<20)
	e2e.Zpool(t, "scrub", raidz)
	e2e.Zpool(t, "scrub", mirror)
	e2e.WriteRandom(t, filepath.Join(stripeMnt, "more"), 16)
	// 30 of the 32 MiB quota: past the 90 % of ZFSDatasetQuotaNearlyFull.
	e2e.WriteRandom(t, filepath.Join(stripeMnt, "quota", "data"), 30)
	writeKstats(t, captures, "11-cleared", filepath.Join(capturesReplay, "kstat"))
	for what, expr := range map[string]string{
		"write errors on " + flakyB:         fmt.Sprintf(`zfs_vdev_write_errors_total{pool=%q, vdev=%q} > 0`, flaky, filepath.Base(flakyB)),
		"checksum errors on " + raidzLeaf:   fmt.Sprintf(`zfs_vdev_checksum_errors_total{pool=%q, vdev=%q} > 0`, raidz, raidzLeaf),
		"the scrub of " + raidz + " ended":  fmt.Sprintf(`zfs_scan_state{pool=%q, function="scrub", state="finished"} == 1`, raidz),
		"the scrub of " + mirror + " ended": fmt.Sprintf(`zfs_scan_state{pool=%q, function="scrub", state="finished"} == 1`, mirror),
		"writes on " + mirror:               fmt.Sprintf(`max_over_time(instance_pool:zfs_pool_write_bytes:rate5m{pool=%q}[5m]) > 0`, mirror),
		"writes on " + stripe:               fmt.Sprintf(`max_over_time(instance_pool:zfs_pool_write_bytes:rate5m{pool=%q}[5m]) > 0`, stripe),
		"the replayed read errors":          `increase(zfs_vdev_read_errors_total{pool="r10"}[5m]) > 0`,
		"the replayed txgs moving on":       `increase(zfs_pool_txg_sync_seconds_count{pool="r10"}[5m]) > 0`,
		"a replayed running scan":           `zfs_scan_state{state="scanning"} == 1`,
		"the benchmark window":              `zfs_benchmark_window_active{name="end-to-end writes"} == 1`,
		"the snapshot of " + quotaDS:        fmt.Sprintf(`zfs_dataset_snapshots{dataset=%q} == 1`, quotaDS),
	} {
		prom.waitSeries(t, 90*time.Second, what, expr)
	}
	logPhase("loading the pools")

	// Grafana evaluates a panel at every step of its range: at a step of
	// 1s, as here, an event is on the grid a second after Prometheus
	// scraped it.
	time.Sleep(2 * time.Second)
	window := queryWindow{start: began, end: time.Now(), step: time.Second}
	prom.logScrapes(t, window, map[string]string{
		strings.TrimPrefix(host.URL, "http://"):        "zfs-fuse",
		strings.TrimPrefix(replay23.URL, "http://"):    "OpenZFS 2.3.2 replay",
		strings.TrimPrefix(replayGuest.URL, "http://"): "OpenZFS 2.3.2 guest replay",
		strings.TrimPrefix(replayOps.URL, "http://"):   "OpenZFS 2.3.2 guest TRIM and initialization",
		strings.TrimPrefix(replayText.URL, "http://"):  "ZFS on Linux 0.6 replay",
	})
	checkDashboards(t, prom, window)
	logPhase("checking every dashboard query")
	checkRecordingRules(t, prom, window)
	logPhase("checking every recording rule")

	t.Run("write and checksum errors fire ZFSVdevErrorsIncreasing and ZFSVdevErrorsPresent", func(t *testing.T) {
		for _, want := range []struct{ errors, pool, vdev string }{
			{"write", flaky, filepath.Base(flakyB)},
			{"checksum", raidz, raidzLeaf},
		} {
			for _, alertname := range []string{"ZFSVdevErrorsIncreasing", "ZFSVdevErrorsPresent"} {
				a := hook.wait(t, 60*time.Second, fmt.Sprintf("%s for %s errors on %s", alertname, want.errors, want.vdev), func(a webhookAlert) bool {
					return a.Status == "firing" && a.Labels["alertname"] == alertname && a.Labels["errors"] == want.errors &&
						a.Labels["pool"] == want.pool && a.Labels["vdev"] == want.vdev
				})
				checkAnnotations(t, a, want.vdev, want.pool)
			}
		}
	})

	// zfs-fuse cannot bring a cache device back online: removing it ends
	// the alert.
	t.Run("cache device offline fires ZFSVdevNotOnline", func(t *testing.T) {
		vdev := filepath.Base(cacheDev)
		e2e.Zpool(t, "offline", mirror, cacheDev)
		a := hook.wait(t, 90*time.Second, "ZFSVdevNotOnline firing for "+vdev, func(a webhookAlert) bool {
			return a.Status == "firing" && a.Labels["alertname"] == "ZFSVdevNotOnline" && a.Labels["pool"] == mirror && a.Labels["vdev"] == vdev
		})
		checkAnnotations(t, a, vdev, mirror)
		if a.Labels["state"] != "offline" || a.Labels["severity"] != "warning" {
			t.Errorf("ZFSVdevNotOnline labels %v, want state offline and severity warning", a.Labels)
		}
		for _, active := range prom.alerts(t) {
			if active.Labels["alertname"] == "ZFSPoolNotOnline" && active.Labels["pool"] == mirror {
				t.Errorf("ZFSPoolNotOnline is %s for %v while only a cache device is offline", active.State, active.Labels)
			}
		}
		e2e.Zpool(t, "remove", mirror, cacheDev)
		hook.wait(t, 90*time.Second, "ZFSVdevNotOnline resolved for "+vdev, func(a webhookAlert) bool {
			return a.Status == "resolved" && a.Labels["alertname"] == "ZFSVdevNotOnline" && a.Labels["pool"] == mirror && a.Labels["vdev"] == vdev
		})
	})
	logPhase("offlining the cache device")

	// A leaf of a mirror offline leaves its pool DEGRADED: that is the
	// pool alert, which names the vdev, and not the vdev alert, which is
	// for vdevs the pool runs without. With no resilver and no spare, it
	// is also a pool nothing repairs.
	t.Run("mirror leaf offline fires ZFSPoolNotOnline and ZFSPoolDegradedWithoutResilver", func(t *testing.T) {
		e2e.Zpool(t, "offline", mirror, mirrorLeaf)
		a := hook.wait(t, 90*time.Second, "ZFSPoolNotOnline firing for "+mirror, func(a webhookAlert) bool {
			return a.Status == "firing" && a.Labels["alertname"] == "ZFSPoolNotOnline" && a.Labels["pool"] == mirror
		})
		checkAnnotations(t, a, mirror)
		if a.Labels["state"] != "degraded" || a.Labels["severity"] != "critical" {
			t.Errorf("ZFSPoolNotOnline labels %v, want state degraded and severity critical", a.Labels)
		}
		if want := "Vdev " + mirrorLeaf + " is offline."; !strings.Contains(a.Annotations["description"], want) {
			t.Errorf("ZFSPoolNotOnline description does not say %q:\n%s", want, a.Annotations["description"])
		}
		for _, active := range prom.alerts(t) {
			if active.Labels["alertname"] == "ZFSVdevNotOnline" && active.Labels["pool"] == mirror && active.Labels["vdev"] == mirrorLeaf {
				t.Errorf("ZFSVdevNotOnline is %s for %v while its pool is degraded", active.State, active.Labels)
			}
		}
		unrepaired := hook.wait(t, 90*time.Second, "ZFSPoolDegradedWithoutResilver firing for "+mirror, func(a webhookAlert) bool {
			return a.Status == "firing" && a.Labels["alertname"] == "ZFSPoolDegradedWithoutResilver" && a.Labels["pool"] == mirror
		})
		checkAnnotations(t, unrepaired, mirror)
		e2e.Zpool(t, "online", mirror, mirrorLeaf)
		for _, alertname := range []string{"ZFSPoolNotOnline", "ZFSPoolDegradedWithoutResilver"} {
			hook.wait(t, 90*time.Second, alertname+" resolved for "+mirror, func(a webhookAlert) bool {
				return a.Status == "resolved" && a.Labels["alertname"] == alertname && a.Labels["pool"] == mirror
			})
		}
	})
	logPhase("offlining a leaf of the mirror")

	// Raising the quota ends the alert.
	t.Run("a dataset near its quota fires ZFSDatasetQuotaNearlyFull", func(t *testing.T) {
		a := hook.wait(t, 90*time.Second, "ZFSDatasetQuotaNearlyFull firing for "+quotaDS, func(a webhookAlert) bool {
			return a.Status == "firing" && a.Labels["alertname"] == "ZFSDatasetQuotaNearlyFull" && a.Labels["dataset"] == quotaDS
		})
		checkAnnotations(t, a, quotaDS)
		if a.Labels["quota"] != "quota" || a.Labels["severity"] != "warning" {
			t.Errorf("ZFSDatasetQuotaNearlyFull labels %v, want quota quota and severity warning", a.Labels)
		}
		e2e.ZFS(t, "set", "quota=128M", quotaDS)
		hook.wait(t, 90*time.Second, "ZFSDatasetQuotaNearlyFull resolved for "+quotaDS, func(a webhookAlert) bool {
			return a.Status == "resolved" && a.Labels["alertname"] == "ZFSDatasetQuotaNearlyFull" && a.Labels["dataset"] == quotaDS
		})
	})
	logPhase("filling a dataset to its quota")
	t.Logf("whole test: %s", time.Since(began).Round(time.Second))
}

// lookPath finds a command, or skips the test (fails it in CI) naming the
// Debian package that has it.
func lookPath(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		e2e.SkipOrFail(t, "%s is not installed (Debian package %s)", name, pkg)
	}
	return path
}

// loopDevice attaches a loop device to a new sparse file of mib MiB and
// returns its path; the test's cleanup destroys the pools and detaches it.
func loopDevice(t *testing.T, z *e2e.ZFSFuse, losetup, blockdev, name string, mib int64) string {
	t.Helper()
	file := z.Disk(name, mib)
	out, err := exec.Command(losetup, "--find", "--show", file).CombinedOutput()
	if err != nil {
		e2e.SkipOrFail(t, "no loop device: losetup --find --show: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		// The pools go first, so that zfs-fuse lets go of the device. A
		// read-only flag set with blockdev outlives the loop device's
		// file: the next user of the device must not inherit it.
		z.Cleanup()
		if out, err := exec.Command(blockdev, "--setrw", dev).CombinedOutput(); err != nil {
			t.Errorf("blockdev --setrw %s: %v: %s", dev, err, out)
		}
		if out, err := exec.Command(losetup, "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v: %s", dev, err, out)
		}
	})
	return dev
}

// corruptMiddle overwrites n bytes of a file vdev at off with random
// bytes, away from the labels at both ends.
func corruptMiddle(t *testing.T, path string, off, n int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, n)
	_, _ = rand.Read(junk)
	if _, err := f.WriteAt(junk, off); err != nil {
		t.Fatal(err)
	}
}

// captureReplay lays out captures of the test bed's kind, "<scenario>__*.txt"
// headed by their command, as a replay directory in a temporary
// directory: base's captures serve every step (none when base is empty),
// each scenario is a numbered step. Kstats are left out: a replay reads
// them from its kstat/ directory (writeKstats).
func captureReplay(t *testing.T, src, base string, scenarios ...string) string {
	t.Helper()
	dir := t.TempDir()
	copyScenario := func(scenario, to string) {
		matches, err := filepath.Glob(filepath.Join(src, scenario+"__*"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range matches {
			name := filepath.Base(m)
			if strings.HasPrefix(name, scenario+"__kstat-zfs-") || !(strings.HasSuffix(name, ".txt") || strings.HasSuffix(name, ".exit")) {
				continue
			}
			data, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(to, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(to, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
		if n == 0 {
			t.Fatalf("no captures of scenario %s in %s", scenario, src)
		}
	}
	if base != "" {
		copyScenario(base, dir)
	}
	for i, sc := range scenarios {
		copyScenario(sc, filepath.Join(dir, fmt.Sprintf("%03d", i)))
	}
	return dir
}

// writeKstats lays out the kstats of one captured scenario in dir as
// /proc/spl/kstat/zfs is laid out, replacing those of the scenario before:
// the kstats move on as they did on the captured host.
func writeKstats(t *testing.T, captures, scenario, dir string) {
	t.Helper()
	for _, f := range sample.Glob(t, captures, scenario+"__kstat-zfs-*.txt") {
		writeKstat(t, dir, f)
	}
}

// writeKstat writes a captured kstat at the path its command read, in
// one rename so that a scrape never reads half of it.
func writeKstat(t *testing.T, dir string, f sample.File) {
	t.Helper()
	rel, ok := strings.CutPrefix(f.Header["command"], "cat /proc/spl/kstat/zfs/")
	if !ok {
		t.Fatalf("%s: command %q reads no kstat", f.Path, f.Header["command"])
	}
	path := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", f.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

// apiClient gives up on a server that hangs rather than the test.
var apiClient = &http.Client{Timeout: 30 * time.Second}

// server is Prometheus or Alertmanager, run by the test.
type server struct {
	addr string // host:port
	url  string
}

// startServer runs bin, waits until its /-/ready answers 200, and stops it
// at the test's cleanup, showing its log when the test failed.
func startServer(t *testing.T, name, bin, addr string, args ...string) *server {
	t.Helper()
	s := &server{addr: addr, url: "http://" + addr}
	e2e.StartServer(t, name, exec.Command(bin, args...), s.url)
	return s
}

func startAlertmanager(t *testing.T, bin, webhookURL string) *server {
	t.Helper()
	dir := t.TempDir()
	// Every alert is a group of its own, sent at once and again when it
	// resolves.
	config := fmt.Sprintf(`route:
  receiver: test
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: test
    webhook_configs:
      - url: %q
        send_resolved: true
`, webhookURL)
	path := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := e2e.FreeAddress(t)
	return startServer(t, "alertmanager", bin, addr,
		"--config.file="+path,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=",
	)
}

// forDuration is the "for:" of each alert in the rule files.
var forDuration = regexp.MustCompile(`(?m)^(\s+for: )\S+$`)

func startPrometheus(t *testing.T, bin, alertmanager string, targets ...*e2e.Exporter) *prom {
	t.Helper()
	dir := t.TempDir()
	var ruleFiles []string
	for _, name := range []string{"zfs-alerts.yaml", "zfs-rules.yaml"} {
		data, err := os.ReadFile(filepath.Join(mixinDir, "rules", name))
		if err != nil {
			t.Fatal(err)
		}
		// The alerts wait 1 to 5 minutes (35 days for a pool never
		// scrubbed) before they fire; here they wait 2 seconds, so the
		// test does not take minutes. Nothing else in the rules changes.
		if name == "zfs-alerts.yaml" {
			if !forDuration.Match(data) {
				t.Fatalf("%s: no for: durations to shorten; has the file's layout changed?", name)
			}
			data = forDuration.ReplaceAll(data, []byte("${1}2s"))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ruleFiles = append(ruleFiles, path)
	}
	var addrs []string
	for _, e := range targets {
		addrs = append(addrs, fmt.Sprintf("%q", strings.TrimPrefix(e.URL, "http://")))
	}
	// The job is "zfs", the selector of the mixin. A scrape may take no
	// longer than the interval.
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q, %q]
alerting:
  alertmanagers:
    - static_configs:
        - targets: [%q]
scrape_configs:
  - job_name: zfs
    static_configs:
      - targets: [%s]
`, ruleFiles[0], ruleFiles[1], alertmanager, strings.Join(addrs, ", "))
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := e2e.FreeAddress(t)
	s := startServer(t, "prometheus", bin, addr,
		"--config.file="+path,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
	)
	return &prom{url: s.url}
}

// prom talks to Prometheus's HTTP API.
type prom struct{ url string }

type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

type promRule struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Query     string `json:"query"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
}

type promRuleGroup struct {
	Name  string     `json:"name"`
	File  string     `json:"file"`
	Rules []promRule `json:"rules"`
}

type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

// get calls an API endpoint and decodes its data into v.
func (p *prom) get(path string, params url.Values, v any) error {
	resp, err := apiClient.Get(p.url + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body struct {
		Status    string          `json:"status"`
		Data      json.RawMessage `json:"data"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return fmt.Errorf("%s: %s: %v", path, resp.Status, err)
	}
	if body.Status != "success" {
		return fmt.Errorf("%s: %s: %s", body.ErrorType, resp.Status, body.Error)
	}
	return json.Unmarshal(body.Data, v)
}

type queryWindow struct {
	start, end time.Time
	step       time.Duration
}

// queryRange evaluates expr over the window, as a Grafana panel does.
func (p *prom) queryRange(expr string, w queryWindow) ([]promSeries, error) {
	var data struct {
		Result []promSeries `json:"result"`
	}
	err := p.get("/api/v1/query_range", url.Values{
		"query": {expr},
		"start": {fmt.Sprint(w.start.Unix())},
		"end":   {fmt.Sprint(w.end.Unix())},
		"step":  {w.step.String()},
	}, &data)
	return data.Result, err
}

// query evaluates expr now and returns how many series it gave.
func (p *prom) query(expr string) (int, error) {
	var data struct {
		ResultType string            `json:"resultType"`
		Result     []json.RawMessage `json:"result"`
	}
	if err := p.get("/api/v1/query", url.Values{"query": {expr}}, &data); err != nil {
		return 0, err
	}
	if data.ResultType != "vector" {
		return 0, fmt.Errorf("%s: result type %s, want vector", expr, data.ResultType)
	}
	return len(data.Result), nil
}

// waitSeries polls until expr gives a series, and fails the test when
// timeout passes first.
func (p *prom) waitSeries(t *testing.T, timeout time.Duration, what, expr string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		n, err := p.query(expr)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still not %s: no series for %s", timeout, what, expr)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// logScrapes logs how each target's scrapes went over the window: with a
// 1s interval, a scrape has 1s. names are the targets by host:port.
func (p *prom) logScrapes(t *testing.T, w queryWindow, names map[string]string) {
	t.Helper()
	rng := fmt.Sprintf("[%ds]", int(w.end.Sub(w.start).Seconds()))
	stats := map[string]string{
		"scrapes": `count_over_time(up{job="zfs"}` + rng + `)`,
		"failed":  `count_over_time(up{job="zfs"}` + rng + `) - sum_over_time(up{job="zfs"}` + rng + `)`,
		"slowest": `max_over_time(scrape_duration_seconds{job="zfs"}` + rng + `)`,
	}
	got := map[string]map[string]string{}
	for stat, expr := range stats {
		var data struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		}
		if err := p.get("/api/v1/query", url.Values{"query": {expr}, "time": {fmt.Sprint(w.end.Unix())}}, &data); err != nil {
			t.Errorf("scrape statistics: %v", err)
			return
		}
		for _, r := range data.Result {
			inst := r.Metric["instance"]
			if got[inst] == nil {
				got[inst] = map[string]string{}
			}
			got[inst][stat] = fmt.Sprint(r.Value[1])
		}
	}
	insts := make([]string, 0, len(names))
	for inst := range names {
		insts = append(insts, inst)
	}
	sort.Slice(insts, func(i, j int) bool { return names[insts[i]] < names[insts[j]] })
	for _, inst := range insts {
		g := got[inst]
		t.Logf("%s (%s): %s scrapes, %s failed, slowest %ss", names[inst], inst, g["scrapes"], g["failed"], g["slowest"])
	}
}

func (p *prom) alerts(t *testing.T) []promAlert {
	t.Helper()
	var data struct {
		Alerts []promAlert `json:"alerts"`
	}
	if err := p.get("/api/v1/alerts", nil, &data); err != nil {
		t.Fatal(err)
	}
	return data.Alerts
}

// webhookAlert is one alert of Alertmanager's webhook message (version 4).
type webhookAlert struct {
	Status      string            `json:"status"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// webhook is the receiver Alertmanager notifies.
type webhook struct {
	url string

	mu     sync.Mutex
	alerts []webhookAlert
	posts  int
}

func newWebhook(t *testing.T) *webhook {
	h := &webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			Version string         `json:"version"`
			Status  string         `json:"status"`
			Alerts  []webhookAlert `json:"alerts"`
		}
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			t.Errorf("webhook: undecodable message: %v", err)
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if msg.Version != "4" {
			t.Errorf("webhook: message version %q, want 4", msg.Version)
		}
		h.mu.Lock()
		h.alerts = append(h.alerts, msg.Alerts...)
		h.posts++
		h.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	h.url = srv.URL + "/alerts"
	return h
}

// wait returns the first alert received that matches, and fails the test
// when none arrives within timeout.
func (h *webhook) wait(t *testing.T, timeout time.Duration, what string, match func(webhookAlert) bool) webhookAlert {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		h.mu.Lock()
		for _, a := range h.alerts {
			if match(a) {
				h.mu.Unlock()
				return a
			}
		}
		posts, n := h.posts, len(h.alerts)
		h.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("after %s the webhook has not received %s (%d messages, %d alerts)", timeout, what, posts, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkAnnotations checks that an alert has a summary that names each of
// names, a description and a runbook link.
func checkAnnotations(t *testing.T, a webhookAlert, names ...string) {
	t.Helper()
	summary := a.Annotations["summary"]
	for _, name := range names {
		if !strings.Contains(summary, name) {
			t.Errorf("%s summary %q does not name %s", a.Labels["alertname"], summary, name)
		}
	}
	if a.Annotations["description"] == "" {
		t.Errorf("%s has no description: %v", a.Labels["alertname"], a.Annotations)
	}
	if u, err := url.Parse(a.Annotations["runbook_url"]); err != nil || u.Scheme != "https" || u.Fragment == "" {
		t.Errorf("%s runbook_url %q is not a link to a runbook section", a.Labels["alertname"], a.Annotations["runbook_url"])
	}
}

// Grafana's dashboard JSON, as much of it as holds queries.
type grafanaDashboard struct {
	Title      string         `json:"title"`
	Panels     []grafanaPanel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name       string `json:"name"`
			Expr       string `json:"expr"`
			Datasource struct {
				Type string `json:"type"`
			} `json:"datasource"`
			Target struct {
				Type string `json:"type"`
			} `json:"target"`
		} `json:"list"`
	} `json:"annotations"`
}

type grafanaPanel struct {
	Title   string `json:"title"`
	Type    string `json:"type"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
	Panels []grafanaPanel `json:"panels"` // a collapsed row's
}

// dashboardQuery is one query of a dashboard: a panel's target or an
// annotation.
type dashboardQuery struct {
	file, what, expr string
}

func (q dashboardQuery) String() string { return q.file + ": " + q.what }

// noSeries are the dashboard queries that no source of this test can
// feed, each with why. A listed query that does give series fails the
// test, so that the list cannot outlive its reason.
var noSeries = []struct {
	metrics []string // or, where a metric has other queries that do give series,
	pattern string   // a regular expression of the query
	why     string
}{
	{
		metrics: []string{"zfs_disk_service_time_seconds", "zfs_disk_read_service_time_seconds", "zfs_disk_write_service_time_seconds"},
		why:     "FreeBSD's iostat -x: a Linux build reads /proc/diskstats and runs no other OS's iostat sampler",
	},
	{
		metrics: []string{"zfs_disk_wait_service_time_seconds", "zfs_disk_active_service_time_seconds", "zfs_disk_wait_queue_length", "zfs_disk_active_queue_length", "zfs_disk_wait_busy_ratio"},
		why:     "illumos and Solaris iostat -xn: a Linux build reads /proc/diskstats and runs no other OS's iostat sampler",
	},
	{
		metrics: []string{"zfs_dataset_logical_used_bytes", "zfs_dataset_logical_referenced_bytes"},
		why:     "zfs-fuse's zfs knows no logicalused or logicalreferenced; the OpenZFS walk's datasets scenario exports them",
	},
	{
		metrics: []string{"zfs_pool_events_total", "zfs_vdev_events_total", "zfs_events_dropped_total"},
		why:     "zfs-fuse has no zpool events, and these replays hold no capture of them; cmd/zpool_exporter's TestReplayCarriesEvents and the OpenZFS walk export them",
	},
	{
		pattern: `zfs_l2arc_hits_total.*/.*zfs_l2arc_misses_total`,
		why:     "zfs-fuse has no L2ARC, and the replayed OpenZFS kstats count no L2ARC hit or miss (l2_hits and l2_misses are 0 in all three): a hit ratio of nothing is no series",
	},
}

// allowedEmpty returns why expr may give no series, or "".
func allowedEmpty(expr string) string {
	for _, n := range noSeries {
		if n.pattern != "" && regexp.MustCompile(n.pattern).MatchString(expr) {
			return n.why
		}
		for _, m := range n.metrics {
			if regexp.MustCompile(`\b` + m + `\b`).MatchString(expr) {
				return n.why
			}
		}
	}
	return ""
}

// variable is a Grafana variable in a query: $name or ${name}.
var variable = regexp.MustCompile(`\$(?:([A-Za-z_]\w*)|\{([A-Za-z_]\w*)\})`)

// expandVariables gives Grafana's variables the values that select
// everything, and intervals for the window's step over Prometheus's 1s
// scrapes.
func expandVariables(expr string, w queryWindow) (string, error) {
	values := map[string]string{
		"job":             ".*",
		"instance":        ".*",
		"pool":            ".*",
		"dataset":         ".*",
		"datasource":      "prometheus",
		"__interval":      w.step.String(),
		"__rate_interval": "15s",
		"__range":         fmt.Sprintf("%ds", int(w.end.Sub(w.start).Seconds())),
	}
	var unknown []string
	out := variable.ReplaceAllStringFunc(expr, func(v string) string {
		m := variable.FindStringSubmatch(v)
		name := m[1] + m[2]
		val, ok := values[name]
		if !ok {
			unknown = append(unknown, v)
			return v
		}
		return val
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("variables %v have no value in this test", unknown)
	}
	return out, nil
}

// dashboardQueries reads every query of the mixin's dashboards: the
// targets of every panel, also inside rows, and the annotations.
func dashboardQueries(t *testing.T) (queries []dashboardQuery, variables map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(mixinDir, "dashboards", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("found %d dashboards in %s, want 5", len(files), mixinDir)
	}
	variables = map[string]string{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var d grafanaDashboard
		if err := json.Unmarshal(data, &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		file := filepath.Base(path)
		before := len(queries)
		var walk func(panels []grafanaPanel)
		walk = func(panels []grafanaPanel) {
			for _, p := range panels {
				for _, tg := range p.Targets {
					if tg.Expr == "" {
						t.Errorf("%s: panel %q target %s has no expr", file, p.Title, tg.RefID)
						continue
					}
					queries = append(queries, dashboardQuery{file, fmt.Sprintf("panel %q target %s", p.Title, tg.RefID), tg.Expr})
				}
				walk(p.Panels)
			}
		}
		walk(d.Panels)
		if len(queries) == before {
			t.Errorf("%s: no panel queries found", file)
		}
		for _, a := range d.Annotations.List {
			// A tag query of Grafana's own annotations (zpool_bench's
			// regions) is Grafana's to answer; every other annotation is
			// a Prometheus query.
			if a.Datasource.Type == "grafana" && a.Target.Type == "tags" {
				continue
			}
			if a.Expr == "" {
				t.Errorf("%s: annotation %q has no expr", file, a.Name)
				continue
			}
			queries = append(queries, dashboardQuery{file, fmt.Sprintf("annotation %q", a.Name), a.Expr})
		}
		for _, v := range d.Templating.List {
			if v.Type != "query" {
				continue
			}
			var q string
			if err := json.Unmarshal(v.Query, &q); err != nil {
				var obj struct {
					Query string `json:"query"`
				}
				if err := json.Unmarshal(v.Query, &obj); err != nil {
					t.Fatalf("%s: variable %s: query %s: %v", file, v.Name, v.Query, err)
				}
				q = obj.Query
			}
			variables[file+": variable "+v.Name] = q
		}
	}
	return queries, variables
}

// labelValues is Grafana's label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*(\w+)\)$`)

// checkDashboards evaluates every dashboard query over the window: each
// must give at least one series, and each variable at least one value.
func checkDashboards(t *testing.T, p *prom, w queryWindow) {
	t.Helper()
	queries, variables := dashboardQueries(t)
	empty := 0
	for _, q := range queries {
		expr, err := expandVariables(q.expr, w)
		if err != nil {
			t.Errorf("%s: %v: %s", q, err, q.expr)
			continue
		}
		series, err := p.queryRange(expr, w)
		if err != nil {
			t.Errorf("%s: %v: %s", q, err, expr)
			continue
		}
		why := allowedEmpty(q.expr)
		switch {
		case len(series) == 0 && why == "":
			t.Errorf("%s gives no series: %s", q, expr)
		case len(series) > 0 && why != "":
			t.Errorf("%s gives %d series, but is listed as giving none (%s): %s", q, len(series), why, expr)
		case len(series) == 0:
			empty++
		}
	}
	t.Logf("%d dashboard queries evaluated, %d without series as listed", len(queries), empty)

	names := make([]string, 0, len(variables))
	for name := range variables {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m := labelValues.FindStringSubmatch(variables[name])
		if m == nil {
			t.Errorf("%s: query %q is not label_values(selector, label)", name, variables[name])
			continue
		}
		selector, err := expandVariables(m[1], w)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var values []string
		err = p.get("/api/v1/label/"+m[2]+"/values", url.Values{
			"match[]": {selector},
			"start":   {fmt.Sprint(w.start.Unix())},
			"end":     {fmt.Sprint(w.end.Unix())},
		}, &values)
		if err != nil {
			t.Errorf("%s: %v", name, err)
		} else if len(values) == 0 {
			t.Errorf("%s: no values for %s", name, variables[name])
		}
	}
}

// checkRecordingRules checks that Prometheus loaded every rule of the
// mixin, evaluates each without error, and that every recorded series
// exists over the window.
func checkRecordingRules(t *testing.T, p *prom, w queryWindow) {
	t.Helper()
	var groups []promRuleGroup
	deadline := time.Now().Add(30 * time.Second)
	for {
		var data struct {
			Groups []promRuleGroup `json:"groups"`
		}
		if err := p.get("/api/v1/rules", nil, &data); err != nil {
			t.Fatal(err)
		}
		groups = data.Groups
		unknown := 0
		for _, g := range groups {
			for _, r := range g.Rules {
				if r.Health == "unknown" {
					unknown++
				}
			}
		}
		if unknown == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	want := map[string]int{}
	for _, name := range []string{"zfs-alerts.yaml", "zfs-rules.yaml"} {
		data, err := os.ReadFile(filepath.Join(mixinDir, "rules", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`(?m)^\s+- (?:alert|record): (\S+)$`).FindAllSubmatch(data, -1) {
			want[string(m[1])]++
		}
	}
	got := map[string]int{}
	records := 0
	for _, g := range groups {
		for _, r := range g.Rules {
			got[r.Name]++
			if r.Health != "ok" || r.LastError != "" {
				t.Errorf("rule group %s: %s %s: health %q, last error %q", g.Name, r.Type, r.Name, r.Health, r.LastError)
			}
			if r.Type != "recording" {
				continue
			}
			records++
			series, err := p.queryRange(r.Name, w)
			if err != nil {
				t.Errorf("record %s: %v", r.Name, err)
			} else if len(series) == 0 {
				t.Errorf("record %s gives no series; its expr:\n%s", r.Name, r.Query)
			}
		}
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("rule %s: Prometheus has %d, the rule files %d", name, got[name], n)
		}
	}
	if records == 0 {
		t.Errorf("Prometheus has no recording rules")
	}
	t.Logf("%d rules loaded, %d recording rules queried", len(got), records)
}
