package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// A zpool and a zfs that hang (as they do on a suspended pool) must not
// hold a scrape past its deadline, nor pile up processes; zfs is not even
// started while zpool status hangs.
func TestHungZpool(t *testing.T) {
	if testing.Short() {
		t.Skip("takes about 15 s; skipped with -short")
	}
	bin := t.TempDir()
	// The stand-in renames itself so that this test's processes can be
	// found, and killed when the test ends.
	marker := "hungzpool-" + filepath.Base(bin)
	script := "#!/bin/bash\nexec -a \"" + marker + " $*\" sleep 1000\n"
	t.Cleanup(func() { killStandIns(marker) })
	for _, name := range []string{"zpool", "zfs"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	const timeout = 2 * time.Second
	e := e2e.Start(t, exporterBin, env, "--scrape.timeout="+timeout.String(), "--zpool.iostat-interval=1s")

	stop := make(chan struct{})
	type watch struct {
		most  int
		worst string
	}
	watched := make(chan watch, 1)
	go func() {
		most, worst := watchStandIns(stop, marker)
		watched <- watch{most, worst}
	}()

	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	var last string
	for round := 0; round < 3; round++ {
		for i := 0; i < 4; i++ {
			wg.Go(func() {
				began := time.Now()
				text := e.ScrapeText(t)
				took := time.Since(began)
				mu.Lock()
				defer mu.Unlock()
				slowest = max(slowest, took)
				last = text
			})
		}
		wg.Wait()
	}
	close(stop)
	w := <-watched
	n := w.most

	t.Logf("slowest of 12 scrapes: %s; most stand-in processes alive for one command line at once: %d", slowest, n)
	if slowest > timeout+1500*time.Millisecond {
		t.Errorf("a scrape took %s with --scrape.timeout=%s", slowest, timeout)
	}
	if n > 1 {
		t.Errorf("%d processes of one command line (%q) ran at once, want at most 1", n, w.worst)
	}
	m := e2e.Parse(t, last)
	for _, collector := range []string{"status", "dataset"} {
		if v, ok := m.Get("zfs_exporter_collector_success", map[string]string{"collector": collector}); !ok || v != 0 {
			t.Errorf("%s collector success = %v (present %v), want 0", collector, v, ok)
		}
	}
	if v, ok := m.Get("zfs_exporter_source_up", map[string]string{"source": "zpool_status"}); !ok || v != 0 {
		t.Errorf("zpool_status source up = %v (present %v), want 0", v, ok)
	}
	// zfs would hang on the pool that hangs zpool: it is not started.
	for _, s := range m.Series("zfs_exporter_command_runs_total", nil) {
		if command := e2e.Label(s, "command"); strings.HasPrefix(command, "zfs ") {
			t.Errorf("zfs ran while zpool status hung: %s", command)
		}
	}
	timeouts := 0.0
	for _, s := range m.Series("zfs_exporter_command_failures_total", map[string]string{"reason": "timeout"}) {
		timeouts += e2e.Value(s)
	}
	if timeouts == 0 {
		t.Errorf("no command timeouts counted")
	}
	if _, ok := m.Get("zfs_exporter_build_info", nil); !ok {
		t.Errorf("zfs_exporter_build_info missing while zpool hangs")
	}
}

// watchStandIns polls /proc until stop closes and returns the most
// processes of the stand-in seen alive at once for one command line, and
// that command line.
func watchStandIns(stop chan struct{}, marker string) (int, string) {
	most, worst := 0, ""
	for {
		counts := map[string]int{}
		for _, p := range standIns(marker) {
			counts[p.argv0]++
		}
		for line, n := range counts {
			if n > most {
				most, worst = n, line
			}
		}
		select {
		case <-stop:
			return most, worst
		case <-time.After(20 * time.Millisecond):
		}
	}
}

type standIn struct {
	pid   int
	argv0 string
}

// standIns lists the live processes whose argv[0] starts with marker.
func standIns(marker string) []standIn {
	var found []standIn
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if strings.HasPrefix(argv0, marker+" ") {
			found = append(found, standIn{pid, argv0})
		}
	}
	return found
}

func killStandIns(marker string) {
	for _, p := range standIns(marker) {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}
