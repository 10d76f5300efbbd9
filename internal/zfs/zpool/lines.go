package zpool

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// maxLineBytes bounds one output line; vdev "children" lists of wide pools
// are the longest.
const maxLineBytes = 1 << 20

// output is what a command printed, read whole into one string: the
// lines, and the fields that parsers cut from them, are substrings of it,
// which cost no allocation.
type output struct {
	text string
	err  error // of reading: what was read before it is parsed still
}

func readOutput(r io.Reader) output {
	var b strings.Builder
	_, err := io.Copy(&b, r)
	return output{text: b.String(), err: err}
}

// lines is the number of lines, at most: the capacity that a slice of a
// value a line needs.
func (o output) lines() int {
	return strings.Count(o.text, "\n") + 1
}

// eachLine calls fn with each line and its number, from 1, split as
// bufio.Scanner splits lines but with every trailing "\r" trimmed, until
// fn returns an error. It returns that error, or else a line of
// maxLineBytes or more or the read error after its line number, as the
// scanner did: those two are the reader's errors, not parse errors.
func (o output) eachLine(fn func(lineNo int, line string) error) error {
	lineNo := 0
	for line := range strings.Lines(o.text) {
		lineNo++
		line = strings.TrimSuffix(line, "\n")
		if len(line) >= maxLineBytes {
			return fmt.Errorf("line %d: %w", lineNo, bufio.ErrTooLong)
		}
		if err := fn(lineNo, strings.TrimRight(line, "\r")); err != nil {
			return err
		}
	}
	if o.err != nil {
		return fmt.Errorf("line %d: %w", lineNo+1, o.err)
	}
	return nil
}
