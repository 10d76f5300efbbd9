//go:build !linux

package runner

import (
	"fmt"
	"os"
	"strings"
)

// sweeper kills what is left of a process group whose leader has exited.
// Without /proc it cannot tell which processes are left, nor find those
// outside the group that hold the output: the group's id, and the open
// pipes, say that something is.
type sweeper struct{}

// sweep kills what is left of group pgid and says what that is: "" once
// nothing is.
func (*sweeper) sweep(pgid int, openPipes []uint64, _ bool) string {
	var left []string
	if killProcessGroup(pgid) {
		left = append(left, fmt.Sprintf("process group %d", pgid))
	}
	if len(openPipes) > 0 {
		left = append(left, "a process holding its output")
	}
	return strings.Join(left, " and ")
}

// killHolders does nothing: processes holding a pipe are not found here.
func (*sweeper) killHolders([]uint64) {}

// describeProcess names a process for messages.
func describeProcess(pid int) string { return fmt.Sprintf("pid %d", pid) }

// hasWriter cannot tell here whether a process holds the write end of a
// pipe: until the copy reads to its end, one may.
func hasWriter(*os.File) bool { return true }
