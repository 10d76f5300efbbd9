package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
// while a killed process of it has not exited.
func (e *Exec) StartStream(ctx context.Context, name string, args ...string) (io.ReadCloser, error) {
	line := CommandLine(name, args...)
	if err := ctx.Err(); err != nil {
		return nil, &Error{Command: line, ExitCode: -1, Err: err}
	}
	e.mu.Lock()
	if s, busy := e.slots[line]; busy {
		err := refusal(s)
		e.mu.Unlock()
		e.stats.refused(line)
		return nil, err
	}
	s := &slot{line: line, stream: true}
	e.slots[line] = s
	e.mu.Unlock()

	e.stats.started(line)
	start := time.Now()
	p, r, stderr, err := e.startStreamProcess(name, args)
	if err != nil {
		err = &Error{Command: line, ExitCode: -1, Err: err}
		e.stats.finished(line, time.Since(start), err)
		e.mu.Lock()
		e.release(s)
		e.mu.Unlock()
		return nil, err
	}
	e.mu.Lock()
	s.proc = p
	e.mu.Unlock()
	st := &stream{
		e: e, s: s, p: p, r: r, stderr: stderr, start: start,
		stopc: make(chan error, 1),
		done:  make(chan struct{}),
	}
	go st.watch(ctx)
	return st, nil
}

// startStreamProcess gives the child the write end of a pipe as its stdout.
// Unlike exec.Cmd's own pipe, this one is not closed when the child is
// reaped, so the reader gets everything the child wrote before it exited.
func (e *Exec) startStreamProcess(name string, args []string) (*process, *os.File, *limitedBuffer, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stderr := newLimitedBuffer(e.maxStderr, true)
	p, err := startProcess(name, args, childEnv(e.env), w, stderr, e.grace, e.wait)
	w.Close() // the child holds its own copy
	if err != nil {
		r.Close()
		return nil, nil, nil, err
	}
	return p, r, stderr, nil
}

// stream is the stdout of a running command.
type stream struct {
	e      *Exec
	s      *slot
	p      *process
	r      *os.File
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
	reaped := true
	if cause != nil {
		st.p.kill()
		reaped = st.p.waitExit(st.e.grace)
		err := fmt.Errorf("stopped: %w", cause)
		if !reaped {
			err = fmt.Errorf("%w; killed process group %d, which has not exited %s later", err, st.p.pid, st.e.grace)
		}
		st.err = &Error{Command: st.s.line, ExitCode: -1, Stderr: st.stderr.String(), Err: err}
		st.e.stats.finished(st.s.line, time.Since(st.start), nil) // stopped on purpose: not a failure
	} else {
		_, st.err = exitResult(st.s.line, st.p.err, nil, st.stderr.String())
		st.e.stats.finished(st.s.line, time.Since(st.start), st.err)
	}
	st.e.mu.Lock()
	st.e.settle(st.s, reaped)
	st.e.mu.Unlock()
	st.unreaped = !reaped
	close(st.done)
}

// Read reads the command's stdout. At the end of it, Read waits for the
// command to exit so that it can say how the command ended.
func (st *stream) Read(b []byte) (int, error) {
	n, err := st.r.Read(b)
	if err == io.EOF {
		<-st.done
		if st.err != nil {
			return n, st.err
		}
	}
	return n, err
}

// Close stops the command, if it still runs, and waits for it to be reaped,
// at most for the kill grace period. The error says when a killed command
// has not exited by then (stuck in the kernel): the caller cannot end it,
// and its command line stays taken until it exits.
func (st *stream) Close() error {
	st.closeOnce.Do(func() {
		select {
		case st.stopc <- errStreamClosed:
		default:
		}
		<-st.done
		st.r.Close()
	})
	if st.unreaped {
		return st.err
	}
	return nil
}
