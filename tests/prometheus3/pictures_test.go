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

	"github.com/zpool-exporter/zpool_exporter/internal/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// walkStory are the OpenZFS 2.4.4 guest's scenarios the pictures tell, in
// the order the walk made them: four pools (a mirror, two mirrors, a
// raidz1 with log, cache and spare, a dRAID) under writes, a disk taken
// offline, a scrub paused, a resilver, then a sequential rebuild. Their
// counters and histograms only grow from one to the next.
var walkStory = []string{"01-created", "02-offline", "03-scrub-paused", "04-resilvering", "05-rebuilding"}

// With ZPE_PICTURES set to a directory, the I/O dashboard is drawn into it
// (make pictures writes docs/dashboards) from a Prometheus 3.16 that
// scraped the exporter over the guest's walk, one step every storyStep, as
// the host nas: real pools under writes, a resilver and a rebuild, and
// the latency histograms of every pool, top-level vdev and leaf, which
// zfs-fuse, the other pictures' source, does not have. Without it the test is skipped: it takes a minute and a
// half and draws nothing a test checks.
func TestDrawDashboardsFromTheGuestWalk(t *testing.T) {
	dir := os.Getenv("ZPE_PICTURES")
	if dir == "" {
		t.Skip("ZPE_PICTURES is not set: no pictures asked for (make pictures)")
	}
	prom, exporter := binaries(t)
	const storyStep = 15 * time.Second
	replay := walkReplay(t, walkStory...)
	e := e2e.Start(t, exporter, nil, "--zpool.replay-dir="+replay, "--zpool.replay-step="+storyStep.String())
	began := time.Now()
	p := startPrometheusIn(t, prom, everySecond(fmt.Sprintf(`  - job_name: zfs
    static_configs: [{targets: [%q]}]
    relabel_configs:
      - {target_label: instance, replacement: "nas:9134"}
`, strings.TrimPrefix(e.URL, "http://"))), repotest.Path("dashboards", "out", "rules"))
	// One pass of the story, ending before the replay starts over.
	end := began.Add(time.Duration(len(walkStory))*storyStep - time.Second)
	time.Sleep(time.Until(end))
	if s := p.mustQuery(t, `count(zfs_pool_state{instance="nas:9134"})`); len(s) == 0 {
		t.Fatal("Prometheus scraped nothing")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./cmd/render", "-prometheus", p.url,
		"-from", strconv.FormatInt(began.Add(2*time.Second).Unix(), 10), "-to", strconv.FormatInt(end.Unix(), 10),
		"-scrape-interval", "1s", "-out", abs,
		"out/dashboards/zfs-io.json")
	cmd.Dir = repotest.Path("dashboards")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("drawing the dashboards: %v\n%s", err, out)
	}
	t.Logf("dashboards drawn into %s from %s of the walk", abs, end.Sub(began).Round(time.Second))
}
