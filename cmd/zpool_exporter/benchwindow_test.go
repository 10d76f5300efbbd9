package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// call sends a request to the exporter and returns the status and body.
func call(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

func decodeWindow(t *testing.T, body string) benchwindow.Window {
	t.Helper()
	var w benchwindow.Window
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		t.Fatalf("not a window: %v\n%s", err, body)
	}
	return w
}

// A benchmark window started and ended through the API, as a runner
// would around a fio run: its series in /metrics, checked by promtool, and
// its row on the status page.
func TestBenchmarkWindowAPI(t *testing.T) {
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+replayDir, "--web.enable-benchmark-api")
	api := e.URL + benchwindow.Path
	const name = "raid10 ashift=12 lz4"

	code, body := call(t, http.MethodPost, api, `{"name": "`+name+`", "pool": "tank", "command": "fio --name=seq --rw=write --size=1g"}`)
	if code != http.StatusCreated {
		t.Fatalf("POST %s: %d %s, want 201", api, code, body)
	}
	w := decodeWindow(t, body)
	if w.ID == "" || w.Name != name || w.Pool != "tank" || !w.Active || !w.End.IsZero() {
		t.Fatalf("started window %+v", w)
	}
	labels := map[string]string{"window": w.ID, "name": name, "pool": "tank"}

	m := e.Scrape(t)
	if v, ok := m.Get("zfs_benchmark_window_active", labels); !ok || v != 1 {
		t.Errorf("zfs_benchmark_window_active%v = %v (present %v), want 1 while running", labels, v, ok)
	}
	start, ok := m.Get("zfs_benchmark_window_start_time_seconds", labels)
	if !ok || start != float64(w.Start.UnixMilli())/1000 {
		t.Errorf("start time %v (present %v), want %v as the API said", start, ok, w.Start)
	}
	if _, ok := m.Get("zfs_benchmark_window_end_time_seconds", labels); ok {
		t.Error("an end time for a running window")
	}
	if v, ok := m.Get("zfs_benchmark_windows_started_total", nil); !ok || v != 1 {
		t.Errorf("zfs_benchmark_windows_started_total = %v (present %v), want 1", v, ok)
	}
	if v, ok := m.Get("zfs_pool_state", map[string]string{"pool": "tank", "state": "online"}); !ok || v != 1 {
		t.Errorf("the pools' metrics are missing beside the windows")
	}

	_, page := call(t, http.MethodGet, e.URL+"/", "")
	for _, want := range []string{`id="benchmarks"`, `data-window="` + w.ID + `" data-running="true"`, name, `window-running">RUNNING<`, `data-pool="tank"`} {
		if !strings.Contains(page, want) {
			t.Errorf("status page lacks %s while the window runs", want)
		}
	}

	time.Sleep(100 * time.Millisecond)
	code, body = call(t, http.MethodPost, api+"/"+w.ID+"/end", "")
	if code != http.StatusOK {
		t.Fatalf("POST end: %d %s, want 200", code, body)
	}
	ended := decodeWindow(t, body)
	if ended.Active || ended.End.Before(ended.Start.Add(100*time.Millisecond)) {
		t.Errorf("ended window %+v: want inactive, at least 100 ms long", ended)
	}
	if code, body = call(t, http.MethodPost, api+"/"+w.ID+"/end", ""); code != http.StatusConflict || !strings.Contains(body, `"error"`) {
		t.Errorf("ending twice: %d %s, want 409 with a JSON error", code, body)
	}

	text := e.ScrapeText(t)
	m = e2e.Parse(t, text)
	if v, ok := m.Get("zfs_benchmark_window_active", labels); !ok || v != 0 {
		t.Errorf("zfs_benchmark_window_active = %v (present %v), want 0 once ended", v, ok)
	}
	end, ok := m.Get("zfs_benchmark_window_end_time_seconds", labels)
	if !ok || end < start || end != float64(ended.End.UnixMilli())/1000 {
		t.Errorf("end time %v (present %v), want the API's %v, not before the start %v", end, ok, ended.End, start)
	}
	e2e.PromtoolCheck(t, text)

	code, body = call(t, http.MethodGet, api, "")
	var list benchwindow.ListResponse
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != http.StatusOK || len(list.Windows) != 1 || list.Windows[0].ID != w.ID || list.Windows[0].Active {
		t.Errorf("GET %s: %d %s; want the one ended window", api, code, body)
	}
	_, page = call(t, http.MethodGet, e.URL+"/?fragment=pools", "")
	if !strings.Contains(page, `data-window="`+w.ID+`" data-running="false"`) || strings.Contains(page, "RUNNING") {
		t.Errorf("status page fragment does not show the window ended:\n%s", page)
	}
	// The windows are all the API holds: the benchmark history is gone.
	if code, body := call(t, http.MethodGet, e.URL+"/api/v1/benchmark/history?metric=zfs_pool_state&start=0&end=1", ""); code != http.StatusNotFound || !strings.Contains(body, `"error"`) {
		t.Errorf("GET /api/v1/benchmark/history: %d %s, want a JSON 404", code, body)
	}
}

