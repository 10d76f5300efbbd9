//go:build unix

package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// standIn writes an executable shell script called name into a new
// directory, puts that directory first on PATH and returns it. The script
// finds its directory in $D, to leave files the test reads.
func standIn(t *testing.T, name, script string) string {
	t.Helper()
	dir := t.TempDir()
	body := "#!/bin/sh\nD=\"$(dirname \"$0\")\"\n" + script + "\n"
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// readPid reads a pid a stand-in wrote, waiting briefly for it.
func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(data, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("stand-in did not write %s: %v", path, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// countLines counts the lines of a file a stand-in appends to on each start.
func countLines(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}

// liveMembers lists the processes of group pgid that have not died. Killed
// orphans may stay zombies here (the container's pid 1 may not reap them),
// so on Linux zombies count as gone.
func liveMembers(pgid int) []int {
	if runtime.GOOS != "linux" {
		if syscall.Kill(-pgid, 0) == syscall.ESRCH {
			return nil
		}
		return []int{pgid}
	}
	entries, _ := os.ReadDir("/proc")
	var live []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, pgrp, ok := procStat(pid)
		if ok && pgrp == pgid && state != "Z" && state != "X" {
			live = append(live, pid)
		}
	}
	return live
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	if runtime.GOOS != "linux" {
		return syscall.Kill(pid, 0) == nil
	}
	state, _, ok := procStat(pid)
	return ok && state != "Z" && state != "X"
}

// procStat reads the state and process group of a Linux process.
func procStat(pid int) (state string, pgrp int, ok bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return "", 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 3 {
		return "", 0, false
	}
	pgrp, err = strconv.Atoi(f[2])
	return f[0], pgrp, err == nil
}

// assertGroupGone fails unless every process of group pgid dies soon.
func assertGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		live := liveMembers(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range live {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("process group %d still has live processes %v", pgid, live)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
