package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

const (
	kib = 1024
	// testCPUs is the CPU count of the test samplers.
	testCPUs = 4
)

func newTestOSSampler(os string, interval time.Duration) *OSIostatSampler {
	s := NewOSIostatSampler(os, interval, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.now = func() time.Time { return testNow }
	s.cpus = testCPUs
	return s
}

// readSample returns the output part of a fixture or corpus sample.
func readSample(t *testing.T, path string) string {
	t.Helper()
	return string(sample.MustRead(t, path).Body)
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	return readSample(t, filepath.Join("testdata", "disk-iostat", name))
}

func corpusIostat(t *testing.T, name string) string {
	t.Helper()
	return readSample(t, filepath.Join(sample.Dir(t, "corpus/iostat"), name))
}

func consumeAll(t *testing.T, s *OSIostatSampler, stream string) {
	t.Helper()
	if err := s.consume(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
}

func sampledDisk(t *testing.T, s *OSIostatSampler, name string) iostatDisk {
	t.Helper()
	disks, _, _ := s.snapshot()
	d, ok := disks[name]
	if !ok {
		t.Fatalf("no disk %s among %v", name, slices.Sorted(maps.Keys(disks)))
	}
	return d
}

type figure struct {
	name      string
	got, want float64
}

func checkFigures(t *testing.T, what string, figures []figure) {
	t.Helper()
	for _, f := range figures {
		if !near(f.got, f.want) {
			t.Errorf("%s %s = %v, want %v", what, f.name, f.got, f.want)
		}
	}
}

func gaugeOf(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// Three 10 s reports of `iostat -xnc 10` on illumos: the first (since
// boot) is skipped, the next two integrated.
func TestOSIostatSamplerIllumos(t *testing.T) {
	s := newTestOSSampler("illumos", 10*time.Second)
	consumeAll(t, s, fixture(t, "illumos-iostat-xnc-10.txt"))

	d := sampledDisk(t, s, "c0t5000C500335F95E3d0")
	// Reports 2 and 3: 412.6 then 398.2 r/s, 52608.3 then 50841.6 kr/s,
	// wait 1.2 then 1.0, actv 9.8 then 9.7, %b 96 then 95.
	checkFigures(t, "c0t5000C500335F95E3d0", []figure{
		{"read ops", d.readOps, (412.6 + 398.2) * 10},
		{"write ops", d.writeOps, (0.8 + 1.1) * 10},
		{"read bytes", d.readBytes, (52608.3 + 50841.6) * kib * 10},
		{"write bytes", d.writeBytes, (4.8 + 6.4) * kib * 10},
		{"busy seconds", d.busySeconds, (0.96 + 0.95) * 10},
		{"queue seconds", d.queueSeconds, (1.2 + 9.8 + 1.0 + 9.7) * 10},
		// Gauges from report 3.
		{"wait", gaugeOf(d.last.Wait), 1.0},
		{"actv", gaugeOf(d.last.Actv), 9.7},
		{"wsvc_t", gaugeOf(d.last.WaitSvcSeconds), 0.0025},
		{"asvc_t", gaugeOf(d.last.ActvSvcSeconds), 0.0244},
		{"%w", gaugeOf(d.last.WaitRatio), 0.21},
		{"%b", gaugeOf(d.last.BusyRatio), 0.95},
	})
	if !d.hasQueue {
		t.Errorf("no queue time from wait and actv")
	}

	cpu, ok := s.CPUSeconds()
	if !ok {
		t.Fatal("no CPU seconds")
	}
	// us sy dt id: 2 18 0 80, then 1 21 1 77; 10 s on 4 CPUs.
	checkFigures(t, "CPU", []figure{
		{"user", cpu["user"], (0.02 + 0.01) * 10 * testCPUs},
		{"system", cpu["system"], (0.18 + 0.21) * 10 * testCPUs},
		{"dtrace", cpu["dtrace"], (0.00 + 0.01) * 10 * testCPUs},
		{"idle", cpu["idle"], (0.80 + 0.77) * 10 * testCPUs},
	})
	if _, ok := cpu["iowait"]; ok || len(cpu) != 4 {
		t.Errorf("CPU modes = %v, want user, system, dtrace and idle", cpu)
	}

	// A restarted stream adds to the same counters; its first report is
	// skipped again.
	consumeAll(t, s, fixture(t, "illumos-iostat-xnc-10.txt"))
	if got, want := sampledDisk(t, s, "c0t5000C500335F95E3d0").readOps, 2*(412.6+398.2)*10; !near(got, want) {
		t.Errorf("after a restart read ops = %v, want %v", got, want)
	}
	if cpu, _ := s.CPUSeconds(); !near(cpu["system"], 2*(0.18+0.21)*10*testCPUs) {
		t.Errorf("after a restart system CPU seconds = %v", cpu["system"])
	}
}

// Oracle Solaris prints wt (I/O wait, always 0) where illumos prints dt.
func TestOSIostatSamplerSolaris(t *testing.T) {
	s := newTestOSSampler("solaris", 10*time.Second)
	consumeAll(t, s, fixture(t, "solaris-iostat-xnc-10.txt"))
	d := sampledDisk(t, s, "c0t5000CCA02D1C9A38d0")
	checkFigures(t, "c0t5000CCA02D1C9A38d0", []figure{
		{"write ops", d.writeOps, (96.4 + 88.1) * 10},
		{"write bytes", d.writeBytes, (11880.2 + 10944.0) * kib * 10},
		{"read ops", d.readOps, 12.5 * 10},
		{"busy seconds", d.busySeconds, (0.22 + 0.27) * 10},
		{"%w", gaugeOf(d.last.WaitRatio), 0.02},
	})
	cpu, _ := s.CPUSeconds()
	checkFigures(t, "CPU", []figure{
		{"iowait", cpu["iowait"], 0},
		{"user", cpu["user"], (0.04 + 0.06) * 10 * testCPUs},
		{"idle", cpu["idle"], (0.87 + 0.83) * 10 * testCPUs},
	})
	if _, ok := cpu["iowait"]; !ok {
		t.Errorf("no iowait mode from wt: %v", cpu)
	}
}

// FreeBSD's devstat layout: qlen for the active queue, ms/r ms/w ms/t,
// no wait queue and no CPU block without -C.
func TestOSIostatSamplerFreeBSD(t *testing.T) {
	s := newTestOSSampler("freebsd", 10*time.Second)
	consumeAll(t, s, fixture(t, "freebsd-iostat-x-w-10.txt"))
	d := sampledDisk(t, s, "da3")
	checkFigures(t, "da3", []figure{
		{"read ops", d.readOps, (0 + 95) * 10},
		{"write ops", d.writeOps, (208 + 186) * 10},
		{"read bytes", d.readBytes, (0 + 12160.0) * kib * 10},
		{"write bytes", d.writeBytes, (26406.6 + 23705.6) * kib * 10},
		{"busy seconds", d.busySeconds, (0.65 + 0.72) * 10},
		{"qlen", gaugeOf(d.last.QueueLength), 3},
		{"ms/r", gaugeOf(d.last.ReadAwaitSeconds), 0.007},
		{"ms/w", gaugeOf(d.last.WriteAwaitSeconds), 0.008},
		{"ms/t", gaugeOf(d.last.AwaitSeconds), 0.008},
	})
	if d.hasQueue || d.last.Wait != nil {
		t.Errorf("FreeBSD has no wait queue, got %+v", d)
	}
	if cpu, ok := s.CPUSeconds(); ok {
		t.Errorf("CPU seconds %v without a CPU block", cpu)
	}
}

// illumos starts from boot again after a state change notice: the report
// after it is skipped whole, and the disk that came is counted from the
// report after that.
func TestOSIostatSamplerSkipsReportAfterStateChange(t *testing.T) {
	report := func(rows ...string) string {
		return "                    extended device statistics              \n" +
			"    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device\n" +
			strings.Join(rows, "\n") + "\n"
	}
	const (
		c1 = "    2.0    0.0   16.0    0.0  0.0  0.1    0.0    5.0   0   1 c1t0d0"
		c2 = "    4.0    0.0   32.0    0.0  0.0  0.1    0.0    5.0   0   2 c1t0d0"
		n1 = "    8.0    0.0   64.0    0.0  0.0  0.1    0.0    5.0   0   3 c1t1d0"
		// What iostat prints after the notice: figures since boot.
		boot1 = "  900.0    0.0 9000.0    0.0  0.0  0.1    0.0    5.0   0  50 c1t0d0"
		bootN = "  700.0    0.0 7000.0    0.0  0.0  0.1    0.0    5.0   0  40 c1t1d0"
	)
	stream := report(c1) + report(c1) + "<<disk added: c1t1d0>>\n" + report(boot1, bootN) + report(c2, n1)
	s := newTestOSSampler("illumos", time.Second)
	consumeAll(t, s, stream)
	if got := sampledDisk(t, s, "c1t0d0").readOps; got != 2+4 {
		t.Errorf("c1t0d0 read ops = %v, want 6 (reports 2 and 4)", got)
	}
	if got := sampledDisk(t, s, "c1t1d0").readOps; got != 8 {
		t.Errorf("c1t1d0 read ops = %v, want 8 (report 4)", got)
	}
}

// FreeBSD pairs old and new devices by position when its device list
// changes, whether a device came or went: such a report is skipped whole.
// A disk that left loses its counters.
func TestOSIostatSamplerFreeBSDDeviceListChange(t *testing.T) {
	report := func(rows ...string) string {
		return "                        extended device statistics  \n" +
			"device       r/s     w/s     kr/s     kw/s  ms/r  ms/w  ms/o  ms/t qlen  %b  \n" +
			strings.Join(rows, "\n") + "\n"
	}
	const (
		ada0 = "ada0          10       0   1280.0      0.0     1     0     0     1    0   5 "
		ada1 = "ada1          20       0   2560.0      0.0     1     0     0     1    0   9 "
		da0  = "da0         9999       0 999999.0      0.0     1     0     0     1    0  99 "
	)
	s := newTestOSSampler("freebsd", time.Second)
	consumeAll(t, s, report(ada0, ada1)+report(ada0, ada1)+report(ada0, da0, ada1)+report(ada0, ada1)+report(ada0, ada1))
	if got := sampledDisk(t, s, "ada1").readOps; got != 20+20 {
		t.Errorf("ada1 read ops = %v, want 40 (reports 2 and 5)", got)
	}
	if disks, _, _ := s.snapshot(); len(disks) != 2 {
		t.Errorf("disks = %v, want ada0 and ada1 only", slices.Sorted(maps.Keys(disks)))
	}
}

// Real illumos output (-z, one-second reports): sd1 is in every report,
// ramdisk1 only in the first.
func TestOSIostatSamplerCorpusIllumosFiveReports(t *testing.T) {
	s := newTestOSSampler("illumos", time.Second)
	consumeAll(t, s, corpusIostat(t, "illumos-iostat-xzn-tab-mangled-five-reports.txt"))
	d := sampledDisk(t, s, "sd1")
	checkFigures(t, "sd1", []figure{
		{"read ops", d.readOps, 1.0 + 0.0 + 2.0 + 1.0},
		{"write ops", d.writeOps, 4.0 + 6.0 + 301.5 + 0.0},
		{"read bytes", d.readBytes, (127.3 + 0.0 + 255.5 + 128.2) * kib},
		{"write bytes", d.writeBytes, (47.7 + 32.0 + 19327.1 + 0.0) * kib},
		{"busy seconds", d.busySeconds, 0.01 + 0 + 0.04 + 0.01},
		{"asvc_t", gaugeOf(d.last.ActvSvcSeconds), 0.014},
		{"%b", gaugeOf(d.last.BusyRatio), 0.01},
	})
	if disks, _, _ := s.snapshot(); len(disks) != 1 {
		t.Errorf("disks = %v, want sd1 only", slices.Sorted(maps.Keys(disks)))
	}
}

// The illumos man page's `iostat -xcnCXTdz 5`: a dt column and -T d
// timestamps.
func TestOSIostatSamplerCorpusIllumosCPU(t *testing.T) {
	s := newTestOSSampler("illumos", 5*time.Second)
	consumeAll(t, s, corpusIostat(t, "illumos-man-iostat-xcnCXTdz-controller.txt"))
	cpu, ok := s.CPUSeconds()
	if !ok {
		t.Fatal("no CPU seconds")
	}
	// The second report: us sy dt id = 11 31 1 22.
	checkFigures(t, "CPU", []figure{
		{"user", cpu["user"], 0.11 * 5 * testCPUs},
		{"system", cpu["system"], 0.31 * 5 * testCPUs},
		{"dtrace", cpu["dtrace"], 0.01 * 5 * testCPUs},
		{"idle", cpu["idle"], 0.22 * 5 * testCPUs},
	})
	d := sampledDisk(t, s, "c12")
	checkFigures(t, "c12", []figure{
		{"read ops", d.readOps, 565.3 * 5},
		{"write bytes", d.writeBytes, 10458.9 * kib * 5},
		{"actv", gaugeOf(d.last.Actv), 26.6},
	})
}

// Every illumos, Solaris and FreeBSD `iostat -x` sample of the corpus
// streams without error, and its first report never counts.
func TestOSIostatSamplerCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/iostat")
	streamed := 0
	for _, f := range sample.Glob(t, dir, "*.txt") {
		name := filepath.Base(f.Path)
		if strings.HasPrefix(name, "linux-") || strings.Contains(f.Header["command"], "-E") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			s := newTestOSSampler("illumos", time.Second)
			if strings.HasPrefix(name, "freebsd") {
				s = newTestOSSampler("freebsd", time.Second)
			}
			err := s.consume(bytes.NewReader(f.Body))
			if f.Truncated() {
				return // fragments end in "[...]"
			}
			if err != nil {
				t.Fatal(err)
			}
			disks, _, _ := s.snapshot()
			if len(disks) == 0 {
				t.Fatal("no disks")
			}
			reports := strings.Count(string(f.Body), "extended device statistics")
			for name, d := range disks {
				if reports == 1 && (d.readOps != 0 || d.writeBytes != 0 || d.last != nil) {
					t.Errorf("%s counted from the since-boot report: %+v", name, d)
				}
			}
			streamed++
		})
	}
	if streamed != 9 {
		t.Errorf("%d corpus samples streamed, want the 9 complete illumos, Solaris and FreeBSD ones", streamed)
	}
}

