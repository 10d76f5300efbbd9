package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
)

// A replay of the OpenZFS 2.4 guest that holds `zpool events -vH` carries
// its events: the exporter follows them as it would the kernel's, a
// stream that writes the queue at each step, and counts each event once;
// the status page lists the pools' last ones.
func TestReplayCarriesEvents(t *testing.T) {
	const scenario = "12-slow-disk"
	eventsDir := "../../internal/zfs/events/testdata/openzfs-2.4-guest"
	dir := filepath.Join(t.TempDir(), "replay")
	if err := hostgen.WriteCaptures(dir, scenario, "../../internal/zfs/zpool/testdata/openzfs-2.4-guest", eventsDir); err != nil {
		t.Fatal(err)
	}
	capture := sample.MustRead(t, filepath.Join(eventsDir, scenario+"__zpool_events_-vH.txt"))
	evs, err := events.Parse(strings.NewReader(string(capture.Body)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, ev := range evs {
		want[ev.Pool+" "+ev.Class]++
	}
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+dir, "--zpool.iostat-interval=1s")
	e.WaitFor(t, 20*time.Second, "the replayed events counted", func(m e2e.Metrics) bool {
		v, ok := m.Get("zfs_exporter_events_following", nil)
		total, _ := sumSeries(m, "zfs_pool_events_total", nil)
		return ok && v == 1 && total == float64(len(evs))
	})
	// The queue counts once, whatever the stream's interval.
	time.Sleep(2500 * time.Millisecond)
	m := e.Scrape(t)
	for k, n := range want {
		pool, class, _ := strings.Cut(k, " ")
		if got, _ := m.Get("zfs_pool_events_total", map[string]string{"pool": pool, "class": class}); got != n {
			t.Errorf("pool %s, class %s: %v, want %v", pool, class, got, n)
		}
	}
	if got, _ := m.Get("zfs_events_dropped_total", nil); got != 0 {
		t.Errorf("dropped %v, want 0", got)
	}
	e2e.PromtoolCheck(t, e.ScrapeText(t))

	resp, err := http.Get(e.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	last := evs[len(evs)-1]
	for last.Class == "sysevent.fs.zfs.history_event" || last.Class == "sysevent.fs.zfs.config_sync" {
		evs = evs[:len(evs)-1]
		last = evs[len(evs)-1]
	}
	short := last.Class[strings.LastIndexByte(last.Class, '.')+1:] // the page's "delay", "resilver_finish"
	if !strings.Contains(string(page), `class="event"`) || !strings.Contains(string(page), `data-class="`+short+`"`) {
		t.Errorf("the status page lists no last events, or not %s, the last of the capture", last.Class)
	}
}
