package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// errStreamClosed is why a stream stopped when its reader closed it.
var errStreamClosed = errors.New("stream closed")

// StartStream starts a long-running command, such as zpool iostat -v 10,
// and returns its stdout as it comes. The command runs in its own process
// group, which is killed when ctx ends or the stream is closed. Reading
// returns io.EOF when the command exited with status 0, and an *Error when
// it failed or was stopped. A command line has at most one stream, and none
// while anything of an earlier process of it has not exited.
func (e *Exec) StartStream(ctx context.Context, cmd Command) (io.ReadCloser, error) {
	line := cmd.Line()
	if err := ctx.Err(); err != nil {
		return nil, &Error{Command: line, ExitCode: -1, Err: err}
	}
	counted := cmd.counted(line)
	e.mu.Lock()
	if s, busy := e.slots[line]; busy {
		err := refusal(s)
		e.mu.Unlock()
		e.stats.refused(counted)
		return nil, err
	}
	s := &slot{run: counted, stream: true}
	e.slots[line] = s
	e.mu.Unlock()

	e.stats.started(counted)
	start := time.Now()
	r, w := io.Pipe()
	stderr := newLimitedBuffer(e.maxStderr, true)
	p, err := startProcess(cmd.Path, cmd.Args, childEnv(e.env), w, stderr, e.wait)
	if err != nil {
		err = &Error{Command: line, ExitCode: -1, Err: err}
		e.stats.finished(counted, time.Since(start), err)
		e.mu.Lock()
		e.release(s)
		e.mu.Unlock()
		return nil, err
	}
	e.mu.Lock()
	s.proc = p
	e.mu.Unlock()
	st := &stream{
		e: e, s: s, p: p, r: r, w: w, stderr: stderr, start: start,
		stopc: make(chan error, 1),
		done:  make(chan struct{}),
	}
	go st.watch(ctx)
	return st, nil
}

// stream is the stdout of a running command.
type stream struct {
	e      *Exec
	s      *slot
	p      *process
	r      *io.PipeReader
	w      *io.PipeWriter // the copy of the command's stdout; closed with how it ended
	stderr *limitedBuffer
	start  time.Time

	stopc     chan error    // Close asks watch to stop the command
	done      chan struct{} // closed when the command ended and err is set
	err       error         // how the command ended; nil for exit status 0
	unreaped  bool          // killed, but not reaped within the kill grace
	closeOnce sync.Once
}

// watch waits for the command to exit, or stops it when ctx ends or the
// stream is closed, and then settles its command line.
func (st *stream) watch(ctx context.Context) {
	var cause error
	select {
	case <-st.p.exited:
	case <-ctx.Done():
		cause = context.Cause(ctx)
	case cause = <-st.stopc:
	}
	if cause != nil {
		st.p.kill()
		gone := st.p.waitGone(st.e.grace)
		err := fmt.Errorf("stopped: %w", cause)
		if !gone {
			err = fmt.Errorf("%w; killed process group %d: %s is still there %s later", err, st.p.pid, st.p.leftover(), st.e.grace)
		}
		st.unreaped = !gone
		st.err = &Error{Command: st.s.line, ExitCode: -1, Stderr: st.stderr.String(), Err: err}
		st.e.stats.finished(st.s.run, time.Since(st.start), nil) // stopped on purpose: not a failure
	} else {
		// As for Run: the output is whole once the command has exited, and
		// the reader must not wait for what it left stuck in the kernel.
		st.p.waitOutput()
		st.p.waitGone(min(st.e.grace, reapWait))
		_, st.err = exitResult(st.s.line, st.p.err, nil, st.stderr.String())
		st.e.stats.finished(st.s.run, time.Since(st.start), st.err)
	}
	st.w.CloseWithError(st.err) // after all of the output: nil is io.EOF
	st.e.mu.Lock()
	st.e.settle(st.s, cause != nil)
	st.e.mu.Unlock()
	close(st.done)
}

// Read reads the command's stdout. At the end of it, Read returns how the
// command ended: io.EOF for exit status 0.
func (st *stream) Read(b []byte) (int, error) { return st.r.Read(b) }

// Close stops the command, if it still runs, and waits for it to go, at
// most for the kill grace period. The error says when a killed command has
// not gone by then (stuck in the kernel): the caller cannot end it, and its
// command line stays taken until it goes.
func (st *stream) Close() error {
	st.closeOnce.Do(func() {
		st.r.Close() // a copy waiting for the reader stops waiting
		select {
		case st.stopc <- errStreamClosed:
		default:
		}
		<-st.done
	})
	if st.unreaped {
		return st.err
	}
	return nil
}
