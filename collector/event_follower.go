package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
)

// EventFollower counts the ZFS kernel's events, read from one long-running
// `zpool events -vHf` that starts when a collector first needs it and is
// restarted with back-off when it ends.
//
// Each reader of the kernel's queue gets every event the queue still
// holds, then the new ones as they come. The follower counts each eid
// once, so a restarted zpool, which reads the queue again from its oldest
// event, counts nothing twice; and a restarted exporter counts the same
// queue to the same totals, which Prometheus sees as counters that did not
// reset. A gap in the eids is events the kernel dropped before they were
// read (the queue holds zfs_zevent_len_max), or events still to come (see
// first): counted as dropped, but not the eids before the first read,
// which went before the exporter started.
//
// Where zpool has no events (zfs-fuse, illumos, Solaris), a probe of
// `zpool events -H` fails once and the follower stops.
type EventFollower struct {
	zpool  string
	stream StreamFunc
	runner runner.Runner
	logger *slog.Logger

	need

	mu        sync.Mutex
	supported *bool // nil until the probe answered
	following bool
	counts    EventCounts
	awaited   map[uint64]bool // eids below LastEID not seen yet (see first)
}

// EventCounts are the events counted since the exporter started.
type EventCounts struct {
	// LastEID is the eid of the last event counted; 0 before the first.
	LastEID uint64
	// Dropped counts the events the kernel dropped, while the follower
	// followed, before it read them.
	Dropped uint64
	// Pools holds each pool's counts, by pool name.
	Pools map[string]*PoolEvents
}

// PoolEvents are one pool's events.
type PoolEvents struct {
	Classes map[string]*ClassEvents // by class
	// Vdevs counts the events that name a vdev, by its GUID and class.
	Vdevs map[VdevEventKey]uint64
	// Paths are the vdevs' device paths as their last event gave them,
	// by GUID, for a vdev that zpool status no longer shows by GUID.
	Paths map[uint64]string
	// Last are the pool's most recent events, oldest first, less its
	// history and config_sync (see Recent).
	Last []events.Event
}

// ClassEvents are the events of one class of a pool.
type ClassEvents struct {
	Count uint64
	Last  time.Time // of the latest
}

// VdevEventKey is a vdev and a class of events.
type VdevEventKey struct {
	GUID  uint64
	Class string
}

// Bounds on what the follower keeps, whatever the kernel sends: classes
// are a known set, and one past maxEventClasses a pool is counted under
// otherEventClass.
const (
	maxEventClasses  = 64
	otherEventClass  = "other"
	lastEventsKept   = 10
	eventsProbeLimit = 30 * time.Second
)

// NewEventFollower returns a follower of zpoolCmd's events; Run starts it.
func NewEventFollower(zpoolCmd string, stream StreamFunc, run runner.Runner, logger *slog.Logger) *EventFollower {
	return &EventFollower{zpool: zpoolCmd, stream: stream, runner: run, logger: logger, need: newNeed(),
		counts: EventCounts{Pools: map[string]*PoolEvents{}}, awaited: map[uint64]bool{}}
}

// Run follows the events from the first call of Need until ctx ends. It
// returns once the follower's zpool has been killed and reaped, or given
// up on after the runner's kill grace, so that a caller that waits for
// Run leaves no zpool behind.
func (f *EventFollower) Run(ctx context.Context) {
	if !f.waitNeeded(ctx) {
		return
	}
	for {
		ok, err := f.probe(ctx)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			if !ok {
				return
			}
			break
		}
		f.logger.Warn("could not tell whether zpool has events; trying again", "err", err, "in", time.Minute)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Minute):
		}
	}
	_ = runner.Supervise(ctx, runner.Backoff{OnExit: func(err error, delay time.Duration) {
		f.logger.Warn("zpool events stream ended; restarting", "err", err, "in", delay)
	}}, f.follow)
}

