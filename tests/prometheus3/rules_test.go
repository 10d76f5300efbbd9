package prometheus3

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/prom3"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// The rules' unit tests pass under promtool 3.16 as under Debian's 2.42
// (the dashboards module runs them there): Prometheus 3 reads range
// selectors as open at their start, which changes what a window holds
// when samples fall on its edge.
func TestRuleUnitTestsPassOnPromtool3(t *testing.T) {
	if testing.Short() {
		t.Skip("builds promtool 3.16 (minutes the first time)")
	}
	promtool := prom3.Promtool(t, tmpRoot)
	tests, err := filepath.Glob(repotest.Path("dashboards", "tests", "*.yaml"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no rule unit tests in dashboards/tests (%v)", err)
	}
	for i, p := range tests {
		tests[i] = filepath.Join("tests", filepath.Base(p))
	}
	cmd := exec.Command(promtool, append([]string{"test", "rules"}, tests...)...)
	cmd.Dir = repotest.Path("dashboards")
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool %s test rules (from dashboards/): %v\n%s", prom3.Version, err, out)
	}
	if n := strings.Count(string(out), "SUCCESS"); n != len(tests) {
		t.Errorf("%d of %d test files passed:\n%s", n, len(tests), out)
	}
}
