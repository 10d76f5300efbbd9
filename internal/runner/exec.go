package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/flight"
)

// Runner runs a command and returns its stdout.
type Runner interface {
	Run(ctx context.Context, cmd Command) ([]byte, error)
}

// Streamer starts a long-running sampler (zpool iostat -v 10) and returns
// its stdout. Closing the stream, or cancelling ctx, stops the command.
type Streamer interface {
	StartStream(ctx context.Context, cmd Command) (io.ReadCloser, error)
}

// Defaults for ExecOptions fields left zero.
const (
	DefaultMaxOutput = 16 << 20
	DefaultMaxStderr = 4 << 10
	DefaultKillGrace = time.Second
)

// reapWait is how long a caller whose deadline killed its command waits
// to see the process exit before it gets its error: a scrape's budget
// leaves it that long before the kstat fallback.
const reapWait = budget.ReapWait

// ExecOptions configures an Exec. The zero value is usable.
type ExecOptions struct {
	// MaxOutput bounds stdout, in bytes; a command writing more fails with
	// ErrOutputTooLarge. Default DefaultMaxOutput.
	MaxOutput int
	// MaxStderr bounds the stderr kept for error messages, in bytes; the
	// rest is dropped. Default DefaultMaxStderr.
	MaxStderr int
	// KillGrace bounds how long a stopped stream waits for its killed
	// process to go, and (at most reapWait of it) how long Run waits for
	// what a command left behind before it returns without it. Default
	// DefaultKillGrace.
	KillGrace time.Duration
	// Timeout, if set, bounds every run, also when the context has no
	// deadline or a later one.
	Timeout time.Duration
	// Env adds KEY=VALUE pairs to the children's environment. Locale
	// variables are ignored: children always run with LC_ALL=C.
	Env []string
}

// Exec runs commands as child processes, each the leader of its own process
// group with LC_ALL=C. It is safe for concurrent use.
//
// Concurrent Runs of one command line share one process and its result, and
// a command line never has more than one process: while anything of a
// finished run has not exited (zpool hung in the kernel on a suspended
// pool, under a wrapper or not), Run and StartStream return ErrStillRunning
// instead of piling up more. That is the leader, the rest of its process
// group (killed once the leader exits), and processes outside the group
// that hold its output pipes (on Linux, found in /proc and killed too).
type Exec struct {
	maxOutput int
	maxStderr int
	grace     time.Duration
	timeout   time.Duration
	env       []string
	wait      func(*exec.Cmd) error // reaps a child; tests delay it

	mu    sync.Mutex
	slots map[string]*slot // command line -> its process, until reaped
	stats statsTable
}

// slot is the one process a command line may have, and for Run the result
// that its callers share. Fields are guarded by Exec.mu.
type slot struct {
	run     // the command line, as the stats count it
	stream  bool
	proc    *process  // nil while starting
	over    time.Time // set when the run ended while something of its process is still there
	killed  bool      // the run ended by killing its process
	waiters int       // Run callers still waiting for the result
	shared  bool      // more than one caller joined: each gets its own copy of out
	cancel  context.CancelCauseFunc
	call    *flight.Call[[]byte] // Run: the output its callers share
	end     func([]byte, error)  // ends call
}

// NewExec returns an Exec runner.
func NewExec(opts ExecOptions) *Exec {
	e := &Exec{
		maxOutput: opts.MaxOutput,
		maxStderr: opts.MaxStderr,
		grace:     opts.KillGrace,
		timeout:   opts.Timeout,
		env:       append([]string(nil), opts.Env...),
		wait:      (*exec.Cmd).Wait,
		slots:     map[string]*slot{},
	}
	if e.maxOutput <= 0 {
		e.maxOutput = DefaultMaxOutput
	}
	if e.maxStderr <= 0 {
		e.maxStderr = DefaultMaxStderr
	}
	if e.grace <= 0 {
		e.grace = DefaultKillGrace
	}
	return e
}

