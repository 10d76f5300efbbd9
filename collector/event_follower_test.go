package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
)

// eventText is an event as `zpool events -vH` prints it.
func eventText(eid uint64, class, pool string, vdevGUID uint64, vdevPath string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Dec  8 2026 00:29:56.484001381\t%s\n", class)
	fmt.Fprintf(&b, "        class = %q\n        pool = %q\n        pool_guid = 0x67f8ac1cbc14137\n", class, pool)
	if vdevGUID != 0 {
		fmt.Fprintf(&b, "        vdev_guid = 0x%x\n        vdev_type = \"disk\"\n        vdev_path = %q\n", vdevGUID, vdevPath)
	}
	fmt.Fprintf(&b, "        time = 0x%x 0x0 \n        eid = 0x%x\n\n", 1796640000+eid, eid)
	return b.String()
}

// answering is a runner whose `zpool events -H` prints out and exits
// with err.
func answering(out string, err error) runner.Runner {
	return runnerFunc(func(ctx context.Context, name string, args ...string) ([]byte, error) {
		return []byte(out), err
	})
}

// runFollower runs f until the test ends, and waits for Run to return
// then.
func runFollower(t *testing.T, f *EventFollower) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("Run did not return when ctx ended")
		}
	})
	f.Need()
}

// waitCounts waits until the follower has counted up to eid.
func waitCounts(t *testing.T, f *EventFollower, eid uint64) EventCounts {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, _, ok := f.Counts()
		if ok && c.LastEID >= eid {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("counted up to eid %d, want %d (supported %v)", c.LastEID, eid, ok)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A restarted zpool reads the kernel's queue again from its oldest event:
// nothing is counted twice. A gap in the eids that zpool says it dropped
// is counted as dropped; the eids before the first read are not.
func TestEventFollowerCountsEachEventOnce(t *testing.T) {
	streams, started := pipeStreams()
	f := NewEventFollower("zpool", streams, answering("", nil), slog.New(slog.DiscardHandler))
	runFollower(t, f)
	var first *pipeStream
	select {
	case first = <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("no stream started")
	}
	if first.line != "zpool events -vHf" {
		t.Errorf("stream %q, want zpool events -vHf", first.line)
	}
	queue := eventText(3, events.ClassScrubStart, "tank", 0, "") +
		eventText(4, events.ClassChecksum, "tank", 0x2222, "/dev/disk/by-id/ata-A-part1") +
		eventText(5, events.ClassChecksum, "tank", 0x2222, "/dev/disk/by-id/ata-A-part1")
	io.WriteString(first.w, queue)
	waitCounts(t, f, 5)
	first.w.Close() // zpool ends; the follower starts another

	var second *pipeStream
	select {
	case second = <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("no stream started again")
	}
	// 8 comes before 6 and 7, as ereports posted at once can; then zpool
	// says 2 were dropped before 11.
	io.WriteString(second.w, queue+eventText(8, events.ClassIO, "tank", 0x2222, "/dev/disk/by-id/ata-A-part1")+
		eventText(7, events.ClassChecksum, "tank", 0x2222, "/dev/disk/by-id/ata-A-part1")+
		eventText(6, events.ClassChecksum, "tank", 0x2222, "/dev/disk/by-id/ata-A-part1")+
		eventText(9, events.ClassStateChange, "backup", 0, "")+
		"dropped 2 events\n"+eventText(12, events.ClassScrubStart, "backup", 0, ""))
	c := waitCounts(t, f, 12)
	if c.Dropped != 2 {
		t.Errorf("dropped %d, want 2: eids 10 and 11, which zpool says it dropped; not 1 and 2, which went before the exporter started", c.Dropped)
	}
	tank := c.Pools["tank"]
	for class, want := range map[string]uint64{events.ClassScrubStart: 1, events.ClassChecksum: 4, events.ClassIO: 1} {
		if got := tank.Classes[class]; got == nil || got.Count != want {
			t.Errorf("tank %s: %+v, want %d", class, got, want)
		}
	}
	if n := tank.Vdevs[VdevEventKey{GUID: 0x2222, Class: events.ClassChecksum}]; n != 4 {
		t.Errorf("vdev 0x2222 checksum events %d, want 4", n)
	}
	if got := c.Pools["backup"].Classes[events.ClassStateChange]; got == nil || got.Count != 1 || !got.Last.Equal(time.Unix(1796640009, 0)) {
		t.Errorf("backup statechange: %+v, want 1 at eid 9's time", got)
	}
	if last := f.Recent()["tank"]; len(last) != 6 || last[5].EID != 6 {
		t.Errorf("tank's last events, in the order they came: %+v", last)
	}
}

// An eid skipped without zpool saying it was dropped is awaited, as the
// queue is not quite in eid order, and counted as dropped once the
// follower is far past it.
func TestEventFollowerAwaitsASkippedEid(t *testing.T) {
	f := NewEventFollower("zpool", nil, nil, slog.New(slog.DiscardHandler))
	f.setSupported(true)
	f.count(events.Event{EID: 1, Class: events.ClassChecksum, Pool: "tank"}, false)
	f.count(events.Event{EID: 3, Class: events.ClassChecksum, Pool: "tank"}, false)
	if c, _, _ := f.Counts(); c.Dropped != 0 {
		t.Errorf("eid 2 counted as dropped at once: %d", c.Dropped)
	}
	f.count(events.Event{EID: 3 + reorderWindow, Class: events.ClassChecksum, Pool: "tank"}, false)
	if c, _, _ := f.Counts(); c.Dropped != 1+(reorderWindow-1) {
		t.Errorf("dropped %d, want eid 2 once far behind, and the %d eids of the long gap", c.Dropped, reorderWindow-1)
	}
	f.count(events.Event{EID: 2, Class: events.ClassChecksum, Pool: "tank"}, false)
	if c, _, _ := f.Counts(); c.Pools["tank"].Classes[events.ClassChecksum].Count != 3 {
		t.Errorf("eid 2, given up on, counted when it came late: %d", c.Pools["tank"].Classes[events.ClassChecksum].Count)
	}

	// A stream's first event is the head of the queue: an eid below it
	// cannot come any more, and a gap to it is dropped.
	f.count(events.Event{EID: 2000, Class: events.ClassChecksum, Pool: "tank"}, false)
	f.count(events.Event{EID: 2002, Class: events.ClassChecksum, Pool: "tank"}, false)
	before, _, _ := f.Counts()
	f.count(events.Event{EID: 2030, Class: events.ClassChecksum, Pool: "tank"}, true)
	if c, _, _ := f.Counts(); c.Dropped != before.Dropped+1+27 {
		t.Errorf("dropped %d, want %d: eid 2001, below the new stream's head, and 2003 to 2029", c.Dropped, before.Dropped+1+27)
	}
}

// Where zpool has no events subcommand (zfs-fuse), the probe's refusal
// stops the follower: no stream starts, and the counts are not known.
func TestEventFollowerStopsWhereZpoolHasNoEvents(t *testing.T) {
	refused := &runner.Error{Command: "zpool events -H", ExitCode: 1, Stderr: "unrecognized command 'events'", Err: errors.New("exit status 1")}
	var log bytes.Buffer
	streams, started := pipeStreams()
	f := NewEventFollower("zpool", streams, answering("", refused), slog.New(slog.NewTextHandler(&log, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	f.Need()
	f.Run(ctx) // returns on its own
	if ctx.Err() != nil {
		t.Fatal("Run did not return after the refusal")
	}
	select {
	case s := <-started:
		t.Errorf("a stream started: %s", s.line)
	default:
	}
	if _, _, ok := f.Counts(); ok {
		t.Error("counts known on a zpool without events")
	}
	if !strings.Contains(log.String(), "zpool has no events") {
		t.Errorf("the log does not say why:\n%s", &log)
	}
}

// A zpool events that hangs neither blocks the counts nor outlives Run:
// Run returns once it has closed the stream, and says when the process
// could not be ended.
func TestEventFollowerRunEndsItsStream(t *testing.T) {
	stream, started := unreapedStreams()
	var log bytes.Buffer
	f := NewEventFollower("zpool", stream, answering("", nil), slog.New(slog.NewTextHandler(&log, nil)))
	st := runUntilCanceled(t, f, started)
	if !st.closed.Load() {
		t.Errorf("Run returned without closing its stream")
	}
	if c, following, ok := f.Counts(); !ok || following || c.LastEID != 0 {
		t.Errorf("counts %+v, following %v, known %v: want known, none, and not following once Run returned", c, following, ok)
	}
	if !strings.Contains(log.String(), "has not exited") {
		t.Errorf("log does not tell of the process that could not be ended:\n%s", &log)
	}
}

// A pool's last events are its faults, scans and state changes: its
// history (a property set, a snapshot) and cache file updates would push
// them out. The last ten are kept; none where zpool has no events.
func TestEventFollowerKeepsTheLastNotableEvents(t *testing.T) {
	f := NewEventFollower("zpool", nil, nil, slog.New(slog.DiscardHandler))
	if f.Recent() != nil {
		t.Error("recent events before the probe answered")
	}
	f.setSupported(true)
	eid := uint64(0)
	post := func(class string) {
		eid++
		f.count(events.Event{EID: eid, Class: class, Pool: "tank"}, false)
	}
	post(events.ClassScrubStart)
	for range 12 {
		post(events.ClassChecksum)
		post("sysevent.fs.zfs.history_event")
		post("sysevent.fs.zfs.config_sync")
	}
	last := f.Recent()["tank"]
	if len(last) != lastEventsKept {
		t.Fatalf("%d events kept, want %d", len(last), lastEventsKept)
	}
	for _, ev := range last {
		if ev.Class != events.ClassChecksum {
			t.Errorf("kept %s (eid %d), want only the checksum ereports after the scrub", ev.Class, ev.EID)
		}
	}
	if last[len(last)-1].EID != eid-2 {
		t.Errorf("the last event kept is eid %d, want %d", last[len(last)-1].EID, eid-2)
	}
	if c, _, _ := f.Counts(); c.Pools["tank"].Classes["sysevent.fs.zfs.history_event"].Count != 12 {
		t.Error("history events are left out of the counts too")
	}
}
