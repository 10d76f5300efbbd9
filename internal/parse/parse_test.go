package parse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestErrorText(t *testing.T) {
	why := errors.New(`unexpected line "x1"`)
	for _, tc := range []struct {
		err  *Error
		want string
	}{
		{&Error{Source: "zpool status -p", Line: 7, Err: why}, `zpool status -p: line 7: unexpected line "x1"`},
		{&Error{Line: 7, Err: why}, `line 7: unexpected line "x1"`},
		{&Error{Source: "zpool version", Err: why}, `zpool version: unexpected line "x1"`},
		{&Error{Err: why}, `unexpected line "x1"`},
		{&Error{Source: "/proc/diskstats", Line: 2}, "/proc/diskstats: line 2: unexpected output"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", *tc.err, got, tc.want)
		}
	}
}

// Every Error is an ErrUnexpected, and keeps what its reason wraps.
func TestErrorIs(t *testing.T) {
	wrongForm := errors.New("not iostat -x output")
	err := Errorf(3, "%w: unexpected %q", wrongForm, "Device tps")
	var pe *Error
	if !errors.Is(err, ErrUnexpected) || !errors.Is(err, wrongForm) || !errors.As(err, &pe) || pe.Line != 3 {
		t.Errorf("Errorf: %v (%#v), want a parse error at line 3 that wraps its sentinel", err, pe)
	}
	if err.Error() != `line 3: not iostat -x output: unexpected "Device tps"` {
		t.Errorf("Errorf: %q", err)
	}
	if wrapped := fmt.Errorf("collector disk: %w", WithSource(err, "iostat -x")); !errors.Is(wrapped, ErrUnexpected) || !errors.As(wrapped, &pe) || pe.Source != "iostat -x" {
		t.Errorf("wrapped: %v, want the parse error within", wrapped)
	}
}

// A reader's error is no parse error, with or without a source.
func TestReaderErrorIsNotParseError(t *testing.T) {
	for _, err := range []error{
		io.ErrUnexpectedEOF,
		fmt.Errorf("line 5: %w", bufio.ErrTooLong),
		WithSource(fmt.Errorf("line 5: %w", bufio.ErrTooLong), "zpool status"),
	} {
		var pe *Error
		if errors.Is(err, ErrUnexpected) || errors.As(err, &pe) {
			t.Errorf("%v is taken for a parse error", err)
		}
	}
	err := WithSource(fmt.Errorf("line 5: %w", bufio.ErrTooLong), "zpool status")
	if !errors.Is(err, bufio.ErrTooLong) || err.Error() != "zpool status: line 5: bufio.Scanner: token too long" {
		t.Errorf("WithSource of a reader's error: %v, want it named and kept", err)
	}
}

func TestAtLine(t *testing.T) {
	if AtLine(4, nil) != nil {
		t.Error("AtLine of nil is not nil")
	}
	why := errors.New("missing CKSUM count")
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a reason", fmt.Errorf(`vdev "sdb": %w`, why), `line 4: vdev "sdb": missing CKSUM count`},
		{"a parse error of no line", Errorf(0, "invalid size %q", "x"), `line 4: invalid size "x"`},
		{"within a reason", fmt.Errorf("size of tank: %w", Errorf(0, "invalid size %q", "x")), `line 4: size of tank: invalid size "x"`},
		{"a parse error at its line", Errorf(2, "no row"), "line 2: no row"},
		{"within a reason, at its line", fmt.Errorf("pool: %w", Errorf(2, "no row")), "pool: line 2: no row"},
	} {
		err := AtLine(4, tc.err)
		if !errors.Is(err, ErrUnexpected) || err.Error() != tc.want {
			t.Errorf("%s: %q, want the parse error %q", tc.name, err, tc.want)
		}
	}
	// The error given is not changed: it may be kept elsewhere.
	noLine := Errorf(0, "no row")
	AtLine(4, noLine)
	if noLine.Error() != "no row" {
		t.Errorf("AtLine changed its argument to %q", noLine)
	}
}

func TestWithSource(t *testing.T) {
	if WithSource(nil, "zpool status") != nil {
		t.Error("WithSource of nil is not nil")
	}
	at7 := Errorf(7, "unexpected line %q", "x1")
	err := WithSource(at7, "zpool status -p")
	var pe *Error
	if !errors.As(err, &pe) || pe.Source != "zpool status -p" || pe.Line != 7 || err.Error() != `zpool status -p: line 7: unexpected line "x1"` {
		t.Errorf("WithSource: %v, want the source named once before the line", err)
	}
	if at7.Error() != `line 7: unexpected line "x1"` {
		t.Errorf("WithSource changed its argument to %q", at7)
	}
	if again := WithSource(err, "zpool status"); again != err {
		t.Errorf("a second source: %v, want the first kept", again)
	}
	// Parse errors of several files joined: the source goes before them.
	joined := errors.Join(Errorf(2, "no row"), errors.New("permission denied"))
	err = WithSource(joined, "tank")
	if !errors.As(err, &pe) || pe.Source != "tank" || !errors.Is(err, ErrUnexpected) || !strings.HasPrefix(err.Error(), "tank: line 2: no row\n") {
		t.Errorf("WithSource of joined errors: %q", err)
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 80) // 160 bytes
	for in, want := range map[string]string{
		"  short line \t":                   "short line",
		strings.Repeat("x", clipBytes):      strings.Repeat("x", clipBytes),
		strings.Repeat("x", clipBytes+1):    strings.Repeat("x", clipBytes) + "...",
		long:                                strings.Repeat("é", clipBytes/2) + "...",
		"x" + long:                          "x" + strings.Repeat("é", (clipBytes-1)/2) + "...",
		strings.Repeat("ab ", 1<<20) + "\n": strings.TrimSpace(strings.Repeat("ab ", clipBytes/3+1)[:clipBytes]) + "...",
	} {
		got := Clip(in)
		if got != want || !utf8.ValidString(got) {
			t.Errorf("Clip(%.20q...) = %q, want %q", in, got, want)
		}
	}
}
