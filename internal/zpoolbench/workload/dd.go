package workload

import (
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

var (
	ddRecordsOut = regexp.MustCompile(`\d+\+\d+ records out$`)
	// GNU coreutils: "N bytes (X GB, Y GiB) copied, S s, R MB/s" (8.24
	// and later), "N bytes (X GB) copied, S s, R MB/s" (earlier 8.x),
	// "seconds" instead of "s" (6.x, 7.x), "N bytes copied" and "1 byte
	// copied" for sizes too small to scale.
	ddGNU = regexp.MustCompile(`(\d+) bytes? (?:\([^)]*\) )?copied, ([0-9][0-9.,]*(?:e[-+]?[0-9]+)?) (?:s|seconds), (\S+) (\S*B)/s$`)
	// BusyBox: "N bytes (9.9MB) copied, S seconds, 844.4MB/s", with
	// binary units and no space before them.
	ddBusyBox = regexp.MustCompile(`(\d+) bytes \([^)]*\) copied, ([0-9][0-9.]*) seconds, ([0-9][0-9.]*)([KMGTPE]?B)/s$`)
	// BSD (FreeBSD, NetBSD, OpenBSD, macOS): "N bytes transferred in S
	// secs (R bytes/sec)".
	ddBSD = regexp.MustCompile(`(\d+) bytes transferred in ([0-9.]+) secs \((\d+) bytes/sec\)$`)
)

// ParseDD reads what dd prints on its standard error. A summary counts
// when it follows a "records out" line: the lines that status=progress
// prints (GNU "copied, 69 s", FreeBSD "transferred 1.000s") do not. Each
// summary is a run: dd prints one more for every SIGUSR1 (GNU) or
// SIGINFO (BSD) it gets, and when interrupted. Lines starting with "dd:"
// are messages.
//
// dd does not tell which way the bytes went: results have no Direction
// (DDDirection reads it from dd's operands).
func ParseDD(r io.Reader) (Summary, error) {
	lines, err := readLines(r)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Tool: DD}
	final := false // the next summary line closes a run
	for i, line := range lines {
		n := i + 1
		if strings.HasPrefix(line, "dd: ") {
			s.Messages = append(s.Messages, line)
			continue
		}
		if ddRecordsOut.MatchString(line) {
			final = true
			continue
		}
		if strings.Count(line, " copied") > 1 {
			return Summary{}, fmt.Errorf("line %d: two dd summaries run together, so the figures cannot be told apart: %q", n, parse.Clip(line))
		}
		res, ok, err := ddSummary(line)
		if err != nil {
			return Summary{}, fmt.Errorf("line %d: %w", n, err)
		}
		if !ok || !final {
			continue
		}
		final = false
		res.Run = len(s.Results) + 1
		s.Results = append(s.Results, res)
		s.Headline = res.Printed
	}
	if len(s.Results) == 0 {
		return Summary{}, noSummary(DD, `no "bytes ... copied" or "bytes transferred" summary after a "records out" line (status=none or status=noxfer, or dd did not finish)`, lines, s.Messages)
	}
	return s, nil
}

// ddSummary reads a GNU or BSD summary line; ok is false for other lines.
func ddSummary(line string) (res Result, ok bool, err error) {
	if m := ddBusyBox.FindStringSubmatch(line); m != nil {
		res = Result{Name: "copied", Printed: m[3] + m[4] + "/s"}
		if res.Bytes, err = ddFigure(m[1], "", false); err != nil {
			return res, false, err
		}
		if res.Seconds, err = ddFigure(m[2], "", false); err != nil {
			return res, false, err
		}
		if res.BytesPerSecond, err = ddFigure(m[3], m[4], true); err != nil {
			return res, false, err
		}
		return res, true, nil
	}
	if m := ddGNU.FindStringSubmatch(line); m != nil {
		res = Result{Name: "copied", Printed: m[3] + " " + m[4] + "/s"}
		if res.Bytes, err = ddFigure(m[1], "", false); err != nil {
			return res, false, err
		}
		if res.Seconds, err = ddFigure(m[2], "", false); err != nil {
			return res, false, err
		}
		// A run too short to time prints "Infinity B/s": no rate.
		if m[3] != "Infinity" && m[3] != "inf" {
			if res.BytesPerSecond, err = ddFigure(m[3], m[4], false); err != nil {
				return res, false, err
			}
		}
		return res, true, nil
	}
	if m := ddBSD.FindStringSubmatch(line); m != nil {
		res = Result{Name: "transferred", Printed: m[3] + " bytes/sec"}
		if res.Bytes, err = ddFigure(m[1], "", false); err != nil {
			return res, false, err
		}
		if res.Seconds, err = ddFigure(m[2], "", false); err != nil {
			return res, false, err
		}
		if res.BytesPerSecond, err = ddFigure(m[3], "", false); err != nil {
			return res, false, err
		}
		return res, true, nil
	}
	return res, false, nil
}

// ddFigure reads a figure of a dd summary: GNU rates are SI ("MB/s" is
// 10^6 bytes/s, "kB/s" 10^3), BusyBox's binary.
func ddFigure(num, unit string, binary bool) (*float64, error) {
	v, err := bytesOf(num, unit, binary)
	if err != nil {
		return nil, fmt.Errorf("dd summary: %w", err)
	}
	return &v, nil
}

// DDDirection tells which way a dd moves data from its operands ("if=...",
// "of=..."; other arguments are ignored): Read when it writes nowhere
// (no of=, which is standard output, or of=/dev/null), Write when it
// reads from nowhere (no if=, which is standard input, or /dev/zero,
// /dev/random or /dev/urandom), Mixed when it copies one file to another,
// and none when both ends are streams.
func DDDirection(operands []string) Direction {
	var in, out string
	for _, a := range operands {
		if v, ok := strings.CutPrefix(a, "if="); ok {
			in = path.Clean(v)
		} else if v, ok := strings.CutPrefix(a, "of="); ok {
			out = path.Clean(v)
		}
	}
	source := in == "" || in == "/dev/zero" || in == "/dev/random" || in == "/dev/urandom"
	sink := out == "" || out == "/dev/null"
	switch {
	case source && sink:
		return ""
	case sink:
		return Read
	case source:
		return Write
	}
	return Mixed
}
