// Package replaytest builds the exporter's collectors in process over
// captured outputs, for tests of what reads them.
package replaytest

import (
	"log/slog"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// Exporter returns the collectors named in enabled over the captured
// outputs in dir.
func Exporter(t testing.TB, dir string, enabled ...string) *collector.Exporter {
	t.Helper()
	run, err := runner.NewReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	on := map[string]bool{}
	for _, name := range enabled {
		on[name] = true
	}
	cfg := collector.Config{ZFS: zfs.New(zfs.Config{Runner: run}, logger), Runner: run}
	e, err := collector.New(cfg, logger, on)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
