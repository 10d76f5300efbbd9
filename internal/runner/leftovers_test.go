//go:build unix

package runner

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A zpool that exits while a child of its group still holds its stdout:
// the run returns zpool's output without waiting for the child, whatever
// the kill grace, and the child is killed rather than left behind at every
// scrape.
func TestRunKillsChildLeftInGroup(t *testing.T) {
	dir := standIn(t, "zpool", `sleep 1000 & echo $! >> "$D/children"; echo ok`)
	t.Cleanup(func() { killAll(t, filepath.Join(dir, "children")) })
	e := NewExec(ExecOptions{KillGrace: time.Minute})
	const scrapes = 10
	for i := range scrapes {
		out, err := runWithin(t, 20*time.Second, func() ([]byte, error) {
			return e.Run(timeout(t, 2*time.Minute), Cmd("zpool", "status"))
		})
		if err != nil || string(out) != "ok\n" {
			t.Fatalf("scrape %d: %q, %v; want zpool's output", i+1, out, err)
		}
		waitUntilFree(t, e, "zpool status")
	}
	children := readPids(t, filepath.Join(dir, "children"))
	if len(children) != scrapes {
		t.Fatalf("%d children started, want %d", len(children), scrapes)
	}
	waitDead(t, children...)
	if st := e.Stats()["zpool status"]; st.Runs != scrapes || st.Failures != 0 || st.Refused != 0 {
		t.Errorf("stats = %+v, want %d runs without failure", st, scrapes)
	}
}

// escape is a stand-in's start: a grandchild leaves the process group
// (setsid) with stdout, and the stand-in waits until it has.
const escape = `setsid sh -c 'echo $$ >> "$1"; exec sleep 1000' sh "$D/escaped" &
while [ ! -s "$D/escaped" ]; do sleep 0.01; done`

// A grandchild that left the process group (setsid) and holds stdout after
// the command exited: the run returns the output without waiting for it,
// and it is found by the pipe it holds and killed.
func TestRunKillsEscapedGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes holding a pipe are found in /proc; elsewhere the command line stays taken until they exit")
	}
	dir := standIn(t, "zpool", escape+`; echo done`)
	t.Cleanup(func() { killAll(t, filepath.Join(dir, "escaped")) })
	e := NewExec(ExecOptions{KillGrace: time.Minute})
	out, err := runWithin(t, 20*time.Second, func() ([]byte, error) {
		return e.Run(timeout(t, 2*time.Minute), Cmd("zpool", "status"))
	})
	if err != nil || string(out) != "done\n" {
		t.Errorf("Run = %q, %v; want the output of the exited command", out, err)
	}
	waitDead(t, readPids(t, filepath.Join(dir, "escaped"))...)
	waitUntilFree(t, e, "zpool status")
}

// At the deadline, a grandchild that left the process group dies with it:
// neither it nor the command line's hung state outlive the run.
func TestRunTimeoutKillsEscapedGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes holding a pipe are found in /proc; elsewhere the command line stays taken until they exit")
	}
	dir := standIn(t, "zpool", escape+`; sleep 1000`)
	t.Cleanup(func() { killAll(t, filepath.Join(dir, "escaped")) })
	e := NewExec(ExecOptions{})
	_, err := e.Run(timeout(t, 2*time.Second), Cmd("zpool", "status"))
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
	escaped := readPids(t, filepath.Join(dir, "escaped"))
	if len(escaped) != 1 {
		t.Fatalf("grandchildren %v, want the one that escaped before the deadline", escaped)
	}
	waitDead(t, escaped...)
	waitUntilFree(t, e, "zpool status")
	if _, err := e.Run(timeout(t, 100*time.Millisecond), Cmd("zpool", "status")); errors.Is(err, ErrStillRunning) {
		t.Errorf("run after the grandchild died: %v, want a new run", err)
	}
}

// Closing a stream ends what its command started, also outside its group.
func TestStreamCloseKillsEscapedGrandchild(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes holding a pipe are found in /proc; elsewhere the command line stays taken until they exit")
	}
	dir := standIn(t, "zpool", escape+`; echo ready; sleep 1000`)
	t.Cleanup(func() { killAll(t, filepath.Join(dir, "escaped")) })
	e := NewExec(ExecOptions{})
	rc, err := e.StartStream(timeout(t, time.Minute), Cmd("zpool", "iostat", "10"))
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(rc).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	waitDead(t, readPids(t, filepath.Join(dir, "escaped"))...)
	waitUntilFree(t, e, "zpool iostat 10")
}

// runWithin calls f and fails the test if it has not returned within d: a
// bound for "it hangs", far above what f should take.
func runWithin(t *testing.T, d time.Duration, f func() ([]byte, error)) ([]byte, error) {
	t.Helper()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := f()
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(d):
		t.Fatalf("has not returned %s later", d)
		return nil, nil
	}
}

// waitUntilFree waits until the stats no longer call line hung.
func waitUntilFree(t *testing.T, e *Exec, line string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for e.Stats()[line].StillRunning {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still running 10s after what it left could exit: %+v", line, e.Stats()[line])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitDead fails the test unless every pid dies soon.
func waitDead(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("pid %d is still there", pid)
		}
	}
}

// readPids reads the pids a stand-in appended to path, one a line.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// killAll kills the processes listed in path, so that a failing test
// leaves nothing behind.
func killAll(t *testing.T, path string) {
	for _, pid := range readPids(t, path) {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
