package zfs

import (
	"errors"
	"sync"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

const (
	// outputHeadroom is how many times its last output a zpool command may
	// print next: pools grow between scrapes.
	outputHeadroom = 4
	// maxOutputLimit bounds how far the limit grows, against a zpool that
	// prints without end.
	maxOutputLimit = 1 << 30
)

// outputLimits scales the stdout limit of each zpool subcommand to what
// the pools need. The runner's own limit (16 MiB unless set) holds until a
// command's output nears it: from then on a run may print outputHeadroom
// times the last output, and a run cut at the limit fails, is logged, and
// doubles it for the next scrape's run, which is tried again.
type outputLimits struct {
	mu    sync.Mutex
	bytes map[string]int // subcommand -> limit; absent: the runner's
	last  map[string]int // subcommand -> size of its last output
}

// of returns the limit of subcommand (0: the runner's) and, as a hint,
// the size of its last output with some room to grow (0: none yet).
func (l *outputLimits) of(subcommand string) (limit, hint int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := l.last[subcommand]
	return l.bytes[subcommand], last + last/8
}

// learn notes how a run of subcommand went: the size of its output, or
// that it was cut. It returns the new limit when a cut raised it.
func (l *outputLimits) learn(subcommand string, out []byte, err error) (raised int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bytes == nil {
		l.bytes, l.last = map[string]int{}, map[string]int{}
	}
	if err == nil {
		l.last[subcommand] = len(out)
	}
	current := max(l.bytes[subcommand], runner.DefaultMaxOutput)
	switch {
	case errors.Is(err, runner.ErrOutputTooLarge):
		n := min(2*current, maxOutputLimit)
		if n <= l.bytes[subcommand] {
			return 0, false
		}
		l.bytes[subcommand] = n
		return n, true
	case err == nil && outputHeadroom*len(out) > current:
		l.bytes[subcommand] = min(outputHeadroom*len(out), maxOutputLimit)
	}
	return 0, false
}
