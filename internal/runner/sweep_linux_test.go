package runner

import (
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
			return e.Run(timeout(t, 10*time.Second), "zpool", "status")
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
