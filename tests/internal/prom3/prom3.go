// Package prom3 builds the Prometheus 3.x the tests run where Debian's
// 2.42 cannot stand in: native histograms, histograms converted to
// native ones (convert_classic_histograms_to_nhcb), the compose stack's
// Prometheus, which docker-compose.yml pins to 3.16, and promtool 3.16
// for the rules' unit tests.
package prom3

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// Version is the module version of Prometheus 3.16, whose cmd/prometheus
// builds from the module alone (no web UI assets, no replace directives):
// `go install` builds it outside any module, with nothing in our go.mod.
// scripts/test-all.sh builds the same version before the tests run.
const Version = "v0.316.0"

// Binary builds Prometheus Version into the user's cache directory, keyed
// by version, and returns its path; workDir is a directory outside any
// module for the build to run in. The first build takes minutes; later
// runs find Go's build cache and the binary up to date in seconds.
// Without the module (no network, no module cache) the test is skipped,
// or fails with CI=true.
func Binary(t *testing.T, workDir string) string {
	t.Helper()
	return build(t, workDir, "prometheus")
}

// Promtool is Binary for the promtool of the same release.
func Promtool(t *testing.T, workDir string) string {
	t.Helper()
	return build(t, workDir, "promtool")
}

func build(t *testing.T, workDir, command string) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "zpool_exporter-tests", "prometheus-"+Version)
	bin := filepath.Join(dir, command)
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-time.Minute))
		defer cancel()
	}
	began := time.Now()
	cmd := exec.CommandContext(ctx, "go", "install", "github.com/prometheus/prometheus/cmd/"+command+"@"+Version)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "GOBIN="+dir, "GOWORK=off", "GOFLAGS=-buildvcs=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e2e.SkipOrFail(t, "cannot build %s %s (go install needs the Go module proxy the first time): %v\n%s", command, Version, err, out)
	}
	t.Logf("%s %s in %s, built or found up to date in %s", command, Version, bin, time.Since(began).Round(time.Second))
	return bin
}
