package demo_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path"
	"sync"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/demo"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// uncapturedRunner passes commands to a replay and keeps the command lines
// it holds no capture of.
type uncapturedRunner struct {
	*runner.Replay
	mu     sync.Mutex
	missed []string
}

func (r *uncapturedRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	out, err := r.Replay.Run(ctx, cmd)
	if errors.Is(err, runner.ErrNoCapture) {
		r.mu.Lock()
		r.missed = append(r.missed, cmd.Line())
		r.mu.Unlock()
	}
	return out, err
}

// Every step answers what the exporter asks zpool at detection, as
// zfs-fuse answered it (mostly with a refusal), and its zpool status shows
// tank: a capture missing would make the demo detect differently from
// the zfs-fuse it was recorded on.
func TestEveryStepAnswersDetection(t *testing.T) {
	steps, err := fs.Glob(demo.Replay(), "[0-9][0-9][0-9]")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 6 {
		t.Fatalf("%d steps, want at least 6 (healthy, degraded, three resilvering, resilvered)", len(steps))
	}
	for i, step := range steps {
		if _, err := fs.Stat(demo.Replay(), path.Join(step, "STATE")); err != nil {
			t.Errorf("step %s: %v; each step says what it shows", step, err)
		}
		replay, err := runner.NewReplayFS(demo.Replay(), demo.Dir, runner.ReplayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for range i {
			replay.Advance()
		}
		run := &uncapturedRunner{Replay: replay}
		client := zfs.New(zfs.Config{Runner: run}, slog.New(slog.DiscardHandler))
		if _, err := client.Capabilities(t.Context()); err != nil {
			t.Errorf("step %s: %v", step, err)
		}
		st, err := client.Status(t.Context())
		if err != nil {
			t.Fatalf("step %s: %v", step, err)
		}
		if len(st.Pools) != 1 || st.Pools[0].Name != "tank" {
			t.Errorf("step %s: pools %v, want tank alone", step, st.Pools)
		}
		if len(run.missed) > 0 {
			t.Errorf("step %s has no capture of %q: run deploy/demo/capture.sh again", step, run.missed)
		}
	}
}