// Run runs name with args and returns its stdout. The process runs until it
// exits, until the deadline of the context that started it (it is then
// killed with its process group and the error wraps ErrTimeout), or until
// every caller sharing it has given up. On a non-zero exit the output is
// returned along with an *Error holding the exit status and stderr.
func (e *Exec) Run(ctx context.Context, cmd Command) ([]byte, error) {
	line := cmd.Line()
	if err := ctx.Err(); err != nil {
		return nil, &Error{Command: line, ExitCode: -1, Err: err}
	}
	r := cmd.counted(line)
	began := time.Now()
	e.mu.Lock()
	s, busy := e.slots[line]
	switch {
	case busy && (s.stream || !s.over.IsZero() || s.waiters == 0):
		err := refusal(s)
		e.mu.Unlock()
		e.stats.refused(r)
		return nil, err
	case busy:
		s.waiters++
		s.shared = true
	default:
		s = &slot{run: r, waiters: 1}
		s.call, s.end = flight.New[[]byte]()
		e.slots[line] = s
		var pctx context.Context
		pctx, s.cancel = e.processContext(ctx)
		go e.execute(pctx, s, began, cmd)
	}
	e.mu.Unlock()
	return e.await(ctx, s, began)
}

// processContext is the context a shared process runs under: the deadline
// of the caller that started it (capped by the Timeout option) but not its
// cancellation, since other callers may be waiting for the same result.
func (e *Exec) processContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	deadline, ok := ctx.Deadline()
	if e.timeout > 0 {
		if d := time.Now().Add(e.timeout); !ok || d.Before(deadline) {
			deadline, ok = d, true
		}
	}
	if !ok {
		return cctx, cancel
	}
	dctx, stop := context.WithDeadline(cctx, deadline)
	return dctx, func(cause error) { cancel(cause); stop() }
}

// await waits for the shared result or for the caller's context. The last
// caller to give up stops the process and reports how it ended.
func (e *Exec) await(ctx context.Context, s *slot, began time.Time) ([]byte, error) {
	if out, ended, err := s.call.Wait(time.Time{}, ctx.Done()); ended {
		return s.result(out, err)
	}
	e.mu.Lock()
	s.waiters--
	last := s.waiters == 0
	e.mu.Unlock()
	if last {
		s.cancel(ctx.Err())
		return s.result(s.call.Result()) // within the kill grace
	}
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("%w after %s waiting for the run another caller started", ErrTimeout, roundDuration(time.Since(began)))
	}
	return nil, &Error{Command: s.line, ExitCode: -1, Err: err}
}

// result is a finished slot's result for one of its callers: a copy of
// the output when several share it. Called once the call has ended, which
// is after shared was last set.
func (s *slot) result(out []byte, err error) ([]byte, error) {
	if s.shared && out != nil {
		return bytes.Clone(out), err
	}
	return out, err
}

// execute runs the process of a slot and publishes its result.
func (e *Exec) execute(ctx context.Context, s *slot, start time.Time, cmd Command) {
	defer s.cancel(nil)
	e.stats.started(s.run)
	maxOutput := cmd.outputLimit(e.maxOutput)
	stdout := newLimitedBuffer(maxOutput, false)
	stdout.grow(cmd.outputSizeHint(maxOutput))
	stderr := newLimitedBuffer(e.maxStderr, true)
	p, err := startProcess(cmd.Path, cmd.Args, childEnv(e.env), stdout, stderr, e.wait)
	if err != nil {
		e.publish(s, start, nil, &Error{Command: s.line, ExitCode: -1, Err: err}, false)
		return
	}
	e.mu.Lock()
	s.proc = p
	e.mu.Unlock()

	// Made only for a run that fails with it.
	tooLarge := func() error {
		return fmt.Errorf("%w: more than %d bytes on stdout", ErrOutputTooLarge, maxOutput)
	}
	var stop error
	select {
	case <-p.exited:
	case <-ctx.Done():
		if !p.hasExited() { // an exit that raced the deadline still counts
			stop = stopReason(ctx, start)
		}
	case <-stdout.full:
		stop = tooLarge()
	}
	if stop == nil {
		// The output is whole once the leader has exited. What it left
		// behind is being killed: wait a moment for it to go, so that the
		// next run finds the command line free, but not for a part of it
		// stuck in the kernel.
		p.waitOutput()
		p.waitGone(min(e.grace, reapWait))
		out, err := exitResult(s.line, p.err, stdout.Bytes(), stderr.String())
		if isClosed(stdout.full) {
			out, err = nil, &Error{Command: s.line, ExitCode: -1, Stderr: stderr.String(), Err: tooLarge()}
		}
		e.publish(s, start, out, err, false)
		return
	}
	p.kill()
	// The caller is past its deadline already: wait only a moment for the
	// process to go. Something of it stuck in the kernel keeps its command
	// line taken until it goes (settle), without holding up the caller.
	wait := min(e.grace, reapWait)
	note := fmt.Sprintf("killed process group %d", p.pid)
	if !p.waitGone(wait) {
		note += fmt.Sprintf("; still there %s later: %s", wait, p.leftover())
	}
	err = &Error{Command: s.line, ExitCode: -1, Stderr: stderr.String(), Err: fmt.Errorf("%w; %s", stop, note)}
	e.publish(s, start, nil, err, true)
}