// probe tells whether this zpool has events: `zpool events -H` prints the
// queue, one event a line, or refuses the subcommand.
func (f *EventFollower) probe(ctx context.Context) (bool, error) {
	probeCtx, cancel := context.WithTimeout(ctx, eventsProbeLimit)
	defer cancel()
	out, err := f.runner.Run(probeCtx, runner.Command{Path: f.zpool, Program: "zpool", Args: []string{"events", "-H"}, Probe: true})
	if err == nil {
		_, err = events.Parse(strings.NewReader(string(out)))
	}
	var failed *runner.Error
	switch {
	case err == nil:
		f.setSupported(true)
		f.logger.Info("following the kernel's ZFS events", "command", f.zpool+" events -vHf")
		return true, nil
	case runner.Inconclusive(probeCtx, err):
		return false, err
	case errors.Is(err, runner.ErrNoCapture):
		// A replay without events, as most are.
		f.setSupported(false)
		f.logger.Debug("the replay holds no zpool events: not following them", "err", err)
		return false, nil
	case errors.As(err, &failed), errors.Is(err, runner.ErrNotFound):
		f.setSupported(false)
		f.logger.Info("zpool has no events (zfs-fuse, illumos and Solaris have none): not following them", "err", err)
		return false, nil
	default:
		// Output that is no event list: a zpool that answers with
		// something else has no events this exporter can read.
		f.setSupported(false)
		f.logger.Warn("zpool events printed what is no event list: not following them", "err", err)
		return false, nil
	}
}

func (f *EventFollower) setSupported(on bool) {
	f.mu.Lock()
	f.supported = &on
	f.mu.Unlock()
}

// follow runs one stream until it ends, counting its events.
func (f *EventFollower) follow(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	rc, err := f.stream(ctx, runner.Command{Path: f.zpool, Program: "zpool", Args: []string{"events", "-vHf"}})
	if err != nil {
		cancel()
		return err
	}
	defer func() {
		cancel()
		if err := rc.Close(); err != nil {
			f.logger.Warn("zpool events was killed but has not exited (stuck in the kernel?); no stream starts again until it does", "err", err)
		}
	}()
	f.setFollowing(true)
	defer f.setFollowing(false)
	r := events.NewReader(rc)
	for head := true; ; head = false {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("zpool events -vHf: %w", err)
		}
		f.count(ev, head)
	}
}

func (f *EventFollower) setFollowing(on bool) {
	f.mu.Lock()
	f.following = on
	f.mu.Unlock()
}

// first tells whether the follower sees ev for the first time, and keeps
// track of the eids it has not seen. The kernel's queue is not quite in
// eid order: two ereports posted at once can come in either order (eid
// 538 before 536 in the OpenZFS 2.4 guest). An eid skipped is awaited
// until the follower is reorderWindow eids past it, then counted as
// dropped; one that zpool says was dropped ("dropped N events", which
// comes before the event after the gap) is counted as dropped at once.
// The eids before the first event read went before the exporter started:
// they are not counted at all.
// So are the eids below the head of a stream's queue, its first event
// (give or take headSlack for the order): a stream reads the queue from
// its oldest event, and no eid below it can come any more. Called with mu
// held.
func (f *EventFollower) first(ev events.Event, head bool) bool {
	c := &f.counts
	if head {
		for eid := range f.awaited {
			if eid+headSlack < ev.EID {
				delete(f.awaited, eid)
				c.Dropped++
			}
		}
	}
	switch {
	case ev.EID > c.LastEID:
		gap := ev.EID - c.LastEID - 1
		switch {
		case c.LastEID == 0:
			// The eids before the first read went before the exporter
			// started: not dropped while it followed.
		case ev.Dropped > 0 || gap > maxAwaited || head && gap > headSlack:
			c.Dropped += gap
		default:
			for eid := c.LastEID + 1; eid < ev.EID; eid++ {
				f.awaited[eid] = true
			}
		}
		c.LastEID = ev.EID
		for eid := range f.awaited {
			if eid+reorderWindow < c.LastEID {
				delete(f.awaited, eid)
				c.Dropped++
			}
		}
		return true
	case f.awaited[ev.EID]:
		delete(f.awaited, ev.EID)
		return true
	}
	return false // counted already: a restarted stream reads the queue again
}

