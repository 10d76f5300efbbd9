package collector

import (
	"log/slog"
	"time"

	"github.com/zpool-exporter/zpool_exporter/collector/internal/runner"
)

// ExecRunner returns the runner of real commands (deadlines, one process
// per command line, process-group kill, LC_ALL=C) and its stream starter.
func ExecRunner() (Runner, StreamFunc) {
	r := runner.NewExec(runner.ExecOptions{})
	return r, r.StartStream
}

// ReplayRunner returns a runner that serves captured outputs from dir
// instead of running commands, and its stream starter. A directory of
// numbered steps moves to the next step every step (looping), and its
// streams repeat their capture every streamEvery, as zpool iostat would,
// from a capture at another interval when there is none at the one asked
// (logged once to logger; nil discards).
func ReplayRunner(dir string, step, streamEvery time.Duration, logger *slog.Logger) (Runner, StreamFunc, error) {
	r, err := runner.NewReplayWithOptions(dir, runner.ReplayOptions{StepEvery: step, Loop: true, StreamEvery: streamEvery, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	return r, r.StartStream, nil
}
