package prometheus3

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// walkStory are the OpenZFS 2.4.4 guest's scenarios the pictures tell, in
// the order the walk made them: four pools (a mirror, two mirrors, a
// raidz1 with log, cache and spare, a dRAID) under writes, a disk taken
// offline, a scrub paused, a resilver, then a sequential rebuild. Their
// counters and histograms only grow from one to the next.
var walkStory = []string{"01-created", "02-offline", "03-scrub-paused", "04-resilvering", "05-rebuilding"}

// walkBoards are the dashboards drawn from the walk. The datasets board
// is not (the captures hold no zfs listings), nor the ARC board: the
// walk's kstats are those of its first scenario, which do not move.
var walkBoards = []string{"zfs-pools", "zfs-io", "zfs-scans", "zfs-benchmark"}

// With ZPE_PICTURES set to a directory, the walkBoards are drawn into it
// (make pictures writes docs/dashboards) from a Prometheus 3.16 that
// scraped the exporter over the guest's walk, one step every storyStep, as
// the host nas: real pools under writes, a scrub paused, a resilver and a
// rebuild in progress, the latency histograms of every pool, top-level
// vdev and leaf, which zfs-fuse, the other pictures' source, does not
// have, and a benchmark window over the last step. Without it the test is
// skipped: it takes a minute and a half and draws nothing a test checks.
func TestDrawDashboardsFromTheGuestWalk(t *testing.T) {
	dir := os.Getenv("ZPE_PICTURES")
	if dir == "" {
		t.Skip("ZPE_PICTURES is not set: no pictures asked for (make pictures)")
	}
	prom, exporter := binaries(t)
	const storyStep = 15 * time.Second
	replay := walkReplay(t, walkStory...)
	// The I/O board's detail row reads request sizes, queue lengths and
	// queue waits, each family behind a flag.
	e := e2e.Start(t, exporter, nil, "--zpool.replay-dir="+replay, "--zpool.replay-step="+storyStep.String(),
		"--web.enable-benchmark-api", "--collector.vdev_latency.request-sizes",
		"--collector.vdev_latency.queue-lengths", "--collector.vdev_latency.queue-wait")
	began := time.Now()
	p := startPrometheusIn(t, prom, everySecond(fmt.Sprintf(`  - job_name: zfs
    static_configs: [{targets: [%q]}]
    relabel_configs:
      - {target_label: instance, replacement: "nas:9134"}
`, strings.TrimPrefix(e.URL, "http://"))), repotest.Path("dashboards", "out", "rules"))
	// One pass of the story, ending before the replay starts over.
	end := began.Add(time.Duration(len(walkStory))*storyStep - time.Second)

	// The walk wrote 160 MiB to r10 with dd, then replaced one of its
	// disks: the last step's counters hold those writes and the rebuild's.
	// A benchmark window covers that step. The board's annotation, a query
	// a minute apart, marks it 60 s after the picture's start: early in
	// that step, where the window begins.
	time.Sleep(time.Until(began.Add(time.Duration(len(walkStory)-1) * storyStep)))
	bench := benchwindow.Client{BaseURL: e.URL}
	ctx := t.Context()
	w, err := bench.Start(ctx, benchwindow.StartRequest{Name: "dd 160 MiB on r10", Pool: "r10",
		Command: "dd if=/dev/urandom of=/r10/more bs=1M count=160 conv=fsync"})
	if err != nil {
		t.Fatal(err)
	}
	// Ended early enough for Prometheus to scrape its end.
	time.Sleep(time.Until(end.Add(-2 * time.Second)))
	if _, err := bench.End(ctx, w.ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(end))
	if s := p.mustQuery(t, `count(zfs_pool_state{instance="nas:9134"})`); len(s) == 0 {
		t.Fatal("Prometheus scraped nothing")
	}

	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The exporter's counters move once a step. Grafana takes rates over
	// four scrape intervals or more: told that the server scrapes every
	// (storyStep+1s)/4, it takes them over a step and a scrape, which
	// always hold exactly one step's change. Rates and latencies then hold
	// through each step instead of flashing for the 4 s after its start.
	args := []string{"run", "./cmd/render", "-prometheus", p.url,
		"-from", strconv.FormatInt(began.Add(2*time.Second).Unix(), 10), "-to", strconv.FormatInt(end.Unix(), 10),
		"-step", "1s", "-scrape-interval", ((storyStep + time.Second) / 4).String(), "-out", abs}
	for _, b := range walkBoards {
		args = append(args, filepath.Join("out", "dashboards", b+".json"))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = repotest.Path("dashboards")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("drawing the dashboards: %v\n%s", err, out)
	}
	t.Logf("%s drawn into %s from %s of the walk", strings.Join(walkBoards, ", "), abs, end.Sub(began).Round(time.Second))
}
