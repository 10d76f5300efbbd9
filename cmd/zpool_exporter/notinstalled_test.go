package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// Where zpool is not installed, the log says once what to do (install
// ZFS, point --zpool.command at zpool, or try --demo) rather than a
// failure per collector per scrape, and the metrics say at every scrape
// that zpool is down: whether zpool is looked up in PATH or given as a path.
func TestZpoolNotInstalled(t *testing.T) {
	empty := t.TempDir()
	for _, c := range []struct {
		name string
		env  []string
		args []string
	}{
		{"not in PATH", []string{"PATH=" + empty}, nil},
		{"no file at --zpool.command", nil, []string{"--zpool.command=" + filepath.Join(empty, "zpool"), "--zfs.command=" + filepath.Join(empty, "zfs")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := e2e.Start(t, exporterBin, c.env, append(c.args, "--no-collector.cpu", "--no-collector.disk")...)
			for range 2 {
				m := e.Scrape(t)
				if v, ok := m.Get("zfs_exporter_collector_success", map[string]string{"collector": "status"}); !ok || v != 0 {
					t.Errorf("zfs_exporter_collector_success{collector=\"status\"} = %v (present %v), want 0", v, ok)
				}
				if v, ok := m.Get("zfs_exporter_source_up", map[string]string{"source": "zpool_status"}); !ok || v != 0 {
					t.Errorf("zfs_exporter_source_up{source=\"zpool_status\"} = %v (present %v), want 0", v, ok)
				}
			}
			// The status page says what the log says, not the bare error.
			resp, err := http.Get(e.URL + "/")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, want := range []string{"install ZFS", "--zpool.command", "--demo"} {
				if !strings.Contains(string(page), want) {
					t.Errorf("the status page does not say %q", want)
				}
			}
			log, _, _ := strings.Cut(e.Quit(t), "SIGQUIT")
			for _, want := range []string{"zfsutils-linux", "--zpool.command", "zpool_exporter --demo"} {
				if n := strings.Count(log, want); n != 1 {
					t.Errorf("the log says %q %d times, want once:\n%s", want, n, log)
				}
			}
			if n := strings.Count(log, "collector failed"); n > 0 {
				t.Errorf("the log holds %d collector failures, each saying zpool is missing:\n%s", n, log)
			}
		})
	}
}
