package scrapebench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of the CPU times in /proc/PID/stat:
// 100 on every architecture Go runs Linux on.
const clockTicks = 100

// Usage is what the kernel counts of a process.
type Usage struct {
	CPU time.Duration // user and system time of all its threads, children excluded
	RSS uint64        // resident memory now, bytes
	HWM uint64        // the most resident memory it has had, bytes
}

// ReadUsage reads a live process's CPU time from /proc/PID/stat and its
// memory from /proc/PID/status.
func ReadUsage(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, err
	}
	cpu, err := parseStatCPU(string(stat))
	if err != nil {
		return Usage{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, err
	}
	defer f.Close()
	u := Usage{CPU: cpu}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, _ := strings.Cut(sc.Text(), ":")
		switch key {
		case "VmRSS":
			u.RSS, err = parseKB(value)
		case "VmHWM":
			u.HWM, err = parseKB(value)
		}
		if err != nil {
			return Usage{}, fmt.Errorf("/proc/%d/status: %s: %w", pid, key, err)
		}
	}
	return u, sc.Err()
}

// parseStatCPU returns utime + stime, the 14th and 15th fields of
// /proc/PID/stat. The command name, the second field, may hold spaces and
// parentheses: the fields are counted from its closing parenthesis.
func parseStatCPU(stat string) (time.Duration, error) {
	end := strings.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name", len(f))
	}
	var ticks uint64
	for _, s := range f[11:13] { // fields 14 and 15, after pid and comm
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// parseKB reads a /proc/PID/status size, "  1234 kB".
func parseKB(s string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(s), " kB"), 10, 64)
	return n << 10, err
}
