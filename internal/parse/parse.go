// Package parse is the error the exporter's parsers return for output they
// cannot read: zpool, zfs, kstat, iostat, ps and glabel printing something
// new, or a file of /proc holding what no kernel was known to write. It
// names where the output came from and at which line, and callers tell it
// from a failed run or read with errors.Is(err, ErrUnexpected).
//
// A parser builds it with Errorf where it knows the line, or with AtLine
// around the reason one of its helpers gave; it does not know what it was
// reading from, so the caller that ran the command or opened the file adds
// that with WithSource.
//
// An error of the reader itself (a failed read, a line longer than the
// parser's buffer) is not an Error: parsers return it as it is, at most
// prefixed with its line number, so that it is not taken for output that
// changed.
package parse

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrUnexpected is what every Error is: errors.Is(err, ErrUnexpected)
// tells output a parser could not read from any other failure.
var ErrUnexpected = errors.New("unexpected output")

// Error is output that a parser could not read: where it came from, at
// which line, and why.
type Error struct {
	// Source is what was read, as a log line should name it: a command
	// line ("zpool status -p") or a file's path. Empty until the caller
	// that ran or opened it sets it with WithSource.
	Source string
	// Line is the number of the line, from 1; 0 when the error is about
	// no one line, such as output that ends too early.
	Line int
	// Err is why, in the parser's words: "unexpected line \"...\"".
	Err error
}

// Error reads like "zpool status -p: line 7: unexpected line \"x1\"",
// leaving out the source or the line when they are not known.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		b.WriteString(": ")
	}
	if e.Line > 0 {
		b.WriteString("line ")
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	} else {
		b.WriteString(ErrUnexpected.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes every Error an ErrUnexpected, whatever its Err wraps: a
// parser's own sentinels (iostat.ErrNotExtended) stay in the chain beside
// it.
func (e *Error) Is(target error) bool { return target == ErrUnexpected }

// Errorf returns an Error at line (0: no one line) whose reason is
// formatted as fmt.Errorf formats it, %w included.
func Errorf(line int, format string, args ...any) error {
	return &Error{Line: line, Err: fmt.Errorf(format, args...)}
}

// AtLine returns err, the reason a parser's helper gave for line, as an
// Error at that line. An err that already names its line is returned as
// it is, and nil stays nil. It is for reasons only: a reader's error
// passed here would be taken for output that changed.
func AtLine(line int, err error) error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) && pe.Line > 0 {
		return err
	}
	if e, ok := err.(*Error); ok {
		at := *e
		at.Line = line
		return &at
	}
	return &Error{Line: line, Err: err}
}

// WithSource names what err's output was read from: a command line or a
// path. An Error gets it as its Source, and reads "SOURCE: line N: why";
// any other error, such as a failed read, is wrapped as "SOURCE: err" and
// is still no Error. An error that names its source already, and nil, are
// returned as they are.
func WithSource(err error, source string) error {
	if err == nil {
		return nil
	}
	var pe *Error
	switch {
	case !errors.As(err, &pe):
		return fmt.Errorf("%s: %w", source, err)
	case pe.Source != "":
		return err
	case pe == err:
		named := *pe
		named.Source = source
		return &named
	}
	// A parse error inside another, such as one of several joined.
	return &Error{Source: source, Err: err}
}

// clipBytes is how much of a line an error quotes: more than the lines
// zpool status prints after a header, far less than a runaway one.
const clipBytes = 100

// Clip shortens a line to quote in an error: the line may be a megabyte
// of whatever a command printed, and the start says what it is.
func Clip(line string) string {
	line = strings.TrimSpace(line)
	if len(line) <= clipBytes {
		return line
	}
	end := clipBytes
	for end > 0 && !utf8.RuneStart(line[end]) {
		end--
	}
	return line[:end] + "..."
}
