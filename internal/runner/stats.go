package runner

import (
	"errors"
	"sync"
	"time"
)

// CommandStats counts what happened to one command line, for the exporter's
// own metrics (zfs_exporter_command_runs_total{command} and the like).
type CommandStats struct {
	// Kind is what the metrics call the command line (CommandKind): the
	// lines of one kind, one per pool for example, are counted together.
	Kind         string
	Runs         uint64        // processes started; a run shared by concurrent callers counts once
	Failures     uint64        // runs that ended in an error, timeouts included; not a probe's no
	Timeouts     uint64        // runs killed at their deadline
	Refused      uint64        // calls refused because an earlier process had not exited (ErrStillRunning)
	LastDuration time.Duration // wall time of the last finished run
	// StillRunning is set while something of a finished run has not exited:
	// its process, killed on timeout or cancel, or what that process left
	// behind (zpool stuck in the kernel on a suspended pool, under a
	// wrapper or sudo). No process of this command line starts until it
	// has.
	StillRunning bool
	// Left says what that is, while StillRunning:
	// "pid 1240 (zpool, state D) of its process group".
	Left string
}

// StatsReporter is implemented by runners that count their commands.
type StatsReporter interface {
	// Stats returns a snapshot keyed by command line ("zpool status -p").
	Stats() map[string]CommandStats
}

// statsTable is the shared bookkeeping behind Stats.
type statsTable struct {
	mu sync.Mutex
	m  map[string]*CommandStats
}

// run is a command line as the stats count it.
type run struct {
	line, kind string
	probe      bool // a capability probe: see Probe
}

func (t *statsTable) update(r run, f func(*CommandStats)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]*CommandStats{}
	}
	s := t.m[r.line]
	if s == nil {
		s = &CommandStats{Kind: r.kind}
		t.m[r.line] = s
	}
	f(s)
}

func (t *statsTable) started(r run) {
	t.update(r, func(s *CommandStats) { s.Runs++ })
}

func (t *statsTable) refused(r run) {
	t.update(r, func(s *CommandStats) { s.Refused++ })
}

func (t *statsTable) finished(r run, took time.Duration, err error) {
	t.update(r, func(s *CommandStats) {
		s.LastDuration = took
		if err != nil && !(r.probe && answeredNo(err)) {
			s.Failures++
		}
		if errors.Is(err, ErrTimeout) {
			s.Timeouts++
		}
	})
}

func (t *statsTable) snapshot() map[string]CommandStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]CommandStats, len(t.m))
	for line, s := range t.m {
		out[line] = *s
	}
	return out
}