// stopReason says why a process is being killed at ctx's end. A timeout is
// reported as the time the deadline allowed, which is what the operator
// configured, rather than when the timer happened to fire.
func stopReason(ctx context.Context, start time.Time) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, context.DeadlineExceeded) {
		allowed := time.Since(start)
		if deadline, ok := ctx.Deadline(); ok {
			allowed = deadline.Sub(start)
		}
		return fmt.Errorf("%w after %s", ErrTimeout, roundDuration(allowed))
	}
	return fmt.Errorf("canceled after %s: %w", roundDuration(time.Since(start)), cause)
}

// exitResult turns how a child exited into Run's result.
func exitResult(line string, waitErr error, stdout []byte, stderr string) ([]byte, error) {
	if waitErr == nil {
		return stdout, nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		code = ee.ExitCode()
	}
	return stdout, &Error{Command: line, ExitCode: code, Stderr: stderr, Err: waitErr}
}

// publish hands the result of a Run to its callers.
func (e *Exec) publish(s *slot, start time.Time, out []byte, err error, killed bool) {
	e.stats.finished(s.run, time.Since(start), err)
	e.mu.Lock()
	e.settle(s, killed)
	s.end(out, err)
	e.mu.Unlock()
}

// settle frees the command line of a finished run, or, while something of
// its process is still there, keeps it taken until that is gone. Called
// with e.mu held.
func (e *Exec) settle(s *slot, killed bool) {
	if s.proc == nil || isClosed(s.proc.gone) {
		e.release(s)
		return
	}
	s.over, s.killed = time.Now(), killed
	go func() {
		<-s.proc.gone
		e.mu.Lock()
		e.release(s)
		e.mu.Unlock()
	}()
}

// release frees a command line. Called with e.mu held.
func (e *Exec) release(s *slot) {
	if e.slots[s.line] == s {
		delete(e.slots, s.line)
	}
}

// refusal is the error for a command line whose process is still there.
// Called with e.mu held.
func refusal(s *slot) error {
	pid := "pid ?"
	if s.proc != nil {
		pid = fmt.Sprintf("pid %d", s.proc.pid)
	}
	var err error
	switch {
	case !s.over.IsZero():
		how := "ended"
		if s.killed {
			how = "killed"
		}
		err = fmt.Errorf("%w: %s %s ago, still there: %s; not starting another",
			ErrStillRunning, how, roundDuration(time.Since(s.over)), s.proc.leftover())
	case s.stream:
		err = fmt.Errorf("%w: %s is running as a stream; not starting another", ErrStillRunning, pid)
	default: // every caller gave up; it is being killed
		err = fmt.Errorf("%w: %s is being stopped; not starting another", ErrStillRunning, pid)
	}
	return &Error{Command: s.line, ExitCode: -1, Err: err}
}

// Stats returns what happened to each command line so far, and which are
// hung now.
func (e *Exec) Stats() map[string]CommandStats {
	m := e.stats.snapshot()
	e.mu.Lock()
	defer e.mu.Unlock()
	for line, s := range e.slots {
		if !s.over.IsZero() {
			st := m[line]
			st.StillRunning, st.Left = true, s.proc.leftover()
			m[line] = st
		}
	}
	return m
}

// roundDuration keeps durations in messages readable: "10s", "1.5s", "200ms".
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(10 * time.Millisecond)
}

var (
	_ Runner        = (*Exec)(nil)
	_ Streamer      = (*Exec)(nil)
	_ StatsReporter = (*Exec)(nil)
	_ Runner        = (*Replay)(nil)
	_ Streamer      = (*Replay)(nil)
	_ StatsReporter = (*Replay)(nil)
)
