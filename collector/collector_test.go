package collector

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

var update = flag.Bool("update", false, "rewrite the golden .prom files")

// testNow is the fixed clock of the golden tests.
var testNow = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

var allCollectors = map[string]bool{"status": true, "properties": true, "vdev_io": true, "vdev_space": true}

// testConfig is what the collectors of a test read: a client of zc, whose
// runner also runs the operating system's commands unless cfg has one.
func testConfig(zc zfs.Config, cfg Config, logger *slog.Logger) Config {
	cfg.ZFS = zfs.New(zc, logger)
	if cfg.Runner == nil {
		cfg.Runner = zc.Runner
	}
	return cfg
}

// replayExporter builds an exporter over a replay, with a sampler whose
// stream is fed by the test.
func replayExporter(t testing.TB, replay *runner.Replay, interval time.Duration) (*Exporter, *IostatSampler) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	var sampler *IostatSampler
	if interval > 0 {
		sampler = NewIostatSampler("zpool", interval, replay.StartStream, replay, logger)
		sampler.now = func() time.Time { return testNow }
	}
	cfg := testConfig(zfs.Config{Runner: replay, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{Sampler: sampler}, logger)
	e, err := New(cfg, logger, allCollectors)
	if err != nil {
		t.Fatal(err)
	}
	return e, sampler
}

// feedStream integrates the replayed `zpool iostat -v INTERVAL` capture of
// the current step, synchronously.
func feedStream(t *testing.T, replay *runner.Replay, s *IostatSampler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, err := replay.StartStream(ctx, runner.Cmd("zpool", "iostat", "-v", formatSeconds(s.interval)))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// The replay writes the capture once, then waits for the next step.
	done := make(chan error, 1)
	pr, pw := io.Pipe()
	go func() { done <- s.consume(pr) }()
	buf := make([]byte, 64<<10)
	for {
		n, err := out.Read(buf)
		pw.Write(buf[:n])
		if err != nil || bytes.HasSuffix(buf[:n], []byte("\n\n")) && n < len(buf) {
			break
		}
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// gather runs one scrape and returns its families, without the figures
// that change from run to run (durations).
func gather(t *testing.T, e *Exporter) []*dto.MetricFamily {
	t.Helper()
	return gatherFrom(t, e.Scraper(context.Background()))
}

// gatherFrom gathers any collector the same way.
func gatherFrom(t *testing.T, c prometheus.Collector) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	kept := families[:0]
	for _, mf := range families {
		if mf.GetName() != "zfs_exporter_collector_duration_seconds" {
			kept = append(kept, mf)
		}
	}
	return kept
}

func exposition(t *testing.T, families []*dto.MetricFamily) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, mf := range families {
		if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	sample.Golden(t, path, got, *update)
}

// value returns the value of the series of name with exactly these labels.
func value(families []*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue series
				}
			}
			switch {
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			}
		}
	}
	return 0, false
}

