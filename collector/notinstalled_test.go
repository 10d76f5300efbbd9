package collector

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// notFoundRunner fails every command as one that is not installed does.
type notFoundRunner struct{}

func (notFoundRunner) Run(_ context.Context, cmd runner.Command) ([]byte, error) {
	return nil, &runner.Error{Command: cmd.Line(), ExitCode: -1, Err: runner.ErrNotFound}
}

// A collector whose command is not installed fails, and NotInstalled hears
// of it in place of the log, which would otherwise say it for every
// collector at every scrape.
func TestNotInstalledInPlaceOfTheLog(t *testing.T) {
	var log bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var (
		mu   sync.Mutex
		told int
	)
	cfg := Config{
		ZFS:    zfs.New(zfs.Config{Runner: notFoundRunner{}}, logger),
		Runner: notFoundRunner{},
		NotInstalled: func(err error) {
			mu.Lock()
			defer mu.Unlock()
			told++
		},
	}
	e, err := New(cfg, logger, map[string]bool{"status": true, "properties": true})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r := e.Gather(t.Context())
		for _, mf := range r.Families() {
			if mf.GetName() != "zfs_exporter_collector_success" {
				continue
			}
			for _, m := range mf.GetMetric() {
				if m.GetGauge().GetValue() != 0 {
					t.Errorf("collector %s succeeded without zpool", m.GetLabel()[0].GetValue())
				}
			}
		}
	}
	if told != 4 {
		t.Errorf("NotInstalled heard of %d failures, want 4: two collectors, two scrapes", told)
	}
	if strings.Contains(log.String(), "collector failed") {
		t.Errorf("the failures were logged too:\n%s", log.String())
	}
}
