package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
)

// fakeZpool is a zpool that knows one pool and only the plain forms of
// its commands, as the oldest zpool does.
const fakeZpool = `#!/bin/sh
case "$*" in
*-j*|*-p*|*-H*) echo "invalid option" >&2; exit 2 ;;
*status*) cat <<'EOF'
  pool: tank
 state: ONLINE
config:

	NAME        STATE     READ WRITE CKSUM
	tank        ONLINE       0     0     0
	  mirror-0  ONLINE       0     0     0
	    sda     ONLINE       0     0     0
	    sdb     ONLINE       0     0     0

errors: No known data errors
EOF
;;
*) echo "unrecognized command '$1'" >&2; exit 2 ;;
esac
`

// writeFakeZpool writes fakeZpool into dir as zpool and returns its path.
func writeFakeZpool(t *testing.T, dir string) string {
	t.Helper()
	zpool := filepath.Join(dir, "zpool")
	if err := os.WriteFile(zpool, []byte(fakeZpool), 0o755); err != nil {
		t.Fatal(err)
	}
	return zpool
}

// A Ctrl-C while zpool_bench waits for the first sample of the pool: the
// window it opened is ended, the workload never runs, and the status is
// the signal's.
func TestInterruptBeforeTheWorkload(t *testing.T) {
	dir := t.TempDir()
	zpool := writeFakeZpool(t, dir)
	var (
		mu    sync.Mutex
		calls []string
	)
	started := make(chan struct{}, 1)
	exporter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		mu.Unlock()
		switch {
		case r.URL.Path == benchwindow.Path:
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(benchwindow.Window{ID: "0badc0de", Name: "x", Start: time.Now().UTC(), Active: true})
			started <- struct{}{}
		case strings.HasSuffix(r.URL.Path, "/end"):
			_ = json.NewEncoder(w).Encode(benchwindow.Window{ID: "0badc0de", Name: "x", Start: time.Now().UTC(), End: time.Now().UTC()})
		default: // /metrics without the pool's counters, for ever
			_, _ = w.Write([]byte("# TYPE zfs_exporter_build_info gauge\nzfs_exporter_build_info 1\n"))
		}
	}))
	defer exporter.Close()

	signals := make(chan os.Signal, 1)
	go func() {
		<-started
		time.Sleep(300 * time.Millisecond)
		signals <- syscall.SIGINT
	}()
	marker := filepath.Join(dir, "workload-ran")
	var out, errs bytes.Buffer
	status := run(t.Context(), []string{"run", "--name", "x", "--pool", "tank", "--zpool.command", zpool, "--zfs.command", zpool,
		"--exporter.url", exporter.URL, "--runs.dir", dir, "--", "touch", marker}, env{stdout: &out, stderr: &errs, signals: signals})
	if status != 130 {
		t.Errorf("exit status %d, want 130\n%s", status, errs.String())
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the workload ran after the Ctrl-C")
	}
	if !strings.Contains(errs.String(), "before the workload started") {
		t.Errorf("stderr does not say the workload did not run:\n%s", errs.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(calls, "\n"), "POST "+benchwindow.Path+"/0badc0de/end") {
		t.Errorf("the window was not ended; the exporter got:\n%s", strings.Join(calls, "\n"))
	}
}
