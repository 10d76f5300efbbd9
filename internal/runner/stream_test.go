//go:build unix

package runner

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestStreamReadsUntilExit(t *testing.T) {
	standIn(t, "zpool", `for i in 1 2 3; do echo "report $i"; sleep 0.05; done`)
	e := NewExec(ExecOptions{})
	rc, err := e.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "-v", "1"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "report 1\nreport 2\nreport 3\n"; got != want {
		t.Errorf("stream = %q, want %q", got, want)
	}
	if st := e.Stats()["zpool iostat -v 1"]; st.Runs != 1 || st.Failures != 0 {
		t.Errorf("stats = %+v, want one run without failure", st)
	}
}

func TestStreamEndsWithExitError(t *testing.T) {
	standIn(t, "zpool", `echo 'report 1'; echo 'cannot open pool' >&2; exit 3`)
	e := NewExec(ExecOptions{})
	rc, err := e.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "5"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out, err := io.ReadAll(rc)
	var ce *Error
	if !errors.As(err, &ce) || ce.ExitCode != 3 || err.Error() != "zpool iostat 5: exit status 3: cannot open pool" {
		t.Errorf("end of stream: %v, want the exit status and stderr", err)
	}
	if string(out) != "report 1\n" {
		t.Errorf("stream = %q, want the output before the failure", out)
	}
	if st := e.Stats()["zpool iostat 5"]; st.Failures != 1 {
		t.Errorf("stats = %+v, want one failure", st)
	}
}

func TestStreamStopsOnCancel(t *testing.T) {
	dir := standIn(t, "zpool", `echo $$ > "$D/pid"; sleep 1000 & while :; do echo tick; sleep 0.02; done`)
	e := NewExec(ExecOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := e.StartStream(ctx, Cmd("zpool", "iostat", "-v", "10"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	if line, err := br.ReadString('\n'); err != nil || line != "tick\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	cancel()
	_, err = io.Copy(io.Discard, br)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("end of a cancelled stream: %v, want context.Canceled", err)
	}
	assertGroupGone(t, readPid(t, filepath.Join(dir, "pid")))
	if st := e.Stats()["zpool iostat -v 10"]; st.Failures != 0 || st.StillRunning {
		t.Errorf("stats = %+v: stopping on purpose is no failure", st)
	}
}

func TestStreamCloseStopsCommand(t *testing.T) {
	dir := standIn(t, "zpool", `echo $$ > "$D/pid"; echo ready; sleep 1000`)
	e := NewExec(ExecOptions{})
	rc, err := e.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "10"))
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(rc).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	// Only one stream per command line, and no Run beside it.
	if _, err := e.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "10")); !errors.Is(err, ErrStillRunning) {
		t.Errorf("second stream: %v, want ErrStillRunning", err)
	}
	if _, err := e.Run(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "10")); !errors.Is(err, ErrStillRunning) {
		t.Errorf("run beside the stream: %v, want ErrStillRunning", err)
	}
	start := time.Now()
	if err := rc.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("Close took %s", took)
	}
	assertGroupGone(t, readPid(t, filepath.Join(dir, "pid")))
	if err := rc.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The command line is free again.
	rc, err = e.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "10"))
	if err != nil {
		t.Fatalf("stream after Close: %v", err)
	}
	rc.Close()
}

func TestSuperviseRestartsStream(t *testing.T) {
	dir := standIn(t, "zpool", `echo $$ >> "$D/starts"; echo report; exit 1`)
	e := NewExec(ExecOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		reports atomic.Int32
		exits   []error
	)
	b := Backoff{
		Initial: 10 * time.Millisecond,
		Max:     40 * time.Millisecond,
		OnExit:  func(err error, _ time.Duration) { exits = append(exits, err) },
	}
	err := Supervise(ctx, b, func(ctx context.Context) error {
		rc, err := e.StartStream(ctx, Cmd("zpool", "iostat", "-vHp", "10"))
		if err != nil {
			return err
		}
		defer rc.Close()
		sc := bufio.NewScanner(rc)
		for sc.Scan() {
			if sc.Text() == "report" && reports.Add(1) == 3 {
				cancel()
			}
		}
		return sc.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Supervise = %v, want context.Canceled", err)
	}
	if reports.Load() != 3 || len(exits) != 2 {
		t.Fatalf("%d reports, %d exits; want 3 reports from 3 starts", reports.Load(), len(exits))
	}
	for _, err := range exits {
		if err == nil || !strings.Contains(err.Error(), "exit status 1") {
			t.Errorf("stream ended with %v, want exit status 1", err)
		}
	}
	if n := countLines(t, filepath.Join(dir, "starts")); n != 3 {
		t.Errorf("%d processes started, want 3", n)
	}
}

// A stream whose killed process cannot be reaped (stuck in the kernel)
// must not hold up Close, which says so; the command line stays taken
// until the process exits. As in TestRunRefusesWhileKilledProcessIsNotReaped,
// the test delays Wait.
func TestStreamCloseReportsUnreapedProcess(t *testing.T) {
	standIn(t, "zpool", `echo ready; sleep 1000`)
	e := NewExec(ExecOptions{KillGrace: 100 * time.Millisecond})
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rc, err := e.StartStream(ctx, Cmd("zpool", "iostat", "-v", "10"))
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(rc).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("first line = %q, %v", line, err)
	}
	cancel()
	start := time.Now()
	err = rc.Close()
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "is still there 100ms later") {
		t.Errorf("Close = %v, want an error saying the killed process has not exited", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Close took %s, want about the 100ms grace", took)
	}
	if err2 := rc.Close(); err2 == nil || err2.Error() != err.Error() {
		t.Errorf("second Close = %v, want the same error", err2)
	}
	if st := e.Stats()["zpool iostat -v 10"]; !st.StillRunning || st.Failures != 0 {
		t.Errorf("stats = %+v, want still running, and no failure", st)
	}

	close(reap)
	deadline := time.Now().Add(2 * time.Second)
	for e.Stats()["zpool iostat -v 10"].StillRunning {
		if time.Now().After(deadline) {
			t.Fatal("still running after the process was reaped")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A stream closed once its process was reaped reports nothing.
	rc, err = e.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "-v", "10"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Close(); err != nil {
		t.Errorf("Close of a reaped stream = %v, want nil", err)
	}
}
