package benchrun

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestExitStatusAndOutputPassThrough(t *testing.T) {
	var out, errs bytes.Buffer
	res, err := Run([]string{"sh", "-c", "echo to-stdout; echo to-stderr >&2; exit 3"}, Options{Stdout: &out, Stderr: &errs})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 3 {
		t.Errorf("exit status %d, want 3", res.ExitStatus)
	}
	if out.String() != "to-stdout\n" || errs.String() != "to-stderr\n" {
		t.Errorf("passed through stdout %q, stderr %q", out.String(), errs.String())
	}
	if string(res.Stdout) != "to-stdout\n" || string(res.Stderr) != "to-stderr\n" {
		t.Errorf("kept stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	if res.Interrupted {
		t.Error("interrupted without a signal")
	}
	if !res.End.After(res.Start) {
		t.Errorf("end %v not after start %v", res.End, res.Start)
	}
}

func TestMissingCommandIsAnError(t *testing.T) {
	_, err := Run([]string{"no-such-benchmark-tool"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "no-such-benchmark-tool") {
		t.Fatalf("error %v does not name the command", err)
	}
}

// gone tells whether no process of group pgid runs any more. Zombies do
// not count: where PID 1 does not reap orphans, they stay in the group.
func gone(pgid int) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if groupRuns(pgid) == 0 {
			return true
		}
	}
	return false
}

// groupRuns counts the processes of group pgid that are not zombies.
func groupRuns(pgid int) int {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return 0
	}
	n := 0
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		stat, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// After the command name in parentheses: state, ppid, pgrp.
		i := bytes.LastIndexByte(stat, ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 2 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" {
			n++
		}
	}
	return n
}

// alive tells whether pid still runs, allowing a moment for a SIGKILL sent
// to it to land. A zombie waiting for init to reap it does not run.
func alive(t *testing.T, pid int) bool {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(stat, ')'); i > 0 && i+2 < len(stat) && stat[i+2] == 'Z' {
			return false
		}
	}
	return true
}

// signalWhenReady sends sigs one by one once the workload has printed
// "ready", so that it has set its traps.
func signalWhenReady(out *syncWriter, sigs ...os.Signal) <-chan os.Signal {
	ch := make(chan os.Signal, len(sigs))
	go func() {
		for !strings.Contains(out.String(), "ready") {
			time.Sleep(10 * time.Millisecond)
		}
		for _, s := range sigs {
			ch <- s
		}
	}()
	return ch
}

func TestSignalReachesTheWholeWorkload(t *testing.T) {
	out := &syncWriter{}
	signals := signalWhenReady(out, syscall.SIGINT)
	res, err := Run([]string{"sh", "-c", "sleep 60 & echo $!; echo ready; wait"}, Options{Stdout: out, Signals: signals, KillAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Interrupted {
		t.Error("not marked interrupted")
	}
	if res.ExitStatus != 130 {
		t.Errorf("exit status %d, want 130 (SIGINT)", res.ExitStatus)
	}
	grandchild, err := strconv.Atoi(strings.Fields(string(res.Stdout))[0])
	if err != nil {
		t.Fatalf("workload printed %q", res.Stdout)
	}
	if alive(t, grandchild) || !gone(res.PID) {
		t.Errorf("the workload's background sleep (pid %d) outlived the run", grandchild)
	}
}

func TestWorkloadIgnoringTheSignalIsKilled(t *testing.T) {
	out := &syncWriter{}
	signals := signalWhenReady(out, syscall.SIGTERM)
	res, err := Run([]string{"sh", "-c", `trap "" TERM; echo ready; sleep 60`}, Options{Stdout: out, Signals: signals, KillAfter: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 128+int(syscall.SIGKILL) {
		t.Errorf("exit status %d, want %d (SIGKILL)", res.ExitStatus, 128+int(syscall.SIGKILL))
	}
	if !res.Interrupted || !gone(res.PID) {
		t.Errorf("interrupted %v, group gone %v", res.Interrupted, gone(res.PID))
	}
}

func TestSecondSignalKillsAtOnce(t *testing.T) {
	out := &syncWriter{}
	signals := signalWhenReady(out, syscall.SIGINT, syscall.SIGINT)
	res, err := Run([]string{"sh", "-c", `trap "" INT; echo ready; sleep 60`}, Options{Stdout: out, Signals: signals, KillAfter: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 128+int(syscall.SIGKILL) {
		t.Errorf("exit status %d, want %d: the second Ctrl-C should kill", res.ExitStatus, 128+int(syscall.SIGKILL))
	}
}

func TestLeftoversOfAFinishedWorkloadAreKilled(t *testing.T) {
	// The leader exits at once; its background sleep holds the output
	// pipe and would keep the run waiting.
	res, err := Run([]string{"sh", "-c", "sleep 60 & echo $!"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitStatus != 0 || res.Interrupted {
		t.Errorf("exit status %d, interrupted %v", res.ExitStatus, res.Interrupted)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if err != nil {
		t.Fatalf("workload printed %q", res.Stdout)
	}
	if alive(t, pid) {
		t.Errorf("background sleep %d still runs after the workload ended", pid)
	}
}

func TestCaptureKeepsHeadAndTail(t *testing.T) {
	c := &capture{head: 4, tail: 6}
	for _, s := range []string{"fio-", "3.33\n", strings.Repeat("x", 100), "\nsum=1\n"} {
		if _, err := c.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	want := "fio-\n[... 106 bytes of output left out ...]\nsum=1\n"
	if got := string(c.Bytes()); got != want {
		t.Errorf("kept %q, want %q", got, want)
	}
	short := &capture{head: 4, tail: 6}
	_, _ = short.Write([]byte("abcdefgh"))
	if got := string(short.Bytes()); got != "abcdefgh" {
		t.Errorf("short output kept as %q", got)
	}
}

// syncWriter lets the test read what the copier writes.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
