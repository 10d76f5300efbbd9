package collector

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// versionExporter is the version collector alone over a zpool that
// answers `zpool version` with out and err, counting its runs.
func versionExporter(t *testing.T, out string, err error, runs *atomic.Int32) *Exporter {
	t.Helper()
	r := runnerFunc(func(_ context.Context, name string, args ...string) ([]byte, error) {
		if name != "zpool" || strings.Join(args, " ") != "version" {
			return nil, &runner.Error{Command: name + " " + strings.Join(args, " "), ExitCode: -1, Err: runner.ErrNoCapture}
		}
		runs.Add(1)
		return []byte(out), err
	})
	logger := slog.New(slog.DiscardHandler)
	e, newErr := New(testConfig(zfs.Config{Runner: r, Now: func() time.Time { return testNow }}, Config{}, logger), logger, map[string]bool{"version": true})
	if newErr != nil {
		t.Fatal(newErr)
	}
	return e
}

func TestVersionInfo(t *testing.T) {
	captured := sample.MustRead(t, filepath.Join(sample.Dir(t, "captures"), "openzfs-2.3", "env__zfs-version.txt"))
	for _, c := range []struct {
		name, out        string
		userland, kernel string
	}{
		{"OpenZFS 2.3.2", string(captured.Body), "2.3.2", "2.3.2"},
		// Packages upgraded, the old module still loaded.
		{"userland ahead of the module", "zfs-2.2.2-1\nzfs-kmod-2.2.0-1\n", "2.2.2", "2.2.0"},
		{"module not loaded", "zfs-2.3.2-1\n", "2.3.2", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var runs atomic.Int32
			fams := gather(t, versionExporter(t, c.out, nil, &runs))
			if v, ok := value(fams, "zfs_version_info", map[string]string{"userland": c.userland, "kernel": c.kernel}); !ok || v != 1 {
				t.Errorf("zfs_version_info{userland=%q,kernel=%q} = %v (present %v)", c.userland, c.kernel, v, ok)
			}
			if c.name == "OpenZFS 2.3.2" {
				compareGolden(t, "testdata/version-openzfs-2.3.prom", exposition(t, fams))
			}
			if n := len(series(fams, "zfs_version_info", nil)); n != 1 {
				t.Errorf("%d zfs_version_info series, want 1", n)
			}
			if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": zfs.SourceVersion}); v != 1 {
				t.Errorf("source %s not up", zfs.SourceVersion)
			}
			if problems, err := testutil.CollectAndLint(versionExporter(t, c.out, nil, &runs).Scraper(context.Background())); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", err, problems)
			}
		})
	}
}

// zfs-fuse's zpool (as Solaris's) has no version command: no series and
// no failure, and it is not asked again.
func TestVersionRefusedIsAbsent(t *testing.T) {
	refusal := &runner.Error{Command: "zpool version", ExitCode: 2,
		Stderr: "unrecognized command 'version'\nusage: zpool command args ...\n", Err: errors.New("exit status 2")}
	var runs atomic.Int32
	e := versionExporter(t, "", refusal, &runs)
	for range 2 {
		fams := gather(t, e)
		if n := len(series(fams, "zfs_version_info", nil)); n != 0 {
			t.Errorf("%d zfs_version_info series from a zpool without version", n)
		}
		if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "version"}); v != 1 {
			t.Error("the version collector failed where zpool has no version command")
		}
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("zpool version ran %d times, want once", n)
	}
}

// An output without a version line is an error naming the command.
func TestVersionUnreadable(t *testing.T) {
	var runs atomic.Int32
	fams := gather(t, versionExporter(t, "something else\n", nil, &runs))
	if v, ok := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "version"}); !ok || v != 0 {
		t.Errorf("collector success %v (present %v), want 0", v, ok)
	}
	if v, _ := value(fams, "zfs_exporter_source_up", map[string]string{"source": zfs.SourceVersion}); v != 0 {
		t.Errorf("source %s up for an unreadable output", zfs.SourceVersion)
	}
}
