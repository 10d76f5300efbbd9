//go:build linux

package runner

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxHolderWalk bounds the pause between two walks of /proc for the
// processes holding a pipe, while walks find none (they may be out of
// sight: another user's processes, when the exporter does not run as root).
const maxHolderWalk = 30 * time.Second

// sweeper kills what is left of a process group whose leader has exited,
// and the processes anywhere that hold its output pipes, found in /proc.
// It remembers whom it found, so that a process stuck in the kernel for
// hours costs a look at its own /proc entries per sweep, not a walk of all
// of /proc.
type sweeper struct {
	members   []int         // live processes of the group at the last sweep
	holders   []int         // processes holding the pipes at the last sweep
	nextWalk  time.Time     // no walk for holders before then
	walkEvery time.Duration // grows while walks find no holder
}

// sweep kills what is left of group pgid and of the holders of its open
// pipes, and says what that is: "" once nothing is. Zombies are not left:
// they are dead, and a container's pid 1 may never reap them.
func (s *sweeper) sweep(pgid int, openPipes []uint64, findHolders bool) string {
	var members []procInfo
	if killProcessGroup(pgid) {
		members = lookAgain(s.members, func(pi procInfo) bool { return pi.pgrp == pgid })
		if len(members) == 0 {
			members = walkProc(func(pi procInfo) bool { return pi.pgrp == pgid })
		}
	}
	s.members = pids(members)
	var outside []procInfo
	if findHolders {
		for _, pi := range s.killHolders(openPipes) {
			if pi.pgrp != pgid {
				outside = append(outside, pi)
			}
		}
	}
	var left []string
	if len(members) > 0 {
		left = append(left, describeSome(members, "of its process group"))
	}
	if len(outside) > 0 {
		left = append(left, describeSome(outside, "outside its process group, holding its output"))
	}
	if len(left) == 0 && len(openPipes) > 0 {
		left = append(left, "a process holding its output")
	}
	return strings.Join(left, " and ")
}

// killHolders kills the processes that hold any of the pipes and returns
// them. It looks again at those it found last time before it walks /proc.
func (s *sweeper) killHolders(pipes []uint64) []procInfo {
	if len(pipes) == 0 {
		s.holders = nil
		return nil
	}
	holds := func(pi procInfo) bool { return holdsPipe(pi.pid, pipes) && !isUnexecutedFork(pi) }
	found := lookAgain(s.holders, holds)
	if len(found) == 0 && !time.Now().Before(s.nextWalk) {
		found = walkProc(holds)
		if len(found) == 0 {
			s.walkEvery = min(max(2*s.walkEvery, 10*time.Millisecond), maxHolderWalk)
			s.nextWalk = time.Now().Add(s.walkEvery)
		} else {
			s.walkEvery = 0
		}
	}
	for _, pi := range found {
		_ = syscall.Kill(pi.pid, syscall.SIGKILL)
	}
	s.holders = pids(found)
	return found
}

// procInfo is what /proc/PID/stat says of a process.
type procInfo struct {
	pid, ppid, pgrp int
	comm, state     string
}

func (pi procInfo) String() string {
	return fmt.Sprintf("pid %d (%s, state %s)", pi.pid, pi.comm, pi.state)
}

// readProc reads /proc/PID/stat.
func readProc(pid int) (procInfo, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i, j := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if i < 0 || j < i {
		return procInfo{}, false
	}
	f := strings.Fields(string(data[j+1:]))
	if len(f) < 3 {
		return procInfo{}, false
	}
	pi := procInfo{pid: pid, comm: string(data[i+1 : j]), state: f[0]}
	var err1, err2 error
	pi.ppid, err1 = strconv.Atoi(f[1])
	pi.pgrp, err2 = strconv.Atoi(f[2])
	return pi, err1 == nil && err2 == nil
}

func (pi procInfo) live() bool { return pi.state != "Z" && pi.state != "X" }

// describeProcess names a process for messages: "pid 1234 (zpool, state D)".
func describeProcess(pid int) string {
	if pi, ok := readProc(pid); ok {
		return pi.String()
	}
	return fmt.Sprintf("pid %d", pid)
}

// describeSome names the first of some processes and counts the others.
func describeSome(ps []procInfo, where string) string {
	s := ps[0].String() + " " + where
	if len(ps) > 1 {
		s += fmt.Sprintf(" and %d more", len(ps)-1)
	}
	return s
}

// lookAgain returns those of pids that are still live and keep.
func lookAgain(pids []int, keep func(procInfo) bool) []procInfo {
	var found []procInfo
	for _, pid := range pids {
		if pi, ok := readProc(pid); ok && pi.live() && keep(pi) {
			found = append(found, pi)
		}
	}
	return found
}

// procWalks counts walks of /proc, for tests: a command that leaves
// nothing behind must cost none.
var procWalks atomic.Uint64

// walkProc returns the live processes, ours excepted, that keep.
func walkProc(keep func(procInfo) bool) []procInfo {
	procWalks.Add(1)
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	self := os.Getpid()
	var found []procInfo
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid == self {
			continue
		}
		if pi, ok := readProc(pid); ok && pi.live() && keep(pi) {
			found = append(found, pi)
		}
	}
	return found
}

// holdsPipe reports whether process pid has one of the pipes open.
func holdsPipe(pid int, pipes []uint64) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	d, err := os.Open(dir)
	if err != nil {
		return false // gone, or not ours to look at
	}
	fds, _ := d.Readdirnames(-1)
	d.Close()
	for _, fd := range fds {
		link, err := os.Readlink(dir + fd)
		if err != nil {
			continue
		}
		ino, ok := strings.CutPrefix(link, "pipe:[")
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(ino, "]"), 10, 64)
		if err == nil && slices.Contains(pipes, n) {
			return true
		}
	}
	return false
}

// isUnexecutedFork reports whether pi is a child this process has forked
// and that has not yet run its program: it holds copies of all our
// descriptors for that moment, the pipes of other runs among them, and is
// no part of them.
func isUnexecutedFork(pi procInfo) bool {
	if pi.ppid != os.Getpid() {
		return false
	}
	exe, err := os.Readlink("/proc/" + strconv.Itoa(pi.pid) + "/exe")
	self, serr := os.Readlink("/proc/self/exe")
	return err == nil && serr == nil && exe == self
}

func pids(ps []procInfo) []int {
	out := make([]int, len(ps))
	for i, pi := range ps {
		out[i] = pi.pid
	}
	return out
}

// hasWriter reports whether any process still holds the write end of the
// pipe whose read end is r. The kernel reports POLLHUP on the read end once
// none does, whether or not data is left in the pipe, so that this takes
// one system call where looking for the holders takes a walk of /proc. A
// pipe the copy has closed has none: it read to the end.
func hasWriter(r *os.File) bool {
	rc, err := r.SyscallConn()
	if err != nil {
		return false
	}
	writer := true
	cerr := rc.Control(func(fd uintptr) {
		revents, err := pollNow(int(fd), 0) // POLLHUP comes unasked
		writer = err != nil || revents&unix.POLLHUP == 0
	})
	return writer && cerr == nil
}
