package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// readmeSection returns the README's section whose heading starts with
// heading, up to the next section.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## "+heading)
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	return section
}

// readmeReplayArgs returns the arguments of the README's replay example,
// its paths made relative to this package's directory.
func readmeReplayArgs(t *testing.T) []string {
	t.Helper()
	for line := range strings.Lines(readmeSection(t, "Replay")) {
		fields := strings.Fields(line)
		if len(fields) < 2 || fields[0] != "./zpool_exporter" {
			continue
		}
		args := fields[1:]
		for i, a := range args {
			if dir, ok := strings.CutPrefix(a, "--zpool.replay-dir="); ok {
				args[i] = "--zpool.replay-dir=" + filepath.Join("../..", dir)
			}
		}
		return args
	}
	t.Fatal("the README's Replay section has no ./zpool_exporter example")
	return nil
}

// The README's replay example works as printed: its zfs-fuse replay holds
// a `zpool iostat -v 1` capture, the exporter asks for the stream at its
// default interval (10 s), and the vdev I/O counters still come, with no
// warning that the stream has no capture each time it is restarted.
func TestReadmeReplayExample(t *testing.T) {
	args := readmeReplayArgs(t)
	t.Logf("README example: zpool_exporter %s", strings.Join(args, " "))
	e := e2e.Start(t, exporterBin, nil, args...)
	// Generous: the first report comes as soon as a scrape needs the
	// stream.
	e.WaitFor(t, 30*time.Second, "vdev I/O counters of the replayed pools", func(m e2e.Metrics) bool {
		_, tank := m.Get("zfs_vdev_write_bytes_total", map[string]string{"pool": "tank", "vdev": "mirror-0"})
		_, backup := m.Get("zfs_vdev_read_operations_total", map[string]string{"pool": "backup", "vdev": "raidz1-0"})
		return tank && backup
	})
	log, _, _ := strings.Cut(e.Quit(t), "SIGQUIT")
	if n := strings.Count(log, "no capture"); n > 0 {
		t.Errorf("the log says %d times that a command has no capture:\n%s", n, log)
	}
	if n := strings.Count(log, "at another interval"); n != 1 {
		t.Errorf("the log says %d times that the stream replays a capture at another interval, want once:\n%s", n, log)
	}
}
