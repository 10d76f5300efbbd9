package collector

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// failingRunner runs the replay, or fails every command while fail is
// set, and counts the runs.
type failingRunner struct {
	runner.Runner
	fail atomic.Bool
	runs atomic.Int32
}

func (r *failingRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	r.runs.Add(1)
	if r.fail.Load() {
		return nil, errors.New("zfs: I/O error")
	}
	return r.Runner.Run(ctx, cmd)
}

// The lister runs no zfs before a collector needs it; then it lists every
// interval, and a listing that fails leaves the last one in place, with
// the source marked down. It returns when its context ends.
func TestSnapshotListerRunsInTheBackground(t *testing.T) {
	replay, err := runner.NewReplay("../internal/zfs/dataset/testdata/zfs-fuse")
	if err != nil {
		t.Fatal(err)
	}
	run := &failingRunner{Runner: replay}
	client := zfs.New(zfs.Config{Runner: run}, slog.New(slog.DiscardHandler))
	lister := NewSnapshotLister(client, 20*time.Millisecond, false, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		lister.Run(ctx)
	}()

	time.Sleep(100 * time.Millisecond)
	if n := run.runs.Load(); n != 0 || lister.latest() != nil {
		t.Fatalf("%d zfs runs before a collector needed the lister", n)
	}
	lister.Need()
	waitFor(t, "a first listing", func() bool { return lister.latest() != nil })
	listing := lister.latest()
	if got := listing.byDataset["cds/plain"].Count; got != 2 {
		t.Errorf("cds/plain has %d snapshots, want 2", got)
	}
	if listing.each != nil {
		t.Error("each snapshot kept without perSnapshot")
	}

	run.fail.Store(true)
	before := run.runs.Load()
	waitFor(t, "two failed listings", func() bool { return run.runs.Load() > before+1 })
	if lister.latest() != listing {
		t.Error("a failed listing replaced the last one")
	}
	if st := client.Freshness()[zfs.SourceSnapshots]; st.Up || st.LastSuccess.IsZero() {
		t.Errorf("freshness after a failed listing: %+v, want down with the last success kept", st)
	}
	run.fail.Store(false)
	waitFor(t, "a listing after the failures", func() bool { return lister.latest() != listing })

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}
