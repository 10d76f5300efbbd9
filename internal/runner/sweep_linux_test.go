package runner

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A command that exits leaving nothing behind costs no walk of /proc: its
// process group is empty and its pipes have no writer left, which two
// system calls tell. Walks are for what a command leaves running.
func TestRunLeavingNothingDoesNotWalkProc(t *testing.T) {
	standIn(t, "zpool", `echo out; echo err >&2; exit 1`)
	e := NewExec(ExecOptions{})
	before := procWalks.Load()
	const runs = 20
	for i := range runs {
		out, err := runWithin(t, 20*time.Second, func() ([]byte, error) {
			return e.Run(timeout(t, 10*time.Second), Cmd("zpool", "status"))
		})
		if string(out) != "out\n" || err == nil || err.Error() != "zpool status: exit status 1: err" {
			t.Fatalf("run %d: %q, %v; want zpool's output and exit status", i+1, out, err)
		}
		waitUntilFree(t, e, "zpool status")
	}
	if n := procWalks.Load() - before; n != 0 {
		t.Errorf("%d walks of /proc in %d runs that left nothing, want none", n, runs)
	}
}

// While a command runs, no thread of the exporter is held in waitid for
// it: the runtime's poller is told when it exits, so that a slow zpool
// keeps no thread in a system call, nor the scheduler checking on it.
func TestRunningCommandHoldsNoThreadInWaitid(t *testing.T) {
	dir := standIn(t, "zpool", `echo $$ > "$D/pid"; sleep 1; echo ok`)
	e := NewExec(ExecOptions{})
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(timeout(t, 10*time.Second), Cmd("zpool", "status"))
		done <- err
	}()
	readPid(t, filepath.Join(dir, "pid"))
	time.Sleep(100 * time.Millisecond) // the reaper is waiting by now
	if tids := threadsIn(t, syscall.SYS_WAITID); len(tids) > 0 {
		t.Errorf("threads %v are in waitid while the command runs, want none", tids)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// threadsIn lists the threads of this process in system call nr.
func threadsIn(t *testing.T, nr int) []string {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	var in []string
	for _, task := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + task.Name() + "/syscall")
		if err != nil {
			continue // gone, or not to be read here
		}
		if f := strings.Fields(string(data)); len(f) > 0 && f[0] == strconv.Itoa(nr) {
			in = append(in, task.Name())
		}
	}
	return in
}
