package collector

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// gatheringRunner holds each `zpool get ... all-vdevs` until want of them
// are running, or until a while has passed, and notes how many ran at once.
type gatheringRunner struct {
	runner.Runner
	want int

	mu      sync.Mutex
	running int
	most    int
	met     bool
	all     chan struct{}
}

func (r *gatheringRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	if !strings.HasSuffix(cmd.Line(), " all-vdevs") {
		return r.Runner.Run(ctx, cmd)
	}
	r.mu.Lock()
	r.running++
	r.most = max(r.most, r.running)
	if r.running == r.want && !r.met {
		r.met = true
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
	case <-time.After(2 * time.Second):
	}
	defer func() { r.mu.Lock(); r.running--; r.mu.Unlock() }()
	return r.Runner.Run(ctx, cmd)
}

// The vdev properties of the guest's four pools are read all at once, and
// each pool gets its counters. The first scrape needs not learn from one
// pool that they exist: a zpool with JSON status has them.
func TestVdevPropertiesOfPoolsReadAtOnce(t *testing.T) {
	run := &gatheringRunner{Runner: guestReplay(t), want: 4, all: make(chan struct{})}
	e := vdevIOExporter(t, run)
	var fams []*dto.MetricFamily
	for scrape := 1; scrape <= 2; scrape++ {
		run.most, run.met, run.all = 0, false, make(chan struct{})
		fams = gatherFrom(t, e.Scraper(context.Background()))
		if run.most != 4 {
			t.Errorf("scrape %d: %d reads of vdev properties ran at once, want the 4 pools' together", scrape, run.most)
		}
	}
	pools := map[string]bool{}
	for _, s := range diskSeries(fams, "zfs_vdev_read_bytes_total") {
		pools[strings.Fields(s)[0]] = true
	}
	if len(pools) != 4 {
		t.Errorf("pools with vdev counters: %v, want 4", pools)
	}
}

// guestReplay replays the OpenZFS 2.3.2 guest's four new pools.
func guestReplay(t *testing.T) *runner.Replay {
	t.Helper()
	replay, err := runner.NewReplayWithOptions(guestDir("2.3"), runner.ReplayOptions{Scenarios: []string{"01-created"}})
	if err != nil {
		t.Fatal(err)
	}
	return replay
}

// vdevIOExporter is an exporter of the vdev_io collector alone over run.
func vdevIOExporter(t *testing.T, run runner.Runner) *Exporter {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	e, err := New(testConfig(zfs.Config{Runner: run, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{}, logger), logger, map[string]bool{"vdev_io": true})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A host of ten pools, more than most have, has them all read in one
// round rather than wait for a slot.
func TestVdevPropertiesOfTenPoolsReadAtOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "host")
	if err := hostgen.Write(dir, hostgen.Spec{Pools: 10, Leaves: 2, Version: "2.3"}); err != nil {
		t.Fatal(err)
	}
	replay, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := &gatheringRunner{Runner: replay, want: 10, all: make(chan struct{})}
	gatherFrom(t, vdevIOExporter(t, run).Scraper(context.Background()))
	if run.most != 10 {
		t.Errorf("%d reads of vdev properties ran at once, want the 10 pools' together", run.most)
	}
}
