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
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// walkStory are the OpenZFS 2.4.4 guest's scenarios the pictures tell, in
// the order the walk made them: four pools (a mirror, two mirrors, a
// raidz1 with log, cache and spare, a dRAID) under writes, a disk taken
// offline, a scrub paused, a resilver, then a sequential rebuild. Their
// counters and histograms only grow from one to the next.
var walkStory = []string{"01-created", "02-offline", "03-scrub-paused", "04-resilvering", "05-rebuilding"}

// walkBoards are the dashboards drawn from the walk. The datasets and ARC
// boards are drawn from the story (TestDrawDatasetsAndARCFromTheStory):
// the walk lists no datasets, and its kstats are those of its first
// scenario.
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
	p := scrapeAsNAS(t, prom, e.URL)
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

	draw(t, p, dir, began.Add(2*time.Second), end, storyStep, walkBoards)
	t.Logf("%s drawn into %s from %s of the walk", strings.Join(walkBoards, ", "), dir, end.Sub(began).Round(time.Second))
}

// storyDir holds the story's captures (make story records them), and
// storyRounds its scenarios, story-01 ... story-08.
var (
	storyDir    = repotest.Path("tests", "prometheus3", "testdata", "openzfs-2.4-story")
	storyRounds = 8
)

// With ZPE_PICTURES set, the datasets and ARC boards are drawn into it
// from a Prometheus 3.16 that scraped the exporter over the story that the
// OpenZFS 2.4.4 guest recorded (testbed/openzfs, TestStory): a household's
// datasets on a raidz1 with a cache disk and a backup mirror, written,
// read, snapshotted and sent in rounds, with the ARC held small so that
// the media miss and feed the L2ARC. Its kstats move with its steps.
func TestDrawDatasetsAndARCFromTheStory(t *testing.T) {
	dir := os.Getenv("ZPE_PICTURES")
	if dir == "" {
		t.Skip("ZPE_PICTURES is not set: no pictures asked for (make pictures)")
	}
	prom, exporter := binaries(t)
	const storyStep = 10 * time.Second
	replay := storyReplay(t)
	// Snapshots are listed every step, as the story took them, each
	// snapshot's figures too (the board's largest snapshots).
	e := e2e.Start(t, exporter, nil, "--zpool.replay-dir="+replay, "--zpool.replay-step="+storyStep.String(),
		"--collector.dataset.snapshot-interval="+storyStep.String(), "--collector.dataset.per-snapshot")
	began := time.Now()
	p := scrapeAsNAS(t, prom, e.URL)
	end := began.Add(time.Duration(storyRounds)*storyStep - time.Second)
	time.Sleep(time.Until(end))
	if s := p.mustQuery(t, `count(zfs_dataset_used_bytes{instance="nas:9134"})`); len(s) == 0 {
		t.Fatal("Prometheus scraped no dataset")
	}
	boards := []string{"zfs-datasets", "zfs-arc"}
	draw(t, p, dir, began.Add(2*time.Second), end, storyStep, boards)
	t.Logf("%s drawn into %s from %s of the story", strings.Join(boards, ", "), dir, end.Sub(began).Round(time.Second))
}

// storyReplay lays the story's captures out as a replay directory, a step
// per round, each with its own kstats.
func storyReplay(t *testing.T) string {
	t.Helper()
	replay := t.TempDir()
	for round := 1; round <= storyRounds; round++ {
		if err := hostgen.WriteCaptures(filepath.Join(replay, fmt.Sprintf("%03d", round-1)), fmt.Sprintf("story-%02d", round),
			storyDir, filepath.Join(storyDir, "kstat")); err != nil {
			t.Fatal(err)
		}
	}
	return replay
}

// scrapeAsNAS starts Prometheus, with the shipped rules, scraping the
// exporter at url every second as job zfs, instance nas:9134.
func scrapeAsNAS(t *testing.T, prom, url string) *prometheus {
	t.Helper()
	return startPrometheusIn(t, prom, everySecond(fmt.Sprintf(`  - job_name: zfs
    static_configs: [{targets: [%q]}]
    relabel_configs:
      - {target_label: instance, replacement: "nas:9134"}
`, strings.TrimPrefix(url, "http://"))), repotest.Path("dashboards", "out", "rules"))
}

// draw draws boards, from the dashboards' build output, into dir from
// what Prometheus p holds between from and to, for a replay whose
// counters move once a step.
func draw(t *testing.T, p *prometheus, dir string, from, to time.Time, step time.Duration, boards []string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Grafana takes rates over four scrape intervals or more: told that
	// the server scrapes every (step+1s)/4, it takes them over a step and
	// a scrape, which always hold exactly one step's change. Rates and
	// latencies then hold through each step instead of flashing for the
	// 4 s after its start.
	args := []string{"run", "./cmd/render", "-prometheus", p.url,
		"-from", strconv.FormatInt(from.Unix(), 10), "-to", strconv.FormatInt(to.Unix(), 10),
		"-step", "1s", "-scrape-interval", ((step + time.Second) / 4).String(), "-out", abs}
	for _, b := range boards {
		args = append(args, filepath.Join("out", "dashboards", b+".json"))
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = repotest.Path("dashboards")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("drawing the dashboards: %v\n%s", err, out)
	}
}
