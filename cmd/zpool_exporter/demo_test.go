package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// demoDir is the replay that --demo serves from the binary, recorded from
// a real zfs-fuse pool by deploy/demo/capture.sh: tank (raidz1 of disk1,
// disk2, disk3) healthy under writes; disk2 loses its data and a scrub
// finds it unusable; disk4 replaces it, with the resilver taken at several
// points; tank online again.
const demoDir = "../../internal/demo/replay"

const (
	demoPool   = "tank"
	demoFailed = "/var/tmp/zfs-demo/disk2"
	demoNew    = "/var/tmp/zfs-demo/disk4"
)

// demoSteps returns the step directories in order.
func demoSteps(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(demoDir)
	if err != nil {
		t.Fatal(err)
	}
	step := regexp.MustCompile(`^\d{3}$`)
	var steps []string
	for _, e := range entries {
		switch {
		case e.IsDir() && step.MatchString(e.Name()):
			steps = append(steps, filepath.Join(demoDir, e.Name()))
		case !e.IsDir():
			// Each step holds every capture, so that a step directory
			// replays on its own.
			t.Errorf("%s holds %s: captures belong in the steps", demoDir, e.Name())
		}
	}
	if len(steps) < 6 {
		t.Fatalf("%s has %d steps, want at least 6 (healthy, degraded, three resilvering, resilvered)", demoDir, len(steps))
	}
	return steps
}

// demoOnce is one exposition of a step, from --once over its directory.
func demoOnce(t *testing.T, dir string) e2e.Metrics {
	t.Helper()
	out, errOut, code := runBinary(t, "--once", "--zpool.replay-dir="+dir)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", dir, code, errOut)
	}
	return e2e.Parse(t, out)
}

type demoPhase int

const (
	demoHealthy demoPhase = iota
	demoDegraded
	demoResilvering
	demoResilvered
)

func (p demoPhase) String() string {
	return [...]string{"healthy", "degraded", "resilvering", "resilvered"}[p]
}

// The demo tells its story in the metrics, in order: healthy, degraded with
// disk2 out, a resilver onto disk4 moving on step by step, healthy again.
func TestDemoReplayStory(t *testing.T) {
	steps := demoSteps(t)
	pool := map[string]string{"pool": demoPool}
	resilver := map[string]string{"pool": demoPool, "function": "resilver"}
	var phases []demoPhase
	var progress, resilvered []float64
	for i, dir := range steps {
		m := demoOnce(t, dir)
		name := filepath.Base(dir)
		for _, c := range []string{"status", "properties"} {
			if !stateIs(m, "zfs_exporter_collector_success", map[string]string{"collector": c}) {
				t.Errorf("step %s: collector %s failed", name, c)
			}
		}
		online := stateIs(m, "zfs_pool_state", map[string]string{"pool": demoPool, "state": "online"})
		degraded := stateIs(m, "zfs_pool_state", map[string]string{"pool": demoPool, "state": "degraded"})
		scanning := stateIs(m, "zfs_scan_state", withLabel(resilver, "state", "scanning"))
		finished := stateIs(m, "zfs_scan_state", withLabel(resilver, "state", "finished"))
		_, failedPresent := m.Get("zfs_vdev_state", map[string]string{"pool": demoPool, "vdev": demoFailed})
		failedOnline := stateIs(m, "zfs_vdev_state", map[string]string{"pool": demoPool, "vdev": demoFailed, "state": "online"})
		var phase demoPhase
		switch {
		case online && !finished && failedOnline:
			phase = demoHealthy
			if !allLeavesOnline(m) {
				t.Errorf("step %s: tank online but a leaf is not", name)
			}
		case degraded && !scanning && failedPresent && !failedOnline:
			phase = demoDegraded
		case degraded && scanning:
			phase = demoResilvering
			p, ok := m.Get("zfs_scan_progress_ratio", resilver)
			r, rok := m.Get("zfs_vdev_resilvered_bytes", map[string]string{"pool": demoPool, "vdev": demoNew})
			if !ok || !rok || p <= 0 || p >= 1 {
				t.Errorf("step %s: resilver progress %v (present %v), %s resilvered %v (present %v)", name, p, ok, demoNew, r, rok)
			}
			progress, resilvered = append(progress, p), append(resilvered, r)
			if !stateIs(m, "zfs_vdev_info", map[string]string{"pool": demoPool, "vdev_type": "replacing", "parent": "raidz1-0"}) {
				t.Errorf("step %s: no replacing vdev under raidz1-0 while resilvering", name)
			}
			if failedOnline {
				t.Errorf("step %s: %s online while it is being replaced", name, demoFailed)
			}
		case online && finished && !failedPresent:
			phase = demoResilvered
			if !allLeavesOnline(m) || !stateIs(m, "zfs_vdev_state", map[string]string{"pool": demoPool, "vdev": demoNew, "state": "online"}) {
				t.Errorf("step %s: resilvered, but a leaf (or %s) is not online", name, demoNew)
			}
			start, sok := m.Get("zfs_scan_start_time_seconds", resilver)
			end, eok := m.Get("zfs_scan_end_time_seconds", resilver)
			if !eok || (sok && end < start) {
				t.Errorf("step %s: resilver start %v (present %v), end %v (present %v)", name, start, sok, end, eok)
			}
		default:
			t.Fatalf("step %s fits no phase of the story: pool online %v degraded %v, resilver scanning %v finished %v, %s present %v online %v",
				name, online, degraded, scanning, finished, demoFailed, failedPresent, failedOnline)
		}
		if i > 0 && phase < phases[i-1] {
			t.Errorf("step %s is %s after a %s step", name, phase, phases[i-1])
		}
		phases = append(phases, phase)
		if _, ok := m.Get("zfs_pool_size_bytes", pool); !ok {
			t.Errorf("step %s: no pool size", name)
		}
	}
	count := map[demoPhase]int{}
	for _, p := range phases {
		count[p]++
	}
	if phases[0] != demoHealthy || phases[len(phases)-1] != demoResilvered || count[demoDegraded] == 0 || count[demoResilvering] < 3 {
		t.Errorf("phases %v: want healthy first, then degraded, at least three resilvering, resilvered last", phases)
	}
	for i := 1; i < len(progress); i++ {
		if progress[i] <= progress[i-1] || resilvered[i] <= resilvered[i-1] {
			t.Errorf("resilver step %d: progress %v after %v, %s resilvered %v after %v; want both to grow",
				i, progress[i], progress[i-1], demoNew, resilvered[i], resilvered[i-1])
		}
	}
	t.Logf("phases %v; resilver progress %v", phases, progress)
}

