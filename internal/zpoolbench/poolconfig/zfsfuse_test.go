package poolconfig

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// TestReadZFSFuse reads pools made on the real zfs-fuse daemon through the
// exec runner, as a benchmark runner does.
func TestReadZFSFuse(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	mirror, _ := z.Create("pcmirror", "mirror", z.Disk("m1", 128), z.Disk("m2", 128))
	raidz, _ := z.Create("pcraidz", "raidz1", z.Disk("r1", 128), z.Disk("r2", 128), z.Disk("r3", 128))
	zfsCommand(t, "set", "compression=gzip-3", mirror)
	zfsCommand(t, "set", "recordsize=32K", mirror)
	zfsCommand(t, "set", "compression=lzjb", raidz)

	run := runner.NewExec(runner.ExecOptions{})
	r := Reader{Runner: run}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tests := []struct {
		pool, layout, compression string
		recordsize                int64
		width                     int
	}{
		{mirror, "mirror of 2", "gzip-3", 32 << 10, 2},
		{raidz, "raidz1 of 3", "lzjb", 128 << 10, 3},
	}
	for _, tc := range tests {
		got, err := Read(ctx, r, tc.pool)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", tc.pool, got)
		if got.Pool != tc.pool || got.Layout != tc.layout || got.State != "online" {
			t.Errorf("%s: layout %q state %q, want %q online", tc.pool, got.Layout, got.State, tc.layout)
		}
		if got.Compression != tc.compression || got.Recordsize != tc.recordsize {
			t.Errorf("%s: compression %q recordsize %d, want %q %d as set", tc.pool, got.Compression, got.Recordsize, tc.compression, tc.recordsize)
		}
		if len(got.Vdevs) != 1 || got.Vdevs[0].Width != tc.width || got.Vdevs[0].Class != "normal" {
			t.Errorf("%s: vdevs %+v, want one normal vdev of width %d", tc.pool, got.Vdevs, tc.width)
		}
		// zfs-fuse defaults file vdevs to 4K blocks (ashift 12), and
		// ships zdb, which tells it; without zdb, only ashift may be
		// missing.
		if _, err := exec.LookPath("zdb"); err == nil {
			if got.Ashift != 12 || got.Vdevs[0].Ashift != 12 || len(got.Missing) != 0 {
				t.Errorf("%s: ashift %d, vdev ashift %d, missing %q; want 12 from zdb -C, nothing missing",
					tc.pool, got.Ashift, got.Vdevs[0].Ashift, got.Missing)
			}
		} else if len(got.Missing) != 1 || !strings.HasPrefix(got.Missing[0], "ashift: ") {
			t.Errorf("%s: missing %q; without zdb only ashift may be missing", tc.pool, got.Missing)
		}
		if !strings.HasPrefix(got.Version, "zfs-fuse") || !strings.Contains(got.Version, "23") {
			t.Errorf("%s: version %q, want zfs-fuse (pool version 23)", tc.pool, got.Version)
		}
	}

	_, err := Read(ctx, r, mirror+"x")
	if err == nil || !strings.Contains(err.Error(), mirror) || !strings.Contains(err.Error(), raidz) {
		t.Errorf("unknown pool: %v; want an error listing %s and %s", err, mirror, raidz)
	}
}

// zfsCommand runs zfs with args on the zfs-fuse daemon.
func zfsCommand(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("zfs", args...).CombinedOutput(); err != nil {
		t.Fatalf("zfs %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
