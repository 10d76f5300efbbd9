//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// A zfs-fuse zpool stand-in: the status of two pools, and a zpool iostat
// -v 1 that prints a report and then sleeps in a child, as zpool does
// between reports. Every newer flag is refused, so the exporter samples
// the stream; `nap` is sleep under a name that tells the stand-in's
// processes from any other.
const iostatStandIn = `case "$*" in
status) cat "$D/status.txt" ;;
'iostat -v 1') cat "$D/iostat.txt"; "$D/nap" 1000 ;;
*) echo "invalid option" >&2; exit 2 ;;
esac
`

// A zpool whose events stream hangs without a word, as zpool events -f
// waits for the next event.
const hungEventsStandIn = `case "$*" in
status) cat "$D/status.txt" ;;
'events -H') ;;
'events -vHf') "$D/nap" 1000 ;;
*) echo "invalid option" >&2; exit 2 ;;
esac
`

// A zpool whose events stream dies as soon as it starts.
const dyingEventsStandIn = `case "$*" in
status) cat "$D/status.txt" ;;
'events -H') ;;
'events -vHf') echo "cannot open /dev/zfs" >&2; "$D/nap" 0.01; exit 1 ;;
*) echo "invalid option" >&2; exit 2 ;;
esac
`

// A zpool whose status hangs, as on a suspended pool.
const hungStatusStandIn = `case "$*" in
status) "$D/nap" 1000 ;;
*) echo "invalid option" >&2; exit 2 ;;
esac
`

// shutdownStandIn writes the zpool script into a new directory, with the
// files it prints, `nap`, a link to sleep, and a zfs that refuses every
// command (the host's is not run), and returns the directory.
// Every process of the stand-in names the directory in its command line.
func shutdownStandIn(t *testing.T, script string) string {
	t.Helper()
	dir := t.TempDir()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		e2e.SkipOrFail(t, "no sleep command for the zpool stand-in: %v", err)
	}
	if err := os.Symlink(sleep, filepath.Join(dir, "nap")); err != nil {
		t.Fatal(err)
	}
	status := sample.MustRead(t, replayDir+"/000/zpool_status.txt").Body
	iostat := sample.MustRead(t, replayDir+"/000/zpool_iostat_-v_1.txt").Body
	// Two reports: the one since import and one interval.
	iostat = iostat[:nthIndex(iostat, []byte("\n\n"), 2)+2]
	for name, data := range map[string][]byte{
		"zpool":      []byte("#!/bin/sh\nD=${0%/*}\n" + script),
		"zfs":        []byte("#!/bin/sh\necho \"invalid option\" >&2\nexit 2\n"),
		"status.txt": status,
		"iostat.txt": iostat,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { killAll(dir) })
	return dir
}

func nthIndex(s, sep []byte, n int) int {
	at := -len(sep)
	for range n {
		i := bytes.Index(s[at+len(sep):], sep)
		if i < 0 {
			return len(s) - len(sep)
		}
		at += len(sep) + i
	}
	return at
}

// childProc is a live process of a stand-in.
type childProc struct {
	pid     int
	cmdline string // arguments joined by spaces
}

// stillRunning lists the live processes whose command line names dir.
// Killed orphans may stay zombies (the container's init may not reap
// them): zombies count as gone.
func stillRunning(dir string) []childProc {
	var found []childProc
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dir+"/")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ...
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue
		}
		pid, _ := strconv.Atoi(e.Name())
		found = append(found, childProc{pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " "))})
	}
	return found
}

