// Package benchrun runs a benchmark workload as a child process: its output
// passes through and its tail is kept for parsing, signals sent to the
// runner reach the whole workload, and nothing of it outlives the run.
package benchrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Defaults of Options.
const (
	DefaultKillAfter   = 10 * time.Second
	DefaultCaptureHead = 64 << 10
	DefaultCaptureTail = 1 << 20
)

// drainTimeout bounds the wait for the output pipes to close once the
// workload's process group is gone: a process that left the group (a
// daemon) may hold them for ever.
const drainTimeout = 5 * time.Second

// Options say how to run a workload.
type Options struct {
	// Stdin is the workload's standard input; /dev/null when nil. A
	// terminal must not be passed: the workload runs in a process group
	// of its own, where reading the terminal would stop it.
	Stdin *os.File
	// Stdout and Stderr receive the workload's output as it comes;
	// io.Discard when nil.
	Stdout, Stderr io.Writer
	// Signals are forwarded to the workload's process group. After the
	// first, the group is killed when it is still there KillAfter later;
	// a second signal kills it at once.
	Signals   <-chan os.Signal
	KillAfter time.Duration
	// CaptureHead and CaptureTail bound what is kept of each stream: its
	// first and last bytes. Benchmark tools print their version first
	// and their summary last.
	CaptureHead, CaptureTail int

	Dir string   // working directory; the runner's when empty
	Env []string // environment; the runner's when nil
}

// Result is how a workload ran.
type Result struct {
	// PID is the workload's process ID, and the ID of its process group.
	PID        int
	Start, End time.Time
	// ExitStatus is the exit code, or 128+N when signal N ended the
	// workload, as a shell reports it.
	ExitStatus int
	// Interrupted is true when a signal was forwarded to the workload.
	Interrupted bool
	// Stdout and Stderr are what was kept of each stream: when longer
	// than CaptureHead+CaptureTail, the head and the tail joined by a
	// line that says how much was left out.
	Stdout, Stderr []byte
}

// Run starts argv in a new process group, waits for it, then kills what is
// left of the group. The error is for a workload that could not start.
func Run(argv []string, o Options) (Result, error) {
	if len(argv) == 0 {
		return Result{}, errors.New("no command to run")
	}
	o = withDefaults(o)
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return Result{}, fmt.Errorf("cannot run %q: %w", argv[0], err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if o.Stdin != nil {
		cmd.Stdin = o.Stdin
	}

	// Pipes of our own, not exec's: Wait would wait for every process
	// holding them, and the group is to be killed only after the leader
	// has been reaped.
	stdout, err := newStream(o.Stdout, o.CaptureHead, o.CaptureTail)
	if err != nil {
		return Result{}, err
	}
	stderr, err := newStream(o.Stderr, o.CaptureHead, o.CaptureTail)
	if err != nil {
		stdout.abort()
		return Result{}, err
	}
	cmd.Stdout, cmd.Stderr = stdout.w, stderr.w

	res := Result{Start: time.Now()}
	if err := cmd.Start(); err != nil {
		stdout.abort()
		stderr.abort()
		return Result{}, fmt.Errorf("cannot start %q: %w", argv[0], err)
	}
	stdout.started()
	stderr.started()
	pgid := cmd.Process.Pid
	res.PID = pgid

	done := make(chan struct{})
	var (
		mu          sync.Mutex
		interrupted bool
	)
	go func() {
		var kill <-chan time.Time
		for {
			select {
			case <-done:
				return
			case sig := <-o.Signals:
				mu.Lock()
				again := interrupted
				interrupted = true
				mu.Unlock()
				if again {
					_ = syscall.Kill(-pgid, syscall.SIGKILL)
					continue
				}
				if s, ok := sig.(syscall.Signal); ok {
					_ = syscall.Kill(-pgid, s)
				}
				kill = time.After(o.KillAfter)
			case <-kill:
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
	}()

	waitErr := cmd.Wait()
	res.End = time.Now()
	close(done)
	// Whatever the workload started in its group goes with it, so that
	// nothing of this run disturbs the next.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	res.Stdout = stdout.wait()
	res.Stderr = stderr.wait()

	mu.Lock()
	res.Interrupted = interrupted
	mu.Unlock()
	res.ExitStatus = exitStatus(cmd.ProcessState)
	if res.ExitStatus < 0 {
		return res, fmt.Errorf("waiting for %q: %w", argv[0], waitErr)
	}
	return res, nil
}

func withDefaults(o Options) Options {
	if o.Stdout == nil {
		o.Stdout = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.KillAfter <= 0 {
		o.KillAfter = DefaultKillAfter
	}
	if o.CaptureHead <= 0 {
		o.CaptureHead = DefaultCaptureHead
	}
	if o.CaptureTail <= 0 {
		o.CaptureTail = DefaultCaptureTail
	}
	return o
}

// exitStatus is the shell's view of how a process ended, or -1 when it
// did not.
func exitStatus(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// stream copies one of the workload's outputs to a writer and keeps its
// head and tail.
type stream struct {
	r, w   *os.File
	keep   *capture
	copied chan struct{}
}

func newStream(to io.Writer, head, tail int) (*stream, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("creating a pipe for the workload's output: %w", err)
	}
	s := &stream{r: r, w: w, keep: &capture{head: head, tail: tail}, copied: make(chan struct{})}
	go func() {
		defer close(s.copied)
		// A writer that fails (a closed terminal) must not stop the
		// workload on a full pipe: keep reading, stop writing.
		_, _ = io.Copy(io.MultiWriter(s.keep, &lenient{w: to}), r)
	}()
	return s, nil
}

// started closes the runner's copy of the write end, so that the reader
// sees the end of the stream once the workload's processes are gone.
func (s *stream) started() { _ = s.w.Close() }

func (s *stream) abort() {
	_ = s.w.Close()
	<-s.copied
	_ = s.r.Close()
}

func (s *stream) wait() []byte {
	select {
	case <-s.copied:
	case <-time.After(drainTimeout):
		_ = s.r.Close()
		<-s.copied
	}
	_ = s.r.Close()
	return s.keep.Bytes()
}

// lenient writes to w until a write fails, then swallows the rest.
type lenient struct {
	w      io.Writer
	failed bool
}

func (l *lenient) Write(p []byte) (int, error) {
	if !l.failed {
		if _, err := l.w.Write(p); err != nil {
			l.failed = true
		}
	}
	return len(p), nil
}

// capture keeps the first head and the last tail bytes written to it.
type capture struct {
	head, tail int
	first      []byte
	last       []byte // a window of at most 2*tail bytes, trimmed lazily
	total      int64
}

func (c *capture) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	rest := p
	if n := c.head - len(c.first); n > 0 {
		n = min(n, len(rest))
		c.first = append(c.first, rest[:n]...)
		rest = rest[n:]
	}
	if len(rest) == 0 {
		return len(p), nil
	}
	c.last = append(c.last, rest...)
	if len(c.last) > 2*c.tail {
		c.last = append(c.last[:0:0], c.last[len(c.last)-c.tail:]...)
	}
	return len(p), nil
}

// Bytes is the head and tail, with a line saying how much lies between
// them when something was left out.
func (c *capture) Bytes() []byte {
	last := c.last
	if len(last) > c.tail {
		last = last[len(last)-c.tail:]
	}
	out := append([]byte(nil), c.first...)
	if skipped := c.total - int64(len(c.first)) - int64(len(last)); skipped > 0 {
		out = fmt.Appendf(out, "\n[... %d bytes of output left out ...]\n", skipped)
	}
	return append(out, last...)
}
