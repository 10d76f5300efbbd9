package runner

import (
	"context"
	"errors"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
)

var (
	// ErrTimeout means the command was killed at its context's deadline.
	ErrTimeout = errors.New("timed out")
	// ErrStillRunning means no process was started because an earlier
	// process of the same command line has not exited: a killed zpool
	// stuck in the kernel, or a stream of that command line still running.
	ErrStillRunning = errors.New("previous run has not exited")
	// ErrOutputTooLarge means the command wrote more than the output limit.
	ErrOutputTooLarge = errors.New("output too large")
	// ErrNoCapture means a replay directory holds no capture of the command.
	ErrNoCapture = errors.New("no capture")
	// ErrNotFound means the command does not exist: its name is not in
	// PATH, or no file is at the path given. It is not installed, and
	// fails the same way at every run until it is.
	ErrNotFound = errors.New("command not found")
)

// notFoundError is a start that failed for want of the command. It keeps
// exec's message, which names what was looked for and where.
type notFoundError struct{ error }

func (e notFoundError) Unwrap() []error { return []error{ErrNotFound, e.error} }

// startError marks an error starting a command as ErrNotFound when the
// command does not exist.
func startError(err error) error {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return notFoundError{err}
	}
	return err
}

// Error is a failed command. It names the command line, so that a log line
// or a scrape error says which command failed and how.
type Error struct {
	Command  string // command line, as given to Run
	ExitCode int    // exit status; -1 if the command did not exit on its own or did not start
	Stderr   string // start of what the command wrote on stderr, bounded
	Err      error  // cause: ErrTimeout, ErrStillRunning, ErrOutputTooLarge, ErrNoCapture, ErrNotFound, *exec.ExitError...
}

// Error reads like "zpool status -p: exit status 2: invalid option 'p'": the
// command line, the cause and the first line of stderr, since that line is
// the one that explains (zpool follows it with its usage text).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Command)
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	first, more := stderrSummary(e.Stderr)
	if first != "" {
		b.WriteString(": ")
		b.WriteString(first)
	}
	if more > 0 {
		b.WriteString(" (+" + strconv.Itoa(more) + " more lines on stderr)")
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// stderrSummary returns the first non-blank line of stderr and how many
// non-blank lines follow it.
func stderrSummary(stderr string) (first string, more int) {
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case first == "":
			first = line
		default:
			more++
		}
	}
	return first, more
}

// Inconclusive tells a command that did not answer (timed out, refused
// because an earlier run still hangs, or cut at the output limit) from one
// that said no: only a "no" may rule out what the command was run to find
// out, such as whether zpool takes an option.
func Inconclusive(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, ErrTimeout) || errors.Is(err, ErrStillRunning) || errors.Is(err, ErrOutputTooLarge)
}
