//go:build !illumos && !solaris

package collector

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"
)

func TestCPUModes(t *testing.T) {
	// /proc/stat's user and nice include guest and guest_nice.
	times := cpu.TimesStat{User: 10, Nice: 1, System: 5, Idle: 100, Iowait: 2, Irq: 0.5, Softirq: 0.25, Steal: 0.125, Guest: 7, GuestNice: 0.5}
	for _, c := range []struct {
		goos  string
		modes []string
	}{
		{"linux", []string{"idle", "iowait", "irq", "nice", "softirq", "steal", "system", "user"}},
		{"freebsd", []string{"idle", "irq", "nice", "system", "user"}},
		{"darwin", []string{"idle", "nice", "system", "user"}},
	} {
		got := cpuModes(times, c.goos)
		if modes := slices.Sorted(maps.Keys(got)); !slices.Equal(modes, c.modes) {
			t.Errorf("%s: modes %q, want %q", c.goos, modes, c.modes)
		}
		if got["user"] != 10 || got["nice"] != 1 || got["system"] != 5 || got["idle"] != 100 {
			t.Errorf("%s: %v", c.goos, got)
		}
	}
}

// This machine's own CPU times: they exist and move.
func TestHostCPUThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	read := defaultHostCPU(Config{ProcRoot: "/proc"})
	total := func() float64 {
		modes, err := read(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(modes) != 8 {
			t.Errorf("modes %v, want the 8 of Linux", modes)
		}
		sum := 0.0
		for _, v := range modes {
			sum += v
		}
		return sum
	}
	first := total()
	if first <= 0 {
		t.Fatalf("CPU seconds since boot sum to %v", first)
	}
	// /proc/stat moves in ticks of 10 ms on every CPU, idle ones included.
	deadline := time.Now().Add(3 * time.Second)
	for {
		time.Sleep(50 * time.Millisecond)
		if next := total(); next > first {
			break
		} else if next < first {
			t.Fatalf("CPU seconds went back from %v to %v", first, next)
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU seconds stuck at %v for 3 s", first)
		}
	}
}

// This machine's own processes: no kernel thread but ZFS ones is taken
// for ZFS, and a running zfs-fuse is found.
func TestEngineCPUThisMachine(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	threads, err := procfsEngineCPU("/proc")(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var totals engineTotals
	families := totals.update(threads)
	var names []string
	for _, f := range families {
		names = append(names, f.Name)
		if f.User < 0 || f.System < 0 || (!f.UserSpace && f.User != 0) {
			t.Errorf("family %+v", f)
		}
	}
	t.Logf("ZFS thread families here: %q", names)
	_, err = os.Stat("/sys/module/zfs")
	openZFS := err == nil
	for _, name := range names {
		if name != zfsFuseComm && !openZFS {
			t.Errorf("family %q on a host without the zfs kernel module", name)
		}
	}
	pgrep, err := exec.LookPath("pgrep")
	if err != nil {
		t.Log("no pgrep to tell whether zfs-fuse runs: its family is not checked")
		return
	}
	out, err := exec.Command(pgrep, "-x", "zfs-fuse").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Log("zfs-fuse is not running here: its family is not checked")
		return
	}
	if !slices.Contains(names, zfsFuseComm) {
		t.Errorf("zfs-fuse runs (pid %s) but its family is missing: %q", strings.TrimSpace(string(out)), names)
	}
}

// A replay directory without a proc tree has no host CPU times, which is
// no failure; a /proc/stat without a cpu line is one.
func TestHostCPUWithoutProcStat(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/stat")
	}
	modes, err := defaultHostCPU(Config{ProcRoot: t.TempDir() + "/missing"})(context.Background())
	if err != nil || modes != nil {
		t.Errorf("without /proc/stat: %v, %v", modes, err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte("intr 8513376 29 9\nctxt 19244417\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if modes, err := defaultHostCPU(Config{ProcRoot: dir})(context.Background()); err == nil {
		t.Errorf("a /proc/stat without cpu line: %v, no error", modes)
	}
}
