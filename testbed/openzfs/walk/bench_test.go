//go:build openzfsguest

package walk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// benchMiB is what each benchmark run's dd writes.
const benchMiB = 200

const mib = 1 << 20

// benchResult is how a zpool_bench command ended.
type benchResult struct {
	stdout, stderr string
	status         int
}

// benchCommand runs zpool_bench with args and returns its output and exit
// status; one still running after stuckAfter fails the test.
func benchCommand(t *testing.T, args ...string) benchResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), stuckAfter)
	defer cancel()
	cmd := exec.CommandContext(ctx, *benchBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// The workload runs in a process group of its own: should it outlive
	// a killed runner, do not wait for it to close the pipes.
	cmd.WaitDelay = 10 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("zpool_bench %s: still running after %s\n%s", strings.Join(args, " "), stuckAfter, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("zpool_bench %s: %v", strings.Join(args, " "), err)
	}
	return benchResult{stdout: stdout.String(), stderr: stderr.String(), status: cmd.ProcessState.ExitCode()}
}

// benchRun runs dd of benchMiB into the pool mounted at mountpoint under
// zpool_bench, with the exporter at url, and returns the JSON report. The
// file is removed afterwards and its space freed.
func benchRun(t *testing.T, url, runs, pool, mountpoint string) benchreport.Report {
	t.Helper()
	file := filepath.Join(mountpoint, "bench")
	used := poolUsed(t, pool)
	defer freed(t, pool, file, used)
	r := benchCommand(t, "run", "--name", fmt.Sprintf("dd %d MiB on %s", benchMiB, pool), "--pool", pool,
		"--exporter.url", url, "--runs.dir", runs, "--format", "json", "--",
		"dd", "if=/dev/urandom", "of="+file, "bs=1M", fmt.Sprint("count=", benchMiB), "conv=fsync")
	if r.status != 0 {
		t.Fatalf("%s: zpool_bench run exited %d\nstderr:\n%s", pool, r.status, r.stderr)
	}
	var rep benchreport.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%s: the JSON report: %v\n%s", pool, err, r.stdout)
	}
	return rep
}

// poolUsed is the space used in pool's root dataset, in bytes.
func poolUsed(t *testing.T, pool string) float64 {
	t.Helper()
	out := run(t, "zfs", "get", "-Hp", "-o", "value", "used", pool)
	v, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if err != nil {
		t.Fatalf("zfs get used %s: %q", pool, out)
	}
	return v
}

// freed removes file and waits until pool uses about what it used before
// (was): a file's blocks are freed over the transaction groups that
// follow its removal.
func freed(t *testing.T, pool, file string, was float64) {
	t.Helper()
	if err := os.Remove(file); err != nil && !os.IsNotExist(err) {
		t.Error(err)
		return
	}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(time.Second) {
		zpool(t, "sync", pool)
		used := poolUsed(t, pool)
		if used <= was+16*mib {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: %.1f MiB used 2 minutes after removing %s, %.1f MiB before it was written", pool, used/mib, file, was/mib)
			return
		}
	}
}

