package main

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
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// exporterBin is the binary under test, built once by TestMain.
var exporterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zpool_exporter-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exporterBin = filepath.Join(dir, "zpool_exporter")
	build := exec.Command("go", "build", "-o", exporterBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zpool_exporter:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// inCI is true when CI=true: tests that need real components must not
// skip there.
func inCI() bool { return os.Getenv("CI") == "true" }

// skipOrFail skips the test on a laptop without a real component, and
// fails it in CI, where every component must be present.
func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if inCI() {
		t.Fatalf("CI=true but %s", msg)
	}
	t.Skip(msg)
}

// exporter is a running zpool_exporter binary.
type exporter struct {
	url    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

func freeAddress(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startExporter runs the binary with args and waits until it answers.
// env, when not nil, replaces the environment.
func startExporter(t *testing.T, env []string, args ...string) *exporter {
	t.Helper()
	addr := freeAddress(t)
	cmd := exec.Command(exporterBin, append([]string{"--web.listen-address=" + addr}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if env != nil {
		cmd.Env = env
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	e := &exporter{url: "http://" + addr, cmd: cmd, stderr: &stderr}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("exporter log:\n%s", stderr.String())
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(e.url + "/")
		if err == nil {
			resp.Body.Close()
			return e
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("exporter did not answer on %s within 10s; log:\n%s", addr, stderr.String())
	return nil
}

// scrapeText fetches /metrics and returns the body.
func (e *exporter) scrapeText(t *testing.T) string {
	t.Helper()
	resp, err := http.Get(e.url + "/metrics")
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

// metrics is a parsed exposition.
type metrics map[string]*dto.MetricFamily

func parseMetrics(t *testing.T, text string) metrics {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parsing exposition: %v", err)
	}
	return fams
}

func (e *exporter) scrape(t *testing.T) metrics {
	t.Helper()
	return parseMetrics(t, e.scrapeText(t))
}

// get returns the value of the series of name whose labels include want.
func (m metrics) get(name string, want map[string]string) (float64, bool) {
	for _, s := range m.series(name, want) {
		return value(s), true
	}
	return 0, false
}

// series returns every series of name whose labels include want.
func (m metrics) series(name string, want map[string]string) []*dto.Metric {
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

func label(s *dto.Metric, name string) string {
	for _, l := range s.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func value(s *dto.Metric) float64 {
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

// promtoolCheck runs `promtool check metrics` on an exposition.
func promtoolCheck(t *testing.T, exposition string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		skipOrFail(t, "promtool is not installed (Debian package prometheus)")
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
