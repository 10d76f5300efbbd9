//go:build linux

package runner

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// hangFS is a FUSE file system, served by the test itself through
// /dev/fuse, that never answers a lookup of one name. A process that
// stats it waits in the kernel; killed once the request has reached the
// file system, it stays in uninterruptible sleep (state D) until the
// connection is aborted, as zpool does in an ioctl on a suspended pool.
type hangFS struct {
	dir  string   // mount point
	name string   // the file that hangs, unique on the host
	dev  *os.File // the connection; closing the last descriptor aborts it
	held chan int // pid of each process whose lookup is held

	mu       sync.Mutex
	released bool
}

// FUSE protocol constants (linux/fuse.h).
const (
	fuseLookup      = 1
	fuseForget      = 2
	fuseInit        = 26
	fuseInterrupt   = 36
	fuseBatchForget = 42
	fuseInHeader    = 40 // len, opcode, unique, nodeid, uid, gid, pid, padding
	fuseOutHeader   = 16 // len, error, unique
	fuseInitOut     = 64
)

// mountHangFS mounts a hangFS on dir, an empty directory that lives as long
// as the test. It needs root and /dev/fuse: without them the test skips, or
// fails when CI=true. The test's cleanup aborts the connection, so nothing
// stays stuck.
func mountHangFS(t *testing.T, dir string) *hangFS {
	t.Helper()
	if os.Geteuid() != 0 {
		e2e.SkipOrFail(t, "mounting a FUSE file system needs root")
	}
	fd, err := syscall.Open("/dev/fuse", syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		e2e.SkipOrFail(t, "no FUSE: opening /dev/fuse: %v", err)
	}
	opts := "fd=" + strconv.Itoa(fd) + ",rootmode=40000,user_id=0,group_id=0"
	if err := syscall.Mount("hangfs", dir, "fuse", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		syscall.Close(fd)
		e2e.SkipOrFail(t, "no FUSE: mounting: %v", err)
	}
	// Only a mounted connection can be polled. Non-blocking, the file
	// joins Go's poller, so that closing it stops the reader.
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	fs := &hangFS{
		dir:  dir,
		name: fmt.Sprintf("hang-%d-%d", os.Getpid(), hangFSCount.Add(1)),
		dev:  os.NewFile(uintptr(fd), "/dev/fuse"),
		held: make(chan int, 64),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		fs.serve()
	}()
	t.Cleanup(func() {
		fs.release(t)
		<-served
	})
	return fs
}

var hangFSCount atomic.Int64

// Path is the file whose lookup never ends.
func (fs *hangFS) Path() string { return filepath.Join(fs.dir, fs.name) }

// processes lists the live processes whose command line names the file
// that hangs: those waiting for it and those that started them.
func (fs *hangFS) processes() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || !alive(pid) {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte(fs.name)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// release aborts the connection: every held process gets an error and can
// exit. The mount goes with it.
func (fs *hangFS) release(t *testing.T) {
	t.Helper()
	fs.mu.Lock()
	done := fs.released
	fs.released = true
	fs.mu.Unlock()
	if done {
		return
	}
	if err := fs.dev.Close(); err != nil {
		t.Errorf("closing the FUSE connection: %v", err)
	}
	if err := syscall.Unmount(fs.dir, syscall.MNT_DETACH); err != nil {
		t.Errorf("unmounting %s: %v", fs.dir, err)
	}
	// The held processes wake up with ENOTCONN; do not let them outlive
	// the test.
	deadline := time.Now().Add(10 * time.Second)
	for len(fs.processes()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if procs := fs.processes(); len(procs) > 0 {
		t.Errorf("processes %v still there after the FUSE connection was aborted", procs)
	}
}

// serve answers requests until the connection is aborted: INIT, an error
// for everything else, and nothing at all for a lookup of its name.
func (fs *hangFS) serve() {
	buf := make([]byte, 1<<20+4096) // as libfuse: room for the largest write
	for {
		n, err := fs.dev.Read(buf)
		switch {
		case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.EINTR):
			continue // a request interrupted before it was read
		case err != nil:
			return // aborted or closed
		case n < fuseInHeader:
			continue
		}
		req := buf[:n]
		opcode := binary.NativeEndian.Uint32(req[4:])
		unique := binary.NativeEndian.Uint64(req[8:])
		pid := int(binary.NativeEndian.Uint32(req[32:]))
		switch opcode {
		case fuseInit:
			out := make([]byte, fuseInitOut)
			binary.NativeEndian.PutUint32(out[0:], 7)                                    // major
			binary.NativeEndian.PutUint32(out[4:], 31)                                   // minor
			binary.NativeEndian.PutUint32(out[8:], binary.NativeEndian.Uint32(req[48:])) // max_readahead
			binary.NativeEndian.PutUint16(out[16:], 16)                                  // max_background
			binary.NativeEndian.PutUint16(out[18:], 12)                                  // congestion_threshold
			binary.NativeEndian.PutUint32(out[20:], 4096)                                // max_write
			binary.NativeEndian.PutUint32(out[24:], 1)                                   // time_gran
			fs.reply(unique, 0, out)
		case fuseLookup:
			name, _, _ := bytes.Cut(req[fuseInHeader:], []byte{0})
			if string(name) == fs.name {
				fs.held <- pid
				continue // never answered
			}
			fs.reply(unique, syscall.ENOENT, nil)
		case fuseForget, fuseBatchForget, fuseInterrupt:
			// no answer expected; an interrupted lookup stays held
		default:
			fs.reply(unique, syscall.ENOSYS, nil)
		}
	}
}

func (fs *hangFS) reply(unique uint64, errno syscall.Errno, body []byte) {
	out := make([]byte, fuseOutHeader+len(body))
	binary.NativeEndian.PutUint32(out[0:], uint32(len(out)))
	binary.NativeEndian.PutUint32(out[4:], uint32(-int32(errno)))
	binary.NativeEndian.PutUint64(out[8:], unique)
	copy(out[fuseOutHeader:], body)
	_, _ = fs.dev.Write(out) // fails only once the connection is gone
}

// waitForState waits until pid is in state (a letter of /proc/PID/stat)
// and fails the test if it is not within a generous bound.
func waitForState(t *testing.T, pid int, state string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, _, ok := procStat(pid)
		if ok && got == state {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d is in state %q, want %q", pid, got, state)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The file system itself: a process that stats the file waits in the
// kernel, stays there in state D once killed, and goes when the file
// system is released.
func TestHangFSHoldsKilledProcessInStateD(t *testing.T) {
	fs := mountHangFS(t, t.TempDir())
	cmd := exec.Command("stat", fs.Path())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	if pid := <-fs.held; pid != cmd.Process.Pid {
		t.Fatalf("lookup held for pid %d, want stat's %d", pid, cmd.Process.Pid)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitForState(t, cmd.Process.Pid, "D")
	fs.release(t)
	select {
	case err := <-waited:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Errorf("stat ended with %v, want killed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("stat still there 10s after the file system was released")
	}
}
