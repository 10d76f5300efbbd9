package collector

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// psRow is one line of ps: a process, or one thread of it.
type psRow struct {
	ID      int           // the thread ID (FreeBSD) or process ID
	PPID    int           // 0 for kernel and system processes
	CPU     time.Duration // cumulative CPU time, user and system
	Command string        // the process name
	Thread  string        // the thread name; empty for a whole process
}

// FreeBSD keeps the ZFS threads in the zfskern kernel process (and, before
// OpenZFS, the I/O threads of each pool in a zpool-POOL process). With -H
// ps prints one line per thread, and the comm of a process with several
// threads reads "zfskern/txg_thread_enter". time is the thread's own run
// time, M:SS.hh; lwp is its thread ID. Kernel processes are children of
// process 0.
var freebsdThreadsArgs = []string{"-axH", "-o", "lwp=", "-o", "ppid=", "-o", "time=", "-o", "comm="}

// illumos and Solaris run the I/O taskq threads of each pool in a system
// process named zpool-POOL, a child of sched (process 0), so that its CPU
// time shows in ps and prstat. time is [[DD-]HH:]MM:SS, the user and
// system time of all its threads.
var sunosProcessesArgs = []string{"-e", "-o", "pid=", "-o", "ppid=", "-o", "time=", "-o", "comm="}

// psEngineCPU runs ps through the runner and picks the ZFS threads of its
// rows.
func psEngineCPU(r runner.Runner, args []string, read func(io.Reader) ([]psRow, error), pick func([]psRow) []engineThread) engineCPUFunc {
	return func(ctx context.Context) ([]engineThread, error) {
		out, err := r.Run(ctx, runner.Cmd("ps", args...))
		if err != nil {
			return nil, err
		}
		rows, err := read(bytes.NewReader(out))
		if err != nil {
			return nil, parse.WithSource(err, runner.CommandLine("ps", args...))
		}
		return pick(rows), nil
	}
}

// parseFreeBSDThreads reads the output of
// `ps -axH -o lwp= -o ppid= -o time= -o comm=`.
func parseFreeBSDThreads(r io.Reader) ([]psRow, error) {
	return parsePs(r, func(row *psRow) {
		// A process name has no slash; the thread name may have any.
		if i := strings.IndexByte(row.Command, '/'); i > 0 {
			row.Command, row.Thread = row.Command[:i], row.Command[i+1:]
		}
	})
}

// parseSunOSProcesses reads the output of
// `ps -e -o pid= -o ppid= -o time= -o comm=`.
func parseSunOSProcesses(r io.Reader) ([]psRow, error) {
	return parsePs(r, nil)
}

// parsePs reads lines of a thread or process ID, a parent PID, a CPU time
// and a command that may hold spaces. A header line, printed when the
// columns have titles, is skipped.
func parsePs(r io.Reader, split func(*psRow)) ([]psRow, error) {
	var rows []psRow
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		idField, rest := nextField(line)
		ppidField, rest := nextField(rest)
		timeField, command := nextField(rest)
		command = strings.TrimSpace(command)
		if len(rows) == 0 && ppidField == "PPID" {
			continue
		}
		id, err := strconv.Atoi(idField)
		if err != nil || id < 0 {
			return nil, parse.Errorf(n, "cannot parse ID %q", idField)
		}
		ppid, err := strconv.Atoi(ppidField)
		if err != nil || ppid < 0 {
			return nil, parse.Errorf(n, "cannot parse parent PID %q", ppidField)
		}
		cpu, err := parsePsTime(timeField)
		if err != nil {
			return nil, parse.AtLine(n, err)
		}
		if command == "" {
			return nil, parse.Errorf(n, "no command after the time %q", timeField)
		}
		row := psRow{ID: id, PPID: ppid, CPU: cpu, Command: command}
		if split != nil {
			split(&row)
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rows, nil
}

// nextField splits off the first field of a line whose fields are
// separated by runs of spaces.
func nextField(s string) (field, rest string) {
	field, rest, _ = strings.Cut(strings.TrimLeft(s, " "), " ")
	return field, rest
}

// parsePsTime reads a ps CPU time: [DD-][HH:]MM:SS as POSIX ps prints it
// (illumos, Solaris, procps), or FreeBSD's M:SS.hh, whose minutes are not
// bounded.
func parsePsTime(s string) (time.Duration, error) {
	bad := func() (time.Duration, error) { return 0, fmt.Errorf("cannot parse CPU time %q", s) }
	var secs uint64
	days, rest, hasDays := strings.Cut(s, "-")
	if hasDays {
		d, err := strconv.ParseUint(days, 10, 16)
		if err != nil || !allDigits(days) {
			return bad()
		}
		secs, s = d*86400, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) < 2 || len(parts) > 3 || (hasDays && len(parts) != 3) {
		return bad()
	}
	var units, frac uint64 // whole seconds; nanoseconds
	for i, p := range parts {
		whole, fraction, dot := strings.Cut(p, ".")
		if !allDigits(whole) || (dot && (i < len(parts)-1 || !allDigits(fraction) || len(fraction) > 9)) {
			return bad()
		}
		v, err := strconv.ParseUint(whole, 10, 32)
		if err != nil || (i > 0 && v >= 60) {
			return bad()
		}
		units = units*60 + v
		if dot {
			frac, _ = strconv.ParseUint(fraction+strings.Repeat("0", 9-len(fraction)), 10, 64)
		}
	}
	secs += units
	if secs > maxPsSeconds {
		return bad()
	}
	return time.Duration(secs)*time.Second + time.Duration(frac), nil
}

// maxPsSeconds bounds a CPU time to what a Duration holds (270 years).
const maxPsSeconds = 1 << 33

// freebsdEngineThreads picks the threads of the zfskern kernel process
// and of any zpool-POOL one. Every thread there is ZFS.
func freebsdEngineThreads(rows []psRow) []engineThread {
	var threads []engineThread
	for _, r := range rows {
		if r.PPID != 0 || (r.Command != "zfskern" && !zpoolProcess(r.Command)) {
			continue
		}
		name := r.Thread
		if name == "" {
			name = r.Command // a kernel process with a single thread
		}
		if family := threadFamily(name); family != "" {
			threads = append(threads, engineThread{ID: strconv.Itoa(r.ID), Family: family, System: r.CPU})
		}
	}
	return threads
}

// sunosEngineThreads picks the zpool-POOL processes, each a family of its
// own: ps cannot show their threads, and the pool is what their time can
// be told apart by.
func sunosEngineThreads(rows []psRow) []engineThread {
	var threads []engineThread
	for _, r := range rows {
		if r.PPID == 0 && zpoolProcess(r.Command) {
			threads = append(threads, engineThread{ID: strconv.Itoa(r.ID), Family: r.Command, System: r.CPU})
		}
	}
	return threads
}

// zpoolProcess tells the name of a pool's system process, zpool-POOL.
func zpoolProcess(command string) bool {
	pool, ok := strings.CutPrefix(command, "zpool-")
	return ok && pool != "" && !strings.ContainsAny(pool, " /")
}
