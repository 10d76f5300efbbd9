//go:build unix

package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRunReturnsStdout(t *testing.T) {
	e := NewExec(ExecOptions{})
	// The stand-in is put on PATH after the Exec was made: PATH is searched
	// at run time.
	standIn(t, "zpool", `printf '  pool: tank\n state: ONLINE\n'; echo 'not stdout' >&2`)
	out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "status"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "  pool: tank\n state: ONLINE\n"; got != want {
		t.Errorf("stdout = %q, want %q", got, want)
	}
	st := e.Stats()["zpool status"]
	if st.Runs != 1 || st.Failures != 0 || st.StillRunning {
		t.Errorf("stats = %+v, want one run without failure", st)
	}
}

func TestRunExitStatusAndStderrInError(t *testing.T) {
	standIn(t, "zpool", `echo "invalid option 'p'" >&2; echo 'usage:' >&2; echo '	status [-p]' >&2; echo partial; exit 2`)
	e := NewExec(ExecOptions{})
	out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "status", "-p"))
	want := "zpool status -p: exit status 2: invalid option 'p' (+2 more lines on stderr)"
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %q", err, want)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.ExitCode != 2 || !strings.Contains(ce.Stderr, "usage:") {
		t.Errorf("error = %#v, want exit code 2 and the whole stderr", err)
	}
	if string(out) != "partial\n" {
		t.Errorf("stdout of the failed command = %q, want it returned with the error", out)
	}
	if st := e.Stats()["zpool status -p"]; st.Failures != 1 || st.Timeouts != 0 {
		t.Errorf("stats = %+v, want one failure, no timeout", st)
	}
}

// A command that is not installed is told from one that ran and failed,
// with exec's message, which names what was looked for.
func TestRunCommandNotFound(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	unrunnable := filepath.Join(t.TempDir(), "zpool")
	if err := os.WriteFile(unrunnable, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := NewExec(ExecOptions{})
	for _, c := range []struct {
		name     string
		stream   bool
		notFound bool
		says     string
	}{
		{"zpool", false, true, `exec: "zpool": executable file not found in $PATH`},
		{"/nonexistent/zpool", false, true, "/nonexistent/zpool: no such file or directory"},
		{"/nonexistent/zpool", true, true, "/nonexistent/zpool: no such file or directory"},
		{unrunnable, false, false, "permission denied"},
	} {
		var err error
		if c.stream {
			_, err = e.StartStream(timeout(t, 5*time.Second), Cmd(c.name, "iostat", "-v", "1"))
		} else {
			_, err = e.Run(timeout(t, 5*time.Second), Cmd(c.name, "status"))
		}
		if err == nil || errors.Is(err, ErrNotFound) != c.notFound || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s (stream %v): %v; want an error saying %q, ErrNotFound %v", c.name, c.stream, err, c.says, c.notFound)
		}
	}
}

func TestRunBoundsStderr(t *testing.T) {
	standIn(t, "zpool", `head -c 100000 /dev/zero | tr '\0' x >&2; exit 1`)
	e := NewExec(ExecOptions{MaxStderr: 100})
	_, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "list"))
	var ce *Error
	if !errors.As(err, &ce) || len(ce.Stderr) != 100 {
		t.Fatalf("error = %v, want stderr cut to 100 bytes", err)
	}
}