// The zfs-fuse replay holds every command the exporter runs, captured from
// real zfs-fuse pools in four states (see capture-zfs-fuse.sh).
func TestZFSFuseReplay(t *testing.T) {
	replay, err := runner.NewReplay("testdata/replay/zfs-fuse")
	if err != nil {
		t.Fatal(err)
	}
	if replay.NumSteps() != 4 {
		t.Fatalf("replay has %d steps, want 4", replay.NumSteps())
	}
	e, sampler := replayExporter(t, replay, time.Second)
	const dir = "/var/tmp/zfs-fuse-replay/"
	checks := []func(t *testing.T, fams []*dto.MetricFamily){
		func(t *testing.T, fams []*dto.MetricFamily) {
			// Healthy, with tank written to during the stream: three
			// one-second reports after the first give the counters.
			w1, ok1 := value(fams, "zfs_vdev_write_bytes_total", map[string]string{"pool": "tank", "vdev": dir + "t1"})
			w2, ok2 := value(fams, "zfs_vdev_write_bytes_total", map[string]string{"pool": "tank", "vdev": dir + "t2"})
			if !ok1 || !ok2 || w1 <= 0 || w2 <= 0 {
				t.Errorf("tank leaves' write counters = %v, %v; want > 0 for both", w1, w2)
			}
			if v, _ := value(fams, "zfs_exporter_capabilities_info", map[string]string{"status_format": "text", "vdev_io": "iostat_stream"}); v != 1 {
				t.Errorf("capabilities not detected as text status with an iostat stream")
			}
		},
		func(t *testing.T, fams []*dto.MetricFamily) {
			if v, _ := value(fams, "zfs_pool_state", map[string]string{"pool": "backup", "state": "degraded"}); v != 1 {
				t.Errorf("backup not degraded")
			}
			if v, _ := value(fams, "zfs_vdev_state", map[string]string{"pool": "backup", "vdev": dir + "b2", "state": "offline"}); v != 1 {
				t.Errorf("b2 not offline")
			}
		},
		func(t *testing.T, fams []*dto.MetricFamily) {
			if v, _ := value(fams, "zfs_vdev_state", map[string]string{"pool": "backup", "vdev": dir + "b4", "state": "inuse"}); v != 1 {
				t.Errorf("spare b4 not inuse")
			}
			if v, _ := value(fams, "zfs_vdev_info", map[string]string{"pool": "backup", "vdev": "raidz1-0/spare-2", "vdev_type": "spare", "parent": "raidz1-0"}); v != 1 {
				t.Errorf("no raidz1-0/spare-2 under raidz1-0")
			}
			if v, ok := value(fams, "zfs_vdev_resilvered_bytes", map[string]string{"pool": "backup", "vdev": dir + "b4"}); !ok || v < 16e6 {
				t.Errorf("b4 resilvered bytes = %v (present %v), want 16.6M", v, ok)
			}
		},
		func(t *testing.T, fams []*dto.MetricFamily) {
			if v, _ := value(fams, "zfs_vdev_checksum_errors_total", map[string]string{"pool": "backup", "vdev": dir + "b1"}); v <= 0 {
				t.Errorf("b1 checksum errors = %v, want > 0", v)
			}
			if v, _ := value(fams, "zfs_scan_state", map[string]string{"pool": "backup", "function": "scrub", "state": "finished"}); v != 1 {
				t.Errorf("scrub not finished")
			}
			if _, ok := value(fams, "zfs_scan_end_time_seconds", map[string]string{"pool": "backup", "function": "scrub"}); !ok {
				t.Errorf("no scrub end time")
			}
		},
	}
	for step := 0; step < replay.NumSteps(); step++ {
		t.Run(fmt.Sprintf("step %03d", step), func(t *testing.T) {
			feedStream(t, replay, sampler)
			fams := gather(t, e)
			compareGolden(t, filepath.Join("testdata", fmt.Sprintf("zfs-fuse-%03d.prom", step)), exposition(t, fams))
			checks[step](t, fams)
			if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", err, problems)
			}
		})
		replay.Advance()
	}
}