func withLabel(labels map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for lk, lv := range labels {
		out[lk] = lv
	}
	return out
}

// allLeavesOnline tells whether every file vdev of tank is online.
func allLeavesOnline(m e2e.Metrics) bool {
	n := 0
	for _, info := range m.Series("zfs_vdev_info", map[string]string{"pool": demoPool, "vdev_type": "file"}) {
		n++
		if !stateIs(m, "zfs_vdev_state", map[string]string{"pool": demoPool, "vdev": e2e.Label(info, "vdev"), "state": "online"}) {
			return false
		}
	}
	return n == 3
}

// The exporter integrates each step's zpool iostat stream into per-vdev
// counters: they climb on every disk while tank is written to, and on the
// new disk while the resilver writes to it.
func TestDemoReplayWriteCounters(t *testing.T) {
	steps := demoSteps(t)
	for _, tc := range []struct {
		step  string
		vdevs []string
	}{
		{steps[0], []string{"/var/tmp/zfs-demo/disk1", demoFailed, "/var/tmp/zfs-demo/disk3"}},
		{steps[len(steps)/2], []string{demoNew}},
	} {
		t.Run(filepath.Base(tc.step), func(t *testing.T) {
			state, _ := os.ReadFile(filepath.Join(tc.step, "STATE"))
			t.Logf("step: %s", strings.TrimSpace(string(state)))
			e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+tc.step, "--zpool.iostat-interval=1s")
			written := func(m e2e.Metrics) []float64 {
				var out []float64
				for _, v := range tc.vdevs {
					w, ok := m.Get("zfs_vdev_write_bytes_total", map[string]string{"pool": demoPool, "vdev": v})
					if !ok {
						return nil
					}
					out = append(out, w)
				}
				return out
			}
			var first []float64
			e.WaitFor(t, 30*time.Second, fmt.Sprintf("write counters of %v above 0", tc.vdevs), func(m e2e.Metrics) bool {
				first = written(m)
				for _, w := range first {
					if w <= 0 {
						return false
					}
				}
				return first != nil
			})
			e.WaitFor(t, 30*time.Second, fmt.Sprintf("write counters of %v growing from %v", tc.vdevs, first), func(m e2e.Metrics) bool {
				now := written(m)
				for i, w := range now {
					if w <= first[i] {
						return false
					}
				}
				return now != nil
			})
		})
	}
}

