//go:build openzfsguest

package walk

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	zpoolparse "github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// textExporter is an exporter over a zpool that refuses -j, which makes
// it read the text status: beside the walk's own (JSON from 2.3 on), it
// shows that both forms give the same series.
func textExporter(t *testing.T) *e2e.Exporter {
	t.Helper()
	wrapper := filepath.Join(t.TempDir(), "zpool-nojson")
	script := "#!/bin/sh\nfor a; do [ \"$a\" = -j ] && { echo \"invalid option 'j'\" >&2; exit 2; }; done\nexec zpool \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	x := e2e.Start(t, *exporterBin, nil, "--zpool.command="+wrapper, "--zpool.iostat-interval=0", "--scrape.timeout=20s")
	if !is(x.Scrape(t), "zfs_exporter_capabilities_info", map[string]string{"status_format": "exact"}) {
		t.Fatalf("the exporter over %s did not fall back to the text status", wrapper)
	}
	return x
}

// opsFiles makes n sparse files of 512 MiB for the pools of the long
// operations: the data disks are the other scenarios'. OpenZFS 2.1 keeps
// at least 128 MiB aside (slop) and refuses a removal from smaller files
// for want of space.
func opsFiles(t *testing.T, n int) []string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "ops")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("f%02d", i+1))
		sparseFile(t, path, 512<<20)
		files = append(files, path)
	}
	return files
}

// longOpSeries are the figures of a long operation that do not move with
// the clock: text and JSON must give the same.
var longOpSeries = []string{"zfs_scan_state", "zfs_scan_issued_bytes", "zfs_scan_total_bytes", "zfs_scan_start_time_seconds", "zfs_scan_end_time_seconds"}

// agreeOn compares the series of names that carry the labels of match, as
// the JSON exporter and the text one give them; no text exporter: JSON
// alone (before 2.3). The text prints the sizes of expansions, removals
// and checkpoints in three digits ("62.9M") even with -p: a byte figure
// agrees within the 1 % those keep.
func agreeOn(t *testing.T, jm, tm e2e.Metrics, names []string, match map[string]string) {
	t.Helper()
	if tm == nil {
		return
	}
	keep := func(m e2e.Metrics) map[string]float64 {
		out := map[string]float64{}
		for k, v := range flatten(m, names, nil) {
			ok := true
			for l, want := range match {
				ok = ok && strings.Contains(k, fmt.Sprintf("%s=%q", l, want))
			}
			if ok {
				out[k] = v
			}
		}
		return out
	}
	j, x := keep(jm), keep(tm)
	if len(j) == 0 {
		t.Errorf("no series of %v with %v to compare", names, match)
	}
	for k, v := range j {
		w, ok := x[k]
		switch {
		case !ok:
			t.Errorf("%s = %v from JSON, missing from the text", k, v)
		case strings.Contains(k, "_bytes{") && math.Abs(w-v) <= 0.01*math.Abs(v):
		case w != v:
			t.Errorf("%s = %v from JSON, %v from the text", k, v, w)
		}
	}
	for k, v := range x {
		if _, ok := j[k]; !ok {
			t.Errorf("%s = %v from the text, missing from JSON", k, v)
		}
	}
}