func TestRunChildEnvironment(t *testing.T) {
	standIn(t, "zpool", `env`)
	t.Setenv("LANG", "de_DE.UTF-8")
	t.Setenv("LC_NUMERIC", "de_DE.UTF-8")
	t.Setenv("LC_ALL", "de_DE.UTF-8")
	t.Setenv("TZ", "Europe/Berlin")
	t.Setenv("ZPOOL_VDEV_NAME_PATH", "1")
	t.Setenv("SECRET_TOKEN", "x")
	e := NewExec(ExecOptions{Env: []string{"LC_ALL=de_DE", "LANG=fr_FR", "ZFS_MODULE_TIMEOUT=5"}})
	out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string][]string{}
	for _, kv := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = append(env[k], v)
	}
	for k, want := range map[string]string{"LC_ALL": "C", "TZ": "Europe/Berlin", "ZPOOL_VDEV_NAME_PATH": "1", "ZFS_MODULE_TIMEOUT": "5", "PATH": os.Getenv("PATH")} {
		if got := env[k]; len(got) != 1 || got[0] != want {
			t.Errorf("child's %s = %q, want exactly %q", k, got, want)
		}
	}
	for _, k := range []string{"LANG", "LC_NUMERIC", "SECRET_TOKEN"} {
		if got, ok := env[k]; ok {
			t.Errorf("child has %s=%q, want it not passed", k, got)
		}
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	// The stand-in leaves a grandchild in the background, as a shell
	// pipeline or a helper would, then hangs. The deadline leaves it time
	// to start even on a loaded machine.
	dir := standIn(t, "zpool", `sleep 1000 & echo $! > "$D/grandchild"; sleep 1000`)
	e := NewExec(ExecOptions{})
	const deadline = time.Second
	start := time.Now()
	_, err := e.Run(timeout(t, deadline), Cmd("zpool", "status"))
	took := time.Since(start)

	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want ErrTimeout", err)
	}
	var pgid int
	if _, scanErr := fmt.Sscanf(err.Error(), "zpool status: timed out after 1s; killed process group %d", &pgid); scanErr != nil || strings.Contains(err.Error(), "not exited") {
		t.Fatalf("error = %q, want it to name the command, the timeout and the kill, and the process reaped", err)
	}
	if took > deadline+DefaultKillGrace/2 {
		t.Errorf("Run returned after %s, want soon after the %s deadline", took, deadline)
	}
	grandchild := readPid(t, filepath.Join(dir, "grandchild"))
	assertGroupGone(t, pgid)
	if alive(grandchild) {
		t.Errorf("grandchild %d survived the kill", grandchild)
	}
	if st := e.Stats()["zpool status"]; st.Timeouts != 1 || st.Failures != 1 || st.StillRunning {
		t.Errorf("stats = %+v, want one timeout, reaped", st)
	}
}

func TestRunCancelKillsProcess(t *testing.T) {
	dir := standIn(t, "zpool", `echo $$ > "$D/pid"; sleep 1000`)
	e := NewExec(ExecOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		readPid(t, filepath.Join(dir, "pid"))
		cancel()
	}()
	_, err := e.Run(ctx, Cmd("zpool", "status"))
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Fatalf("error = %v, want context.Canceled and no timeout", err)
	}
	assertGroupGone(t, readPid(t, filepath.Join(dir, "pid")))
}

func TestRunSharesConcurrentIdenticalRuns(t *testing.T) {
	dir := standIn(t, "zpool", `echo start >> "$D/starts"; sleep 0.3; echo "report $$"`)
	e := NewExec(ExecOptions{})
	const callers = 20
	var (
		wg      sync.WaitGroup
		ready   = make(chan struct{})
		outputs = make([]string, callers)
		errs    = make([]error, callers)
	)
	for i := range callers {
		wg.Go(func() {
			<-ready
			out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "-v"))
			outputs[i], errs[i] = string(out), err
		})
	}
	close(ready)
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || outputs[i] != outputs[0] || !strings.HasPrefix(outputs[i], "report ") {
			t.Errorf("caller %d: %q, %v; want the shared report %q", i, outputs[i], errs[i], outputs[0])
		}
	}
	if n := countLines(t, filepath.Join(dir, "starts")); n != 1 {
		t.Errorf("%d concurrent runs started %d processes, want 1", callers, n)
	}
	// Results are shared, not cached: the next run starts a process.
	if _, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "-v")); err != nil {
		t.Fatal(err)
	}
	if n := countLines(t, filepath.Join(dir, "starts")); n != 2 {
		t.Errorf("a later run started %d processes in all, want 2", n)
	}
	if st := e.Stats()["zpool iostat -v"]; st.Runs != 2 {
		t.Errorf("stats = %+v, want 2 runs", st)
	}
}

