package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// replayDir holds every command the exporter runs, captured from real
// zfs-fuse pools in four states.
const replayDir = "../../collector/testdata/replay/zfs-fuse"

func runBinary(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(exporterBin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

func TestOnceReplay(t *testing.T) {
	out, errOut, code := runBinary(t, "--once", "--zpool.replay-dir="+replayDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := e2e.Parse(t, out)
	for _, want := range []struct {
		name   string
		labels map[string]string
	}{
		{"zfs_pool_state", map[string]string{"pool": "tank", "state": "online"}},
		{"zfs_pool_state", map[string]string{"pool": "backup", "state": "online"}},
		{"zfs_exporter_collector_success", map[string]string{"collector": "status"}},
		{"zfs_exporter_collector_success", map[string]string{"collector": "properties"}},
		{"zfs_exporter_build_info", nil},
	} {
		if v, ok := m.Get(want.name, want.labels); !ok || v != 1 {
			t.Errorf("%s%v = %v (present %v), want 1", want.name, want.labels, v, ok)
		}
	}
	if _, ok := m["go_goroutines"]; ok {
		t.Errorf("--once exposes the exporter's own Go metrics; they say nothing about a run that lasts a moment")
	}
	e2e.PromtoolCheck(t, out)
}

func TestOnceOutputIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "zfs.prom")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runBinary(t, "--once", "--output="+path, "--zpool.replay-dir="+replayDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `zfs_pool_state{pool="tank",state="online"} 1`) {
		t.Errorf("%s lacks the pool state:\n%s", path, data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files after --output, want only %s (temporary file left behind?)", len(entries), path)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 so that node_exporter can read it", info.Mode().Perm())
	}

	// A directory that cannot be written gives an error and exit 1.
	_, errOut, code = runBinary(t, "--once", "--output=/nonexistent/dir/zfs.prom", "--zpool.replay-dir="+replayDir)
	if code != 1 || !strings.Contains(errOut, "/nonexistent/dir/zfs.prom") {
		t.Errorf("unwritable --output: exit %d, stderr %q; want exit 1 naming the file", code, errOut)
	}
}

func TestServeReplay(t *testing.T) {
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+replayDir, "--zpool.iostat-interval=1s")
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get(e.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return body.String()
	}
	page := get("/")
	for _, want := range []string{`href="/metrics"`, `data-pool="tank"`, `data-pool="backup"`, `class="state state-online">ONLINE`} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %s:\n%s", want, page)
		}
	}
	if got := get("/-/healthy"); got != "Healthy\n" {
		t.Errorf("/-/healthy = %q", got)
	}
	// The replayed stream reports every second: the page's figures for
	// tank, written to in this step, appear within a few refreshes.
	tankWrite := regexp.MustCompile(`(?s)data-vdev="tank".*?class="num bw-write">([^<]*)<`)
	var figures []string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(600 * time.Millisecond) {
		m := tankWrite.FindStringSubmatch(get("/?fragment=pools"))
		if m == nil {
			t.Fatal("no write bandwidth cell for tank in the fragment")
		}
		figures = append(figures, m[1])
		if strings.HasSuffix(m[1], "MiB/s") {
			break
		}
	}
	if last := figures[len(figures)-1]; !strings.HasSuffix(last, "MiB/s") {
		t.Errorf("tank's write bandwidth never showed MiB/s: %q", figures)
	}
	text := e.ScrapeText(t)
	m := e2e.Parse(t, text)
	if v, ok := m.Get("zfs_vdev_state", map[string]string{"pool": "backup", "vdev": "raidz1-0", "state": "online"}); !ok || v != 1 {
		t.Errorf("raidz1-0 of backup not online: %v %v", v, ok)
	}
	if _, ok := m["go_goroutines"]; !ok {
		t.Errorf("the exporter's own Go metrics are missing")
	}
	e2e.PromtoolCheck(t, text)
}

func TestHelpExplainsEveryFlag(t *testing.T) {
	out, _, code := runBinary(t, "--help")
	if code != 0 {
		t.Fatalf("--help exit %d", code)
	}
	seen := 0
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		m := helpFlagLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		seen++
		// kingpin puts the help on the same line or on the next ones.
		rest := strings.TrimSpace(helpFlagLine.ReplaceAllString(l, ""))
		if i+1 < len(lines) && !helpFlagLine.MatchString(lines[i+1]) {
			rest += strings.TrimSpace(lines[i+1])
		}
		if len(strings.Fields(rest)) < 3 {
			t.Errorf("flag --%s has no explanation in --help: %q", m[2], l)
		}
	}
	for _, flag := range []string{"web.listen-address", "web.config.file", "log.level", "log.format", "once", "output",
		"zpool.command", "zpool.replay-dir", "scrape.timeout", "zpool.iostat-interval", "collector.status", "collector.vdev_io", "collector.properties"} {
		if !regexp.MustCompile(`--(\[no-\])?` + regexp.QuoteMeta(flag) + `\b`).MatchString(out) {
			t.Errorf("--help does not mention --%s", flag)
		}
	}
	if seen < 15 {
		t.Errorf("found %d flags in --help, want at least 15:\n%s", seen, out)
	}
}

