//go:build linux

package runner

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// sweeper kills what is left of a process group whose leader has exited,
// found in /proc. It remembers whom it found, so that a process stuck in
// the kernel for hours costs a look at its own /proc entry per sweep, not a
// walk of all of /proc.
type sweeper struct {
	members []int // live processes of the group at the last sweep
}

// sweep kills what is left of group pgid and says what that is, also while
// its output pipes are open: "" once nothing is. Zombies are not left: they
// are dead, and a container's pid 1 may never reap them.
func (s *sweeper) sweep(pgid int, openPipes []uint64) string {
	var members []procInfo
	if killProcessGroup(pgid) {
		members = lookAgain(s.members, func(pi procInfo) bool { return pi.pgrp == pgid })
		if len(members) == 0 {
			members = walkProc(func(pi procInfo) bool { return pi.pgrp == pgid })
		}
	}
	s.members = pids(members)
	var left []string
	if len(members) > 0 {
		left = append(left, describeSome(members, "of its process group"))
	}
	if len(left) == 0 && len(openPipes) > 0 {
		left = append(left, "a process holding its output")
	}
	return strings.Join(left, " and ")
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

// walkProc returns the live processes, ours excepted, that keep.
func walkProc(keep func(procInfo) bool) []procInfo {
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

func pids(ps []procInfo) []int {
	out := make([]int, len(ps))
	for i, pi := range ps {
		out[i] = pi.pid
	}
	return out
}
