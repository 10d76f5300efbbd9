package zfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// installableRunner fails every command as a zpool that is not installed
// does, until installed is set; then it passes them to a runner.
type installableRunner struct {
	runner.Runner
	installed atomic.Bool
}

func (r *installableRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	if !r.installed.Load() {
		return nil, &runner.Error{Command: cmd.Line(), ExitCode: -1, Err: runner.ErrNotFound}
	}
	return r.Runner.Run(ctx, cmd)
}

// A zpool that is not installed says nothing of what it can do: detection
// fails, rather than settle on the text status for good, and finds the
// JSON status once ZFS is installed.
func TestCapabilitiesWaitForAnInstalledZpool(t *testing.T) {
	replay, err := runner.NewReplayWithOptions("zpool/testdata/openzfs-2.3-guest", runner.ReplayOptions{Scenarios: []string{"18-trim-initialize"}})
	if err != nil {
		t.Fatal(err)
	}
	run := &installableRunner{Runner: replay}
	client := New(Config{Runner: run, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	if caps, err := client.Capabilities(ctx); !errors.Is(err, runner.ErrNotFound) {
		t.Fatalf("without zpool: capabilities %+v, error %v; want ErrNotFound", caps, err)
	}
	if _, ok := client.Detected(); ok {
		t.Error("capabilities detected without zpool")
	}
	run.installed.Store(true)
	caps, err := client.Capabilities(ctx)
	if err != nil || caps.StatusFormat != StatusJSON {
		t.Errorf("once installed: capabilities %+v, error %v; want the JSON status", caps, err)
	}
}

// What a zpool refuses while the client learns what it can do is its
// answer, not a failure of its commands: zfs-fuse's refuses -j and -p of
// status, get -H, list -v, version, vdev properties and iostat -w and -q.
func TestLearningLeavesNoFailures(t *testing.T) {
	replay, err := runner.NewReplay("../../collector/testdata/replay/zfs-fuse/000")
	if err != nil {
		t.Fatal(err)
	}
	client := New(Config{Runner: replay, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	for range 2 {
		client.Status(ctx)
		client.Properties(ctx)
		client.VdevList(ctx)
		client.Version(ctx)
		client.VdevProperties(ctx, "tank", "read_bytes", "write_bytes")
		client.Histograms(ctx, zpool.LatencyHistogram, nil)
		client.Queues(ctx)
	}
	stats := replay.Stats()
	for line, st := range stats {
		if st.Failures != 0 {
			t.Errorf("%s: %d failures, want none", line, st.Failures)
		}
		if !strings.HasPrefix(st.Kind, "zpool ") {
			t.Errorf("%s: kind %q, want one of zpool's", line, st.Kind)
		}
	}
	for _, line := range []string{"zpool status -j --json-int", "zpool get -Hp all", "zpool status"} {
		if stats[line].Runs == 0 {
			t.Errorf("%s did not run", line)
		}
	}
}

// Once a command answered, its failure is one, though it was learned by
// asking.
func TestFailureAfterLearningCounts(t *testing.T) {
	dir := t.TempDir()
	for step, capture := range []string{
		"# command: zpool version\n# ---\nzfs-2.3.2-1\nzfs-kmod-2.3.2-1\n",
		"# command: zpool version\n# exit: 1\n# stderr: internal error: out of memory\n# ---\n",
	} {
		sub := filepath.Join(dir, fmt.Sprintf("%03d", step))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "zpool_version.txt"), []byte(capture), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	client := New(Config{Runner: replay}, slog.New(slog.DiscardHandler))
	if _, err := client.Version(context.Background()); err != nil {
		t.Fatal(err)
	}
	replay.Advance()
	if _, err := client.Version(context.Background()); err == nil {
		t.Fatal("no error from the failing zpool version")
	}
	if st := replay.Stats()["zpool version"]; st.Runs != 2 || st.Failures != 1 {
		t.Errorf("stats %+v, want 2 runs and 1 failure", st)
	}
}

// holdingRunner holds the answer to the command line hold until the line
// awaited has started, or a while has passed, and tells whether it had:
// whether the two runs overlapped.
type holdingRunner struct {
	runner.Runner
	hold, awaited string

	once       sync.Once
	started    chan struct{} // closed when awaited starts
	overlapped atomic.Bool
}

func newHoldingRunner(r runner.Runner, hold, awaited string) *holdingRunner {
	return &holdingRunner{Runner: r, hold: hold, awaited: awaited, started: make(chan struct{})}
}

func (r *holdingRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	switch cmd.Line() {
	case r.awaited:
		r.once.Do(func() { close(r.started) })
	case r.hold:
		select {
		case <-r.started:
			r.overlapped.Store(true)
		case <-time.After(2 * time.Second):
		}
	}
	return r.Runner.Run(ctx, cmd)
}

// The get form is probed while the status form is: neither waits for the
// other's answer.
func TestCapabilitiesProbeStatusAndGetSideBySide(t *testing.T) {
	replay, err := runner.NewReplayWithOptions("zpool/testdata/openzfs-2.3-guest", runner.ReplayOptions{Scenarios: []string{"18-trim-initialize"}})
	if err != nil {
		t.Fatal(err)
	}
	run := newHoldingRunner(replay, "zpool status -j --json-int -t -i", "zpool get -Hp all")
	client := New(Config{Runner: run, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	caps, err := client.Capabilities(context.Background())
	if err != nil || caps.StatusFormat != StatusJSON || caps.GetArgs == nil {
		t.Fatalf("capabilities %+v, error %v; want JSON status and get -Hp", caps, err)
	}
	if !run.overlapped.Load() {
		t.Error("zpool get -Hp all was probed only once the status probe had answered")
	}
}
