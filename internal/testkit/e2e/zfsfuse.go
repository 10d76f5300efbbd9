package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ZFSFuse creates and destroys file-backed pools of zfs-fuse (ZFS pool
// version 23) for one test. It needs root and a running zfs-fuse daemon,
// which CI installs and starts.
type ZFSFuse struct {
	t      testing.TB
	Dir    string // where the pools' files and mountpoints live
	prefix string
	pools  []string
}

// RequireZFSFuse skips the test in -short mode, and skips (or fails in CI)
// without root or a running zfs-fuse daemon.
func RequireZFSFuse(t testing.TB) *ZFSFuse {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test against zfs-fuse; skipped with -short")
	}
	if os.Geteuid() != 0 {
		SkipOrFail(t, "zfs-fuse pools need root")
	}
	if _, err := exec.LookPath("zfs-fuse"); err != nil {
		SkipOrFail(t, "zfs-fuse is not installed (Debian package zfs-fuse)")
	}
	if out, err := exec.Command("zpool", "list").CombinedOutput(); err != nil {
		SkipOrFail(t, "the zfs-fuse daemon is not running (start it with `zfs-fuse --pidfile FILE`): zpool list: %v: %s", err, out)
	}
	// Pool files under /var/tmp: zfs-fuse needs a real filesystem, and
	// some test machines mount /tmp with little space.
	dir, err := os.MkdirTemp("/var/tmp", "zpool-exporter-e2e")
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	z := &ZFSFuse{t: t, Dir: dir, prefix: "e2e" + hex.EncodeToString(b)}
	t.Cleanup(z.Cleanup)
	return z
}

// Cleanup destroys the test's pools and removes their files; the test's
// cleanup calls it, and a cleanup that must run after the pools are gone
// (a loop device to detach) calls it first.
func (z *ZFSFuse) Cleanup() {
	for _, p := range z.pools {
		for i := 0; i < 10; i++ {
			if exec.Command("zpool", "list", p).Run() != nil {
				break
			}
			if exec.Command("zpool", "destroy", "-f", p).Run() == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	os.RemoveAll(z.Dir)
}

// Disk makes a sparse file vdev of size MiB and returns its path.
func (z *ZFSFuse) Disk(name string, mib int64) string {
	z.t.Helper()
	path := filepath.Join(z.Dir, name)
	f, err := os.Create(path)
	if err != nil {
		z.t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(mib << 20); err != nil {
		z.t.Fatal(err)
	}
	return path
}

// Create makes a pool named after the test's prefix and suffix, mounted
// under the test's directory, and returns its name and mountpoint.
func (z *ZFSFuse) Create(suffix string, vdevs ...string) (pool, mnt string) {
	z.t.Helper()
	pool = z.prefix + suffix
	mnt = filepath.Join(z.Dir, "mnt-"+suffix)
	z.pools = append(z.pools, pool)
	Zpool(z.t, append([]string{"create", "-m", mnt, pool}, vdevs...)...)
	return pool, mnt
}

// Zpool runs a zpool command and fails t when it fails. zfs-fuse refuses
// to destroy a pool for a moment while another zpool reads it ("pool is
// busy"), so that is tried again.
func Zpool(t testing.TB, args ...string) string {
	t.Helper()
	for try := 0; ; try++ {
		out, err := exec.Command("zpool", args...).CombinedOutput()
		if err == nil {
			return string(out)
		}
		if try < 10 && strings.Contains(string(out), "busy") {
			time.Sleep(500 * time.Millisecond)
			continue
		}
		t.Fatalf("zpool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// ZFS runs a zfs command and returns its standard output, failing t,
// with what zfs said, when it fails.
func ZFS(t testing.TB, args ...string) string {
	t.Helper()
	out, err := exec.Command("zfs", args...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, exit.Stderr)
		}
		t.Fatalf("zfs %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// WriteRandom writes mib MiB of incompressible data to path and syncs.
func WriteRandom(t testing.TB, path string, mib int) {
	t.Helper()
	out, err := exec.Command("dd", "if=/dev/urandom", "of="+path, "bs=1M", fmt.Sprint("count=", mib), "conv=fsync", "status=none").CombinedOutput()
	if err != nil {
		t.Fatalf("dd: %v\n%s", err, out)
	}
	if out, err := exec.Command("sync").CombinedOutput(); err != nil {
		t.Fatalf("sync: %v\n%s", err, out)
	}
}
