package main

import (
	"bytes"
	cryptorand "crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

var exporterBin, benchBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zpool_bench-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for name, bin := range map[string]*string{"zpool_exporter": &exporterBin, "zpool_bench": &benchBin} {
		if *bin, err = e2e.BuildCommand("../..", dir, name); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const mib = 1 << 20

// benchRun is one zpool_bench run as a child process.
type benchRun struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
}

func startBench(t *testing.T, args ...string) *benchRun {
	t.Helper()
	r := &benchRun{cmd: exec.Command(benchBin, args...)}
	r.cmd.Env = append(os.Environ(), "GRAFANA_TOKEN=glsa_e2e")
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return r
}

// wait returns the runner's exit status.
func (r *benchRun) wait(t *testing.T) int {
	t.Helper()
	err := r.cmd.Wait()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return r.cmd.ProcessState.ExitCode()
}

// exporterOnPool starts an exporter with the window API and one-second
// zpool iostat, as the README tells benchmarkers to.
func exporterOnPool(t *testing.T) *e2e.Exporter {
	return e2e.Start(t, exporterBin, nil, "--web.enable-benchmark-api", "--zpool.iostat-interval=1s")
}

// watchWindow polls the exporter's metrics until stop is closed and says
// whether a window of pool was seen active, and its ID.
func watchWindow(t *testing.T, exp *e2e.Exporter, pool string, stop <-chan struct{}) func() (string, bool) {
	var (
		mu   sync.Mutex
		id   string
		seen bool
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, s := range exp.Scrape(t).Series("zfs_benchmark_window_active", map[string]string{"pool": pool}) {
				if e2e.Value(s) == 1 {
					mu.Lock()
					id, seen = e2e.Label(s, "window"), true
					mu.Unlock()
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return func() (string, bool) {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return id, seen
	}
}

// checkWindowEnded checks that the exporter has window id of pool ended.
func checkWindowEnded(t *testing.T, exp *e2e.Exporter, id, pool string) {
	t.Helper()
	m := exp.Scrape(t)
	labels := map[string]string{"window": id, "pool": pool}
	if v, ok := m.Get("zfs_benchmark_window_active", labels); !ok || v != 0 {
		t.Errorf("zfs_benchmark_window_active%v = %v (present %v), want 0: the window was not ended", labels, v, ok)
	}
	start, _ := m.Get("zfs_benchmark_window_start_time_seconds", labels)
	if end, ok := m.Get("zfs_benchmark_window_end_time_seconds", labels); !ok || end < start || start == 0 {
		t.Errorf("window %s: start %v, end %v (present %v)", id, start, end, ok)
	}
}

// running lists the processes whose command line contains marker.
func running(marker string) []string {
	var found []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err != nil || len(cmdline) == 0 || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		found = append(found, d.Name()+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return found
}

// noneRunning fails t when a process with marker in its command line
// still runs a few seconds on.
func noneRunning(t *testing.T, marker string) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if left = running(marker); len(left) == 0 {
			return
		}
	}
	t.Errorf("the workload outlived the run: %v", left)
}

func TestRunDDOnZFSFuse(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	pool, mnt := z.Create("bmirror", "mirror", z.Disk("m0", 512), z.Disk("m1", 512))
	exp := exporterOnPool(t)
	runs := t.TempDir()
	// A stand-in for Grafana's annotation API.
	var (
		annotations []string
		mu          sync.Mutex
	)
	grafana := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		annotations = append(annotations, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(body))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"message":"Annotation added","id":1}`)
	}))
	defer grafana.Close()

	stop := make(chan struct{})
	watched := watchWindow(t, exp, pool, stop)
	r := startBench(t, "run", "--name", "mirror dd", "--pool", pool, "--exporter.url", exp.URL,
		"--grafana.url", grafana.URL, "--runs.dir", runs, "--format", "json", "--",
		"dd", "if=/dev/urandom", "of="+filepath.Join(mnt, "f"), "bs=1M", "count=200", "conv=fsync")
	status := r.wait(t)
	close(stop)
	if status != 0 {
		t.Fatalf("zpool_bench run exited %d\nstderr:\n%s", status, r.stderr.String())
	}
	id, seen := watched()
	if !seen {
		t.Errorf("no zfs_benchmark_window_active{pool=%q} = 1 while dd ran", pool)
	}

	var rep benchreport.Report
	if err := json.Unmarshal(r.stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, r.stdout.String())
	}
	if rep.Run.ID != id {
		t.Errorf("report of window %s, but window %s was active", rep.Run.ID, id)
	}
	checkWindowEnded(t, exp, rep.Run.ID, pool)

	// The run as a region in Grafana: from the workload's start to its end.
	mu.Lock()
	defer mu.Unlock()
	want := fmt.Sprintf(`POST /api/annotations Bearer glsa_e2e {"time":%d,"timeEnd":%d,"tags":["zpool-bench","pool:%s"],`,
		rep.Run.Start.UnixMilli(), rep.Run.End.UnixMilli(), pool)
	if len(annotations) != 1 || !strings.HasPrefix(annotations[0], want) {
		t.Errorf("Grafana got %q, want one request starting %q", annotations, want)
	}

	// The pool's writes against what dd wrote: zfs-fuse's iostat rounds
	// its rates, so only roughly.
	written := rep.Pool.WriteBytes.Increase
	if written < 0.9*200*mib || written > 1.3*200*mib {
		t.Errorf("pool %s wrote %.1f MiB during the run, want 0.9 to 1.3 × the 200 MiB dd wrote", pool, written/mib)
	}
	checkPeak(t, "pool write", rep, rep.Pool.WriteBytes)
	leaves := 0
	for _, v := range rep.Vdevs {
		if v.Depth == 2 && v.WriteBytes.Increase > 0.9*200*mib {
			leaves++ // each side of the mirror has it all
		}
	}
	if leaves != 2 {
		t.Errorf("%d leaves of the mirror wrote about 200 MiB, want 2: %+v", leaves, rep.Vdevs)
	}

	// dd's own figures beside the pool's.
	if rep.Run.Workload == nil || rep.Run.Workload.Tool != workload.DD {
		t.Fatalf("dd's summary not read: %+v (%s)", rep.Run.Workload, rep.Run.WorkloadError)
	}
	dd := rep.Run.Workload.Final()[0]
	if dd.Bytes == nil || *dd.Bytes != 200*mib || dd.BytesPerSecond == nil || *dd.BytesPerSecond <= 0 || dd.Direction != workload.Write {
		t.Errorf("dd's result %+v, want 200 MiB written at a positive rate", dd)
	}
	if rep.Run.Config == nil || rep.Run.Config.Layout != "mirror of 2" {
		t.Errorf("pool configuration %+v, want layout mirror of 2", rep.Run.Config)
	}

	// The saved run prints again as a table with both figures.
	var table bytes.Buffer
	rc := run(t.Context(), []string{"report", "--runs.dir", runs, rep.Run.ID}, env{stdout: &table, stderr: &table})
	if rc != 0 {
		t.Fatalf("report: %d\n%s", rc, table.String())
	}
	ddRate := fmt.Sprintf("%.1f", *dd.BytesPerSecond/1e6)
	for _, want := range []string{"mirror dd", pool, "mirror of 2", "dd", ddRate} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("report table lacks %q:\n%s", want, table.String())
		}
	}
	if svgs, _ := filepath.Glob(filepath.Join(runs, "*.svg")); len(svgs) != 1 {
		t.Errorf("saved charts %v, want one", svgs)
	}
}

func TestFailingWorkloadEndsTheWindow(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	pool, mnt := z.Create("bfail", z.Disk("f0", 256))
	exp := exporterOnPool(t)
	marker := filepath.Join(mnt, "missing-directory", "f")
	r := startBench(t, "run", "--name", "failing dd", "--pool", pool, "--exporter.url", exp.URL,
		"--runs.dir", t.TempDir(), "--", "dd", "if=/dev/urandom", "of="+marker, "bs=1M", "count=10")
	if status := r.wait(t); status != 1 {
		t.Errorf("zpool_bench exited %d, want dd's 1\nstderr:\n%s", status, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "workload failed with exit status 1") {
		t.Errorf("stderr does not say the workload failed:\n%s", r.stderr.String())
	}
	windows := exp.Scrape(t).Series("zfs_benchmark_window_active", map[string]string{"pool": pool})
	if len(windows) != 1 {
		t.Fatalf("%d windows of pool %s, want 1", len(windows), pool)
	}
	checkWindowEnded(t, exp, e2e.Label(windows[0], "window"), pool)
	noneRunning(t, marker)
}

func TestInterruptedWorkloadEndsTheWindow(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	pool, mnt := z.Create("bintr", z.Disk("i0", 256))
	exp := exporterOnPool(t)
	// The marker makes the workload's processes findable.
	marker := filepath.Join(mnt, "interrupted")
	script := fmt.Sprintf("dd if=/dev/urandom of=%s bs=1M count=20 status=none; sleep 613", marker)
	stop := make(chan struct{})
	watched := watchWindow(t, exp, pool, stop)
	r := startBench(t, "run", "--name", "interrupted", "--pool", pool, "--exporter.url", exp.URL,
		"--runs.dir", t.TempDir(), "--", "sh", "-c", script, marker)
	// Interrupt once the workload sleeps, as Ctrl-C would.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		// The runner's own command line holds the script: look for the
		// sleep itself.
		if sleeping := running("sleep\x00613\x00"); len(sleeping) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workload did not reach its sleep\nstderr:\n%s", r.stderr.String())
		}
	}
	if err := r.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	status := r.wait(t)
	close(stop)
	if status != 130 {
		t.Errorf("zpool_bench exited %d, want 130 (the workload's end by SIGINT)\nstderr:\n%s", status, r.stderr.String())
	}
	id, seen := watched()
	if !seen {
		t.Fatalf("no window of pool %s was seen active", pool)
	}
	checkWindowEnded(t, exp, id, pool)
	noneRunning(t, marker)
	noneRunning(t, "sleep\x00613\x00")
	if !strings.Contains(r.stderr.String(), "interrupted") {
		t.Errorf("stderr does not say the workload was interrupted:\n%s", r.stderr.String())
	}
}

// The README's comparison: the same dd of 600 MiB on a two-way mirror and
// on a three-disk raidz1, long enough for the one-second figures of
// zfs-fuse's zpool iostat to give a peak. With ZPE_PICTURES set, the Markdown table and the
// chart are written there.
func TestCompareMirrorAndRaidz1(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	mirror, mirrorMnt := z.Create("cmpm", "mirror", z.Disk("cm0", 1024), z.Disk("cm1", 1024))
	raidz, raidzMnt := z.Create("cmpr", "raidz1", z.Disk("cr0", 1024), z.Disk("cr1", 1024), z.Disk("cr2", 1024))
	exp := exporterOnPool(t)
	runs := t.TempDir()

	var reports []benchreport.Report
	for _, p := range []struct{ name, pool, mnt string }{
		{"mirror of 2, dd 600 MiB", mirror, mirrorMnt},
		{"raidz1 of 3, dd 600 MiB", raidz, raidzMnt},
	} {
		r := startBench(t, "run", "--name", p.name, "--pool", p.pool, "--exporter.url", exp.URL,
			"--runs.dir", runs, "--format", "json", "--",
			"dd", "if=/dev/urandom", "of="+filepath.Join(p.mnt, "f"), "bs=1M", "count=600", "conv=fsync")
		if status := r.wait(t); status != 0 {
			t.Fatalf("%s: zpool_bench exited %d\n%s", p.name, status, r.stderr.String())
		}
		var rep benchreport.Report
		if err := json.Unmarshal(r.stdout.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		reports = append(reports, rep)
	}

	svg := filepath.Join(t.TempDir(), "compare.svg")
	refs := []string{reports[0].Run.ID, reports[1].Run.ID}
	cmp, rows := compareJSON(t, runs, append([]string{"--svg", svg}, refs...)...)
	written := rows["pool.write.bytes"]
	if len(written.Ratios) != 2 || written.Ratios[1] == nil {
		t.Fatalf("no ratio of the pools' written bytes: %+v", written)
	}
	want := reports[1].Pool.WriteBytes.Increase / reports[0].Pool.WriteBytes.Increase
	if got := *written.Ratios[1]; got < want*0.999 || got > want*1.001 {
		t.Errorf("raidz1/mirror written bytes ratio %.3f, want %.3f from the two reports", got, want)
	}
	for i, v := range rows["pool.write.bytes_per_second"].Values {
		if v == nil || *v <= 0 {
			t.Errorf("pool.write.bytes_per_second of run %d: %v", i+1, v)
		}
	}
	for i := range reports {
		checkPeak(t, fmt.Sprintf("run %d pool write", i+1), reports[i], reports[i].Pool.WriteBytes)
		checkComparedPeak(t, rows, i)
	}
	if layout := rows["config.layout"]; !layout.Differs || layout.Text[0] != "mirror of 2" || layout.Text[1] != "raidz1 of 3" {
		t.Errorf("layout row %+v", layout)
	}
	if _, ok := rows["workload.dd wrote.bytes_per_second"]; !ok {
		t.Errorf("no row of dd's own rate; rows: %v", cmp.Rows)
	}
	if data, err := os.ReadFile(svg); err != nil || !bytes.Contains(data, []byte("raidz1 of 3, dd 600 MiB")) {
		t.Errorf("the comparison chart does not name the second run (%v)", err)
	}

	if dir := os.Getenv("ZPE_PICTURES"); dir != "" {
		var md, errs bytes.Buffer
		if rc := run(t.Context(), append([]string{"compare", "--runs.dir", runs, "--format", "markdown", "--svg", filepath.Join(dir, "compare.svg")}, refs...), env{stdout: &md, stderr: &errs}); rc != 0 {
			t.Fatalf("compare: %d\n%s", rc, errs.String())
		}
		if err := os.WriteFile(filepath.Join(dir, "compare.md"), md.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// With zpool iostat reporting only every 5 s, the report waits for a
// report after the run's end, so the bytes are all there.
func TestRunWaitsForTheIOSource(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	pool, mnt := z.Create("bslow", z.Disk("s0", 512))
	exp := e2e.Start(t, exporterBin, nil, "--web.enable-benchmark-api", "--zpool.iostat-interval=5s")
	r := startBench(t, "run", "--name", "slow iostat", "--pool", pool, "--exporter.url", exp.URL,
		"--runs.dir", t.TempDir(), "--format", "json", "--",
		"dd", "if=/dev/urandom", "of="+filepath.Join(mnt, "f"), "bs=1M", "count=100", "conv=fsync")
	if status := r.wait(t); status != 0 {
		t.Fatalf("zpool_bench run exited %d\nstderr:\n%s", status, r.stderr.String())
	}
	var rep benchreport.Report
	if err := json.Unmarshal(r.stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, r.stdout.String())
	}
	if written := rep.Pool.WriteBytes.Increase; written < 0.9*100*mib || written > 1.3*100*mib {
		t.Errorf("pool %s wrote %.1f MiB during the run, want 0.9 to 1.3 × the 100 MiB dd wrote", pool, written/mib)
	}
	if settled := rep.Samples.To.Sub(rep.Run.End); settled < 3*time.Second {
		t.Errorf("the last I/O report read came %v after the end, want at least the 3 s settling time", settled)
	}
}

// checkPeak checks a counter's peak: over a whole interval inside the run
// and not below the average, or none and a reason.
func checkPeak(t *testing.T, what string, rep benchreport.Report, k benchreport.Counter) {
	t.Helper()
	if k.AverageUnavailable != "" {
		t.Logf("%s: no average over %.2f s: %s", what, rep.DurationSeconds, k.AverageUnavailable)
		if k.PerSecond != 0 || k.PeakUnavailable == "" {
			t.Errorf("%s: average %.0f, peak reason %q, with no average", what, k.PerSecond, k.PeakUnavailable)
		}
		return
	}
	if k.PeakUnavailable != "" {
		t.Logf("%s: %.1f MB/s avg over %.2f s, no peak: %s", what, k.PerSecond/1e6, rep.DurationSeconds, k.PeakUnavailable)
		if k.PeakPerSecond != 0 {
			t.Errorf("%s: peak %.0f with a reason, %q", what, k.PeakPerSecond, k.PeakUnavailable)
		}
		return
	}
	t.Logf("%s: %.1f MB/s avg over %.2f s, %.1f MB/s peak from %.2f to %.2f s", what, k.PerSecond/1e6, rep.DurationSeconds, k.PeakPerSecond/1e6, k.PeakFromSeconds, k.PeakToSeconds)
	if k.PeakPerSecond < k.PerSecond {
		t.Errorf("%s: peak %.0f below the average %.0f", what, k.PeakPerSecond, k.PerSecond)
	}
	if k.PeakFromSeconds < 0 || k.PeakToSeconds <= k.PeakFromSeconds || k.PeakToSeconds > rep.DurationSeconds {
		t.Errorf("%s: peak between %.2f and %.2f s, not inside the %.2f s run", what, k.PeakFromSeconds, k.PeakToSeconds, rep.DurationSeconds)
	}
}

// checkComparedPeak checks run i's pool write peak in a comparison: at or
// above its average, or none and a reason; a run too short for an average
// has neither, each with its reason.
func checkComparedPeak(t *testing.T, rows map[string]benchreport.ComparedRow, i int) {
	t.Helper()
	avg, peak := rows["pool.write.bytes_per_second"], rows["pool.write.peak_bytes_per_second"]
	if len(peak.Values) <= i || len(avg.Values) <= i {
		t.Errorf("run %d: no write average or peak in the comparison: %+v, %+v", i+1, avg, peak)
		return
	}
	if avg.Values[i] == nil {
		if len(avg.Unavailable) <= i || avg.Unavailable[i] == "" || peak.Values[i] != nil || len(peak.Unavailable) <= i || peak.Unavailable[i] == "" {
			t.Errorf("run %d: no compared write average, and not both the average and the peak said n/a with a reason: %+v, %+v", i+1, avg, peak)
		}
		return
	}
	if v := peak.Values[i]; v != nil {
		if *v < *avg.Values[i] {
			t.Errorf("run %d: compared write peak %.0f below the average %.0f", i+1, *v, *avg.Values[i])
		}
	} else if len(peak.Unavailable) <= i || peak.Unavailable[i] == "" {
		t.Errorf("run %d: no compared write peak, and no reason: %+v", i+1, peak)
	}
}

// The comparison, cut to two of its layouts: 150 MB copied by dd
// from a file into the pool, with fsync, the exporter at one-second zpool
// iostat. A copy of about a second spans about one interval: where it has
// a peak, that is not below its average; where not, every format says
// why, and a copy shorter than the interval has no average either. dd's
// figure is a write: the pool saw its copy written.
func TestShortCopyIntoThePool(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	var disks []string
	for i := range 18 {
		disks = append(disks, z.Disk(fmt.Sprintf("c%d", i), 128))
	}
	raidz, raidzMnt := z.Create("cpr", "raidz1", disks[0], disks[1], disks[2], "raidz1", disks[3], disks[4], disks[5], "raidz1", disks[6], disks[7], disks[8])
	stripe, stripeMnt := z.Create("cps", disks[9:]...)
	src := filepath.Join(z.Dir, "src")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, cryptorand.Reader, 150e6); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	exp := exporterOnPool(t)
	runs := t.TempDir()

	var refs []string
	for _, p := range []struct{ name, pool, mnt string }{
		{"raidz 3x3", raidz, raidzMnt},
		{"stripe of 9", stripe, stripeMnt},
	} {
		r := startBench(t, "run", "--name", p.name, "--pool", p.pool, "--exporter.url", exp.URL,
			"--runs.dir", runs, "--format", "json", "--",
			"dd", "if="+src, "of="+filepath.Join(p.mnt, "f"), "bs=1M", "conv=fsync")
		if status := r.wait(t); status != 0 {
			t.Fatalf("%s: zpool_bench exited %d\n%s", p.name, status, r.stderr.String())
		}
		var rep benchreport.Report
		if err := json.Unmarshal(r.stdout.Bytes(), &rep); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout.String())
		}
		checkPeak(t, p.name+" pool write", rep, rep.Pool.WriteBytes)
		checkPeak(t, p.name+" pool read", rep, rep.Pool.ReadBytes)
		if rep.Run.Workload == nil || len(rep.Run.Workload.Final()) != 1 || rep.Run.Workload.Final()[0].Direction != workload.Mixed {
			t.Errorf("%s: dd's result %+v, want one from a file to a file", p.name, rep.Run.Workload)
		}
		refs = append(refs, rep.Run.ID)

		var table bytes.Buffer
		if rc := run(t.Context(), []string{"report", "--runs.dir", runs, rep.Run.ID}, env{stdout: &table, stderr: &table}); rc != 0 {
			t.Fatalf("report: %d\n%s", rc, table.String())
		}
		if !strings.Contains(table.String(), "dd wrote: 150.0 MB in ") || strings.Contains(table.String(), "mixed") {
			t.Errorf("%s: dd's figure is not named a write:\n%s", p.name, table.String())
		}
		if rep.Pool.WriteBytes.PeakUnavailable != "" && !strings.Contains(table.String(), "peak n/a: "+rep.Pool.WriteBytes.PeakUnavailable) {
			t.Errorf("%s: the table does not say why there is no write peak:\n%s", p.name, table.String())
		}
	}

	_, rows := compareJSON(t, runs, refs...)
	for key := range rows {
		if strings.Contains(key, "mixed") || strings.Contains(key, "copied") {
			t.Errorf("comparison row %q: dd's figure is not named a write", key)
		}
	}
	if dd := rows["workload.dd wrote.bytes_per_second"]; len(dd.Values) != 2 || dd.Values[0] == nil || dd.Values[1] == nil || dd.Figure != "dd wrote MB/s" {
		t.Errorf("dd's row %+v, want dd wrote MB/s of both runs", dd)
	}
	for i := range refs {
		checkComparedPeak(t, rows, i)
	}
	var out, errs bytes.Buffer
	if rc := run(t.Context(), append([]string{"compare", "--runs.dir", runs}, refs...), env{stdout: &out, stderr: &errs}); rc != 0 {
		t.Fatalf("compare: %d\n%s", rc, errs.String())
	}
	t.Logf("compare:\n%s", out.String())
	if peak := rows["pool.write.peak_bytes_per_second"]; slices.Contains(peak.Values, nil) && !strings.Contains(out.String(), "note: n/a in run ") {
		t.Errorf("the comparison table does not say why a peak is n/a:\n%s", out.String())
	}
}

// compareJSON runs zpool_bench compare --format json over the runs in
// runs, with args, and returns the comparison and its rows by key.
func compareJSON(t *testing.T, runs string, args ...string) (benchreport.Comparison, map[string]benchreport.ComparedRow) {
	t.Helper()
	var out, errs bytes.Buffer
	if rc := run(t.Context(), append([]string{"compare", "--runs.dir", runs, "--format", "json"}, args...), env{stdout: &out, stderr: &errs}); rc != 0 {
		t.Fatalf("compare: %d\n%s", rc, errs.String())
	}
	var cmp benchreport.Comparison
	if err := json.Unmarshal(out.Bytes(), &cmp); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	rows := map[string]benchreport.ComparedRow{}
	for _, r := range cmp.Rows {
		rows[r.Key] = r
	}
	return cmp, rows
}

// A run from a client machine, as people copy onto a NAS over SMB or
// iSCSI: no zpool, zfs or zdb where zpool_bench runs (its PATH holds none),
// the exporter reached by its URL. The layout comes from the exporter's
// metrics, the window and the figures from the exporter, and the copy runs
// where zpool_bench does.
func TestRunFromAClientWithoutZpool(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	copyFromAClient(t, z, func(exp *e2e.Exporter) (string, []string) { return exp.URL, nil })
}

// copyFromAClient has zpool_bench run, with a PATH holding no zpool, zfs or
// zdb, a cp of 64 MiB into a new mirror pool, and checks its report: the
// layout read from the exporter's metrics, the window ended, the copy
// written by the pool. client starts the client's side once the exporter
// runs: it returns the exporter's URL as the client reaches it and the
// words that run a command on the client, none for this machine.
func copyFromAClient(t *testing.T, z *e2e.ZFSFuse, client func(exp *e2e.Exporter) (exporterURL string, prefix []string)) {
	t.Helper()
	pool, mnt := z.Create("bclient", "mirror", z.Disk("c0", 512), z.Disk("c1", 512))
	exp := exporterOnPool(t)
	src := filepath.Join(t.TempDir(), "src")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(f, cryptorand.Reader, 64*mib); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cp, err := exec.LookPath("cp")
	if err != nil {
		t.Fatal(err)
	}
	exporterURL, prefix := client(exp)
	argv := append(prefix, benchBin, "run", "--name", "copy from a client", "--pool", pool, "--exporter.url", exporterURL,
		"--runs.dir", t.TempDir(), "--format", "json", "--settle", "5s", "--", cp, src, filepath.Join(mnt, "copy"))
	r := &benchRun{cmd: exec.Command(argv[0], argv[1:]...)}
	r.cmd.Env = []string{"PATH=" + t.TempDir(), "HOME=" + t.TempDir()} // the client's PATH: no zpool, zfs or zdb
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if status := r.wait(t); status != 0 {
		t.Fatalf("zpool_bench run exited %d\nstderr:\n%s", status, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "zpool is not installed here: the pool's configuration comes from the metrics of the exporter") {
		t.Errorf("stderr does not say where the configuration came from:\n%s", r.stderr.String())
	}
	var rep benchreport.Report
	if err := json.Unmarshal(r.stdout.Bytes(), &rep); err != nil {
		t.Fatalf("the JSON report: %v\n%s", err, r.stdout.String())
	}
	if rep.Run.Config == nil || rep.Run.Config.Layout != "mirror of 2" || rep.Run.Config.State != "online" {
		t.Errorf("pool configuration %+v, want a mirror of 2, online", rep.Run.Config)
	}
	checkWindowEnded(t, exp, rep.Run.ID, pool)
	if written := rep.Pool.WriteBytes.Increase; written < 0.9*64*mib {
		t.Errorf("pool %s wrote %.1f MiB during the run, want at least 0.9 × the 64 MiB copied", pool, written/mib)
	}
}
