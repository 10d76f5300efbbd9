package main

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// readmeRunCommands returns the command lines of the README's "Two
// commands" that build and run the exporter, as printed.
func readmeRunCommands(t *testing.T) []string {
	t.Helper()
	var lines []string
	for line := range strings.Lines(readmeSection(t, "Two commands\n")) {
		if line = strings.TrimSpace(line); strings.HasPrefix(line, "go build ") {
			lines = append(lines, line)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("the README's Two commands build and run the exporter in %d lines, want 2 (with and without --demo): %q", len(lines), lines)
	}
	return lines
}

// The README's ways to run the exporter work as printed on a machine as
// CI's: Debian 12, as root, which has no sudo. Each is run by the shell
// at the top of the checkout, as a reader would, and must serve metrics.
func TestReadmeRunCommandsWorkAsPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the exporter at the top of the checkout, as the README does")
	}
	built := "../../zpool_exporter"
	if _, err := os.Stat(built); err == nil {
		t.Skipf("%s exists: the README's build would overwrite it", built)
	}
	defer os.Remove(built)
	for _, line := range readmeRunCommands(t) {
		t.Run(line, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", line+" "+e2e.ListenAnywhere)
			cmd.Dir = "../.."
			// The shell runs the exporter as a child: the group is
			// stopped as a whole.
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			log := e2e.NewLog()
			// Generous: a first build downloads and compiles every module.
			url, err := e2e.StartListening(cmd, log, 3*time.Minute)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			defer func() {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				_ = cmd.Wait()
			}()
			resp, err := http.Get(url + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "\nzfs_exporter_collector_success{") {
				t.Errorf("GET /metrics: %s, without the collectors' success:\n%.500s\nlog:\n%s", resp.Status, body, log.String())
			}
		})
	}
}
