package collector

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// answer is one replayed command's output and error.
type answer struct {
	out []byte
	err error
}

// recordingRunner passes commands to a runner and keeps their answers.
type recordingRunner struct {
	runner.Runner
	mu      sync.Mutex
	answers map[string]answer
}

func (r *recordingRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	out, err := r.Runner.Run(ctx, cmd)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[cmd.Line()] = answer{bytes.Clone(out), err}
	return out, err
}

// fixedRunner answers from a map it never changes, so that it takes no
// lock: concurrent callers share nothing through it, and the race detector
// sees only what the client itself orders. A command line in slow answers
// after a pause.
type fixedRunner struct {
	answers map[string]answer
	slow    map[string]time.Duration
}

func (r fixedRunner) Run(_ context.Context, cmd runner.Command) ([]byte, error) {
	line := cmd.Line()
	time.Sleep(r.slow[line])
	a, ok := r.answers[line]
	if !ok {
		return nil, &runner.Error{Command: line, ExitCode: -1, Err: runner.ErrNoCapture}
	}
	return bytes.Clone(a.out), a.err
}

// In one scrape, the vdev_io collector learns whether vdev properties work
// while the properties collector takes the capabilities: the capabilities
// it is given must not be the ones being updated. Meant for -race (the
// fixture tests of CI run with it); each round is a fresh client, since
// vdev properties are learned in a client's first scrape, and whichever
// collector comes first detects the capabilities.
func TestCapabilitiesWhileVdevPropertiesAreLearned(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	replay, err := runner.NewReplayWithOptions("../internal/zfs/zpool/testdata/openzfs-2.3-guest", runner.ReplayOptions{Scenarios: []string{"01-created"}})
	if err != nil {
		t.Fatal(err)
	}
	enabled := map[string]bool{"vdev_io": true, "properties": true}
	rec := &recordingRunner{Runner: replay, answers: map[string]answer{}}
	e, err := New(testConfig(zfs.Config{Runner: rec, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{}, logger), logger, enabled)
	if err != nil {
		t.Fatal(err)
	}
	gatherFrom(t, e.Scraper(context.Background()))
	if _, ok := rec.answers["zpool get -Hp -- "+strings.Join(vdevAskedProperties, ",")+" mir all-vdevs"]; !ok {
		t.Fatalf("the scrape did not ask for vdev properties; commands: %v", rec.answers)
	}
	// The properties collector's `zpool get` answers late, so that vdev
	// properties are learned while it still runs.
	fixed := fixedRunner{answers: rec.answers, slow: map[string]time.Duration{"zpool get -Hp all": 20 * time.Millisecond}}

	const rounds = 24
	for round := range rounds {
		cfg := testConfig(zfs.Config{Runner: fixed, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{}, logger)
		e, err := New(cfg, logger, enabled)
		if err != nil {
			t.Fatal(err)
		}
		fams := gatherFrom(t, e.Scraper(context.Background()))
		for _, c := range []string{"properties", "vdev_io"} {
			if v, ok := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": c}); !ok || v != 1 {
				t.Errorf("round %d: collector %s failed", round, c)
			}
		}
		if v, _ := value(fams, "zfs_pool_size_bytes", map[string]string{"pool": "mir"}); v <= 0 {
			t.Errorf("round %d: no size for pool mir", round)
		}
		if _, ok := value(fams, "zfs_vdev_read_bytes_total", map[string]string{"pool": "mir", "vdev": "mir"}); !ok {
			t.Errorf("round %d: no vdev I/O counters for pool mir", round)
		}
		if v, _ := value(fams, "zfs_exporter_capabilities_info", map[string]string{"status_format": "json", "vdev_io": "vdev_properties"}); v != 1 {
			t.Errorf("round %d: capabilities are not JSON status with vdev properties", round)
		}
		caps, err := cfg.ZFS.Capabilities(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !caps.VdevPropertiesKnown || !caps.VdevProperties {
			t.Errorf("round %d: capabilities %+v: vdev properties not learned as available", round, caps)
		}
	}
}