// Without --web.enable-benchmark-api the API answers 404 with a JSON error
// that says how to turn it on, and nothing of it shows.
func TestBenchmarkWindowAPIOff(t *testing.T) {
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+replayDir)
	for _, path := range []string{benchwindow.Path, benchwindow.Path + "/abc/end", "/api/v1/benchmark/"} {
		code, body := call(t, http.MethodPost, e.URL+path, `{"name": "x"}`)
		var answer benchwindow.ErrorResponse
		if err := json.Unmarshal([]byte(body), &answer); err != nil || code != http.StatusNotFound || !strings.Contains(answer.Error, "--web.enable-benchmark-api") {
			t.Errorf("POST %s with the API off: %d %s; want 404 and a JSON error naming the flag", path, code, body)
		}
	}
	text := e.ScrapeText(t)
	if strings.Contains(text, "zfs_benchmark_") {
		t.Error("benchmark window metrics without the API")
	}
	if _, page := call(t, http.MethodGet, e.URL+"/", ""); strings.Contains(page, `id="benchmarks"`) || !strings.Contains(page, `data-pool="tank"`) {
		t.Error("the status page shows a benchmark section without the API, or lost its pools")
	}

	// --once has no API, so no windows either.
	out, errOut, code := runBinary(t, "--once", "--web.enable-benchmark-api", "--zpool.replay-dir="+replayDir)
	if code != 0 || strings.Contains(out, "zfs_benchmark_") || !strings.Contains(out, "zfs_pool_state") {
		t.Errorf("--once --web.enable-benchmark-api: exit %d, benchmark metrics present %v; %s", code, strings.Contains(out, "zfs_benchmark_"), errOut)
	}
	if _, errOut, code := runBinary(t, "--benchmark.retention=0s"); code != 2 || !strings.Contains(errOut, "--benchmark.retention") {
		t.Errorf("--benchmark.retention=0s: exit %d, %q; want exit 2 naming the flag", code, errOut)
	}
}

