//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// The shapes --zpool.command has in the field, each with the process that
// makes the kernel call stuck in it, as zpool is on a suspended pool:
// however many scrapes come, a command line keeps at most one stuck
// process, and its stats say it is hung exactly while it is there.
func TestRunStuckInKernelBehindWrapper(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) (fs *hangFS, command string, env []string)
	}{
		{"wrapper that forks", func(t *testing.T) (*hangFS, string, []string) {
			fs := mountHangFS(t, t.TempDir())
			standIn(t, "zpool", "stat '"+fs.Path()+"'")
			return fs, "zpool", nil
		}},
		{"wrapper that execs", func(t *testing.T) (*hangFS, string, []string) {
			fs := mountHangFS(t, t.TempDir())
			standIn(t, "zpool", "exec stat '"+fs.Path()+"'")
			return fs, "zpool", nil
		}},
		{"sudo: forks, waits and passes signals on", func(t *testing.T) (*hangFS, string, []string) {
			fs := mountHangFS(t, t.TempDir())
			standIn(t, "zpool", "trap 'kill -TERM $child' HUP INT TERM\nstat '"+fs.Path()+"' & child=$!\nwait $child")
			return fs, "zpool", nil
		}},
		// Debian's sudoers sets use_pty: sudo runs the command in a session
		// of its own, under a monitor process, outside the group we kill.
		{"sudo with use_pty: the command in a session of its own", func(t *testing.T) (*hangFS, string, []string) {
			fs := mountHangFS(t, t.TempDir())
			standIn(t, "zpool", "setsid sh -c 'stat \"$1\"; exit $?' monitor '"+fs.Path()+"'")
			return fs, "zpool", nil
		}},
		{"deploy/docker/zpool-host", dockerZpoolHost},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs, command, env := tc.setup(t)
			e := NewExec(ExecOptions{KillGrace: 100 * time.Millisecond, Env: env})
			line := CommandLine(command, "status")
			const scrapes = 8
			for i := range scrapes {
				err := runUntilHeld(t, e, fs, command, "status")
				switch {
				case i == 0 && !errors.Is(err, context.Canceled):
					t.Fatalf("first scrape: %v, want it canceled", err)
				case i > 0 && !errors.Is(err, ErrStillRunning):
					t.Errorf("scrape %d: %v, want ErrStillRunning", i+1, err)
				}
				// A scrape interval: longer than the kill grace.
				time.Sleep(300 * time.Millisecond)
			}
			procs := fs.processes()
			if len(procs) != 1 {
				t.Fatalf("%d scrapes left %d processes %v, want the 1 stuck in the kernel", scrapes, len(procs), procs)
			}
			waitForState(t, procs[0], "D") // killed, and stuck until the file system answers
			stuck := fmt.Sprintf("pid %d (stat, state D)", procs[0])
			if st := e.Stats()[line]; !st.StillRunning || !strings.HasPrefix(st.Left, stuck) || st.Runs != 1 || st.Refused != scrapes-1 {
				t.Errorf("stats = %+v, want still running with %s left, 1 run, %d refused", st, stuck, scrapes-1)
			}
			_, err := e.Run(timeout(t, 10*time.Second), Cmd(command, "status"))
			if err == nil || !strings.Contains(err.Error(), stuck) {
				t.Errorf("refusal: %v, want it to name %s", err, stuck)
			}
			t.Log(err)

			fs.release(t)
			waitUntilFree(t, e, line)
			if alive(procs[0]) {
				t.Errorf("the command line is free while pid %d is still there", procs[0])
			}
			_, err = e.Run(timeout(t, 10*time.Second), Cmd(command, "status"))
			var ce *Error
			if !errors.As(err, &ce) || ce.ExitCode != 1 {
				t.Errorf("run once the stuck process is gone: %v, want a new run, failing as stat does without the file system", err)
			}
		})
	}
}

// dockerZpoolHost sets up the shipped deploy/docker/zpool-host wrapper: the
// host's root it chroots into holds a zpool that stats the stuck file.
func dockerZpoolHost(t *testing.T) (*hangFS, string, []string) {
	wrapper, err := filepath.Abs("../../deploy/docker/zpool-host")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(wrapper); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "chroot", "ldd"} {
		if _, err := exec.LookPath(tool); err != nil {
			e2e.SkipOrFail(t, "no %s for the Docker image's wrapper: %v", tool, err)
		}
	}
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "fuse"), 0o755); err != nil {
		t.Fatal(err)
	}
	fs := mountHangFS(t, filepath.Join(root, "fuse"))
	for _, dir := range []string{"dev", "usr/sbin"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "dev/zfs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	copyWithLibraries(t, root, "/bin/sh")
	copyWithLibraries(t, root, "/usr/bin/stat")
	zpool := "#!/bin/sh\nexec /usr/bin/stat /fuse/" + fs.name + "\n"
	if err := os.WriteFile(filepath.Join(root, "usr/sbin/zpool"), []byte(zpool), 0o755); err != nil {
		t.Fatal(err)
	}
	return fs, wrapper, []string{"ZPOOL_HOST_ROOT=" + root}
}

