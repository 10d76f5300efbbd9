package geom

import (
	"bufio"
	"bytes"
	"errors"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

func TestParseGlabelStatus(t *testing.T) {
	want := map[string]string{
		"gpt/zfs0": "ada0p3",
		"gpt/zfs1": "ada1p3",
		"gptid/5c2d1e4a-8f3b-11ee-9a2c-3cecef1a2b3c": "ada2p1",
		"diskid/DISK-WD-WCC4E1XK7P2H":                "ada3",
		"gpt/gptboot0":                               "ada0p1",
		"gpt/swap0":                                  "ada0p2",
	}
	// With and without -s, the same labels.
	for _, name := range []string{"glabel-status.txt", "glabel-status-s.txt"} {
		f := sample.MustRead(t, filepath.Join("testdata", name))
		got, err := ParseGlabelStatus(bytes.NewReader(f.Body))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
}

// Output glabel is not known to print is a parse error at its line.
func TestParseGlabelStatusErrors(t *testing.T) {
	for _, tc := range []struct {
		input, want string
		line        int
	}{
		{"gpt/zfs0  N/A\n", "line 1: want a label, its status and its provider", 1},
		{"gpt/a N/A ada0p1\ngpt/a N/A ada1p1\n", "line 2: label gpt/a is on both ada0p1 and ada1p1", 2},
		{"gpt/a N/A ada0p1\n\ngpt/b N/A ada1 extra\n", "line 3:", 3},
	} {
		_, err := ParseGlabelStatus(strings.NewReader(tc.input))
		var pe *parse.Error
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, parse.ErrUnexpected) || !errors.As(err, &pe) || pe.Line != tc.line {
			t.Errorf("ParseGlabelStatus(%q) = %v, want a parse error at line %d with %q", tc.input, err, tc.line, tc.want)
		}
	}
	// A line longer than the reader's buffer is the reader's error.
	if _, err := ParseGlabelStatus(strings.NewReader(strings.Repeat("x", bufio.MaxScanTokenSize+1))); !errors.Is(err, bufio.ErrTooLong) || errors.Is(err, parse.ErrUnexpected) {
		t.Errorf("a line too long: %v, want the reader's error", err)
	}
}

func FuzzParseGlabelStatus(f *testing.F) {
	for _, name := range []string{"glabel-status.txt", "glabel-status-s.txt"} {
		f.Add(string(sample.MustRead(f, filepath.Join("testdata", name)).Body))
	}
	f.Fuzz(func(t *testing.T, input string) {
		labels, err := ParseGlabelStatus(strings.NewReader(input))
		if err != nil && labels != nil {
			t.Fatalf("an error with labels: %v", err)
		}
		if err != nil && !errors.Is(err, parse.ErrUnexpected) && !errors.Is(err, bufio.ErrTooLong) {
			t.Fatalf("error %v is neither a parse error nor a line too long", err)
		}
		for name, provider := range labels {
			if name == "" || provider == "" {
				t.Fatalf("empty name or provider: %q -> %q", name, provider)
			}
		}
	})
}
