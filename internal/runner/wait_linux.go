package runner

import (
	"os"

	"golang.org/x/sys/unix"
)

// awaitExit returns once process pid, our child, has exited, without
// reaping it: the Wait after it then returns at once. Meanwhile the
// goroutine is parked in the runtime's poller, on a pidfd that becomes
// readable at the exit, where Wait alone would hold a thread in waitid for
// the child's whole run, and the scheduler's monitor awake checking on that
// thread. Where the kernel has no pollable pidfds (before Linux 5.10) it
// returns at once and Wait blocks as before.
func awaitExit(pid int) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd") // non-blocking: in the poller
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Read asks the function, and while that says no, waits for the
	// poller to see the pidfd readable. An error (a pidfd the poller does
	// not take) leaves the waiting to Wait.
	_ = rc.Read(func(fd uintptr) bool {
		ready, err := pollNow(int(fd), unix.POLLIN)
		return ready != 0 || err != nil
	})
}

// pollNow returns which of events fd has now, without waiting.
func pollNow(fd int, events int16) (int16, error) {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: events}}
	var ts unix.Timespec // do not wait
	for {
		_, err := unix.Ppoll(pfd, &ts, nil)
		if err != unix.EINTR {
			return pfd[0].Revents, err
		}
	}
}
