//go:build openzfsguest

package walk

import (
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
)

// queuedEvents parses `zpool events -v`: the kernel's queue as it is now.
func queuedEvents(t *testing.T) []events.Event {
	t.Helper()
	evs, err := events.Parse(strings.NewReader(zpool(t, "events", "-v")))
	if err != nil {
		t.Fatalf("zpool events -v: %v", err)
	}
	return evs
}

// eventTallies counts events by pool and class, and the events that name
// a vdev by pool, vdev GUID (decimal, as zfs_vdev_info's guid) and class.
func eventTallies(evs []events.Event) (byClass, byVdev map[string]float64) {
	byClass, byVdev = map[string]float64{}, map[string]float64{}
	for _, ev := range evs {
		byClass[ev.Pool+" "+ev.Class]++
		if ev.VdevGUID != 0 {
			byVdev[ev.Pool+" "+strconv.FormatUint(ev.VdevGUID, 10)+" "+ev.Class]++
		}
	}
	return byClass, byVdev
}

// exportedTallies are the exporter's events by pool and class, and by
// pool, vdev GUID and class for the vdevs zfs_vdev_info names.
func exportedTallies(m e2e.Metrics) (byClass, byVdev map[string]float64) {
	byClass, byVdev = map[string]float64{}, map[string]float64{}
	for _, s := range m.Series("zfs_pool_events_total", nil) {
		if v := e2e.Value(s); v > 0 {
			byClass[e2e.Label(s, "pool")+" "+e2e.Label(s, "class")] = v
		}
	}
	guids := map[string]string{} // pool and vdev → guid
	for _, s := range m.Series("zfs_vdev_info", nil) {
		guids[e2e.Label(s, "pool")+" "+e2e.Label(s, "vdev")] = e2e.Label(s, "guid")
	}
	for _, s := range m.Series("zfs_vdev_events_total", nil) {
		guid, ok := guids[e2e.Label(s, "pool")+" "+e2e.Label(s, "vdev")]
		if v := e2e.Value(s); v > 0 && ok && guid != "" {
			byVdev[e2e.Label(s, "pool")+" "+guid+" "+e2e.Label(s, "class")] = v
		}
	}
	return byClass, byVdev
}

// eventsAgree checks that the exporter's counts equal `zpool events -v`
// of the same moment, class by class and vdev by vdev: the queue holds
// every event of the walk (zfs_zevent_len_max is raised at its start).
// Events still coming (a resilver's) are waited out.
func eventsAgree(t *testing.T, e *e2e.Exporter) {
	t.Helper()
	var diffs []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		queueClass, queueVdev := eventTallies(queuedEvents(t))
		m := e.Scrape(t)
		gotClass, gotVdev := exportedTallies(m)
		// A vdev gone from status (a replaced disk) has no guid to join
		// on: only the vdevs zfs_vdev_info names are compared by vdev.
		named := map[string]bool{}
		for _, s := range m.Series("zfs_vdev_info", nil) {
			named[e2e.Label(s, "pool")+" "+e2e.Label(s, "guid")] = true
		}
		for k := range queueVdev {
			f := strings.Fields(k)
			if !named[f[0]+" "+f[1]] {
				delete(queueVdev, k)
			}
		}
		diffs = append(tallyDiffs("class", queueClass, gotClass), tallyDiffs("vdev", queueVdev, gotVdev)...)
		if len(diffs) == 0 {
			t.Logf("events agree: %d classes of pools, %d of vdevs", len(queueClass), len(queueVdev))
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("the exporter's events differ from zpool events -v:\n%s", strings.Join(diffs, "\n"))
			return
		}
		time.Sleep(2 * time.Second)
	}
}