// Writing windows needs the credentials of --web.config.file.
func TestBenchmarkWindowAPIBehindBasicAuth(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(config, []byte("basic_auth_users:\n  runner: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := e2e.Start(t, exporterBin, nil, "--web.config.file="+config, "--zpool.replay-dir="+replayDir, "--web.enable-benchmark-api")
	if code, _ := call(t, http.MethodPost, e.URL+benchwindow.Path, `{"name": "x"}`); code != http.StatusUnauthorized {
		t.Errorf("POST without credentials: %d, want 401", code)
	}
	req, _ := http.NewRequest(http.MethodPost, e.URL+benchwindow.Path, strings.NewReader(`{"name": "x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("runner", "s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("POST with credentials: %s, want 201", resp.Status)
	}
}

// tlsBasicAuthConfig writes a --web.config.file serving TLS with a
// certificate made for 127.0.0.1 and basic authentication for runner
// (password s3cret), as an operator would set it up, and returns it with a
// client that trusts the certificate.
func tlsBasicAuthConfig(t *testing.T) (string, *http.Client) {
	t.Helper()
	certPEM, keyPEM := e2e.SelfSignedCert(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"cert.pem": certPEM,
		"key.pem":  keyPEM,
		"web.yml": []byte("tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n" +
			"basic_auth_users:\n  runner: " + string(hash) + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		t.Fatal("the test certificate does not parse")
	}
	return filepath.Join(dir, "web.yml"), &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// A web page the operator has open cannot write windows through the
// operator's browser, which sends the basic authentication it knows along
// with a form: the exporter as deployed (TLS, basic authentication) refuses
// forms and foreign origins, and still takes what zpool_bench, curl and its
// own pages send.
func TestBenchmarkWindowAPIRefusesCrossSiteWrites(t *testing.T) {
	config, client := tlsBasicAuthConfig(t)
	e := e2e.Start(t, exporterBin, nil, "--web.config.file="+config, "--zpool.replay-dir="+replayDir, "--web.enable-benchmark-api")
	base := strings.Replace(e.URL, "http://", "https://", 1)
	api := base + benchwindow.Path
	post := func(path, contentType, body string, header map[string]string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, api+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth("runner", "s3cret")
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(data)
	}

	code, body := post("", "application/json", `{"name": "running"}`, nil)
	if code != http.StatusCreated {
		t.Fatalf("POST as zpool_bench does: %d %s, want 201", code, body)
	}
	running := decodeWindow(t, body)
	end := "/" + running.ID + "/end"
	evil := map[string]string{"Origin": "http://evil.example"}
	for _, c := range []struct {
		what, path, contentType, body string
		header                        map[string]string
		code                          int
	}{
		{"a text/plain form whose one field makes the body JSON", "", "text/plain", `{"name": "evil", "pool": "="}`, evil, http.StatusForbidden},
		{"the same form where the browser sent no Origin", "", "text/plain", `{"name": "evil", "pool": "="}`, nil, http.StatusUnsupportedMediaType},
		{"a url-encoded form", "", "application/x-www-form-urlencoded", `{"name": "evil"}`, nil, http.StatusUnsupportedMediaType},
		{"a multipart form", "", "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nevil\r\n--b--\r\n", nil, http.StatusUnsupportedMediaType},
		{"a body without a Content-Type", "", "", `{"name": "evil"}`, nil, http.StatusUnsupportedMediaType},
		{"JSON from a foreign Origin", "", "application/json", `{"name": "evil"}`, evil, http.StatusForbidden},
		{"Sec-Fetch-Site: cross-site", "", "application/json", `{"name": "evil"}`, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"an end from a foreign Origin", end, "", "", evil, http.StatusForbidden},
		{"an end as a form", end, "application/x-www-form-urlencoded", "", nil, http.StatusUnsupportedMediaType},
	} {
		code, body := post(c.path, c.contentType, c.body, c.header)
		var answer benchwindow.ErrorResponse
		if err := json.Unmarshal([]byte(body), &answer); code != c.code || err != nil || answer.Error == "" {
			t.Errorf("%s: %d %s; want %d with a JSON error", c.what, code, strings.Join(strings.Fields(body), " "), c.code)
		}
	}
	for _, c := range []struct {
		what, contentType string
		header            map[string]string
	}{
		{"an Origin of the exporter itself", "application/json", map[string]string{"Origin": base}},
		{"the exporter's own page", "application/json; charset=utf-8", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}},
		{"no Origin, as curl sends", "application/json", nil},
	} {
		if code, body := post("", c.contentType, `{"name": "fine"}`, c.header); code != http.StatusCreated {
			t.Errorf("%s: %d %s, want 201", c.what, code, body)
		}
	}
	if code, body := post(end, "", "", nil); code != http.StatusOK {
		t.Errorf("curl -X POST .../end: %d %s, want 200", code, body)
	}

	req, _ := http.NewRequest(http.MethodGet, api, nil)
	req.SetBasicAuth("runner", "s3cret")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list benchwindow.ListResponse
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range list.Windows {
		names = append(names, w.Name)
	}
	if len(names) != 4 || slices.Contains(names, "evil") {
		t.Errorf("windows %v; want running and three fine ones, none evil", names)
	}
}