func TestIostatDiskOf(t *testing.T) {
	for _, tc := range []struct{ os, leaf, want string }{
		{"illumos", "c0t5000C500335F95E3d0", "c0t5000C500335F95E3d0"},
		{"illumos", "c0t5000C500335F95E3d0s0", "c0t5000C500335F95E3d0"},
		{"illumos", "c1t1d0s0", "c1t1d0"},
		{"illumos", "c2d0p1", "c2d0"},
		{"illumos", "/dev/dsk/c1t4d0s1", "c1t4d0"},
		{"solaris", "c0t5000CCA02D1C9A38d0", "c0t5000CCA02D1C9A38d0"},
		{"solaris", "c0t600144F0D1CDC0D800005A1E3B2F0001d0", "c0t600144F0D1CDC0D800005A1E3B2F0001d0"},
		{"illumos", "sd1", ""},
		{"illumos", "/var/tmp/file1", ""},
		{"illumos", "ada0", ""},
		{"freebsd", "ada0p3", "ada0"},
		{"freebsd", "ada0", "ada0"},
		{"freebsd", "da12", "da12"},
		{"freebsd", "nvd0p2", "nvd0"},
		{"freebsd", "nda1p4", "nda1"},
		{"freebsd", "ada2s4a", "ada2"},
		{"freebsd", "ada1s1", "ada1"},
		{"freebsd", "ada4p4.eli", "ada4"},
		{"freebsd", "/dev/ada1p3", "ada1"},
		{"freebsd", "vtbd0p2", "vtbd0"},
		{"freebsd", "md3", "md3"},
		{"freebsd", "gpt/zfs0", ""},
		{"freebsd", "gptid/5c2d1e4a-8f3b-11ee-9a2c-3cecef1a2b3c", ""},
		{"freebsd", "diskid/DISK-WD-WCC4E1XK7P2H", ""},
		{"freebsd", "c1t0d0", ""},
		{"freebsd", "/var/tmp/file1", ""},
		{"linux", "sda1", ""},
	} {
		got, ok := iostatDiskOf(tc.os, tc.leaf)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("iostatDiskOf(%s, %q) = %q, %v; want %q", tc.os, tc.leaf, got, ok, tc.want)
		}
	}
}

