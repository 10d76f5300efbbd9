package collector

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// eventsDir holds the guests' captures of zpool events.
func eventsDir(release string) string {
	return "../internal/zfs/events/testdata/openzfs-" + release + "-guest"
}

// tally counts a capture of `zpool events -v` the plain way: events are
// blocks that a blank line ends, their class the last word of the first
// line, their pool and vdev GUID the payload's own pairs, eight spaces in.
func tally(body string) (byClass map[[2]string]float64, byVdev map[[3]string]float64) {
	byClass, byVdev = map[[2]string]float64{}, map[[3]string]float64{}
	for _, block := range strings.Split(body, "\n\n") {
		lines := strings.Split(strings.Trim(block, "\n"), "\n")
		if len(lines) < 2 {
			continue
		}
		head := lines[0]
		if strings.HasPrefix(head, "TIME ") {
			head, lines = lines[1], lines[1:]
		}
		f := strings.Fields(head)
		class := f[len(f)-1]
		var pool, guid string
		for _, l := range lines[1:] {
			if v, ok := strings.CutPrefix(l, `        pool = "`); ok {
				pool = strings.TrimSuffix(v, `"`)
			}
			if v, ok := strings.CutPrefix(l, "        vdev_guid = 0x"); ok {
				n, _ := strconv.ParseUint(v, 16, 64)
				guid = strconv.FormatUint(n, 10)
			}
		}
		byClass[[2]string{pool, class}]++
		if guid != "" {
			byVdev[[3]string{pool, guid, class}]++
		}
	}
	return byClass, byVdev
}

// The events of the OpenZFS guests' walks, at each moment they captured
// `zpool events -v` beside zpool status: every pool's events by class,
// and every vdev's, named as zfs_vdev_info names it, are those of the
// capture.
func TestEventsFromGuest(t *testing.T) {
	for _, release := range []string{"2.4", "2.3"} {
		for _, f := range sample.Glob(t, eventsDir(release), "*__zpool_events_-v.txt") {
			scenario, _, _ := strings.Cut(filepath.Base(f.Path), "__")
			t.Run(release+"/"+scenario, func(t *testing.T) {
				// The status of the same moment, which names the vdevs by
				// the GUIDs the events give.
				dir := filepath.Join(t.TempDir(), "host")
				if err := hostgen.WriteCaptures(dir, scenario, eventsDir(release)); err != nil {
					t.Fatal(err)
				}
				replay, err := runner.NewReplay(dir)
				if err != nil {
					t.Fatal(err)
				}
				logger := slog.New(slog.DiscardHandler)
				follower := NewEventFollower("zpool", nil, replay, logger)
				follower.setSupported(true)
				evs, err := events.Parse(strings.NewReader(string(f.Body)))
				if err != nil {
					t.Fatal(err)
				}
				for _, ev := range evs {
					follower.count(ev, false)
				}
				cfg := testConfig(zfs.Config{Runner: replay}, Config{Events: follower}, logger)
				e, err := New(cfg, logger, map[string]bool{"events": true, "status": true})
				if err != nil {
					t.Fatal(err)
				}
				fams := gather(t, e)
				if v, _ := value(fams, "zfs_exporter_collector_success", map[string]string{"collector": "events"}); v != 1 {
					t.Fatal("the events collector failed")
				}
				byClass, byVdev := tally(string(f.Body))
				for k, want := range byClass {
					if got, _ := value(fams, "zfs_pool_events_total", map[string]string{"pool": k[0], "class": k[1]}); got != want {
						t.Errorf("pool %s, class %s: %v exported, %v in zpool events", k[0], k[1], got, want)
					}
				}
				names := map[string]string{} // pool and guid → vdev
				for _, s := range series(fams, "zfs_vdev_info", nil) {
					names[s["pool"]+" "+s["guid"]] = s["vdev"]
				}
				compared := 0
				for k, want := range byVdev {
					vdev, ok := names[k[0]+" "+k[1]]
					if !ok {
						continue // gone from status since
					}
					compared++
					if got, _ := value(fams, "zfs_vdev_events_total", map[string]string{"pool": k[0], "vdev": vdev, "class": k[2]}); got != want {
						t.Errorf("pool %s, vdev %s, class %s: %v exported, %v in zpool events", k[0], vdev, k[2], got, want)
					}
				}
				if problems, err := testutil.CollectAndLint(e.Scraper(context.Background())); err != nil || len(problems) > 0 {
					t.Errorf("lint: %v %v", err, problems)
				}
				if compared == 0 {
					t.Error("no vdev's events compared: the status names none of the events' vdevs")
				}
				t.Logf("%d events: %d pool classes, %d of %d vdev classes compared", len(evs), len(byClass), compared, len(byVdev))
				compareGolden(t, filepath.Join("testdata", fmt.Sprintf("events-openzfs-%s-%s.prom", release, scenario)), exposition(t, onlyEvents(fams)))
			})
		}
	}
}

// onlyEvents keeps the families of events, for a golden that holds
// nothing else.
func onlyEvents(fams []*dto.MetricFamily) []*dto.MetricFamily {
	var kept []*dto.MetricFamily
	for _, mf := range fams {
		if strings.Contains(mf.GetName(), "event") {
			kept = append(kept, mf)
		}
	}
	return kept
}

// An event's vdev is named as the vdev series name it: by the GUID that
// JSON status gives, by its path where text status gives no GUID, and a
// vdev gone from status as zpool named a whole disk's leaf.
func TestEventVdevNames(t *testing.T) {
	pool := &zpool.Pool{Name: "tank", Root: &zpool.Vdev{Name: "tank", Type: "root", Children: []*zpool.Vdev{
		{Name: "mirror-0", Type: "mirror", GUID: "100", Children: []*zpool.Vdev{
			{Name: "ata-A", Type: "disk", GUID: "101", Path: "/dev/disk/by-id/ata-A-part1"},
			{Name: "sdb", Type: "disk"},
			{Name: "sdc3", Type: "disk"},
		}},
	}}}
	n := newVdevNames(pool)
	for _, c := range []struct {
		guid uint64
		path string
		want string
	}{
		{101, "/dev/whatever", "ata-A"},             // by GUID
		{0, "/dev/disk/by-id/ata-A-part1", "ata-A"}, // by path
		{7, "/dev/sdb1", "sdb"},                     // text status: the whole disk's leaf
		{8, "/dev/sdc3", "sdc3"},                    // a partition the user gave
		{9, "/dev/disk/by-id/ata-Z-part1", "ata-Z"}, // gone since
		{100, "", "mirror-0"},
		{0, "", ""},
	} {
		if got := n.name(c.guid, c.path); got != c.want {
			t.Errorf("name(%d, %q) = %q, want %q", c.guid, c.path, got, c.want)
		}
	}
}