// --demo serves the replay built into the binary, with no file of the
// checkout: tank and its vdevs in /metrics and on the status page, and
// nothing of this host's disks and CPU. It says once that it is a demo,
// and has nothing to warn of.
func TestDemoFlag(t *testing.T) {
	e := e2e.Start(t, exporterBin, nil, "--demo", "--web.disable-exporter-metrics")
	m := e.WaitFor(t, 30*time.Second, "vdev write counters of tank", func(m e2e.Metrics) bool {
		_, ok := m.Get("zfs_vdev_write_bytes_total", map[string]string{"pool": demoPool, "vdev": "raidz1-0"})
		return ok
	})
	if !stateIs(m, "zfs_pool_state", map[string]string{"pool": demoPool, "state": "online"}) {
		t.Errorf("tank is not online at the first step:\n%s", e.ScrapeText(t))
	}
	for _, vdev := range []string{"raidz1-0", "/var/tmp/zfs-demo/disk1", demoFailed, "/var/tmp/zfs-demo/disk3"} {
		if len(m.Series("zfs_vdev_info", map[string]string{"pool": demoPool, "vdev": vdev})) != 1 {
			t.Errorf("no zfs_vdev_info of %s", vdev)
		}
	}
	for _, c := range []string{"status", "properties", "vdev_io"} {
		if !stateIs(m, "zfs_exporter_collector_success", map[string]string{"collector": c}) {
			t.Errorf("collector %s failed", c)
		}
	}
	for _, host := range []string{"zfs_disk_read_bytes_total", "zfs_host_cpu_seconds_total", "zfs_engine_cpu_seconds_total"} {
		if _, ok := m[host]; ok {
			t.Errorf("the demo exports %s, read from this host", host)
		}
	}

	resp, err := http.Get(e.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /: %s, %v", resp.Status, err)
	}
	for _, want := range []string{`data-pool="tank"`, "raidz1-0", "/var/tmp/zfs-demo/disk1"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the status page lacks %s:\n%s", want, page)
		}
	}

	log, _, _ := strings.Cut(e.Quit(t), "SIGQUIT")
	if n := strings.Count(log, "msg=\"demo: "); n != 1 {
		t.Errorf("the log says %d times that this is the demo, want once:\n%s", n, log)
	}
	for _, level := range []string{"level=WARN", "level=ERROR"} {
		if strings.Contains(log, level) {
			t.Errorf("the demo's log holds %s:\n%s", level, log)
		}
	}
}

// --demo names no replay of its own and reads nothing of the host: given
// another source, it refuses to start, saying which flag is in the way.
func TestDemoRefusesAnotherSource(t *testing.T) {
	for _, flag := range []string{"--zpool.replay-dir=" + demoDir, "--zpool.command=/usr/sbin/zpool", "--zfs.command=/usr/sbin/zfs", "--kstat.path=/proc/spl/kstat/zfs"} {
		_, errOut, code := runBinary(t, "--once", "--demo", flag)
		name, _, _ := strings.Cut(flag, "=")
		if code != 2 || !strings.Contains(errOut, name) || !strings.Contains(errOut, "--demo") {
			t.Errorf("--demo %s: exit %d, stderr %q; want exit 2 naming both flags", flag, code, errOut)
		}
	}
}

// Served as docker compose serves it, --demo with a shorter step, the
// replay moves from the healthy pool through the failure to the finished
// resilver.
func TestDemoReplayMovesThroughSteps(t *testing.T) {
	demoSteps(t)
	e := e2e.Start(t, exporterBin, nil, "--demo", "--zpool.replay-step=1s")
	e.WaitFor(t, 60*time.Second, "tank degraded with disk2 unavailable", func(m e2e.Metrics) bool {
		return stateIs(m, "zfs_pool_state", map[string]string{"pool": demoPool, "state": "degraded"}) &&
			!stateIs(m, "zfs_vdev_state", map[string]string{"pool": demoPool, "vdev": demoFailed, "state": "online"})
	})
	e.WaitFor(t, 60*time.Second, "a resilver in progress", func(m e2e.Metrics) bool {
		return stateIs(m, "zfs_scan_state", map[string]string{"pool": demoPool, "function": "resilver", "state": "scanning"})
	})
	e.WaitFor(t, 60*time.Second, "tank online with the resilver finished", func(m e2e.Metrics) bool {
		return stateIs(m, "zfs_pool_state", map[string]string{"pool": demoPool, "state": "online"}) &&
			stateIs(m, "zfs_scan_state", map[string]string{"pool": demoPool, "function": "resilver", "state": "finished"})
	})
}