// freebsdLabels stands in for GEOM: the providers under the labels of
// testdata/disk-iostat/freebsd-zpool-status.txt. gpt/spare0 is not found.
func freebsdLabels(name string) (string, error) {
	provider, ok := map[string]string{
		"gpt/zfs0": "ada0p3",
		"gpt/zfs1": "ada1p3",
		"gptid/5c2d1e4a-8f3b-11ee-9a2c-3cecef1a2b3c": "ada2p1",
		"diskid/DISK-WD-WCC4E1XK7P2H":                "ada3",
	}[name]
	if !ok {
		return "", fmt.Errorf("no GEOM provider named %s", name)
	}
	return provider, nil
}

func TestIostatDiskResolver(t *testing.T) {
	r := iostatDiskResolver{os: "freebsd"}
	if _, err := r.resolve("gpt/zfs0"); !errors.Is(err, errNoDevice) {
		t.Errorf("a label resolved without GEOM: %v", err)
	}
	r.provider = freebsdLabels
	for leaf, want := range map[string]string{"gpt/zfs0": "ada0", "diskid/DISK-WD-WCC4E1XK7P2H": "ada3", "da0p1.eli": "da0"} {
		if got, err := r.resolve(leaf); got != want || err != nil {
			t.Errorf("resolve(%q) = %q, %v; want %q", leaf, got, err, want)
		}
	}
	if _, err := r.resolve("gpt/spare0"); err == nil || !strings.Contains(err.Error(), "gpt/spare0") {
		t.Errorf("unknown label: error %v", err)
	}
	r.provider = func(string) (string, error) { return "mirror/gm0p3", nil }
	if _, err := r.resolve("gpt/zfs0"); !errors.Is(err, errNoDevice) {
		t.Errorf("a label on a gmirror resolved: %v", err)
	}
}

