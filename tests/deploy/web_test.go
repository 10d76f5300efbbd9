package deploy

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

var webConfig = repo("deploy", "web", "web-config.yml")

type webConfigFile struct {
	TLSServerConfig struct {
		CertFile   string `yaml:"cert_file"`
		KeyFile    string `yaml:"key_file"`
		MinVersion string `yaml:"min_version"`
	} `yaml:"tls_server_config"`
	BasicAuthUsers map[string]string `yaml:"basic_auth_users"`
}

// exampleCredentials returns the example user and the password its hash is
// documented to be made from.
func exampleCredentials(t testing.TB) (user, password string) {
	t.Helper()
	var c webConfigFile
	readYAML(t, webConfig, &c)
	if len(c.BasicAuthUsers) != 1 {
		t.Fatalf("%d example users, want one", len(c.BasicAuthUsers))
	}
	m := regexp.MustCompile(`example\s+#?\s*password "([^"]+)"`).FindStringSubmatch(readFile(t, webConfig))
	if m == nil {
		t.Fatal("the example password is not documented in deploy/web/web-config.yml")
	}
	for u := range c.BasicAuthUsers {
		user = u
	}
	return user, m[1]
}

// webLayout installs the example web configuration with a certificate and
// key beside it, where its relative paths point.
func webLayout(t testing.TB) (cfg string, pool *x509.CertPool) {
	t.Helper()
	var c webConfigFile
	readYAML(t, webConfig, &c)
	if c.TLSServerConfig.CertFile == "" || c.TLSServerConfig.KeyFile == "" || filepath.IsAbs(c.TLSServerConfig.CertFile) {
		t.Fatalf("tls_server_config %+v: want cert_file and key_file relative to the file", c.TLSServerConfig)
	}
	dir := t.TempDir()
	certPEM, keyPEM := e2e.SelfSignedCert(t)
	writeFile(t, filepath.Join(dir, c.TLSServerConfig.CertFile), string(certPEM))
	writeFile(t, filepath.Join(dir, c.TLSServerConfig.KeyFile), string(keyPEM))
	cfg = filepath.Join(dir, "web-config.yml")
	writeFile(t, cfg, readFile(t, webConfig))
	pool = x509.NewCertPool()
	if !pool.AppendCertsFromPEM(certPEM) {
		t.Fatal("test certificate")
	}
	return cfg, pool
}

func TestWebConfigExample(t *testing.T) {
	user, password := exampleCredentials(t)
	var c webConfigFile
	readYAML(t, webConfig, &c)
	if err := bcrypt.CompareHashAndPassword([]byte(c.BasicAuthUsers[user]), []byte(password)); err != nil {
		t.Errorf("the hash of %s is not that of the documented password %q: %v", user, password, err)
	}
	if c.TLSServerConfig.MinVersion != "TLS12" && c.TLSServerConfig.MinVersion != "TLS13" {
		t.Errorf("min_version %q", c.TLSServerConfig.MinVersion)
	}
	cfg, _ := webLayout(t)
	if err := web.Validate(cfg); err != nil {
		t.Errorf("exporter-toolkit rejects the example: %v", err)
	}
	// Validate does check: a password in place of its hash is refused.
	broken := filepath.Join(filepath.Dir(cfg), "broken.yml")
	writeFile(t, broken, strings.Replace(readFile(t, cfg), c.BasicAuthUsers[user], password, 1))
	if err := web.Validate(broken); err == nil {
		t.Error("exporter-toolkit accepted a clear-text password")
	}
}

// The exporter with the example web configuration, over a replay: HTTPS
// only, and nothing without the example user's password.
func TestWebConfigServes(t *testing.T) {
	user, password := exampleCredentials(t)
	cfg, pool := webLayout(t)
	e := e2e.Start(t, exporterBinary(t), nil,
		"--web.config.file="+cfg,
		"--zpool.replay-dir="+repo("collector", "testdata", "replay", "zfs-fuse"))
	base := "https://" + strings.TrimPrefix(e.URL, "http://")
	client := &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	get := func(url, user, password string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, password)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/", "/metrics"} {
		if code, _ := get(base+path, "", ""); code != http.StatusUnauthorized {
			t.Errorf("%s without credentials: %d, want 401", path, code)
		}
		if code, _ := get(base+path, user, password+"x"); code != http.StatusUnauthorized {
			t.Errorf("%s with a wrong password: %d, want 401", path, code)
		}
		if code, body := get(base+path, user, password); code != http.StatusOK {
			t.Errorf("%s with the example credentials: %d, want 200\n%s", path, code, body)
		} else if path == "/metrics" && !strings.Contains(body, "zfs_pool_state{") {
			t.Errorf("/metrics has no zfs_pool_state:\n%s", body)
		}
	}
	// Plain HTTP gets no metrics.
	resp, err := http.Get(e.URL + "/metrics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("plain HTTP served /metrics")
		}
	}
	// A client that does not trust the certificate is refused.
	if _, err := http.Get(base + "/metrics"); err == nil {
		t.Error("a client without the certificate connected")
	}
}