// checkBenchReport checks the report of benchRun on pool, whose layout
// zpool_bench should describe as layout, on OpenZFS version.
func checkBenchReport(t *testing.T, rep benchreport.Report, pool, layout, version string) {
	t.Helper()
	// What the pool's row counts, as measured in the guest (OpenZFS
	// 2.3.2, vdev properties): an interior vdev's counters are the sums of
	// its children's, and the exporter's pool row the sum of the
	// top-level vdevs (root-0 itself reads 0). A mirror vdev therefore
	// counts every copy its leaves wrote: the leaves add up to the pool's
	// row, and a two-way mirror shows about twice what dd wrote (2.0 ×
	// measured), with metadata on top. Before vdev properties (2.1) the
	// counters integrate the rates zpool iostat prints, over the time
	// between its reports (2.000 and 2.038 × measured); its leaves may
	// differ a little more from the pool's row.
	want := float64(benchMiB * mib)
	leafSlack := 0.02
	if !atLeast(version, 2, 2) {
		leafSlack = 0.05
	}
	written := rep.Pool.WriteBytes.Increase
	if written < 1.8*want || written > 2.5*want {
		t.Errorf("%s: the pool's row wrote %.1f MiB during the run, want 1.8 to 2.5 × the %d MiB dd wrote (two copies); report notes: %q",
			pool, written/mib, benchMiB, rep.Missing)
	}
	for _, m := range rep.Missing {
		if strings.Contains(m, "no sample at or before the start") {
			t.Errorf("%s: the report lacks a baseline: %s", pool, m)
		}
	}
	leaves := 0.0
	for _, v := range rep.Vdevs {
		if v.Depth == 2 {
			leaves += v.WriteBytes.Increase
		}
	}
	if leaves < (1-leafSlack)*written || leaves > (1+leafSlack)*written {
		t.Errorf("%s: the mirrors' leaves wrote %.1f MiB, the pool's row %.1f MiB: want the same", pool, leaves/mib, written/mib)
	}

	// dd's own figures.
	ddRate := 0.0
	if w := rep.Run.Workload; w == nil || w.Tool != workload.DD {
		t.Errorf("%s: dd's summary not read: %+v (%s)", pool, w, rep.Run.WorkloadError)
	} else if final := w.Final(); len(final) == 0 {
		t.Errorf("%s: dd's summary has no result: %+v", pool, w)
	} else {
		dd := final[0]
		if dd.Bytes == nil || *dd.Bytes != want || dd.BytesPerSecond == nil || *dd.BytesPerSecond <= 0 || dd.Direction != workload.Write {
			t.Errorf("%s: dd's result %+v, want %d MiB written at a positive rate", pool, dd, benchMiB)
		} else {
			ddRate = *dd.BytesPerSecond
		}
	}

	// The pool's configuration, read when the run began.
	if c := rep.Run.Config; c == nil {
		t.Errorf("%s: the run has no pool configuration", pool)
	} else {
		if c.Layout != layout {
			t.Errorf("%s: layout %q, want %q", pool, c.Layout, layout)
		}
		if c.Ashift <= 0 {
			t.Errorf("%s: ashift %d, want the pool's (missing: %v)", pool, c.Ashift, c.Missing)
		}
		if !strings.HasPrefix(c.Version, "OpenZFS 2.") || !strings.Contains(c.Version, version) {
			t.Errorf("%s: version %q, want OpenZFS %s", pool, c.Version, version)
		}
	}

	// CPU, the ZFS engine's threads, the ARC and the pool's states.
	if rep.CPU == nil {
		t.Errorf("%s: no CPU figures", pool)
	} else if rep.CPU.Engine == nil || rep.CPU.Engine.Seconds <= 0 {
		t.Errorf("%s: the ZFS engine's CPU %+v, want the kernel threads' time while dd wrote", pool, rep.CPU.Engine)
	}
	if rep.ARC == nil || !rep.ARC.Accessed() {
		t.Errorf("%s: ARC figures %+v, want hits and misses counted", pool, rep.ARC)
	}
	if !slices.Contains(rep.PoolStates, "online") {
		t.Errorf("%s: pool states seen %v, want online among them", pool, rep.PoolStates)
	}

	var families []string
	if rep.CPU != nil && rep.CPU.Engine != nil {
		for _, f := range rep.CPU.Engine.Families {
			families = append(families, fmt.Sprintf("%s %.2fs", f.Family, f.Seconds))
		}
	}
	cpu, engine := 0.0, 0.0
	if rep.CPU != nil {
		cpu = rep.CPU.BusyRatio
		if rep.CPU.Engine != nil {
			engine = rep.CPU.Engine.Ratio
		}
	}
	arc := benchreport.ARCStats{}
	if rep.ARC != nil {
		arc = *rep.ARC
	}
	peak := fmt.Sprintf("%.1f MB/s", rep.Pool.WriteBytes.PeakPerSecond/1e6)
	if why := rep.Pool.WriteBytes.PeakUnavailable; why != "" {
		peak = "n/a (" + why + ")"
	}
	t.Logf("%s (%s): %.2f s; pool wrote %.1f MiB (%.3f × dd's), leaves %.1f MiB (%.3f × the pool's); pool %.1f MB/s avg, peak %s; dd %.1f MB/s; "+
		"host CPU busy %.1f%%, ZFS engine %.1f%% [%s]; ARC %.0f hits, %.0f misses; states %v; missing %q",
		pool, layout, rep.DurationSeconds, written/mib, written/want, leaves/mib, leaves/max(written, 1),
		rep.Pool.WriteBytes.PerSecond/1e6, peak, ddRate/1e6,
		100*cpu, 100*engine, strings.Join(families, ", "), arc.Hits, arc.Misses, rep.PoolStates, rep.Missing)
}
