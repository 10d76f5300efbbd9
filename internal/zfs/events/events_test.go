package events

import (
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The shared OpenZFS 2.3.2 captures of `zpool events` (no -v): one event
// a line, each read with its class and time, as many as the lines after
// the heading.
func TestShortForm(t *testing.T) {
	for _, f := range sample.Glob(t, sample.Dir(t, "captures/openzfs-2.3"), "*__zpool-events.txt") {
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			evs, err := Parse(strings.NewReader(string(f.Body)))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(f.Body)), "\n")[1:]
			if len(evs) != len(lines) || len(evs) == 0 {
				t.Fatalf("%d events, the capture has %d lines of events", len(evs), len(lines))
			}
			for i, line := range lines {
				fields := strings.Fields(line)
				if evs[i].Class != fields[len(fields)-1] {
					t.Errorf("event %d: class %q, line %q", i, evs[i].Class, line)
				}
				if evs[i].Time.IsZero() || evs[i].EID != 0 {
					t.Errorf("event %d: time %v, eid %d; want the line's time and no eid", i, evs[i].Time, evs[i].EID)
				}
			}
		})
	}
}

// A payload as zpool_do_events_nvprint prints it: the pairs that name the
// event read, embedded nvlists, arrays and a string's later lines passed
// over, a gap counted on the event after it.
func TestVerbose(t *testing.T) {
	const out = `TIME                           CLASS
Dec  7 2026 10:00:01.000000000 ereport.fs.zfs.checksum
        class = "ereport.fs.zfs.checksum"
        ena = 0x2a3f0c1e00100001
        detector = (embedded nvlist)
                version = 0x0
                scheme = "zfs"
                pool = 0x1111
                vdev = 0x2222
        (end detector)
        pool = "tank"
        pool_guid = 0x1111
        vdev_guid = 0x2222
        vdev_type = "disk"
        vdev_path = "/dev/disk/by-id/ata-X-part1"
        vdev_spare_guids = 0x1 0x2 
        history_str = "a string
        pool = "not this one"
that goes on"
        time = 0x6930e1b2 0x1dcd6500 
        eid = 0x2a

dropped 3 events
Dec  7 2026 10:00:02.000000000 resource.fs.zfs.statechange
        version = 0x0
        class = "resource.fs.zfs.statechange"
        pool = "tank"
        vdev_state = "FAULTED" (0x5)
        time = 0x6930e1b3 0x0 
        eid = 0x2e

`
	evs, err := Parse(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := []Event{
		{EID: 0x2a, Class: ClassChecksum, Time: time.Unix(0x6930e1b2, 0x1dcd6500).UTC(), Pool: "tank", PoolGUID: 0x1111,
			VdevGUID: 0x2222, VdevType: "disk", VdevPath: "/dev/disk/by-id/ata-X-part1"},
		{EID: 0x2e, Class: ClassStateChange, Time: time.Unix(0x6930e1b3, 0).UTC(), Pool: "tank", VdevState: "FAULTED", Dropped: 3},
	}
	if len(evs) != len(want) {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	for i := range want {
		if evs[i] != want[i] {
			t.Errorf("event %d:\n got %+v\nwant %+v", i, evs[i], want[i])
		}
	}
}

// -H prints no heading and a tab after the time; a stream cut in the
// middle of an event still gives it.
func TestScriptedAndCut(t *testing.T) {
	const out = "Dec  7 2026 10:00:01.000000000\tsysevent.fs.zfs.scrub_start\n        pool = \"tank\"\n        eid = 0x7\n"
	evs, err := Parse(strings.NewReader(out))
	if err != nil || len(evs) != 1 || evs[0].Class != ClassScrubStart || evs[0].EID != 7 || evs[0].Pool != "tank" {
		t.Fatalf("%+v, %v", evs, err)
	}
}

// Output that is no event, as a zpool without events prints, is refused
// naming its line; a line past the limit too.
func TestNotEvents(t *testing.T) {
	for name, out := range map[string]string{
		"usage":     "unrecognized command 'events'\nusage: zpool command args ...\n",
		"long line": "Dec  7 2026 10:00:01.000000000 x\n        pool = \"" + strings.Repeat("a", maxLine) + "\"\n",
	} {
		r := NewReader(strings.NewReader(out))
		var err error
		for err == nil {
			_, err = r.Next()
		}
		if err == io.EOF || !errors.Is(err, parse.ErrUnexpected) {
			t.Errorf("%s: %v, want a parse error", name, err)
		}
		if !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: %v names no line", name, err)
		}
	}
}

// The OpenZFS guests' walks: `zpool events -v` (and -vH) at a resilver,
// checksum and data errors, a pulled disk and a slow disk, and `zpool
// events -vf` over the whole walk. Every event is read, as many as the
// lines that start one; each has its class, its time and an eid of its
// own, with no gap but where zpool says it dropped events.
func TestGuestCaptures(t *testing.T) {
	files := sample.Glob(t, "testdata", "*/*__zpool_events*.txt")
	for _, f := range files {
		t.Run(f.Path, func(t *testing.T) {
			evs, err := Parse(strings.NewReader(string(f.Body)))
			if err != nil {
				t.Fatal(err)
			}
			lines := 0
			for _, line := range strings.Split(string(f.Body), "\n") {
				if first.MatchString(line) {
					lines++
				}
			}
			if len(evs) != lines || lines == 0 {
				t.Fatalf("%d events read, %d lines start one", len(evs), lines)
			}
			// The queue is not quite in eid order (two ereports posted
			// at once), but holds each eid once.
			seen := map[uint64]bool{}
			low, high, dropped := evs[0].EID, evs[0].EID, uint64(0)
			for i, ev := range evs {
				if ev.Class == "" || ev.Time.IsZero() || ev.EID == 0 {
					t.Fatalf("event %d: %+v", i, ev)
				}
				if seen[ev.EID] {
					t.Errorf("event %d: eid %d twice", i, ev.EID)
				}
				seen[ev.EID] = true
				low, high, dropped = min(low, ev.EID), max(high, ev.EID), dropped+ev.Dropped
			}
			// zpool's "dropped N events" counts the queue's events
			// drained under this reader's cursor, which it may have read
			// already (zpool events -c clears them all): with it, eids
			// may or may not be missing; without it, none is.
			if n := high - low + 1; dropped == 0 && n != uint64(len(evs)) {
				t.Errorf("eids %d to %d, %d events, and nothing said dropped", low, high, len(evs))
			}
		})
	}
}
