// Package e2e drives a built zpool_exporter binary over HTTP for the
// end-to-end tests: against replays, zfs-fuse pools, and real OpenZFS in
// the test bed's guest. It is imported by tests only.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// inCI is true when CI=true: tests that need real components must not
// skip there.
func InCI() bool { return os.Getenv("CI") == "true" }

// SkipOrFail skips the test on a laptop without a real component, and
// fails it in CI, where every component must be present.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI=true but %s", msg)
	}
	t.Skip(msg)
}

// Exporter is a running zpool_exporter binary.
type Exporter struct {
	URL    string
	cmd    *exec.Cmd
	stderr *Log
}

// FreeAddress returns a 127.0.0.1 address with a port that was free a
// moment ago, for a child process to listen on.
func FreeAddress(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Start runs the exporter binary bin with args and waits until it
// answers; the test's cleanup stops it. env, when not nil, replaces the
// environment.
func Start(t testing.TB, bin string, env []string, args ...string) *Exporter {
	t.Helper()
	cmd := exec.Command(bin, append([]string{ListenAnywhere}, args...)...)
	if env != nil {
		cmd.Env = env
	}
	log := NewLog()
	// Generous: on a loaded machine, or in an emulated guest, the first
	// start of a binary takes seconds.
	url, err := StartListening(cmd, log, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	e := &Exporter{URL: url, cmd: cmd, stderr: log}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("exporter log:\n%s", log.String())
		}
	})
	return e
}

// Attach waits until an exporter that the test did not start (a service
// of the init system) answers at url; Pid and Quit do not apply to it.
func Attach(t testing.TB, url string, wait time.Duration) *Exporter {
	t.Helper()
	if err := waitHealthy(url, wait); err != nil {
		t.Fatal(err)
	}
	return &Exporter{URL: url}
}

// waitHealthy polls /-/healthy, which answers without running zpool,
// until any HTTP answer comes (401 included: basic auth is on).
func waitHealthy(url string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/-/healthy")
		if err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("exporter did not answer on %s within %s", url, wait)
}

// Pid is the exporter's process id.
func (e *Exporter) Pid() int { return e.cmd.Process.Pid }

// Quit stops the exporter with SIGQUIT, on which a Go program prints the
// stack of every goroutine, and returns its log ending with that dump.
func (e *Exporter) Quit(t testing.TB) string {
	t.Helper()
	if err := e.cmd.Process.Signal(syscall.SIGQUIT); err != nil {
		return fmt.Sprintf("SIGQUIT: %v\n%s", err, e.stderr.String())
	}
	done := make(chan struct{})
	go func() { _ = e.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		return "no exit 10s after SIGQUIT\n" + e.stderr.String()
	}
	return e.stderr.String()
}

// ScrapeText fetches /metrics and returns the body.
func (e *Exporter) ScrapeText(t testing.TB) string {
	t.Helper()
	resp, err := http.Get(e.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s\n%s", resp.Status, body)
	}
	return string(body)
}

// WaitFor scrapes until cond holds, and fails the test with what when
// timeout passes first.
func (e *Exporter) WaitFor(t testing.TB, timeout time.Duration, what string, cond func(Metrics) bool) Metrics {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m := e.Scrape(t)
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", timeout, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Metrics is a parsed exposition.
type Metrics map[string]*dto.MetricFamily

// Parse parses an exposition in the text format.
func Parse(t testing.TB, text string) Metrics {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing exposition: %v", err)
	}
	return fams
}

// Scrape fetches and parses /metrics.
func (e *Exporter) Scrape(t testing.TB) Metrics {
	t.Helper()
	return Parse(t, e.ScrapeText(t))
}

// Get returns the value of the series of name whose labels include want.
func (m Metrics) Get(name string, want map[string]string) (float64, bool) {
	for _, s := range m.Series(name, want) {
		return Value(s), true
	}
	return 0, false
}

// Series returns every series of name whose labels include want.
func (m Metrics) Series(name string, want map[string]string) []*dto.Metric {
	mf, ok := m[name]
	if !ok {
		return nil
	}
	var out []*dto.Metric
	for _, s := range mf.GetMetric() {
		if hasLabels(s, want) {
			out = append(out, s)
		}
	}
	return out
}

func hasLabels(s *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, l := range s.GetLabel() {
			if l.GetName() == k && l.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Label returns the value of a series' label.
func Label(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// Value returns a series' value, whatever its type.
func Value(s *dto.Metric) float64 {
	switch {
	case s.Gauge != nil:
		return s.GetGauge().GetValue()
	case s.Counter != nil:
		return s.GetCounter().GetValue()
	case s.Untyped != nil:
		return s.GetUntyped().GetValue()
	}
	return 0
}

// PromtoolCheck runs `promtool check metrics` on an exposition.
func PromtoolCheck(t testing.TB, exposition string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		SkipOrFail(t, "promtool is not installed (Debian package prometheus)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(exposition)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// BuildExporter builds the exporter of the repository at root into dir, as
// a static binary, and returns its path. Each test package's TestMain
// builds it once; tests in other modules build it with the exporter's own
// go.mod.
func BuildExporter(root, dir string) (string, error) {
	return BuildCommand(root, dir, "zpool_exporter")
}

// BuildCommand builds ./cmd/NAME of the repository at root into dir, as a
// static binary, and returns its path.
func BuildCommand(root, dir, name string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/"+name)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building %s in %s: %v\n%s", name, root, err, out)
	}
	return bin, nil
}

// MainWithExporter is the TestMain of a package of end-to-end tests: it
// builds the exporter of the repository at root into a temporary directory,
// sets *bin to it, runs the tests and removes the directory.
func MainWithExporter(m *testing.M, root string, bin *string) {
	dir, err := os.MkdirTemp("", "zpool_exporter-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *bin, err = BuildExporter(root, dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
