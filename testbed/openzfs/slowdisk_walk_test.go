//go:build testbed

package openzfs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// slowScrapeEvery is the time between the scenario's scrapes (the walk's
// slowEvery).
const slowScrapeEvery = 10 * time.Second

// checkSlowDisk runs the unit test made of the slow-disk scenario's
// expositions against the mixin's rules, and keeps it in keep when that is
// set.
func checkSlowDisk(t *testing.T, expositionsDir, version, keep string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(expositionsDir, "slow-disk-*.prom"))
	if len(paths) == 0 && scenariosChosen() {
		t.Skip("ZPE_WALK_RUN or ZPE_WALK_SKIP left the slow-disk scenario out")
	}
	if len(paths) < 2 {
		t.Fatalf("the walk kept %d expositions of the slow-disk scenario, want several", len(paths))
	}
	slices.Sort(paths)
	var texts []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, string(data))
	}
	header := fmt.Sprintf(`promtool test rules tests/*.yaml (from dashboards/): the slow-disk alert over
real scrapes. Made by the OpenZFS %s walk (testbed/openzfs, scenario "slow disk",
kept with ZPE_CAPTURES): a raidz1 of virtio-zd22, zd23 and zd24, zd24 throttled
by qemu to 2 MiB/s, written without a pause while an exporter run with
--collector.vdev_latency was scraped every %s. Regenerate it rather than edit it.`, version, slowScrapeEvery)
	text, err := slowDiskRuleTest(header, texts, slowScrapeEvery, "slow", "virtio-zd24")
	if err != nil {
		t.Fatal(err)
	}
	runAlertTest(t, "slow-disk-openzfs-"+version+".yaml", text, keep)
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
