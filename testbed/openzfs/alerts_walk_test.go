//go:build testbed

package openzfs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// checkReadOnly runs the read-only alert over the scrape the walk kept of
// a pool imported with -o readonly=on, held for longer than the alert's
// for: the alert must fire for that pool and no other.
func checkReadOnly(t *testing.T, expositionsDir, version, keep string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(expositionsDir, "read-only.prom"))
	if os.IsNotExist(err) && scenariosChosen() {
		t.Skip("ZPE_WALK_RUN or ZPE_WALK_SKIP left the read-only import out")
	}
	if err != nil {
		t.Fatalf("the walk kept no scrape of its read-only pool: %v", err)
	}
	const every, scrapes = time.Minute, 8 // 7 minutes, past the alert's 5
	expositions := make([]string, scrapes)
	for i := range expositions {
		expositions[i] = string(data)
	}
	header := fmt.Sprintf(`promtool test rules tests/*.yaml (from dashboards/): the read-only alert over a
real scrape, repeated every %s. Made by the OpenZFS %s walk (testbed/openzfs, scenario
"long operations", read-only import, kept with ZPE_CAPTURES): pool opro exported and
imported with -o readonly=on. Regenerate it rather than edit it.`, promDuration(every), version)
	text, err := alertRuleTest(alertCase{
		header: header, expositions: expositions, interval: every, families: []string{"zfs_pool_info"},
		alert: "ZFSPoolReadOnly", by: []string{"pool"}, want: []string{"opro"}, firing: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	runAlertTest(t, "read-only-openzfs-"+version+".yaml", text, keep)
}

// runAlertTest runs a promtool unit test of the mixin's alerts, written
// where its rule_files (relative to dashboards/tests) resolve, and keeps
// it in keep when that is set.
func runAlertTest(t *testing.T, name, text, keep string) {
	t.Helper()
	dir := t.TempDir()
	tests := filepath.Join(dir, "dashboards", "tests")
	if err := os.MkdirAll(tests, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mustAbs(t, "../../dashboards/out"), filepath.Join(dir, "dashboards", "out")); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(tests, name)
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(keep, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		e2e.SkipOrFail(t, "promtool is not installed (Debian package prometheus)")
	}
	cmd := exec.Command(promtool, "test", "rules", name)
	cmd.Dir = tests
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s over the walk's scrapes (promtool test rules): %v\n%s", name, err, out)
	}
}

// scenariosChosen tells whether the walk ran some of its scenarios only,
// so that a scenario's missing expositions are no failure.
func scenariosChosen() bool {
	return os.Getenv("ZPE_WALK_RUN") != "" || os.Getenv("ZPE_WALK_SKIP") != ""
}
