package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchsource"
)

// Without zpool here, auto reads the pool's configuration from the
// exporter's metrics, and says so; zpool, asked for, fails; exporter
// never runs zpool.
func TestPoolConfigFromTheExporterWithoutZpool(t *testing.T) {
	golden, err := os.ReadFile("../../collector/testdata/openzfs-2.3-04-scrubbed-healthy.prom")
	if err != nil {
		t.Fatal(err)
	}
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		if u, p, ok := r.BasicAuth(); !ok || u != "bench" || p != "secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write(golden)
	}))
	defer exporter.Close()
	withAuth := strings.Replace(exporter.URL, "http://", "http://bench:secret@", 1)
	missing := filepath.Join(t.TempDir(), "zpool")

	for _, c := range []struct {
		from, zpool string
		warned      bool
	}{
		{configAuto, missing, true},
		{configExporter, "zpool-that-must-not-run", false},
	} {
		t.Run(c.from, func(t *testing.T) {
			var warnings []string
			r := poolConfigReader{from: c.from, zpool: c.zpool, zfs: "zfs", zdb: "zdb", exporter: benchsource.NewExporter(withAuth, nil),
				warn: func(format string, args ...any) { warnings = append(warnings, fmt.Sprintf(format, args...)) }}
			cfg, err := r.read(context.Background(), "rz1")
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Pool != "rz1" || cfg.Layout != "raidz1 of 3 + log 1 + cache 1 + spare 1" || cfg.Ashift != 12 || cfg.State != "online" {
				t.Errorf("configuration %+v", cfg)
			}
			if said := len(warnings) == 1 && strings.Contains(warnings[0], "not installed here") && strings.Contains(warnings[0], exporter.URL[len("http://"):]) && !strings.Contains(warnings[0], "secret"); said != c.warned {
				t.Errorf("warnings %q", warnings)
			}
		})
	}

	r := poolConfigReader{from: configZpool, zpool: missing, zfs: "zfs", zdb: "zdb", exporter: benchsource.NewExporter(withAuth, nil), warn: t.Logf}
	if _, err := r.read(context.Background(), "rz1"); !errors.Is(err, runner.ErrNotFound) {
		t.Errorf("--pool.config-from=zpool without zpool: %v, want it not found", err)
	}
	r = poolConfigReader{from: configExporter, exporter: benchsource.NewExporter(exporter.URL, nil), warn: t.Logf}
	if _, err := r.read(context.Background(), "rz1"); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without the password: %v, want the exporter's 401", err)
	}
}