// longOperations runs what zpool status reports beside scans, each held
// in progress by a tunable so that /metrics shows it running, then let go
// to its end: a raidz expansion (2.3 on), the removal of a top-level
// mirror, a checkpoint taken and discarded, and a TRIM and an
// initialization of the leaves. From 2.3 on the JSON status and the text
// give the same series.
func longOperations(t *testing.T, e *e2e.Exporter, mnt, version string) {
	var text *e2e.Exporter
	if atLeast(version, 2, 3) {
		text = textExporter(t)
	}
	scrapeBoth := func() (e2e.Metrics, e2e.Metrics) {
		jm := e.Scrape(t)
		if text == nil {
			return jm, nil
		}
		return jm, text.Scrape(t)
	}
	files := opsFiles(t, 8)
	create := func(pool string, vdevs ...string) {
		zpool(t, append([]string{"create", "-f", "-m", filepath.Join(mnt, pool), pool}, vdevs...)...)
		writeRandom(t, filepath.Join(mnt, pool, "data"), 64)
		zpool(t, "sync", pool)
	}

	t.Run("raidz expansion", func(t *testing.T) {
		if !atLeast(version, 2, 3) {
			t.Skip("raidz expansion came with OpenZFS 2.3")
		}
		create("opx", "raidz1", files[0], files[1], files[2])
		defer zpool(t, "destroy", "-f", "opx")
		// The reflow pauses once it has copied this much, until the
		// tunable is set back to 0.
		setTunable(t, "raidz_expand_max_reflow_bytes", fmt.Sprint(16<<20))
		zpool(t, "attach", "opx", "raidz1-0", files[3])
		expand := map[string]string{"pool": "opx", "function": "expand", "vdev": "raidz1-0"}
		running := with(expand, "state", "scanning")
		m := e.WaitFor(t, 2*time.Minute, "opx: expansion of raidz1-0 running and copying", func(m e2e.Metrics) bool {
			issued, _ := m.Get("zfs_scan_issued_bytes", expand)
			return is(m, "zfs_scan_state", running) && issued > 0
		})
		capture(t, "13-expanding")
		if total, ok := m.Get("zfs_scan_total_bytes", expand); !ok || total <= 0 {
			t.Errorf("opx: expansion total %v (present %v)", total, ok)
		}
		if p, ok := m.Get("zfs_scan_progress_ratio", expand); !ok || p <= 0 || p >= 1 {
			t.Errorf("opx: expansion progress %v (present %v), want between 0 and 1 while paused", p, ok)
		}
		jm, tm := scrapeBoth()
		agreeOn(t, jm, tm, longOpSeries, expand)
		writeSysfs(t, "/sys/module/zfs/parameters/raidz_expand_max_reflow_bytes", "0")
		zpool(t, "wait", "-t", "raidz_expand", "opx")
		e.WaitFor(t, time.Minute, "opx: expansion finished", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", with(expand, "state", "finished"))
		})
		capture(t, "14-expanded")
		// Once done, the text prints what was copied, when it ended and
		// how long it took: no start, no total.
		jm, tm = scrapeBoth()
		agreeOn(t, jm, tm, []string{"zfs_scan_state", "zfs_scan_issued_bytes", "zfs_scan_end_time_seconds", "zfs_scan_duration_seconds"}, expand)
		if n := len(jm.Series("zfs_vdev_info", map[string]string{"pool": "opx", "parent": "raidz1-0"})); n != 4 {
			t.Errorf("opx: raidz1-0 has %d leaves after the expansion, want 4", n)
		}
	})

	t.Run("removal of a top-level mirror", func(t *testing.T) {
		create("opr", "mirror", files[4], files[5], "mirror", files[6], files[7])
		// The removal copies nothing while this is set: it stays in
		// progress, as a large one would.
		setTunable(t, "zfs_removal_suspend_progress", "1")
		zpool(t, "remove", "opr", "mirror-1")
		remove := map[string]string{"pool": "opr", "function": "remove"}
		e.WaitFor(t, 2*time.Minute, "opr: removal of mirror-1 in progress", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", with(remove, "state", "scanning"))
		})
		capture(t, "15-removing")
		jm, tm := scrapeBoth()
		agreeOn(t, jm, tm, []string{"zfs_scan_state", "zfs_scan_total_bytes", "zfs_scan_start_time_seconds"}, remove)
		writeSysfs(t, "/sys/module/zfs/parameters/zfs_removal_suspend_progress", "0")
		zpool(t, "wait", "-t", "remove", "opr")
		m := e.WaitFor(t, time.Minute, "opr: removal finished", func(m e2e.Metrics) bool {
			return is(m, "zfs_scan_state", with(remove, "state", "finished"))
		})
		capture(t, "16-removed")
		if copied, ok := m.Get("zfs_scan_issued_bytes", remove); !ok || copied <= 0 {
			t.Errorf("opr: the finished removal copied %v bytes (present %v)", copied, ok)
		}
		if _, ok := m.Get("zfs_pool_removal_mapping_memory_bytes", map[string]string{"pool": "opr"}); !ok {
			t.Errorf("opr: no zfs_pool_removal_mapping_memory_bytes after a removal")
		}
		if n := len(m.Series("zfs_vdev_info", map[string]string{"pool": "opr", "vdev": "mirror-1"})); n != 0 {
			t.Errorf("opr: mirror-1 still in zfs_vdev_info after its removal")
		}
		// zpool iostat lists the indirect vdev the removal left, which
		// status does not: the collectors that pair the two still work.
		e.WaitFor(t, 30*time.Second, "opr: I/O counters and latency of mirror-0 after the removal", func(m e2e.Metrics) bool {
			_, counted := m.Get("zfs_vdev_write_bytes_total", map[string]string{"pool": "opr", "vdev": "mirror-0"})
			return counted && is(m, "zfs_exporter_collector_success", map[string]string{"collector": "vdev_latency"}) &&
				is(m, "zfs_exporter_collector_success", map[string]string{"collector": "vdev_io"})
		})
		jm, tm = scrapeBoth()
		agreeOn(t, jm, tm, []string{"zfs_scan_state", "zfs_scan_issued_bytes", "zfs_scan_end_time_seconds"}, remove)
	})

	t.Run("checkpoint taken and discarded", func(t *testing.T) {
		zpool(t, "checkpoint", "opr")
		// Data freed after the checkpoint stays held by it.
		run(t, "rm", filepath.Join(mnt, "opr", "data"))
		zpool(t, "sync", "opr")
		pool := map[string]string{"pool": "opr"}
		m := e.WaitFor(t, time.Minute, "opr: checkpoint holding space", func(m e2e.Metrics) bool {
			held, _ := m.Get("zfs_pool_checkpoint_bytes", pool)
			return held > 0
		})
		capture(t, "17-checkpoint")
		if created, ok := m.Get("zfs_pool_checkpoint_created_timestamp_seconds", pool); !ok || time.Since(time.Unix(int64(created), 0)) > 10*time.Minute {
			t.Errorf("opr: checkpoint created at %v (present %v), want within the last minutes", created, ok)
		}
		jm, tm := scrapeBoth()
		agreeOn(t, jm, tm, []string{"zfs_pool_checkpoint_bytes", "zfs_pool_checkpoint_created_timestamp_seconds"}, pool)
		zpool(t, "checkpoint", "-d", "-w", "opr")
		e.WaitFor(t, time.Minute, "opr: checkpoint gone", func(m e2e.Metrics) bool {
			_, ok := m.Get("zfs_pool_checkpoint_bytes", pool)
			return !ok
		})
	})

	// The exporter reads zpool status -t -i: /metrics shows each leaf's
	// TRIM and initialization while they run and once they end, JSON and
	// text alike.
	t.Run("trim and initialize", func(t *testing.T) {
		trimmed, initialized := files[4], files[5]
		opr := map[string]string{"pool": "opr"}
		leafOf := func(v string) map[string]string { return map[string]string{"pool": "opr", "vdev": v} }
		// The rate holds back every extent of a metaslab but its first,
		// so metaslabs of one free extent each would be trimmed within
		// seconds: extents of 128 KiB at 1 MiB/s keep the TRIM of 512 MiB
		// going for minutes.
		setTunable(t, "zfs_trim_extent_bytes_max", fmt.Sprint(128<<10))
		zpool(t, "trim", "-r", "1M", "opr", trimmed)
		zpool(t, "initialize", "opr", initialized)
		// 256 MiB may be written before the suspend comes: then the
		// initialization is complete.
		wantInit := zpoolparse.VdevOpSuspended
		if c := start(t, "zpool", "initialize", "-s", "opr", initialized); c.wait() != nil {
			wantInit = zpoolparse.VdevOpComplete
		}
		trimRunning := func(m e2e.Metrics) bool {
			return is(m, "zfs_vdev_trim_state", with(leafOf(trimmed), "state", zpoolparse.VdevOpActive)) ||
				!atLeast(version, 2, 3) && is(m, "zfs_vdev_trim_state", with(leafOf(trimmed), "state", zpoolparse.VdevOpComplete))
		}
		m := e.WaitFor(t, time.Minute, "opr: TRIM of one leaf running, initialization of the other "+wantInit, func(m e2e.Metrics) bool {
			return trimRunning(m) && is(m, "zfs_vdev_initialize_state", with(leafOf(initialized), "state", wantInit))
		})
		capture(t, "18-trim-initialize")
		for _, c := range []struct{ name, vdev string }{
			{"zfs_vdev_trim_progress_ratio", trimmed}, {"zfs_vdev_initialize_progress_ratio", initialized},
		} {
			if p, ok := m.Get(c.name, leafOf(c.vdev)); !ok || p < 0 || p > 1 {
				t.Errorf("%s{vdev=%q} = %v (present %v), want a share", c.name, c.vdev, p, ok)
			}
		}
		if started, ok := m.Get("zfs_vdev_trim_start_time_seconds", leafOf(trimmed)); (ok || atLeast(version, 2, 3)) && time.Since(time.Unix(int64(started), 0)) > 10*time.Minute {
			t.Errorf("opr: TRIM started at %v (present %v), want within the last minutes", started, ok)
		}
		for _, v := range []string{trimmed, initialized} {
			if n := len(m.Series("zfs_vdev_trim_state", leafOf(v))) + len(m.Series("zfs_vdev_initialize_state", leafOf(v))); n != 4 {
				t.Errorf("opr: %s has %d TRIM and initialization states, want the 4 of the one that ran", v, n)
			}
		}
		jm, tm := scrapeBoth()
		// Both exporters must have seen the TRIM running, or the
		// comparison missed the state the user watches.
		if atLeast(version, 2, 3) && !is(tm, "zfs_vdev_trim_state", with(leafOf(trimmed), "state", zpoolparse.VdevOpActive)) {
			t.Errorf("opr: the TRIM of %s had ended by the text exporter's scrape: the rate did not hold it", trimmed)
		}
		agreeOn(t, jm, tm, []string{"zfs_vdev_trim_state", "zfs_vdev_initialize_state", "zfs_vdev_initialize_start_time_seconds"}, opr)

		// The parser reads the per-pool forms too.
		captureCommand(t, "18-trim-initialize", "zpool", "status", "-t", "-i", "opr")
		text, err := zpoolparse.ParseStatus(strings.NewReader(zpool(t, "status", "-t", "-i", "opr")), time.Local)
		if err != nil {
			t.Fatalf("zpool status -t -i: %v", err)
		}
		ops := []*zpoolparse.Status{text}
		if atLeast(version, 2, 3) {
			captureCommand(t, "18-trim-initialize", "zpool", "status", "-j", "--json-int", "-t", "-i", "opr")
			js, err := zpoolparse.ParseStatusJSON(strings.NewReader(zpool(t, "status", "-j", "--json-int", "-t", "-i", "opr")))
			if err != nil {
				t.Fatalf("zpool status -j --json-int -t -i: %v", err)
			}
			ops = append(ops, js)
		}
		for i, st := range ops {
			form := []string{"text", "JSON"}[i]
			leaves := map[string]*zpoolparse.Vdev{}
			for _, p := range st.Pools {
				p.Root.Walk(func(v *zpoolparse.Vdev, _ string) { leaves[v.Name] = v })
			}
			if v := leaves[initialized]; v == nil || v.Initialize == nil || v.Initialize.State != wantInit {
				t.Errorf("%s: %s: initialization %+v, want %s", form, initialized, v, wantInit)
			}
			if v := leaves[files[6]]; v != nil {
				t.Errorf("%s: %s of the removed mirror still listed", form, files[6])
			}
		}

		// Ended: the slow TRIM canceled and one run to its end, the
		// initialization resumed to its end.
		_ = start(t, "zpool", "trim", "-c", "opr", trimmed).wait() // fails once complete
		zpool(t, "trim", "-w", "opr", trimmed)
		if wantInit == zpoolparse.VdevOpSuspended {
			zpool(t, "initialize", "-w", "opr", initialized)
		}
		m = e.WaitFor(t, time.Minute, "opr: TRIM and initialization complete", func(m e2e.Metrics) bool {
			return is(m, "zfs_vdev_trim_state", with(leafOf(trimmed), "state", zpoolparse.VdevOpComplete)) &&
				is(m, "zfs_vdev_initialize_state", with(leafOf(initialized), "state", zpoolparse.VdevOpComplete))
		})
		for _, c := range []struct{ name, vdev string }{
			{"zfs_vdev_trim_end_time_seconds", trimmed}, {"zfs_vdev_initialize_end_time_seconds", initialized},
		} {
			if end, ok := m.Get(c.name, leafOf(c.vdev)); !ok || time.Since(time.Unix(int64(end), 0)) > 10*time.Minute {
				t.Errorf("%s{vdev=%q} = %v (present %v), want within the last minutes", c.name, c.vdev, end, ok)
			}
		}
		jm, tm = scrapeBoth()
		agreeOn(t, jm, tm, []string{"zfs_vdev_trim_state", "zfs_vdev_initialize_state", "zfs_vdev_trim_end_time_seconds", "zfs_vdev_initialize_end_time_seconds"}, opr)
		zpool(t, "destroy", "-f", "opr")
	})

	// A pool imported read-only shows so in zfs_pool_info, which the
	// read-only alert reads; its exposition is kept for that alert's
	// test (testbed/openzfs checkReadOnly).
	t.Run("read-only import", func(t *testing.T) {
		create("opro", files[0])
		zpool(t, "export", "opro")
		zpool(t, "import", "-o", "readonly=on", "-d", filepath.Dir(files[0]), "opro")
		defer zpool(t, "export", "opro")
		e.WaitFor(t, time.Minute, "opro: read-only in zfs_pool_info", func(m e2e.Metrics) bool {
			return is(m, "zfs_pool_info", map[string]string{"pool": "opro", "readonly": "on"})
		})
		keepExposition(t, e, "read-only")
		if m := e.Scrape(t); !is(m, "zfs_pool_state", map[string]string{"pool": "opro", "state": "online"}) {
			t.Errorf("opro: not online once imported read-only")
		}
	})
}

// with is labels and one more.
func with(labels map[string]string, name, value string) map[string]string {
	out := map[string]string{name: value}
	for k, v := range labels {
		out[k] = v
	}
	return out
}