// The OpenZFS 2.3.2 captures hold the commands the exporter runs there:
// JSON status, `zpool get -Hp all` and vdev properties.
func TestOpenZFS23Replay(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	scenarios := []string{"04-scrubbed-healthy", "09-errors-repaired", "11-cleared"}
	replay, err := runner.NewReplayWithOptions(dir, runner.ReplayOptions{Scenarios: scenarios})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := replayExporter(t, replay, 0)
	for i, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			fams := gather(t, e)
			compareGolden(t, filepath.Join("testdata", "openzfs-2.3-"+scenario+".prom"), exposition(t, fams))
			if v, _ := value(fams, "zfs_exporter_capabilities_info", map[string]string{"status_format": "json", "vdev_io": "vdev_properties"}); v != 1 {
				t.Errorf("capabilities not detected as JSON status with vdev properties")
			}
			for _, c := range []string{"status", "properties", "vdev_io"} {
				if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": c}); v != 1 {
					t.Errorf("collector %s failed", c)
				}
			}
			// Vdev properties and the counters exported must agree.
			if v, ok := value(fams, "zfs_vdev_read_bytes_total", map[string]string{"pool": "rz1", "vdev": "virtio-zd07"}); !ok || v <= 0 {
				t.Errorf("rz1 virtio-zd07 read bytes = %v (present %v)", v, ok)
			}
			if i == 1 {
				if v, _ := value(fams, "zfs_vdev_state", map[string]string{"pool": "r10", "vdev": "virtio-zd03", "state": "faulted"}); v != 1 {
					t.Errorf("r10 virtio-zd03 not faulted")
				}
				if v, _ := value(fams, "zfs_vdev_checksum_errors_total", map[string]string{"pool": "r10", "vdev": "virtio-zd05"}); v != 6262 {
					t.Errorf("r10 virtio-zd05 checksum errors = %v, want 6262", v)
				}
				if _, ok := value(fams, "zfs_scan_duration_seconds", map[string]string{"pool": "r10", "function": "rebuild", "vdev": "mirror-0"}); !ok {
					t.Errorf("no rebuild of r10 mirror-0")
				}
			}
			if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", err, problems)
			}
		})
		replay.Advance()
	}
}

// Output that cannot be read fails its collector with an error naming the
// command and the line, and the other collectors still report.
func TestUnreadableStatusKeepsTheRest(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("zpool_status.txt", "  pool: tank\n state: ONLINE\nconfig:\n\n\tNAME        STATE     READ WRITE CKSUM\n\ttank        ONLINE       0     0     0\n\t  sda       ONLINE      x1     0     0\n")
	write("zpool_get_-Hp_all.txt", "tank\tsize\t1000\t-\ntank\tallocated\t400\t-\ntank\tfree\t600\t-\ntank\tguid\t42\t-\n")
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := testConfig(zfs.Config{Runner: replay, Location: time.UTC}, Config{}, logger)
	e, err := New(cfg, logger, allCollectors)
	if err != nil {
		t.Fatal(err)
	}
	fams := gather(t, e)
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "status"}); v != 0 {
		t.Errorf("status collector succeeded on unreadable output")
	}
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "properties"}); v != 1 {
		t.Errorf("properties collector failed with it")
	}
	if v, _ := value(fams, "zfs_pool_size_bytes", map[string]string{"pool": "tank"}); v != 1000 {
		t.Errorf("pool size = %v, want 1000", v)
	}
	msg := logs.String()
	for _, want := range []string{"zpool status", "line 7", "x1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the logged error does not name %q:\n%s", want, msg)
		}
	}
}

