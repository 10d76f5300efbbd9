package hostgen

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
)

// pairNames lists the payload's pair names of each event of a `zpool
// events -v` output, by class (a history event by its kind too).
func pairNames(out string) map[string][]string {
	names := map[string][]string{}
	for _, block := range strings.Split(out, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		if len(lines) < 2 {
			continue
		}
		if strings.HasPrefix(lines[0], "TIME ") {
			lines = lines[1:]
		}
		f := strings.Fields(lines[0])
		class := f[len(f)-1]
		var pairs []string
		for _, l := range lines[1:] {
			name, _, _ := strings.Cut(strings.TrimSpace(l), " = ")
			pairs = append(pairs, name)
			if strings.HasPrefix(strings.TrimSpace(l), "history_internal_name = ") {
				class += " " + strings.TrimPrefix(strings.TrimSpace(l), "history_internal_name = ")
			}
		}
		slices.Sort(pairs)
		if _, seen := names[class]; !seen {
			names[class] = pairs
		}
	}
	return names
}

// A generated host's events queue is full, numbered from 1 without a gap,
// names every pool, answers every `zpool events` line, and has the pairs
// of the OpenZFS 2.4.4 guest's events of the same classes, save the
// host name (which a snapshot's history event of the guest leaves out).
func TestGeneratedEventsAreLikeTheGuests(t *testing.T) {
	dir := writeHost(t, Spec{Pools: 3, Leaves: 4, Version: "2.4"})
	out, err := Answer(dir, []string{"events", "-vHf"})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := events.Parse(strings.NewReader(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != EventsQueueLen {
		t.Fatalf("%d events, want %d", len(evs), EventsQueueLen)
	}
	pools := map[string]bool{}
	for i, ev := range evs {
		if ev.EID != uint64(i+1) {
			t.Fatalf("event %d has eid %d", i, ev.EID)
		}
		pools[ev.Pool] = true
	}
	if len(pools) != 3 {
		t.Errorf("events of %d pools, want 3", len(pools))
	}
	guest := sample.MustRead(t, "../../zfs/events/testdata/openzfs-2.4-guest/04-resilvering__zpool_events_-v.txt")
	real := pairNames(string(guest.Body))
	for class, pairs := range pairNames(string(out)) {
		want, ok := real[class]
		if !ok {
			t.Errorf("%s: no such event in the guest's capture", class)
			continue
		}
		pairs = slices.DeleteFunc(pairs, func(p string) bool { return p == "history_hostname" && !slices.Contains(want, p) })
		if !slices.Equal(pairs, want) {
			t.Errorf("%s: pairs %v, the guest's %v", class, pairs, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, runner.CaptureFileName(eventsLine))); err != nil {
		t.Error(err)
	}
	if !Follows([]string{"events", "-vHf"}) || Follows([]string{"events", "-vH"}) || Follows([]string{"iostat", "-f"}) {
		t.Error("Follows tells a follower wrong")
	}
}
