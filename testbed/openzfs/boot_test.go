package openzfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// errStuckAtBoot is runJob's error for a guest that did not start its job.
var errStuckAtBoot = errors.New("the guest did not start its job")

// runJob runs run-job.sh with args for job and returns its output. When
// the job has not begun (job/log, which the guest creates as it starts
// run.sh, is missing) bootWait after the start, it kills run-job.sh's
// process group, qemu included, and returns errStuckAtBoot.
func runJob(ctx context.Context, job string, bootWait time.Duration, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		return "", err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.NewTimer(bootWait)
	defer deadline.Stop()
	for {
		select {
		case err := <-done:
			return out.String(), err
		case <-deadline.C:
			if _, err := os.Stat(filepath.Join(job, "log")); err == nil {
				continue
			}
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
			return out.String(), errStuckAtBoot
		}
	}
}

// A guest whose job never begins is ended, all of its processes, at the
// boot wait; one whose job began runs to its end.
func TestRunJobEndsAGuestStuckAtBoot(t *testing.T) {
	job := t.TempDir()
	pidFile := filepath.Join(job, "child")
	stuck := `sleep 600 & echo $! >` + pidFile + `; wait`
	began := time.Now()
	_, err := runJob(context.Background(), job, 300*time.Millisecond, "bash", "-c", stuck)
	if !errors.Is(err, errStuckAtBoot) {
		t.Fatalf("a job that never began: %v, want errStuckAtBoot", err)
	}
	if d := time.Since(began); d > 30*time.Second {
		t.Errorf("ended after %s", d)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	for wait := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat("/proc/" + strings.TrimSpace(string(pid))); err != nil {
			break
		}
		if time.Since(wait) > 5*time.Second {
			t.Fatalf("the guest's process %s outlived the kill", strings.TrimSpace(string(pid)))
		}
	}

	began = time.Now()
	out, err := runJob(context.Background(), job, 300*time.Millisecond, "bash", "-c", `touch `+filepath.Join(job, "log")+`; sleep 1; echo finished`)
	if err != nil || !strings.Contains(out, "finished") {
		t.Errorf("a job that began: %v, output %q; want it run to its end", err, out)
	}
	if d := time.Since(began); d < time.Second {
		t.Errorf("a job that began ended after %s, before its end", d)
	}
}