// copyWithLibraries copies the program at path, and the shared libraries
// ldd lists for it, to the same paths under root.
func copyWithLibraries(t *testing.T, root, path string) {
	t.Helper()
	out, err := exec.Command("ldd", path).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", path, err)
	}
	files := []string{path}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasPrefix(f, "/") {
			files = append(files, f)
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// runUntilHeld runs the command as a scrape would and cancels the run once
// the file system holds a new lookup, so that the kill comes while the
// process waits in the kernel. A refused run returns at once.
func runUntilHeld(t *testing.T, e *Exec, fs *hangFS, name string, args ...string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, Cmd(name, args...))
		res <- err
	}()
	select {
	case <-fs.held:
		cancel()
		return <-res
	case err := <-res:
		return err
	}
}

// A zpool that exits while a child of its group, stuck in the kernel,
// still holds its stdout: the output is whole once zpool has exited, so
// the run returns it without waiting for the child, whatever the kill
// grace; the child is killed, not left behind, and is the one process of
// the command line until it goes.
func TestRunExitsWhileChildStuckInKernel(t *testing.T) {
	fs := mountHangFS(t, t.TempDir())
	dir := standIn(t, "zpool", "stat '"+fs.Path()+"' &\nwhile [ ! -e \"$D/go\" ]; do sleep 0.01; done\necho ok")
	go func() {
		<-fs.held
		_ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	}()
	e := NewExec(ExecOptions{KillGrace: time.Minute})
	out, err := runWithin(t, 20*time.Second, func() ([]byte, error) {
		return e.Run(timeout(t, 2*time.Minute), Cmd("zpool", "status"))
	})
	if err != nil || string(out) != "ok\n" {
		t.Fatalf("Run = %q, %v; want zpool's output", out, err)
	}
	procs := fs.processes()
	if len(procs) != 1 {
		t.Fatalf("processes %v, want the stuck child alone", procs)
	}
	waitForState(t, procs[0], "D")
	if st := e.Stats()["zpool status"]; !st.StillRunning {
		t.Errorf("stats = %+v, want still running while the child is there", st)
	}
	if _, err := e.Run(timeout(t, 10*time.Second), Cmd("zpool", "status")); !errors.Is(err, ErrStillRunning) {
		t.Errorf("second run: %v, want ErrStillRunning", err)
	}
	fs.release(t)
	waitUntilFree(t, e, "zpool status")
}

// A stream stopped while a process of it is stuck in the kernel: Close
// returns, and the command line has no other process until it goes.
func TestStreamCloseWhileStuckInKernel(t *testing.T) {
	fs := mountHangFS(t, t.TempDir())
	standIn(t, "zpool", "echo report\nstat '"+fs.Path()+"'")
	e := NewExec(ExecOptions{KillGrace: 100 * time.Millisecond})
	rc, err := e.StartStream(timeout(t, time.Minute), Cmd("zpool", "iostat", "10"))
	if err != nil {
		t.Fatal(err)
	}
	held := <-fs.held
	if _, err := runWithin(t, 20*time.Second, func() ([]byte, error) { return nil, rc.Close() }); err == nil || !strings.Contains(err.Error(), "state D) of its process group is still there") {
		t.Errorf("Close = %v, want an error naming the process stuck in state D", err)
	}
	waitForState(t, held, "D")
	time.Sleep(300 * time.Millisecond) // longer than the kill grace
	if _, err := e.StartStream(timeout(t, 10*time.Second), Cmd("zpool", "iostat", "10")); !errors.Is(err, ErrStillRunning) {
		t.Errorf("stream while the stuck process is there: %v, want ErrStillRunning", err)
	}
	if st := e.Stats()["zpool iostat 10"]; !st.StillRunning {
		t.Errorf("stats = %+v, want still running", st)
	}
	fs.release(t)
	waitUntilFree(t, e, "zpool iostat 10")
}

// A stream whose command exits while a child of its group, stuck in the
// kernel, holds its stdout: the reader gets the output and its end, instead
// of waiting as long as the child is stuck.
func TestStreamEndsWhileChildStuckInKernel(t *testing.T) {
	fs := mountHangFS(t, t.TempDir())
	dir := standIn(t, "zpool", "stat '"+fs.Path()+"' &\nwhile [ ! -e \"$D/go\" ]; do sleep 0.01; done\necho report")
	go func() {
		<-fs.held
		_ = os.WriteFile(filepath.Join(dir, "go"), nil, 0o644)
	}()
	e := NewExec(ExecOptions{KillGrace: time.Minute})
	rc, err := e.StartStream(timeout(t, 2*time.Minute), Cmd("zpool", "iostat", "10"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := runWithin(t, 20*time.Second, func() ([]byte, error) { return io.ReadAll(rc) })
	if err != nil || string(out) != "report\n" {
		t.Errorf("stream = %q, %v; want the report and the end", out, err)
	}
	if _, err := runWithin(t, 20*time.Second, func() ([]byte, error) { return nil, rc.Close() }); err != nil {
		t.Fatal(err)
	}
	if st := e.Stats()["zpool iostat 10"]; !st.StillRunning {
		t.Errorf("stats = %+v, want still running while the child is there", st)
	}
	fs.release(t)
	waitUntilFree(t, e, "zpool iostat 10")
}
