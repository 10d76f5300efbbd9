//go:build !unix

package runner

import (
	"errors"
	"os"
	"os/exec"
	"time"
)

// setProcessGroup does nothing where there are no Unix process groups.
func setProcessGroup(*exec.Cmd) {}

// killProcessGroup does nothing where there are no process groups: the
// caller kills the child itself.
func killProcessGroup(int) bool { return false }

// pipeInode is 0: processes holding a pipe are not looked for here.
func pipeInode(*os.File) uint64 { return 0 }

// readPipe reads until the end of the pipe: an empty pipe is never taken
// for the end here. A read deadline only wakes it.
func readPipe(r *os.File, buf []byte, _ func() bool) (int, error) {
	for {
		n, err := r.Read(buf)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			_ = r.SetReadDeadline(time.Time{})
			continue
		}
		return n, err
	}
}