func TestRunDifferentArgsAreNotShared(t *testing.T) {
	dir := standIn(t, "zpool", `echo "$*" >> "$D/starts"; sleep 0.2; echo "$*"`)
	e := NewExec(ExecOptions{})
	var wg sync.WaitGroup
	for _, arg := range []string{"-p", "-v"} {
		wg.Go(func() {
			out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "status", arg))
			if err != nil || string(out) != "status "+arg+"\n" {
				t.Errorf("zpool status %s = %q, %v", arg, out, err)
			}
		})
	}
	wg.Wait()
	if n := countLines(t, filepath.Join(dir, "starts")); n != 2 {
		t.Errorf("started %d processes, want 2", n)
	}
}

func TestRunCallerLeavingSharedRunEarly(t *testing.T) {
	dir := standIn(t, "zpool", `echo start >> "$D/starts"; sleep 0.4; echo done`)
	e := NewExec(ExecOptions{})
	first := make(chan error, 1)
	go func() {
		out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "status"))
		if err == nil && string(out) != "done\n" {
			err = errors.New("unexpected output " + string(out))
		}
		first <- err
	}()
	waitForSlot(t, e, "zpool status") // the first caller started the process
	_, err := e.Run(timeout(t, 100*time.Millisecond), Cmd("zpool", "status"))
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "waiting for the run another caller started") {
		t.Errorf("second caller: %v, want a timeout while waiting", err)
	}
	if err := <-first; err != nil {
		t.Errorf("first caller: %v, want the output: a caller leaving must not kill a shared run", err)
	}
	if n := countLines(t, filepath.Join(dir, "starts")); n != 1 {
		t.Errorf("started %d processes, want 1", n)
	}
}

func TestRunOutputLimit(t *testing.T) {
	standIn(t, "zpool", `head -c 20971520 /dev/zero`)
	e := NewExec(ExecOptions{})
	out, err := e.Run(timeout(t, 10*time.Second), Cmd("zpool", "get", "all"))
	if !errors.Is(err, ErrOutputTooLarge) || !strings.HasPrefix(err.Error(), "zpool get all: output too large") {
		t.Fatalf("error = %v, want ErrOutputTooLarge naming the command", err)
	}
	if out != nil {
		t.Errorf("got %d bytes of cut output, want none", len(out))
	}
}

func TestRunOutputLimitBoundary(t *testing.T) {
	standIn(t, "zpool", `printf '%s' "$1"`)
	e := NewExec(ExecOptions{MaxOutput: 10})
	if out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "0123456789")); err != nil || string(out) != "0123456789" {
		t.Errorf("10 bytes at a 10-byte limit: %q, %v", out, err)
	}
	if _, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "0123456789X")); !errors.Is(err, ErrOutputTooLarge) {
		t.Errorf("11 bytes at a 10-byte limit: %v, want ErrOutputTooLarge", err)
	}
}

// A caller may raise the limit for its runs, never lower it.
func TestRunOutputLimitOfCaller(t *testing.T) {
	standIn(t, "zpool", `printf '%s' "$1"`)
	e := NewExec(ExecOptions{MaxOutput: 10})
	if out, err := e.Run(timeout(t, 5*time.Second), Command{Path: "zpool", Args: []string{"0123456789X"}, MaxOutput: 11}); err != nil || string(out) != "0123456789X" {
		t.Errorf("11 bytes at a limit raised to 11: %q, %v", out, err)
	}
	_, err := e.Run(timeout(t, 5*time.Second), Command{Path: "zpool", Args: []string{"0123456789XYZ"}, MaxOutput: 12})
	if !errors.Is(err, ErrOutputTooLarge) || !strings.Contains(err.Error(), "more than 12 bytes") {
		t.Errorf("13 bytes at a limit raised to 12: %v, want ErrOutputTooLarge at 12 bytes", err)
	}
	if _, err := e.Run(timeout(t, 5*time.Second), Command{Path: "zpool", Args: []string{"0123456789X"}, MaxOutput: 5}); !errors.Is(err, ErrOutputTooLarge) {
		t.Errorf("11 bytes with a limit of 5 asked, under the Exec's 10: %v, want ErrOutputTooLarge", err)
	}
}