// reorderWindow is how far past a skipped eid the follower still awaits
// it, and maxAwaited the longest gap it awaits: past it, events were
// dropped. headSlack is how far out of order the head of a queue may be.
const (
	reorderWindow = 1024
	maxAwaited    = 64
	headSlack     = 8
)

// count counts one event, unless an earlier stream counted it; head says
// it is the first of its stream.
func (f *EventFollower) count(ev events.Event, head bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &f.counts
	if ev.EID == 0 {
		return // no payload: not this follower's -v stream
	}
	if !f.first(ev, head) {
		return
	}
	pool := c.Pools[ev.Pool]
	if pool == nil {
		pool = &PoolEvents{Classes: map[string]*ClassEvents{}, Vdevs: map[VdevEventKey]uint64{}, Paths: map[uint64]string{}}
		c.Pools[ev.Pool] = pool
	}
	class := ev.Class
	if _, known := pool.Classes[class]; !known && len(pool.Classes) >= maxEventClasses {
		class = otherEventClass
	}
	ce := pool.Classes[class]
	if ce == nil {
		ce = &ClassEvents{}
		pool.Classes[class] = ce
	}
	ce.Count++
	if ev.Time.After(ce.Last) {
		ce.Last = ev.Time
	}
	if ev.VdevGUID != 0 {
		pool.Vdevs[VdevEventKey{GUID: ev.VdevGUID, Class: class}]++
		if ev.VdevPath != "" {
			pool.Paths[ev.VdevGUID] = ev.VdevPath
		}
	}
	if routineEventClasses[ev.Class] {
		return
	}
	if len(pool.Last) == lastEventsKept {
		pool.Last = append(pool.Last[:0], pool.Last[1:]...)
	}
	pool.Last = append(pool.Last, ev)
}

// routineEventClasses are left out of a pool's last events: the pool's
// history (every property set, every snapshot) and its cache file's
// updates, which would push out the faults and scans a person looks for.
var routineEventClasses = map[string]bool{
	"sysevent.fs.zfs.history_event": true,
	"sysevent.fs.zfs.config_sync":   true,
}

// Recent returns each pool's last events, faults and scans and state
// changes rather than its history, oldest first; nil where zpool has no
// events.
func (f *EventFollower) Recent() map[string][]events.Event {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.supported == nil || !*f.supported {
		return nil
	}
	out := make(map[string][]events.Event, len(f.counts.Pools))
	for name, p := range f.counts.Pools {
		if len(p.Last) > 0 {
			out[name] = append([]events.Event(nil), p.Last...)
		}
	}
	return out
}

// Counts returns a copy of the counts, without the pools' last events
// (Recent has them), and whether this zpool has events: ok is false
// before the probe answered and where it has none.
func (f *EventFollower) Counts() (counts EventCounts, following, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.supported == nil || !*f.supported {
		return EventCounts{}, false, false
	}
	counts = EventCounts{LastEID: f.counts.LastEID, Dropped: f.counts.Dropped, Pools: make(map[string]*PoolEvents, len(f.counts.Pools))}
	for name, p := range f.counts.Pools {
		cp := &PoolEvents{Classes: make(map[string]*ClassEvents, len(p.Classes)), Vdevs: make(map[VdevEventKey]uint64, len(p.Vdevs)),
			Paths: make(map[uint64]string, len(p.Paths))}
		for k, v := range p.Classes {
			c := *v
			cp.Classes[k] = &c
		}
		for k, v := range p.Vdevs {
			cp.Vdevs[k] = v
		}
		for k, v := range p.Paths {
			cp.Paths[k] = v
		}
		counts.Pools[name] = cp
	}
	return counts, f.following, true
}