// OpenZFS 2.3.2's JSON status has no state for a dRAID vdev: the exporter
// takes it from the text status, which it reads for that alone. 2.4.4's
// JSON has the state, and the text status is not read.
func TestDraidStateByRelease(t *testing.T) {
	for release, textRead := range map[string]bool{"2.3": true, "2.4": false} {
		t.Run(release, func(t *testing.T) {
			replay, err := runner.NewReplayWithOptions(guestDir(release), runner.ReplayOptions{Scenarios: []string{"01-created"}})
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingRunner{Runner: replay, answers: map[string]answer{}}
			logger := slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg := testConfig(zfs.Config{Runner: rec, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{}, logger)
			e, err := New(cfg, logger, allCollectors)
			if err != nil {
				t.Fatal(err)
			}
			gather(t, e) // detects the capabilities, which probes zpool status -p too
			rec.mu.Lock()
			clear(rec.answers)
			rec.mu.Unlock()
			fams := gather(t, e)
			if v, _ := value(fams, "zfs_exporter_capabilities_info", map[string]string{"status_format": "json"}); v != 1 {
				t.Fatalf("not reading JSON status")
			}
			draid := map[string]string{"pool": "dr", "vdev": "draid1:2d:5c:1s-0"}
			if v, _ := value(fams, "zfs_vdev_state", map[string]string{"pool": "dr", "vdev": draid["vdev"], "state": "online"}); v != 1 {
				t.Errorf("dRAID vdev not online")
			}
			if v, _ := value(fams, "zfs_vdev_info", map[string]string{"pool": "dr", "vdev": draid["vdev"], "vdev_type": "draid1"}); v != 1 {
				t.Errorf("dRAID vdev's type is not draid1")
			}
			rec.mu.Lock()
			_, read := rec.answers["zpool status -p"]
			rec.mu.Unlock()
			if read != textRead {
				t.Errorf("the scrape read the text status: %v, want %v", read, textRead)
			}
		})
	}
}

// zed attached rz1's hot spare in the test bed's guest (2.3.2 and 2.4.4): the vdev
// properties list virtio-zd12 twice (inside spare-1 and among the spares),
// and so does zpool status. Each of its series must be sent once, or
// Prometheus rejects the whole scrape.
func TestActiveSpareExportedOnceFromVdevProperties(t *testing.T) {
	for _, release := range guestReleases {
		t.Run(release, func(t *testing.T) { testActiveSpareExportedOnce(t, guestDir(release)+"/", release) })
	}
}

func testActiveSpareExportedOnce(t *testing.T, dir, release string) {
	f := sample.MustRead(t, dir+"06-spare-inuse__zpool_status_-j_--json-int.txt")
	st, err := zpool.ParseStatusJSON(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	f, err = sample.Read(dir + "06-spare-inuse__zpool_get_-Hp_all_rz1_all-vdevs.txt")
	if err != nil {
		t.Fatal(err)
	}
	props, err := zpool.ParseGet(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	var rz1 *zpool.Pool
	for _, p := range st.Pools {
		if p.Name == "rz1" {
			rz1 = p
		}
	}
	if rz1 == nil {
		t.Fatal("no pool rz1 in the capture")
	}
	ch := make(chan prometheus.Metric, 1000)
	if err := collectVdevIOProperties(rz1, props, ch); err != nil {
		t.Fatal(err)
	}
	close(ch)
	seen := map[string]int{}
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		key := m.Desc().String()
		for _, l := range pb.GetLabel() {
			key += "," + l.GetName() + "=" + l.GetValue()
		}
		seen[key]++
		if strings.Contains(key, "vdev=virtio-zd12") && strings.Contains(key, "write_bytes") && pb.GetCounter().GetValue() <= 0 {
			t.Errorf("spare virtio-zd12 wrote nothing: %s", key)
		}
	}
	zd12 := 0
	for key, n := range seen {
		if n > 1 {
			t.Errorf("sent %d times: %s", n, key)
		}
		if strings.Contains(key, "vdev=virtio-zd12") && strings.Contains(key, "_total") {
			zd12++
		}
	}
	if zd12 != 4 {
		t.Errorf("virtio-zd12 has %d I/O series, want 4", zd12)
	}
	if release == "2.4" && seen[vdevSlowDescs["slow_io_events"].String()+",pool=rz1,vdev=virtio-zd12"] != 1 {
		t.Errorf("the spare's slow_io_events not sent once: %v", seen)
	}
}

// guestReleases are the OpenZFS releases whose walk captures are fixtures
// in internal/zfs/zpool/testdata/openzfs-RELEASE-guest.
var guestReleases = []string{"2.3", "2.4"}

func guestDir(release string) string {
	return "../internal/zfs/zpool/testdata/openzfs-" + release + "-guest"
}

// The test bed's guest pulled the only disk of a failmode=wait pool: it is
// suspended while its vdevs still read ONLINE with the read errors that
// suspended it, on 2.3.2 and 2.4.4 alike.
func TestSuspendedPoolFromGuest(t *testing.T) {
	for _, release := range guestReleases {
		t.Run(release, func(t *testing.T) { testSuspendedPoolFromGuest(t, release) })
	}
}

func testSuspendedPoolFromGuest(t *testing.T, release string) {
	replay, err := runner.NewReplayWithOptions(guestDir(release), runner.ReplayOptions{Scenarios: []string{"08-suspended"}})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := replayExporter(t, replay, 0)
	fams := gather(t, e)
	dataErrors := map[string]float64{"2.3": 1, "2.4": 20}[release] // as each capture says
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"zfs_pool_state", map[string]string{"pool": "pulled", "state": "suspended"}, 1},
		{"zfs_pool_state", map[string]string{"pool": "pulled", "state": "online"}, 0},
		{"zfs_pool_data_errors", map[string]string{"pool": "pulled"}, dataErrors},
		{"zfs_vdev_read_errors_total", map[string]string{"pool": "pulled", "vdev": "virtio-zd21"}, 3},
		{"zfs_pool_state", map[string]string{"pool": "mir", "state": "online"}, 1},
		{"zfs_exporter_collector_success", map[string]string{"collector": "vdev_io"}, 1},
	} {
		if got, ok := value(fams, c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
}

// A healing resilver and a sequential rebuild in progress, captured in the
// test bed's guest on each release: the figures that follow a running scan.
func TestRunningScansFromGuest(t *testing.T) {
	for _, release := range guestReleases {
		t.Run(release, func(t *testing.T) { testRunningScansFromGuest(t, release) })
	}
}

func testRunningScansFromGuest(t *testing.T, release string) {
	scenarios := []string{"04-resilvering", "05-rebuilding"}
	replay, err := runner.NewReplayWithOptions(guestDir(release), runner.ReplayOptions{Scenarios: scenarios})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := replayExporter(t, replay, 0)
	running := []map[string]string{
		{"pool": "mir", "function": "resilver", "vdev": ""},
		{"pool": "r10", "function": "rebuild", "vdev": "mirror-1"},
	}
	for i, scenario := range scenarios {
		t.Run(scenario, func(t *testing.T) {
			fams := gather(t, e)
			compareGolden(t, filepath.Join("testdata", "openzfs-"+release+"-guest-"+scenario+".prom"), exposition(t, fams))
			scan := running[i]
			state := map[string]string{"state": "scanning"}
			maps.Copy(state, scan)
			if v, _ := value(fams, "zfs_scan_state", state); v != 1 {
				t.Errorf("%v not scanning", scan)
			}
			for _, name := range []string{"zfs_scan_progress_ratio", "zfs_scan_issue_rate_bytes_per_second", "zfs_scan_issued_bytes", "zfs_scan_total_bytes"} {
				if v, ok := value(fams, name, scan); !ok || v <= 0 {
					t.Errorf("%s%v = %v (present %v)", name, scan, v, ok)
				}
			}
			// No release keeps counters in root-0, and 2.3.2 lists no
			// dRAID vdev: each is the sum of its children. 2.4.4 lists
			// the dRAID vdev with counters of its own, which agree.
			pool, _ := value(fams, "zfs_vdev_write_bytes_total", map[string]string{"pool": "dr", "vdev": "dr"})
			draid, _ := value(fams, "zfs_vdev_write_bytes_total", map[string]string{"pool": "dr", "vdev": "draid1:2d:5c:1s-0"})
			leaves := 0.0
			for n := 13; n <= 17; n++ {
				v, _ := value(fams, "zfs_vdev_write_bytes_total", map[string]string{"pool": "dr", "vdev": fmt.Sprintf("virtio-zd%02d", n)})
				leaves += v
			}
			if leaves <= 0 || draid != leaves || pool != draid {
				t.Errorf("dr: pool row %v, dRAID vdev %v, leaves %v: want all equal and > 0", pool, draid, leaves)
			}
		})
		replay.Advance()
	}
}

// blockedCollector stands for a read blocked in the kernel (a kstat of a
// pool hung with its disk): it ignores its context until released.
type blockedCollector struct {
	release chan struct{}
	calls   atomic.Int32
}

func (b *blockedCollector) Update(_ context.Context, _ *zfs.Scrape, ch chan<- prometheus.Metric) error {
	b.calls.Add(1)
	<-b.release
	ch <- prometheus.MustNewConstMetric(scrapeSuccessDesc, prometheus.GaugeValue, 1, "sent late")
	return nil
}

// A collector blocked where no context reaches holds up neither the scrape
// nor the other collectors, and is not started again while it is blocked.
func TestScrapeLeavesBlockedCollectorBehind(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg := testConfig(zfs.Config{Runner: nopRunner{}, Now: func() time.Time { return testNow }}, Config{}, logger)
	e, err := New(cfg, logger, map[string]bool{"properties": true})
	if err != nil {
		t.Fatal(err)
	}
	blocked := &blockedCollector{release: make(chan struct{})}
	e.collectors["blocked"] = blocked

	scrape := func() []*dto.MetricFamily {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		began := time.Now()
		fams := gatherFrom(t, e.Scraper(ctx))
		if took := time.Since(began); took > 300*time.Millisecond+budget.CollectorGrace+200*time.Millisecond {
			t.Errorf("scrape took %s with a 300ms deadline", took)
		}
		return fams
	}
	for i := range 2 {
		fams := scrape()
		if v, ok := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "blocked"}); !ok || v != 0 {
			t.Errorf("scrape %d: blocked collector's success = %v (present %v), want 0", i, v, ok)
		}
		if _, ok := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "properties"}); !ok {
			t.Errorf("scrape %d: the other collector is missing", i)
		}
	}
	if n := blocked.calls.Load(); n != 1 {
		t.Errorf("the blocked collector was started %d times, want 1", n)
	}
	close(blocked.release)
	// The left-behind run ends; only then does a scrape start it again.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		e.mu.Lock()
		_, still := e.running["blocked"]
		e.mu.Unlock()
		if !still {
			break
		}
	}
	fams := scrape()
	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "blocked"}); v != 1 {
		t.Errorf("released collector's success = %v, want 1", v)
	}
	if n := blocked.calls.Load(); n != 2 {
		t.Errorf("the released collector ran %d times in all, want 2", n)
	}
}