func TestRunMissingCommand(t *testing.T) {
	e := NewExec(ExecOptions{})
	_, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool-not-installed", "status"))
	var ce *Error
	if !errors.Is(err, exec.ErrNotFound) || !errors.As(err, &ce) || ce.Command != "zpool-not-installed status" {
		t.Fatalf("error = %v, want exec.ErrNotFound naming the command", err)
	}
	if st := e.Stats()["zpool-not-installed status"]; st.Runs != 1 || st.Failures != 1 {
		t.Errorf("stats = %+v, want one failed run", st)
	}
}

func TestRunTimeoutOption(t *testing.T) {
	standIn(t, "zpool", `sleep 1000`)
	e := NewExec(ExecOptions{Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := e.Run(context.Background(), Cmd("zpool", "status"))
	if !errors.Is(err, ErrTimeout) || time.Since(start) > time.Second {
		t.Fatalf("error = %v after %s, want ErrTimeout after about 100ms", err, time.Since(start))
	}
}

// A process stuck in the kernel cannot be reaped even after SIGKILL; a test
// makes one only with root and FUSE (hung_linux_test.go). What matters to
// the runner is that Wait does not return, so this test delays Wait: the
// stand-in really is killed, but the runner cannot see it go until the test
// lets it.
func TestRunRefusesWhileKilledProcessIsNotReaped(t *testing.T) {
	dir := standIn(t, "zpool", `echo start >> "$D/starts"; if [ -e "$D/hang" ]; then sleep 1000; fi; echo ok`)
	if err := os.WriteFile(filepath.Join(dir, "hang"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// The default kill grace: a caller past its deadline still waits only
	// reapWait for the exit.
	e := NewExec(ExecOptions{})
	reap := make(chan struct{})
	e.wait = func(cmd *exec.Cmd) error {
		<-reap
		return cmd.Wait()
	}
	t.Cleanup(func() {
		select {
		case <-reap:
		default:
			close(reap)
		}
	})

	start := time.Now()
	_, err := e.Run(timeout(t, 200*time.Millisecond), Cmd("zpool", "status"))
	var pid int
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "; still there 100ms later: pid ") {
		t.Fatalf("error = %v, want a timeout saying the process has not exited", err)
	}
	if _, err := fmt.Sscanf(err.Error(), "zpool status: timed out after 200ms; killed process group %d;", &pid); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 800*time.Millisecond {
		t.Errorf("Run took %s, want the deadline plus reapWait, about 300ms", took)
	}
	if st := e.Stats()["zpool status"]; !st.StillRunning || st.Timeouts != 1 || !strings.HasPrefix(st.Left, fmt.Sprintf("pid %d", pid)) {
		t.Errorf("stats = %+v, want still running after one timeout, pid %d left", st, pid)
	}

	start = time.Now()
	_, err = e.Run(timeout(t, 5*time.Second), Cmd("zpool", "status"))
	if !errors.Is(err, ErrStillRunning) || !strings.Contains(err.Error(), ": killed ") || !strings.Contains(err.Error(), fmt.Sprintf(" ago, still there: pid %d", pid)) || !strings.HasSuffix(err.Error(), "; not starting another") {
		t.Errorf("second run: %v, want ErrStillRunning naming the killed process", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond {
		t.Errorf("refusal took %s, want it at once", took)
	}
	if _, err := e.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "status")); !errors.Is(err, ErrStillRunning) {
		t.Errorf("stream of the same command line: %v, want ErrStillRunning", err)
	}
	// Under load the first stand-in may be killed before it writes.
	if n := countLines(t, filepath.Join(dir, "starts")); n > 1 {
		t.Errorf("%d processes started, want 1 while the killed one is there", n)
	}
	if st := e.Stats()["zpool status"]; st.Refused != 2 || st.Runs != 1 {
		t.Errorf("stats = %+v, want 2 refusals, 1 run", st)
	}

	// The process exits at last: the command line is free again.
	close(reap)
	deadline := time.Now().Add(2 * time.Second)
	for e.Stats()["zpool status"].StillRunning {
		if time.Now().After(deadline) {
			t.Fatal("still running after the process was reaped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.Remove(filepath.Join(dir, "hang")); err != nil {
		t.Fatal(err)
	}
	out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "status"))
	if err != nil || string(out) != "ok\n" {
		t.Errorf("run after reaping: %q, %v", out, err)
	}
	if st := e.Stats()["zpool status"]; st.Runs != 2 {
		t.Errorf("stats = %+v, want 2 runs", st)
	}
}

// waitForSlot waits until a process of line has been started.
func waitForSlot(t *testing.T, e *Exec, line string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		e.mu.Lock()
		s := e.slots[line]
		started := s != nil && s.proc != nil
		e.mu.Unlock()
		if started {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process of %q started", line)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Command: "zpool status -p", ExitCode: 2, Stderr: "invalid option 'p'\n", Err: errors.New("exit status 2")},
			"zpool status -p: exit status 2: invalid option 'p'"},
		{&Error{Command: "zpool list", ExitCode: 1, Stderr: "\n  cannot open 'x': no such pool  \n\nusage:\n", Err: errors.New("exit status 1")},
			"zpool list: exit status 1: cannot open 'x': no such pool (+1 more lines on stderr)"},
		{&Error{Command: "zpool list", ExitCode: -1, Err: ErrTimeout}, "zpool list: timed out"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func BenchmarkRun(b *testing.B) {
	e := NewExec(ExecOptions{})
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.Run(ctx, Cmd("true")); err != nil {
			b.Fatal(err)
		}
	}
}

// A probe that exits non-zero is zpool answering no; one killed at its
// deadline did not answer, and counts as a failure and a timeout.
func TestProbeStats(t *testing.T) {
	standIn(t, "zpool", `case "$1" in status) echo "invalid option 'j'" >&2; exit 2;; *) sleep 1000;; esac`)
	e := NewExec(ExecOptions{})
	for _, tc := range []struct {
		probe                   bool
		args                    []string
		timeout                 time.Duration // long enough for a loaded machine, but for the one that sleeps
		wantFailures, wantTimed uint64
	}{
		{true, []string{"status", "-j"}, 10 * time.Second, 0, 0},
		{false, []string{"status", "-p"}, 10 * time.Second, 1, 0},
		{true, []string{"iostat", "-w"}, 200 * time.Millisecond, 1, 1},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
		_, err := e.Run(ctx, Command{Path: "zpool", Args: tc.args, Probe: tc.probe})
		cancel()
		line := CommandLine("zpool", tc.args...)
		if st := e.Stats()[line]; err == nil || st.Runs != 1 || st.Failures != tc.wantFailures || st.Timeouts != tc.wantTimed {
			t.Errorf("%s: %v, stats = %+v, want 1 run, %d failures, %d timeouts", line, err, st, tc.wantFailures, tc.wantTimed)
		}
	}
}

// Children read an empty stdin, /dev/null, which every run shares.
func TestRunStdinIsDevNull(t *testing.T) {
	standIn(t, "zpool", `cat; echo end`)
	e := NewExec(ExecOptions{})
	for i := range 3 {
		out, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "status", fmt.Sprint(i)))
		if err != nil || string(out) != "end\n" {
			t.Fatalf("run %d: %q, %v; want the end of an empty stdin", i, out, err)
		}
	}
	if null, err := devNull(); err != nil {
		t.Fatal(err)
	} else if _, err := null.Stat(); err != nil {
		t.Errorf("the shared /dev/null was closed: %v", err)
	}
}
