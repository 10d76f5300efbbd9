package collector

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// StreamFunc starts a long-running command and returns its standard
// output; cancelling ctx or closing the reader ends the command.
type StreamFunc func(ctx context.Context, cmd runner.Command) (io.ReadCloser, error)

// streamSampler is the life of a sampler of a long-running command (the
// zpool iostat stream, the OS iostat stream), which both embed: no command
// runs before a collector calls Need; then the stream is supervised,
// restarted with back-off each time it ends; and it tells when it last
// reported and whether it is healthy. mu also guards the embedding
// sampler's figures, so that they and the time of the report they come
// from change together.
type streamSampler struct {
	interval time.Duration // how often the command reports
	now      func() time.Time

	need

	mu         sync.Mutex
	running    bool      // a stream is open
	lastReport time.Time // zero until the first report
}

func newStreamSampler(interval time.Duration) streamSampler {
	return streamSampler{interval: interval, now: time.Now, need: newNeed()}
}

// supervise runs stream from the first call of Need until ctx ends,
// restarting it with back-off each time it returns; ended is told why, and
// how long until the next start. stream closes what it starts, so
// supervise returns once the stream's process has been killed and reaped,
// or given up on after the runner's kill grace: a caller that waits for it
// leaves no command behind.
func (s *streamSampler) supervise(ctx context.Context, stream func(context.Context) error, ended func(err error, delay time.Duration)) {
	if !s.waitNeeded(ctx) {
		return
	}
	_ = runner.Supervise(ctx, runner.Backoff{OnExit: ended}, stream)
}

func (s *streamSampler) setRunning(on bool) {
	s.mu.Lock()
	s.running = on
	s.mu.Unlock()
}

// LastReport is when the stream last delivered a report.
func (s *streamSampler) LastReport() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReport, !s.lastReport.IsZero()
}

// Healthy reports whether the stream runs and reported within three
// intervals.
func (s *streamSampler) Healthy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running && s.recent()
}

// recent tells whether the last report came within three intervals: a
// stream that missed two reports in a row is stale. Called with mu held.
func (s *streamSampler) recent() bool {
	return s.now().Sub(s.lastReport) < 3*s.interval
}