// killAll kills what is left of a stand-in and waits for it to die, so
// that the next round does not take it for its own.
func killAll(dir string) {
	deadline := time.Now().Add(5 * time.Second)
	for left := stillRunning(dir); len(left) > 0 && time.Now().Before(deadline); left = stillRunning(dir) {
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitForNap waits until the stand-in in dir sleeps in a child.
func waitForNap(dir string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		for _, p := range stillRunning(dir) {
			if p.cmdline == dir+"/nap 1000" {
				return true
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

// terminate sends SIGTERM to cmd, waits for it to exit, and returns its
// exit status and the processes of the stand-in in dir still alive a
// moment later: a killed process dies within the moment, one nobody
// killed sleeps on for 1000 s.
func terminate(cmd *exec.Cmd, dir string) (int, []childProc, error) {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var err error
	select {
	case err = <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGQUIT)
		<-exited
		return 0, nil, errors.New("no exit 30 s after SIGTERM")
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode() // -1: killed by the signal
	} else if err != nil {
		return 0, nil, err
	}
	deadline := time.Now().Add(time.Second)
	for {
		left := stillRunning(dir)
		if len(left) == 0 || time.Now().After(deadline) {
			return code, left, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// daemon starts the exporter with the zpool of dir first on PATH and
// waits until it answers.
func daemon(dir string, args ...string) (*exec.Cmd, string, *e2e.Log, error) {
	cmd := exec.Command(exporterBin, append([]string{e2e.ListenAnywhere}, args...)...)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	log := e2e.NewLog()
	url, err := e2e.StartListening(cmd, log, 60*time.Second)
	if err != nil {
		return nil, "", nil, err
	}
	return cmd, url, log, nil
}

// rounds runs round n times, spread over a few goroutines each with its
// own stand-in, and reports the rounds that left processes running.
func rounds(t *testing.T, n int, script string, round func(dir string) ([]childProc, error)) {
	t.Helper()
	const workers = 4
	var (
		mu      sync.Mutex
		leaked  int
		example []childProc
		failed  error
		wg      sync.WaitGroup
	)
	next := make(chan struct{}, n)
	for range n {
		next <- struct{}{}
	}
	close(next)
	for range workers {
		dir := shutdownStandIn(t, script)
		wg.Go(func() {
			for range next {
				left, err := round(dir)
				killAll(dir)
				mu.Lock()
				if err != nil && failed == nil {
					failed = err
				}
				if len(left) > 0 {
					leaked++
					example = left
				}
				stop := failed != nil
				mu.Unlock()
				if stop {
					return
				}
			}
		})
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	if leaked > 0 {
		t.Errorf("%d of %d shutdowns left processes of zpool running, such as %v", leaked, n, example)
	}
}

// SIGTERM ends the zpool iostat stream the exporter started, with every
// process of it: zpool iostat -v 10 never exits on its own, and a stream
// left behind runs on under init.
func TestShutdownEndsIostatStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops the exporter 100 times; skipped with -short")
	}
	rounds(t, 100, iostatStandIn, func(dir string) ([]childProc, error) {
		cmd, url, stderr, err := daemon(dir, "--zpool.iostat-interval=1s", "--web.disable-exporter-metrics",
			"--no-collector.properties", "--no-collector.cpu", "--no-collector.disk", "--no-collector.kstat")
		if err != nil {
			return nil, err
		}
		// A scrape finds no vdev properties and starts the stream.
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		if !waitForNap(dir, 10*time.Second) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return nil, fmt.Errorf("the zpool iostat stream did not start; log:\n%s", stderr)
		}
		code, left, err := terminate(cmd, dir)
		if err == nil && code != 0 {
			err = fmt.Errorf("exit status %d after SIGTERM, want 0; log:\n%s", code, stderr)
		}
		return left, err
	})
}

// The zpool events stream never holds up a scrape, whether it hangs or
// dies as it starts, and SIGTERM ends it with every process of it.
func TestShutdownEndsEventsStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops the exporter 40 times; skipped with -short")
	}
	for name, script := range map[string]string{"hung": hungEventsStandIn, "dying": dyingEventsStandIn} {
		t.Run(name, func(t *testing.T) {
			rounds(t, 20, script, func(dir string) ([]childProc, error) {
				cmd, url, stderr, err := daemon(dir, "--zpool.iostat-interval=0", "--web.disable-exporter-metrics", "--scrape.timeout=5s",
					"--no-collector.properties", "--no-collector.cpu", "--no-collector.disk", "--no-collector.kstat", "--no-collector.vdev_io")
				if err != nil {
					return nil, err
				}
				// The first scrape starts the follower; the next ones read
				// its counts while it hangs or restarts.
				for i := range 3 {
					began := time.Now()
					resp, err := http.Get(url + "/metrics")
					if err != nil {
						return nil, err
					}
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if took := time.Since(began); took > 3*time.Second {
						return nil, fmt.Errorf("scrape %d took %s beside a %s zpool events", i, took, name)
					}
					if !bytes.Contains(body, []byte(`zfs_exporter_collector_success{collector="events"} 1`)) {
						return nil, fmt.Errorf("scrape %d: the events collector did not succeed:\n%s", i, body)
					}
				}
				if name == "hung" && !waitForNap(dir, 10*time.Second) {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
					return nil, fmt.Errorf("the zpool events stream did not start; log:\n%s", stderr)
				}
				code, left, err := terminate(cmd, dir)
				if err == nil && code != 0 {
					err = fmt.Errorf("exit status %d after SIGTERM, want 0; log:\n%s", code, stderr)
				}
				return left, err
			})
		})
	}
}

// SIGTERM during a scrape ends the zpool commands it runs, though their
// deadline is a minute away: a zpool hung on a suspended pool would
// otherwise outlive the exporter. The same holds for --once.
func TestShutdownEndsCommandsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and stops the exporter 40 times; skipped with -short")
	}
	t.Run("daemon", func(t *testing.T) {
		rounds(t, 20, hungStatusStandIn, func(dir string) ([]childProc, error) {
			cmd, url, stderr, err := daemon(dir, "--scrape.timeout=1m", "--zpool.iostat-interval=0s")
			if err != nil {
				return nil, err
			}
			scraped := make(chan struct{})
			go func() {
				defer close(scraped)
				if resp, err := http.Get(url + "/metrics"); err == nil {
					resp.Body.Close()
				}
			}()
			if !waitForNap(dir, 10*time.Second) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				return nil, fmt.Errorf("zpool status did not start; log:\n%s", stderr)
			}
			code, left, err := terminate(cmd, dir)
			<-scraped
			if err == nil && code != 0 {
				err = fmt.Errorf("exit status %d after SIGTERM, want 0; log:\n%s", code, stderr)
			}
			return left, err
		})
	})
	t.Run("once", func(t *testing.T) {
		rounds(t, 20, hungStatusStandIn, func(dir string) ([]childProc, error) {
			cmd := exec.Command(exporterBin, "--once", "--scrape.timeout=1m")
			cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			if !waitForNap(dir, 10*time.Second) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				return nil, fmt.Errorf("zpool status did not start; log:\n%s", &stderr)
			}
			_, left, err := terminate(cmd, dir)
			return left, err
		})
	})
}

// Shutdown waits for the tasks that run commands, but not for ever: what
// still runs at the bound is named for the log.
func TestTasksWait(t *testing.T) {
	var running tasks
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if left := running.Wait(ctx); left != nil {
		t.Errorf("no task: Wait = %v", left)
	}
	release := make(chan struct{})
	for range 2 {
		running.Go("a scrape", func() { <-release })
	}
	running.Go("the zpool iostat stream", func() { time.Sleep(10 * time.Millisecond) })
	stuck := make(chan struct{})
	defer close(stuck)
	running.Go("the iostat stream", func() { <-stuck })
	over, stop := context.WithCancel(context.Background())
	stop()
	if left := running.Wait(over); !slices.Contains(left, "a scrape (2)") {
		t.Errorf("Wait = %q, want the two scrapes counted", left)
	}
	close(release)

	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if left := running.Wait(short); !slices.Equal(left, []string{"the iostat stream"}) {
		t.Errorf("Wait = %q, want only the task that never ends", left)
	}
	done := running.track("a scrape")
	done()
	stuck <- struct{}{}
	if left := running.Wait(ctx); left != nil {
		t.Errorf("after every task ended, Wait = %q", left)
	}
}