func TestBadFlagIsExplained(t *testing.T) {
	_, errOut, code := runBinary(t, "--no-such-flag")
	if code != 2 || !strings.Contains(errOut, "no-such-flag") || !strings.Contains(errOut, "--help") {
		t.Errorf("exit %d, stderr %q; want exit 2 naming the flag and pointing to --help", code, errOut)
	}
}

func TestDisabledCollectorIsAbsent(t *testing.T) {
	out, errOut, code := runBinary(t, "--once", "--no-collector.properties", "--zpool.replay-dir="+replayDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := e2e.Parse(t, out)
	if _, ok := m["zfs_pool_size_bytes"]; ok {
		t.Errorf("zfs_pool_size_bytes exported with --no-collector.properties")
	}
	if _, ok := m.Get("zfs_exporter_collector_success", map[string]string{"collector": "properties"}); ok {
		t.Errorf("disabled collector still reports success")
	}
	if _, ok := m["zfs_pool_state"]; !ok {
		t.Errorf("status collector missing")
	}
}

// The web configuration of exporter-toolkit (TLS, basic auth) guards the
// metrics.
func TestWebConfigBasicAuth(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(config, []byte("basic_auth_users:\n  prometheus: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := e2e.Start(t, exporterBin, nil, "--web.config.file="+config, "--zpool.replay-dir="+replayDir)
	// The status page and its fragment sit behind the same basic auth.
	for _, path := range []string{"/metrics", "/", "/?fragment=pools"} {
		resp, err := http.Get(e.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %s, want 401", path, resp.Status)
		}
		req, _ := http.NewRequest("GET", e.URL+path, nil)
		req.SetBasicAuth("prometheus", "s3cret")
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s with credentials: %s, want 200", path, resp.Status)
		}
	}
}

// A byte that is not UTF-8, or a NUL, anywhere zpool prints it must not
// take the exporter down: --once over such a replay prints every pool.
func TestOnceSurvivesHostileBytes(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(replayDir, "000")
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "zpool_status.txt" {
			data = bytes.ReplaceAll(data, []byte("/var/tmp/zfs-fuse-replay/t1"), []byte("/var/tmp/t\xff1"))
			data = bytes.Replace(data, []byte("state: ONLINE"), []byte("state: ON\x00LINE"), 1)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, code := runBinary(t, "--once", "--zpool.replay-dir="+dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	m := e2e.Parse(t, out)
	for _, labels := range []map[string]string{
		{"pool": "tank", "vdev": "/var/tmp/t\uFFFD1", "state": "online"},
		{"pool": "tank", "vdev": "/var/tmp/zfs-fuse-replay/t2", "state": "online"},
	} {
		if v, ok := m.Get("zfs_vdev_state", labels); !ok || v != 1 {
			t.Errorf("zfs_vdev_state%v = %v (present %v), want 1", labels, v, ok)
		}
	}
	if v, ok := m.Get("zfs_pool_state", map[string]string{"pool": "backup", "state": "on\uFFFDline"}); !ok || v != 1 {
		t.Errorf("backup's state with a NUL in it: %v (present %v), want on\uFFFDline", v, ok)
	}
	e2e.PromtoolCheck(t, out)
}

// /metrics answers Prometheus's request gzipped, and the same exposition
// plain to a client that does not ask for gzip.
func TestMetricsGzippedForPrometheus(t *testing.T) {
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+replayDir)
	get := func(acceptEncoding string) (*http.Response, []byte) {
		req, err := http.NewRequest(http.MethodGet, e.URL+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		// Set by hand, the transport leaves the body as it came.
		req.Header.Set("Accept-Encoding", acceptEncoding)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	resp, zipped := get("gzip")
	if enc := resp.Header.Get("Content-Encoding"); enc != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", enc)
	}
	zr, err := gzip.NewReader(bytes.NewReader(zipped))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	resp, plain := get("identity")
	if enc := resp.Header.Get("Content-Encoding"); enc != "" {
		t.Errorf("Content-Encoding %q without gzip asked for", enc)
	}
	if !bytes.Contains(unzipped, []byte("\nzfs_pool_state{")) {
		t.Errorf("the gzipped answer is not the exposition:\n%.400s", unzipped)
	}
	if len(zipped)*4 > len(unzipped) {
		t.Errorf("gzip took %d bytes to %d", len(unzipped), len(zipped))
	}
	// The pools' series are the same in both; the exporter's own change.
	if n, m := strings.Count(string(unzipped), "\nzfs_pool_"), strings.Count(string(plain), "\nzfs_pool_"); n != m || n == 0 {
		t.Errorf("%d zfs_pool_ lines gzipped, %d plain", n, m)
	}
}

// A replay's step may hold kstats of its own, which are read while it is
// served, so that a replay shows the ARC moving as it did on the host.
func TestOnceReadsAReplayStepsOwnKstats(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(replayDir)); err != nil {
		t.Fatal(err)
	}
	const captures = "../../collector/testdata/openzfs-2.4-guest"
	writeKstats(t, captures, "01-created", filepath.Join(dir, "000", "kstat"))
	out, errOut, code := runBinary(t, "--once", "--zpool.replay-dir="+dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// 01-created's arcstats: "size 4 111157304".
	if v, ok := e2e.Parse(t, out).Get("zfs_arc_size_bytes", nil); !ok || v != 111157304 {
		t.Errorf("zfs_arc_size_bytes = %v (present %v), want 111157304 from step 000's kstat/arcstats", v, ok)
	}
}
