//go:build unix

package runner

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// setProcessGroup makes the child the leader of a new process group, so
// that everything it forks can be killed with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killProcessGroup sends SIGKILL to process group pgid and reports whether
// it had any process, zombies included.
func killProcessGroup(pgid int) bool {
	return !errors.Is(syscall.Kill(-pgid, syscall.SIGKILL), syscall.ESRCH)
}

// pipeInode identifies a pipe: both of its ends, in every process that
// holds them, show the same inode.
func pipeInode(f *os.File) uint64 {
	fi, err := f.Stat()
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)
	}
	return 0
}

// readPipe reads from the read end of a pipe. When the pipe is empty it
// waits for more, unless emptyEnds says that an empty pipe is the end: it
// then returns errPipeEmpty. A past read deadline wakes a waiting
// readPipe to ask emptyEnds again.
func readPipe(r *os.File, buf []byte, emptyEnds func() bool) (int, error) {
	rc, err := r.SyscallConn()
	if err != nil {
		return 0, err
	}
	for {
		var n int
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, rerr = syscall.Read(int(fd), buf)
			switch {
			case rerr == syscall.EINTR:
				return false
			case rerr == syscall.EAGAIN && emptyEnds():
				rerr = errPipeEmpty
			case rerr == syscall.EAGAIN:
				return false // wait until there is something to read
			}
			return true
		})
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			_ = r.SetReadDeadline(time.Time{})
			continue
		case err != nil:
			return 0, err
		case rerr != nil:
			return 0, rerr
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}
