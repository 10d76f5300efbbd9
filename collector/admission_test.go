package collector

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// hostileReplay copies the first step of the zfs-fuse replay into a
// temporary directory and applies edits (old, new) to its files.
func hostileReplay(t *testing.T, edits map[string][2]string) *runner.Replay {
	t.Helper()
	dir := t.TempDir()
	src := "testdata/replay/zfs-fuse/000"
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if edit, ok := edits[e.Name()]; ok {
			if !bytes.Contains(data, []byte(edit[0])) {
				t.Fatalf("%s holds no %q", e.Name(), edit[0])
			}
			data = bytes.ReplaceAll(data, []byte(edit[0]), []byte(edit[1]))
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	return replay
}

// Bytes that are not UTF-8, and control characters, in what zpool prints
// become U+FFFD in label values, as encoding/json makes them in zpool's
// JSON; the scrape keeps every series.
func TestLabelValuesFromHostileBytes(t *testing.T) {
	replay := hostileReplay(t, map[string][2]string{
		"zpool_status.txt":              {"/var/tmp/zfs-fuse-replay/t1  ONLINE", "/var/tmp/t\xff1             onl\x00ine"},
		"zpool_get_all_backup_tank.txt": {"backup  failmode       wait", "backup  failmode       w\xfe\xfft"},
	})
	e, _ := replayExporter(t, replay, 0)
	fams := gatherFrom(t, e.Scraper(context.Background())) // fails on an invalid family
	if v, ok := value(fams, "zfs_vdev_state", map[string]string{"pool": "tank", "vdev": "/var/tmp/t\uFFFD1", "state": "onl\uFFFDine"}); !ok || v != 1 {
		t.Errorf(`zfs_vdev_state{vdev="/var/tmp/t\uFFFD1",state="onl\uFFFDine"} = %v (present %v), want 1`, v, ok)
	}
	if v, ok := value(fams, "zfs_vdev_state", map[string]string{"pool": "tank", "vdev": "/var/tmp/zfs-fuse-replay/t2", "state": "online"}); !ok || v != 1 {
		t.Errorf("the other leaf of the mirror lost its state: %v (present %v)", v, ok)
	}
	if v, ok := value(fams, "zfs_pool_info", map[string]string{"pool": "backup", "failmode": "w\uFFFD\uFFFDt"}); !ok || v != 1 {
		t.Errorf(`zfs_pool_info{pool="backup",failmode="w\uFFFD\uFFFDt"} = %v (present %v), want 1`, v, ok)
	}
	for _, c := range []string{"status", "properties", "vdev_io"} {
		if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": c}); v != 1 {
			t.Errorf("collector %s failed", c)
		}
	}
	if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

func TestLabelValue(t *testing.T) {
	for in, want := range map[string]string{
		"mirror-0":          "mirror-0",
		"/dev/disk/by-id/é": "/dev/disk/by-id/é",
		"t\xff1":            "t\uFFFD1",
		"onl\x00ine":        "onl\uFFFDine",
		"a\tb\nc\x7f":       "a\uFFFDb\uFFFDc\uFFFD",
		"\xe2\x82":          "\uFFFD\uFFFD", // a rune cut short
		"x\u0085y":          "x\uFFFDy",     // a C1 control
	} {
		if got := labelValue(in); got != want {
			t.Errorf("labelValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// scripted is a collector that sends what a test gives it, then fails or
// panics as told.
type scripted struct {
	send  func(ch chan<- prometheus.Metric)
	panic bool
}

func (s scripted) Update(_ context.Context, _ *zfs.Scrape, ch chan<- prometheus.Metric) error {
	s.send(ch)
	if s.panic {
		var rows []string
		_ = rows[len(rows)] // an index out of range, as a parser bug would make
	}
	return nil
}

var testDesc = desc("test", "value", "A test series.", "name")

// One collector's duplicate or invalid series, or its panic, costs that
// series or that collector, never the scrape: the rest is served, and the
// drops are counted and logged once.
func TestScrapeDropsBadSeriesAndSurvivesPanics(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	cfg := testConfig(zfs.Config{Runner: nopRunner{}}, Config{}, logger)
	e, err := New(cfg, logger, map[string]bool{})
	if err != nil {
		t.Fatal(err)
	}
	e.collectors["twice"] = scripted{send: func(ch chan<- prometheus.Metric) {
		gauge(ch, testDesc, 1, "spare-0")
		gauge(ch, testDesc, 2, "spare-0")
		gauge(ch, testDesc, 3, "spare-1")
		gauge(ch, testDesc, 4, "too", "many") // wrong label count
	}}
	e.collectors["panics"] = scripted{send: func(ch chan<- prometheus.Metric) {
		gauge(ch, testDesc, 5, "before the panic")
	}, panic: true}
	e.collectors["fine"] = scripted{send: func(ch chan<- prometheus.Metric) {}}

	for scrape := 1; scrape <= 2; scrape++ {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(e.Scraper(context.Background()))
		fams, err := reg.Gather()
		if err != nil {
			t.Fatalf("scrape %d: %v", scrape, err)
		}
		for name, want := range map[string]float64{"spare-0": 1, "spare-1": 3, "before the panic": 5} {
			if v, ok := value(fams, "zfs_test_value", map[string]string{"name": name}); !ok || v != want {
				t.Errorf("scrape %d: zfs_test_value{name=%q} = %v (present %v), want %v", scrape, name, v, ok, want)
			}
		}
		for c, want := range map[string]float64{"twice": 1, "fine": 1, "panics": 0} {
			if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": c}); v != want {
				t.Errorf("scrape %d: collector %s success = %v, want %v", scrape, c, v, want)
			}
		}
		for labels, want := range map[[2]string]float64{
			{"twice", "duplicate"}: float64(scrape),
			{"twice", "invalid"}:   float64(scrape),
		} {
			v, ok := value(fams, "zfs_exporter_dropped_series_total", map[string]string{"collector": labels[0], "reason": labels[1]})
			if !ok || v != want {
				t.Errorf("scrape %d: dropped_series_total%v = %v (present %v), want %v", scrape, labels, v, ok, want)
			}
		}
		// Only drops are counted: no zeros for what dropped nothing.
		for _, labels := range [][2]string{{"fine", "duplicate"}, {"fine", "invalid"}, {"exporter", "invalid"}} {
			if v, ok := value(fams, "zfs_exporter_dropped_series_total", map[string]string{"collector": labels[0], "reason": labels[1]}); ok {
				t.Errorf("scrape %d: dropped_series_total%v = %v, want no series", scrape, labels, v)
			}
		}
	}
	out := logs.String()
	if n := strings.Count(out, "level=WARN msg=\"series dropped\""); n != 2 {
		t.Errorf("%d warnings for dropped series over two scrapes, want 2 (each drop once):\n%s", n, out)
	}
	if !strings.Contains(out, "collector panicked") || !strings.Contains(out, "index out of range") {
		t.Errorf("the panic is not logged with its cause:\n%s", out)
	}
}

func TestCollectOnceTurnsAPanicIntoAnError(t *testing.T) {
	_, err := collectOnce(context.Background(), nil, scripted{send: func(chan<- prometheus.Metric) {}, panic: true})
	if !errors.Is(err, errPanic) {
		t.Fatalf("err = %v, want errPanic", err)
	}
}
