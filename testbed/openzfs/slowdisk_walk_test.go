//go:build testbed

package openzfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/e2e"
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
	if len(paths) == 0 && os.Getenv("ZPE_WALK_RUN") != "" {
		t.Skip("ZPE_WALK_RUN left the slow-disk scenario out")
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
	dir := t.TempDir()
	// rule_files are relative to dashboards/tests.
	tests := filepath.Join(dir, "dashboards", "tests")
	if err := os.MkdirAll(tests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mustAbs(t, "../../dashboards/out"), filepath.Join(dir, "dashboards", "out")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tests, "slow-disk-openzfs-"+version+".yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keep, filepath.Base(file)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		e2e.SkipOrFail(t, "promtool is not installed (Debian package prometheus)")
	}
	cmd := exec.Command(promtool, "test", "rules", filepath.Base(file))
	cmd.Dir = tests
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the slow-disk alert over the walk's scrapes (promtool test rules): %v\n%s", err, out)
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