func tallyDiffs(what string, want, got map[string]float64) []string {
	var diffs []string
	for k, w := range want {
		if got[k] != w {
			diffs = append(diffs, fmt.Sprintf("%s %s: exported %v, zpool events %v", what, k, got[k], w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s %s: exported %v, not in zpool events", what, k, g))
		}
	}
	sort.Strings(diffs)
	return diffs
}

// eventsWrap wraps the kernel's queue under the exporter: with
// zfs_zevent_len_max at 16, the follower stopped while 100 events come.
// The events the kernel dropped are counted; a restarted follower (its
// zpool killed) counts nothing twice; a restarted exporter counts what the
// queue holds, and nothing dropped.
func eventsWrap(t *testing.T, pool string) {
	// The kernel drains one old event per new one past the limit: a queue
	// of a thousand events under a limit of 64 would hold a thousand until
	// a thousand more came. Cleared, it holds few from the start.
	zpool(t, "events", "-c")
	setTunable(t, "zfs_zevent_len_max", "16")
	run(t, "zfs", "set", "walk:wrap=start", pool)
	start, _ := eidRange(queuedEvents(t))
	e := e2e.Start(t, *exporterBin, nil, "--scrape.timeout=20s")
	e.WaitFor(t, 30*time.Second, "zpool events followed", func(m e2e.Metrics) bool {
		v, ok := m.Get("zfs_exporter_events_following", nil)
		return ok && v == 1 && sum(m, "zfs_pool_events_total", nil) == 1
	})
	// The exporter's zpool events -vHf, if it runs.
	followerPid := func() (int, bool) {
		out, _ := exec.Command("pgrep", "-f", "-P", fmt.Sprint(e.Pid()), "zpool events -vHf").Output()
		pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
		return pid, err == nil
	}
	follower := func() int {
		pid, ok := followerPid()
		if !ok {
			t.Fatal("the exporter runs no zpool events -vHf")
		}
		return pid
	}
	before := e.Scrape(t)
	droppedBefore, _ := before.Get("zfs_events_dropped_total", nil)
	// 100 history events, each a property set, while the follower is
	// stopped: the queue keeps the last few dozen.
	pid := follower()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		run(t, "zfs", "set", fmt.Sprintf("walk:wrap=%d", i), pool)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	queue := queuedEvents(t)
	first, last := eidRange(queue)
	m := e.WaitFor(t, 30*time.Second, "the events after the wrap counted", func(m e2e.Metrics) bool {
		v, _ := m.Get("zfs_events_dropped_total", nil)
		return v > droppedBefore && sum(m, "zfs_pool_events_total", nil)+v >= float64(last-start+1)
	})
	dropped, _ := m.Get("zfs_events_dropped_total", nil)
	t.Logf("the queue holds eids %d to %d; the exporter counted %v events and %v dropped", first, last, sum(m, "zfs_pool_events_total", nil), dropped)
	// The kernel keeps more than zfs_zevent_len_max at times (128 under a
	// limit of 64 in the 2.4 guest): the queue says what went.
	if want := float64(first - start - 1); dropped-droppedBefore != want || want == 0 {
		t.Errorf("zfs_events_dropped_total rose by %v, want %v, the eids between the last read (%d) and the queue's first (%d)", dropped-droppedBefore, want, start, first)
	}
	total := func(m e2e.Metrics) float64 { return sum(m, "zfs_pool_events_total", nil) }
	counted := total(m)
	if counted+dropped != float64(last-start+1) {
		t.Errorf("counted %v and dropped %v events, want %d in all, eids %d to %d", counted, dropped, last-start+1, start, last)
	}

	// The follower's zpool killed: the next reads the queue again.
	if err := syscall.Kill(follower(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e.WaitFor(t, 30*time.Second, "zpool events followed again", func(m e2e.Metrics) bool {
		v, ok := m.Get("zfs_exporter_events_following", nil)
		again, running := followerPid()
		return ok && v == 1 && running && again != pid
	})
	time.Sleep(2 * time.Second) // the new stream has read the queue
	m = e.Scrape(t)
	if got := total(m); got != counted {
		t.Errorf("after a restart of zpool events, %v events counted, want %v: the queue was counted again", got, counted)
	}

	// Another exporter, as after a restart: the queue, and nothing
	// dropped, as it missed nothing while it followed.
	fresh := e2e.Start(t, *exporterBin, nil, "--scrape.timeout=20s")
	queue = queuedEvents(t)
	m = fresh.WaitFor(t, 30*time.Second, "the queue counted", func(m e2e.Metrics) bool {
		return total(m) >= float64(len(queue))
	})
	if got := total(m); got != float64(len(queue)) {
		t.Errorf("a new exporter counted %v events, want the %d the queue holds", got, len(queue))
	}
	if got, _ := m.Get("zfs_events_dropped_total", nil); got != 0 {
		t.Errorf("a new exporter counted %v dropped, want 0: the eids before the queue's first went before it started", got)
	}
}

// eidRange is the lowest and highest eid of the events: the queue is not
// quite in eid order.
func eidRange(evs []events.Event) (low, high uint64) {
	low = evs[0].EID
	for _, ev := range evs {
		low, high = min(low, ev.EID), max(high, ev.EID)
	}
	return low, high
}
