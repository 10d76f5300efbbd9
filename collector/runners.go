package collector

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// Runner runs a command and returns its standard output. The exec runner
// runs zpool; the replay runner serves captured outputs.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// StreamFunc starts a long-running command and returns its standard
// output; cancelling ctx or closing the reader ends the command.
type StreamFunc func(ctx context.Context, name string, args ...string) (io.ReadCloser, error)

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

// inconclusive tells a command that did not answer (timed out, or refused
// because an earlier run still hangs) from one that said no: only a "no"
// may rule a capability out.
func inconclusive(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, runner.ErrTimeout) || errors.Is(err, runner.ErrStillRunning)
}
