// Package parsetest checks, in the parsers' tests, that what they return
// for output they cannot read is a parse error (package parse) at the
// right line.
package parsetest

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// Check fails unless err, from a parser reading a bytes.Reader, is nil or
// a parse error: the only other error such a read can give is a line too
// long for the reader.
func Check(t testing.TB, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, parse.ErrUnexpected) && !errors.Is(err, bufio.ErrTooLong) {
		t.Fatalf("error %v is not a parse error", err)
	}
}

// CheckAt fails unless err is the error that want, the message expected,
// describes: a parse error at the line want names first ("line 4: ..."),
// or, when want names a line too long, the reader's error, which is no
// parse error. A want that names no line is an error of another kind (a
// caller's mistake), not checked here.
func CheckAt(t testing.TB, err error, want string) {
	t.Helper()
	if strings.Contains(want, bufio.ErrTooLong.Error()) {
		if !errors.Is(err, bufio.ErrTooLong) || errors.Is(err, parse.ErrUnexpected) {
			t.Errorf("error %v: want the reader's, not a parse error", err)
		}
		return
	}
	var line int
	if _, scanErr := fmt.Sscanf(want, "line %d:", &line); scanErr != nil {
		return
	}
	var pe *parse.Error
	if !errors.As(err, &pe) || !errors.Is(err, parse.ErrUnexpected) || pe.Line != line {
		t.Errorf("error %v: want a parse error at line %d", err, line)
	}
}
