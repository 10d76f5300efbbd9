package runner

import (
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// defaultPath is used when the exporter itself runs without PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// process is one started child, leader of its own process group.
type process struct {
	cmd    *exec.Cmd
	pid    int
	exited chan struct{} // closed once the child is reaped
	err    error         // from Wait; read only after exited is closed
}

// startProcess starts name in a new process group with the C locale. The
// binary is looked up in PATH now, not when the Exec was made, so a test can
// put a stand-in zpool first on PATH. wait reaps the child; tests swap it to
// delay reaping.
func startProcess(name string, args []string, env []string, stdout, stderr io.Writer, grace time.Duration, wait func(*exec.Cmd) error) (*process, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// A grandchild that left the process group may hold stdout open after
	// the command exited; do not wait for it longer than the grace period.
	cmd.WaitDelay = grace
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, pid: cmd.Process.Pid, exited: make(chan struct{})}
	go func() {
		p.err = wait(cmd)
		close(p.exited)
	}()
	return p, nil
}

func (p *process) hasExited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// kill sends SIGKILL to the whole process group, so that children the
// command forked die with it. Once the child is reaped its pid may be
// reused, so a reaped process is left alone.
func (p *process) kill() {
	if !p.hasExited() {
		killProcessGroup(p.cmd.Process)
	}
}

// waitExit waits at most d for the child to be reaped and reports whether
// it was. A process stuck in the kernel (D state) cannot be reaped even
// after SIGKILL, and callers must not hang with it.
func (p *process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// childEnv is the child's environment: the C locale, so that numbers, dates
// and messages are the ones the parsers know, and little else from ours.
// PATH finds the tools, TZ keeps dates in the exporter's local time, and
// ZPOOL_VDEV_NAME_* keep vdev names as the administrator's zpool prints
// them. extra (KEY=VALUE) comes from the configuration; it cannot change the
// locale.
func childEnv(extra []string) []string {
	env := []string{"LC_ALL=C"}
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	env = append(env, "PATH="+path)
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ZPOOL_VDEV_NAME_") {
			env = append(env, kv)
		}
	}
	for _, kv := range extra {
		if !isLocaleVar(kv) {
			env = append(env, kv)
		}
	}
	return env
}

func isLocaleVar(kv string) bool {
	key, _, _ := strings.Cut(kv, "=")
	return key == "LANG" || key == "LANGUAGE" || strings.HasPrefix(key, "LC_")
}

// limitedBuffer keeps at most limit bytes. Past the limit it either signals
// full (stdout: the run fails) or silently drops the rest (stderr: the
// start explains the failure). It keeps accepting writes, so the child is
// never blocked on a full pipe while it is being killed.
type limitedBuffer struct {
	mu       sync.Mutex
	buf      []byte
	limit    int
	truncate bool          // drop the excess instead of signalling full
	full     chan struct{} // closed when more than limit bytes arrived
	fullOnce sync.Once
}

func newLimitedBuffer(limit int, truncate bool) *limitedBuffer {
	return &limitedBuffer{limit: limit, truncate: truncate, full: make(chan struct{})}
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit - len(b.buf)
	if len(p) <= room {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	if !b.truncate {
		b.fullOnce.Do(func() { close(b.full) })
	}
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}

func (b *limitedBuffer) String() string { return string(b.Bytes()) }
