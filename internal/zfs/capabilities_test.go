package zfs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// installableRunner fails every command as a zpool that is not installed
// does, until installed is set; then it passes them to a runner.
type installableRunner struct {
	runner.Runner
	installed atomic.Bool
}

func (r *installableRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	if !r.installed.Load() {
		return nil, &runner.Error{Command: runner.CommandLine(name, args...), ExitCode: -1, Err: runner.ErrNotFound}
	}
	return r.Runner.Run(ctx, name, args...)
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

func (r *holdingRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	switch runner.CommandLine(name, args...) {
	case r.awaited:
		r.once.Do(func() { close(r.started) })
	case r.hold:
		select {
		case <-r.started:
			r.overlapped.Store(true)
		case <-time.After(2 * time.Second):
		}
	}
	return r.Runner.Run(ctx, name, args...)
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