// Two dRAID vdevs each using its distributed spare and two raidz1 vdevs each
// replacing their first disk, as real OpenZFS 2.3.2 and 2.4.4 printed them: zpool
// names two vdevs spare-0 and two replacing-0 in one pool. From the JSON and
// from the text status alike, each is exported under its own name with its
// children below it, and nothing is dropped.
func TestDuplicateVdevNamesFromGuest(t *testing.T) {
	// The file vdevs' directory of each walk.
	for release, files := range map[string]string{"2.3": "/var/tmp/dup1984221827", "2.4": "/var/tmp/dup1315242656"} {
		t.Run(release, func(t *testing.T) { testDuplicateVdevNamesFromGuest(t, guestDir(release), files) })
	}
}

func testDuplicateVdevNamesFromGuest(t *testing.T, dir, files string) {
	captures, err := filepath.Glob(filepath.Join(dir, "10-duplicate-names__*.txt"))
	if err != nil || len(captures) == 0 {
		t.Fatalf("no captures: %v", err)
	}
	textOnly := t.TempDir() // the same outputs from a zpool without -j
	for _, f := range captures {
		if strings.Contains(f, "_-j_") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(textOnly, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	leaf := func(n int) string {
		return fmt.Sprintf("%s/f%02d", files, n)
	}
	want := []struct{ pool, vdev, typ, parent string }{
		{"dupd", "draid1:2d:4c:1s-0/spare-0", "spare", "draid1:2d:4c:1s-0"},
		{"dupd", "draid1:2d:4c:1s-1/spare-0", "spare", "draid1:2d:4c:1s-1"},
		{"dupd", leaf(1), "file", "draid1:2d:4c:1s-0/spare-0"},
		{"dupd", leaf(5), "file", "draid1:2d:4c:1s-1/spare-0"},
		{"dupd", "draid1-0-0", "dspare", "draid1:2d:4c:1s-0/spare-0"},
		{"dupd", "draid1-1-0", "dspare", "draid1:2d:4c:1s-1/spare-0"},
		{"dupr", "raidz1-0/replacing-0", "replacing", "raidz1-0"},
		{"dupr", "raidz1-1/replacing-0", "replacing", "raidz1-1"},
		{"dupr", leaf(9), "file", "raidz1-0/replacing-0"},
		{"dupr", leaf(16), "file", "raidz1-1/replacing-0"},
	}
	trees := map[string][]string{}
	for format, dir := range map[string]string{"json": dir, "exact": textOnly} { // exact: status -p
		t.Run(format, func(t *testing.T) {
			replay, err := runner.NewReplayWithOptions(dir, runner.ReplayOptions{Scenarios: []string{"10-duplicate-names"}})
			if err != nil {
				t.Fatal(err)
			}
			e, _ := replayExporter(t, replay, 0)
			fams := gather(t, e) // a pedantic registry: fails on a series sent twice
			if v, _ := value(fams, "zfs_exporter_capabilities_info", map[string]string{"status_format": format}); v != 1 {
				t.Errorf("status not read as %s", format)
			}
			for _, w := range want {
				labels := map[string]string{"pool": w.pool, "vdev": w.vdev, "vdev_type": w.typ, "parent": w.parent}
				if v, ok := value(fams, "zfs_vdev_info", labels); !ok || v != 1 {
					t.Errorf("no zfs_vdev_info%v", labels)
				}
			}
			for _, labels := range []map[string]string{
				{"pool": "dupd", "vdev": "draid1-0-0", "state": "inuse"},
				{"pool": "dupd", "vdev": "draid1-1-0", "state": "inuse"},
				{"pool": "dupd", "vdev": leaf(5), "state": "offline"},
				{"pool": "dupd", "vdev": "draid1:2d:4c:1s-1/spare-0", "state": "degraded"},
				{"pool": "dupr", "vdev": "raidz1-1/replacing-0", "state": "online"},
			} {
				if v, _ := value(fams, "zfs_vdev_state", labels); v != 1 {
					t.Errorf("zfs_vdev_state%v != 1", labels)
				}
			}
			for _, c := range []string{"status", "properties", "vdev_io"} {
				if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": c}); v != 1 {
					t.Errorf("collector %s failed", c)
				}
				for _, reason := range []string{"duplicate", "invalid"} {
					if v, _ := value(fams, "zfs_exporter_dropped_series_total", map[string]string{"collector": c, "reason": reason}); v != 0 {
						t.Errorf("collector %s: %v series dropped as %s", c, v, reason)
					}
				}
			}
			// Vdev properties list no spare-N or replacing-N: each has the
			// sum of its own children, not of the other one's.
			for _, top := range []string{"raidz1-0", "raidz1-1"} {
				parent := top + "/replacing-0"
				got, _ := value(fams, "zfs_vdev_write_bytes_total", map[string]string{"pool": "dupr", "vdev": parent})
				children := 0.0
				for _, s := range series(fams, "zfs_vdev_info", map[string]string{"pool": "dupr", "parent": parent}) {
					v, _ := value(fams, "zfs_vdev_write_bytes_total", map[string]string{"pool": "dupr", "vdev": s["vdev"]})
					children += v
				}
				if format == "json" && (got <= 0 || got != children) {
					t.Errorf("%s: write bytes %v, its children %v: want equal and > 0", parent, got, children)
				}
			}
			var tree []string
			for _, s := range series(fams, "zfs_vdev_info", nil) {
				tree = append(tree, s["pool"]+" "+s["vdev"]+" < "+s["parent"])
			}
			slices.Sort(tree)
			trees[format] = tree
		})
	}
	if j, txt := strings.Join(trees["json"], "\n"), strings.Join(trees["exact"], "\n"); j != txt {
		t.Errorf("the JSON and the text status give different trees:\n%s\n\n%s", j, txt)
	}
}

// series lists the label sets of the series of name that have labels.
func series(families []*dto.MetricFamily, name string, labels map[string]string) []map[string]string {
	var out []map[string]string
	for _, mf := range families {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue metrics
				}
			}
			out = append(out, got)
		}
	}
	return out
}