func TestIsIostatPseudoDevice(t *testing.T) {
	pools := map[string]bool{"zones": true}
	for name, want := range map[string]bool{
		"zones": true, "lofi1": true, "ramdisk1": true, "fuji:/export/home/user3": true,
		"pass0": true, "cd0": true, "md10": true,
		"c0t0d0": false, "ada0": false, "mdx": false, "sd1": false, "nvd0": false,
	} {
		if got := isIostatPseudoDevice(name, pools); got != want {
			t.Errorf("isIostatPseudoDevice(%q) = %v, want %v", name, got, want)
		}
	}
}

func parseStatusFile(t *testing.T, path string) *zpool.Status {
	t.Helper()
	st, err := zpool.ParseStatus(strings.NewReader(readSample(t, path)), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// iostatExporter runs the disk collector of os over a sampler.
func iostatExporter(t *testing.T, os string, sampler *OSIostatSampler, all bool, logs io.Writer) *Exporter {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := testConfig(zfs.Config{Runner: nopRunner{}, Now: func() time.Time { return testNow }}, Config{DiskOS: os, DiskSampler: sampler, DiskAll: all}, logger)
	e, err := New(cfg, logger, map[string]bool{"disk": true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestIostatDiskCollectorIllumos(t *testing.T) {
	s := newTestOSSampler("illumos", 10*time.Second)
	consumeAll(t, s, fixture(t, "illumos-iostat-xnc-10.txt"))
	var logs bytes.Buffer
	e := iostatExporter(t, "illumos", s, true, &logs)
	c := fixedStatus{e, parseStatusFile(t, filepath.Join("testdata", "disk-iostat", "illumos-zpool-status.txt"))}
	fams := gatherFrom(t, c)
	compareGolden(t, filepath.Join("testdata", "disk-illumos.prom"), exposition(t, fams))

	if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "disk"}); v != 1 {
		t.Errorf("disk collector failed:\n%s", logs.String())
	}
	want := []string{
		"c0t5000C5003340F9A7d0 tank c0t5000C5003340F9A7d0",
		"c0t5000C50033411F3Bd0 tank c0t5000C50033411F3Bd0",
		"c0t5000C500335DC60Fd0 tank c0t5000C500335DC60Fd0",
		"c0t5000C500335E0A11d0 tank c0t5000C500335E0A11d0", // the spare
		"c0t5000C500335F95E3d0 tank c0t5000C500335F95E3d0",
		"c1t0d0 rpool c1t0d0s0",
		"c2t0d0 tank c2t0d0s0", // log and cache on slices of one disk
		"c2t0d0 tank c2t0d0s1",
		"c3t0d0  ", // backs no pool
	}
	if got := diskSeries(fams, "zfs_disk_read_operations_total"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	disk := map[string]string{"device": "c0t5000C500335F95E3d0"}
	for name, want := range map[string]float64{
		"zfs_disk_read_operations_total":          (412.6 + 398.2) * 10,
		"zfs_disk_io_time_seconds_total":          (0.96 + 0.95) * 10,
		"zfs_disk_io_time_weighted_seconds_total": (1.2 + 9.8 + 1.0 + 9.7) * 10,
		"zfs_disk_wait_queue_length":              1.0,
		"zfs_disk_active_queue_length":            9.7,
		"zfs_disk_wait_service_time_seconds":      0.0025,
		"zfs_disk_active_service_time_seconds":    0.0244,
		"zfs_disk_wait_busy_ratio":                0.21,
		"zfs_disk_busy_ratio":                     0.95,
	} {
		if got, ok := value(fams, name, disk); !ok || !near(got, want) {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for _, skipped := range []string{"ramdisk1", "rpool", "tank", "fileserver:/export/home"} {
		if _, ok := value(fams, "zfs_disk_read_operations_total", map[string]string{"device": skipped}); ok {
			t.Errorf("%s exported as a disk", skipped)
		}
	}
	if _, ok := value(fams, "zfs_disk_service_time_seconds", nil); ok {
		t.Errorf("FreeBSD's service time exported on illumos")
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

func TestIostatDiskCollectorFreeBSD(t *testing.T) {
	s := newTestOSSampler("freebsd", 10*time.Second)
	consumeAll(t, s, fixture(t, "freebsd-iostat-x-w-10.txt"))
	var logs bytes.Buffer
	e := iostatExporter(t, "freebsd", s, false, &logs)
	// GEOM's labels, as glabel prints them, give the providers under
	// gpt/..., gptid/... and diskid/... leaves.
	glabel := filepath.Join("..", "internal", "geom", "testdata", "glabel-status-s.txt")
	e.collectors["disk"].(*iostatDiskCollector).runner = replayDir(t, map[string]string{"glabel status -s": "0|" + readSample(t, glabel)})
	c := fixedStatus{e, parseStatusFile(t, filepath.Join("testdata", "disk-iostat", "freebsd-zpool-status.txt"))}
	fams := gatherFrom(t, c)
	compareGolden(t, filepath.Join("testdata", "disk-freebsd.prom"), exposition(t, fams))

	want := []string{
		"ada0 zroot gpt/zfs0",
		"ada1 zroot gpt/zfs1",
		"ada2 tank gptid/5c2d1e4a-8f3b-11ee-9a2c-3cecef1a2b3c",
		"ada3 tank diskid/DISK-WD-WCC4E1XK7P2H",
		"da0 tank da0p1.eli",
		"da1 tank da1",
		"da2 tank da2p1",
		"da3 tank da3",
		"nvd0 tank nvd0p2",
		"nvd0 tank nvd0p3",
	}
	if got := diskSeries(fams, "zfs_disk_write_operations_total"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	da3 := map[string]string{"device": "da3"}
	for name, want := range map[string]float64{
		"zfs_disk_write_operations_total":    (208 + 186) * 10,
		"zfs_disk_active_queue_length":       3,
		"zfs_disk_service_time_seconds":      0.008,
		"zfs_disk_read_service_time_seconds": 0.007,
		"zfs_disk_busy_ratio":                0.72,
	} {
		if got, ok := value(fams, name, da3); !ok || !near(got, want) {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
	for _, absent := range []string{"zfs_disk_wait_queue_length", "zfs_disk_io_time_weighted_seconds_total"} {
		if _, ok := value(fams, absent, nil); ok {
			t.Errorf("%s exported on FreeBSD", absent)
		}
	}
	if !strings.Contains(logs.String(), "gpt/spare0") {
		t.Errorf("the spare whose label GEOM does not know is not logged:\n%s", logs.String())
	}
	if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

func TestIostatDiskCollectorSolaris(t *testing.T) {
	s := newTestOSSampler("solaris", 10*time.Second)
	consumeAll(t, s, fixture(t, "solaris-iostat-xnc-10.txt"))
	e := iostatExporter(t, "solaris", s, false, io.Discard)
	fams := gatherFrom(t, fixedStatus{e, parseStatusFile(t, filepath.Join("testdata", "disk-iostat", "solaris-zpool-status.txt"))})
	want := "c0t5000CCA02D1C9A38d0 tank c0t5000CCA02D1C9A38d0\nc0t5000CCA02D1E0B44d0 tank c0t5000CCA02D1E0B44d0"
	if got := strings.Join(diskSeries(fams, "zfs_disk_write_bytes_total"), "\n"); got != want {
		t.Errorf("series:\n%s\nwant:\n%s", got, want)
	}
	if got, _ := value(fams, "zfs_disk_write_bytes_total", map[string]string{"device": "c0t5000CCA02D1E0B44d0"}); !near(got, (11790.6+10880.0)*kib*10) {
		t.Errorf("write bytes = %v", got)
	}
}

// Real SmartOS output, whose pool "zones" is also an iostat device, joined
// to the real status of a SmartOS pool "zones". The sample has one report;
// it is streamed twice, as an interval stream would repeat it.
func TestIostatDiskCollectorCorpusSmartOS(t *testing.T) {
	body := corpusIostat(t, "smartos-iostat-xzn-pool-as-device.txt")
	s := newTestOSSampler("illumos", time.Second)
	consumeAll(t, s, body+body)
	e := iostatExporter(t, "illumos", s, true, io.Discard)
	st := parseStatusFile(t, filepath.Join(sample.Dir(t, "corpus/zpool-status"), "smartos-3way-mirror-log-offline-slices.txt"))
	fams := gatherFrom(t, fixedStatus{e, st})
	// Of the pool's leaves (c1t1d0s0, c1t0d0s0, c1t4d0s1, c1t2d0s4) only
	// c1t0d0 is in this iostat; c0t0d0..c0t3d0 back no pool there.
	want := []string{"c0t0d0  ", "c0t1d0  ", "c0t2d0  ", "c0t3d0  ", "c1t0d0 zones c1t0d0s0"}
	if got := diskSeries(fams, "zfs_disk_read_operations_total"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("series:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	c1 := map[string]string{"device": "c1t0d0"}
	for name, want := range map[string]float64{
		"zfs_disk_read_operations_total":       0.3,
		"zfs_disk_read_bytes_total":            6.4 * kib,
		"zfs_disk_active_service_time_seconds": 0.0017,
	} {
		if got, ok := value(fams, name, c1); !ok || !near(got, want) {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
}

// Real FreeBSD 14 output joined to a real FreeBSD pool on whole disks.
func TestIostatDiskCollectorCorpusFreeBSD(t *testing.T) {
	s := newTestOSSampler("freebsd", time.Second)
	consumeAll(t, s, corpusIostat(t, "freebsd14-iostat-x-d-two-reports.txt"))
	e := iostatExporter(t, "freebsd", s, true, io.Discard)
	st := parseStatusFile(t, filepath.Join(sample.Dir(t, "corpus/zpool-status"), "fbsd-handbook-features-not-enabled.txt"))
	fams := gatherFrom(t, fixedStatus{e, st})
	want := "ada0 mypool ada0\nada1 mypool ada1" // pass0 and pass1 are no disks
	if got := strings.Join(diskSeries(fams, "zfs_disk_write_bytes_total"), "\n"); got != want {
		t.Errorf("series:\n%s\nwant:\n%s", got, want)
	}
	// The first report (20.7 kw/s since boot) is skipped; the second is
	// all zeros.
	if got, _ := value(fams, "zfs_disk_write_bytes_total", map[string]string{"device": "ada0"}); got != 0 {
		t.Errorf("ada0 write bytes = %v, want 0", got)
	}
	if got, ok := value(fams, "zfs_disk_busy_ratio", map[string]string{"device": "ada0"}); !ok || got != 0 {
		t.Errorf("ada0 busy ratio = %v (present %v), want 0", got, ok)
	}
}

func TestIostatDiskCollectorWithoutData(t *testing.T) {
	status := parseStatusFile(t, filepath.Join("testdata", "disk-iostat", "illumos-zpool-status.txt"))
	run := func(e *Exporter) ([]string, error) {
		t.Helper()
		ch := make(chan prometheus.Metric, 1000)
		scrape := e.cfg.ZFS.NewScrapeWithStatus(status, nil)
		err := e.collectors["disk"].Update(context.Background(), scrape, ch)
		close(ch)
		var names []string
		for m := range ch {
			names = append(names, m.Desc().String())
		}
		return names, err
	}

	// --once: no sampler.
	if _, err := run(iostatExporter(t, "illumos", nil, false, io.Discard)); !errors.Is(err, ErrNoData) {
		t.Errorf("without a sampler: %v, want ErrNoData", err)
	}
	// Before the first report.
	s := newTestOSSampler("illumos", 10*time.Second)
	e := iostatExporter(t, "illumos", s, false, io.Discard)
	if _, err := run(e); !errors.Is(err, ErrNoData) {
		t.Errorf("before the first report: %v, want ErrNoData", err)
	}
	// iostat failing before any report fails the collector.
	s.setErr(errors.New("iostat: not found"))
	if _, err := run(e); err == nil || !strings.Contains(err.Error(), "iostat: not found") {
		t.Errorf("with iostat failing: %v", err)
	}
	// A stream that stopped: counters stay, gauges go, the error says why.
	consumeAll(t, s, fixture(t, "illumos-iostat-xnc-10.txt"))
	s.setErr(errors.New("iostat exited"))
	s.now = func() time.Time { return testNow.Add(time.Minute) }
	descs, err := run(e)
	if err == nil || !strings.Contains(err.Error(), "stale") {
		t.Errorf("stale stream: %v", err)
	}
	joined := strings.Join(descs, "\n")
	if !strings.Contains(joined, "zfs_disk_read_operations_total") || strings.Contains(joined, "zfs_disk_busy_ratio") {
		t.Errorf("stale stream: want counters without gauges, got\n%s", joined)
	}
}

// As on Linux, iostat's disks are still reported when zpool status fails:
// under the labels of the last join, or before any without pool and vdev.
func TestIostatDiskCollectorWhenStatusFails(t *testing.T) {
	s := newTestOSSampler("illumos", 10*time.Second)
	consumeAll(t, s, fixture(t, "illumos-iostat-xnc-10.txt"))
	var logs bytes.Buffer
	e := iostatExporter(t, "illumos", s, false, &logs)
	statusErr := errors.New("zpool status: timed out")
	status := parseStatusFile(t, filepath.Join("testdata", "disk-iostat", "illumos-zpool-status.txt"))
	success := func(fams []*dto.MetricFamily) float64 {
		v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "disk"})
		return v
	}

	fams := gatherFrom(t, failedStatus{e, statusErr})
	got := diskSeries(fams, "zfs_disk_read_operations_total")
	want := []string{"c0t5000C5003340F9A7d0  ", "c0t5000C50033411F3Bd0  ", "c0t5000C500335DC60Fd0  ", "c0t5000C500335E0A11d0  ",
		"c0t5000C500335F95E3d0  ", "c1t0d0  ", "c2t0d0  ", "c3t0d0  "} // not the pools rpool and tank, which iostat lists too
	if success(fams) != 1 || !slices.Equal(got, want) {
		t.Errorf("status failing from the start: success %v, series %q; want every disk without pool and vdev %q\n%s", success(fams), got, want, logs.String())
	}

	joined := diskSeries(gatherFrom(t, fixedStatus{e, status}), "zfs_disk_read_operations_total")
	fams = gatherFrom(t, failedStatus{e, statusErr})
	got = diskSeries(fams, "zfs_disk_read_operations_total")
	if success(fams) != 1 || len(got) == 0 || !slices.Equal(got, joined) {
		t.Errorf("status failing after a join: success %v, series %q, want those of the join %q", success(fams), got, joined)
	}
}

// The disk collector reads diskstats on Linux and the iostat sampler on
// illumos, Solaris and FreeBSD, whichever the host.
func TestDiskCollectorChoosesItsSource(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for os, want := range map[string]string{
		"linux": "*collector.diskCollector", "illumos": "*collector.iostatDiskCollector",
		"solaris": "*collector.iostatDiskCollector", "freebsd": "*collector.iostatDiskCollector",
	} {
		c, err := newDiskCollector(testConfig(zfs.Config{Runner: nopRunner{}}, Config{DiskOS: os}, logger), logger)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%T", c); got != want {
			t.Errorf("%s: %s, want %s", os, got, want)
		}
	}
}

// replayDir writes captures, each "command line" -> "exit status|stdout".
func replayDir(t *testing.T, captures map[string]string) *runner.Replay {
	t.Helper()
	dir := t.TempDir()
	i := 0
	for line, out := range captures {
		exit, stdout, _ := strings.Cut(out, "|")
		header := "# command: " + line + "\n"
		if exit != "0" {
			header += "# exit: " + exit + "\n# stderr: iostat: illegal option -- c\n"
		}
		i++
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("c%d.txt", i)), []byte(header+"# ---\n"+stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The sampler tries the best form first: a form iostat refuses with its
// usage falls back to the next.
func TestOSIostatSamplerDetectsTheForm(t *testing.T) {
	stream := fixture(t, "illumos-iostat-xnc-10.txt")
	oneReport := stream[:strings.Index(stream[1:], "     cpu")+1]
	for _, tc := range []struct {
		os       string
		captures map[string]string
		want     string
	}{
		{"illumos", map[string]string{"iostat -xnc": "0|" + oneReport}, "-xnc 10"},
		{"solaris", map[string]string{"iostat -xnc": "1|", "iostat -xn": "0|" + oneReport}, "-xn 10"},
		{"freebsd", map[string]string{"iostat -x": "0|" + fixture(t, "freebsd-iostat-x-w-10.txt")}, "-x -w 10"},
	} {
		s := newTestOSSampler(tc.os, 10*time.Second)
		s.runner = replayDir(t, tc.captures)
		args, err := s.streamArgs(context.Background())
		if err != nil || strings.Join(args, " ") != tc.want {
			t.Errorf("%s: args %q, %v; want %q", tc.os, args, err, tc.want)
		}
	}

	// Refused everywhere: an error naming the command.
	s := newTestOSSampler("illumos", 10*time.Second)
	s.runner = replayDir(t, map[string]string{"iostat -xnc": "1|", "iostat -xn": "1|"})
	if _, err := s.streamArgs(context.Background()); err == nil || !strings.Contains(err.Error(), "iostat -xn") {
		t.Errorf("no form works: %v", err)
	}
	// A probe that timed out decides nothing: the next run asks again.
	calls := 0
	s = newTestOSSampler("illumos", 10*time.Second)
	s.runner = runnerFunc(func(ctx context.Context, name string, args ...string) ([]byte, error) {
		calls++
		if calls == 1 {
			return nil, &runner.Error{Command: name, ExitCode: -1, Err: runner.ErrTimeout}
		}
		return []byte(oneReport), nil
	})
	if _, err := s.streamArgs(context.Background()); !errors.Is(err, runner.ErrTimeout) {
		t.Errorf("timed-out probe: %v", err)
	}
	if args, err := s.streamArgs(context.Background()); err != nil || strings.Join(args, " ") != "-xnc 10" {
		t.Errorf("after a timeout: %q, %v", args, err)
	}
}

type runnerFunc func(ctx context.Context, name string, args ...string) ([]byte, error)

func (f runnerFunc) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	return f(ctx, cmd.Path, cmd.Args...)
}

// Run over a replayed stream: nothing runs before Need; then the stream's
// reports are integrated, the freshness metrics name the source, and the
// stream stops with ctx.
func TestOSIostatSamplerRun(t *testing.T) {
	stream := fixture(t, "illumos-iostat-xnc-10.txt")
	replay := replayDir(t, map[string]string{
		"iostat -xnc":    "0|" + stream,
		"iostat -xnc 10": "0|" + stream,
	})
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	s := NewOSIostatSampler("illumos", 10*time.Second, replay.StartStream, replay, logger)
	s.cpus = testCPUs
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()

	time.Sleep(50 * time.Millisecond)
	if n := replay.Stats()["iostat -xnc"].Runs; n != 0 {
		t.Errorf("iostat ran %d times before Need", n)
	}
	e, err := New(testConfig(zfs.Config{Runner: nopRunner{}}, Config{DiskOS: "illumos", DiskSampler: s}, logger), logger, map[string]bool{"disk": true})
	if err != nil {
		t.Fatal(err)
	}
	// The replay writes the capture and keeps the stream open: the third
	// report is still pending, the second is integrated.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if disks, _, _ := s.snapshot(); disks != nil && disks["c0t5000C500335F95E3d0"].readOps > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no report integrated from the stream")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := sampledDisk(t, s, "c0t5000C500335F95E3d0").readOps; !near(got, 412.6*10) {
		t.Errorf("read ops = %v, want report 2's only", got)
	}
	if !s.Healthy() {
		t.Errorf("a running stream with a fresh report is not healthy")
	}
	ch := make(chan prometheus.Metric, 100)
	e.collectSourceMetrics(ch)
	close(ch)
	found := false
	for m := range ch {
		found = found || strings.Contains(m.Desc().String(), "source_up") && strings.Contains(fmt.Sprint(metricLabels(m)), SourceOSIostatStream)
	}
	if !found {
		t.Errorf("no freshness metric for %s", SourceOSIostatStream)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when ctx ended")
	}
}

func metricLabels(m prometheus.Metric) map[string]string {
	var pb dto.Metric
	_ = m.Write(&pb)
	labels := map[string]string{}
	for _, l := range pb.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

func FuzzIostatDiskOf(f *testing.F) {
	for _, leaf := range []string{"c0t5000C500335F95E3d0s0", "c2d0p1", "/dev/dsk/c1t4d0s1", "ada0p3", "ada2s4a", "ada4p4.eli", "gpt/zfs0", "/dev/ada1p3", "sd1"} {
		f.Add(leaf)
	}
	f.Fuzz(func(t *testing.T, leaf string) {
		for _, os := range []string{"illumos", "solaris", "freebsd"} {
			disk, ok := iostatDiskOf(os, leaf)
			if !ok {
				continue
			}
			// A disk is named in the leaf, and is its own disk.
			if disk == "" || !strings.Contains(leaf, disk) {
				t.Fatalf("%s: %q -> %q", os, leaf, disk)
			}
			if again, ok := iostatDiskOf(os, disk); !ok || again != disk {
				t.Fatalf("%s: %q -> %q -> %q, %v", os, leaf, disk, again, ok)
			}
		}
	})
}

// Whatever the stream, counters and CPU seconds never go negative.
func FuzzOSIostatSampler(f *testing.F) {
	for _, data := range osIostatSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, os := range []string{"illumos", "freebsd"} {
			s := newTestOSSampler(os, 10*time.Second)
			_ = s.consume(bytes.NewReader(data))
			_ = s.consume(bytes.NewReader(data))
			disks, _, _ := s.snapshot()
			for name, d := range disks {
				if min(d.readOps, d.writeOps, d.readBytes, d.writeBytes, d.busySeconds, d.queueSeconds) < 0 {
					t.Fatalf("%s: negative counter for %q: %+v", os, name, d)
				}
			}
			cpu, _ := s.CPUSeconds()
			for mode, v := range cpu {
				if v < 0 {
					t.Fatalf("%s: CPU %s = %v", os, mode, v)
				}
			}
		}
	})
}

// Run returns only once it has closed its stream, as the zpool iostat
// sampler's does (TestSamplerRunEndsItsStream).
func TestOSIostatSamplerRunEndsItsStream(t *testing.T) {
	stream, started := unreapedStreams()
	var log bytes.Buffer
	s := NewOSIostatSampler("illumos", 10*time.Second, stream, nopRunner{}, slog.New(slog.NewTextHandler(&log, nil)))
	s.args = []string{"-xnc", "10"} // detected already
	st := runUntilCanceled(t, s, started)
	if !st.closed.Load() {
		t.Errorf("Run returned without closing its stream")
	}
	if st.line != "iostat -xnc 10" {
		t.Errorf("stream %q, want iostat -xnc 10", st.line)
	}
	if !strings.Contains(log.String(), "has not exited") || !strings.Contains(log.String(), "process group 42") {
		t.Errorf("log does not tell of the process that could not be ended:\n%s", &log)
	}
}
