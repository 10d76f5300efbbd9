package workload

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

const fbNum = `([0-9]+(?:\.[0-9]+)?)`

var (
	// Log lines start with the seconds since start ("312.038: "), and in
	// 1.4 with the process id before them ("12345: 312.038: ").
	filebenchStamp   = regexp.MustCompile(`^\s*(?:[0-9]+: )?[0-9]+\.[0-9]+: `)
	filebenchVersion = regexp.MustCompile(`^Filebench Version (\S+)`)
	filebenchRunTook = regexp.MustCompile(`^Run took ([0-9]+) seconds`)
	// 1.5: "closefile1   13804ops   46ops/s   0.0mb/s   0.0ms/op [0.00ms -  0.38ms]";
	// 1.4: "closefile1   46ops/s   0.0mb/s   0.0ms/op   12us/op-cpu".
	filebenchFlowop = regexp.MustCompile(`^(\S+)\s+(?:([0-9]+)ops\s+)?` + fbNum + `ops/s\s+` + fbNum + `mb/s\s+` + fbNum + `ms/op(?:\s+[0-9]+us/op-cpu)?(?:\s+\[\s*` + fbNum + `ms\s+-\s+` + fbNum + `ms\])?\s*$`)
	// 1.5: "IO Summary: 27608 ops 92.019 ops/s 0/0 rd/wr   0.0mb/s   0.0ms/op";
	// 1.4: "IO Summary:      5403 ops 90.0 ops/s, (0/0 r/w)   0.0mb/s,    259us cpu/op,   2.2ms latency".
	filebenchSummary = regexp.MustCompile(`^IO Summary:\s+([0-9]+) ops,?\s+` + fbNum + ` ops/s,?\s+\(?` + fbNum + `/` + fbNum + ` (?:rd/wr|r/w)\)?,?\s+` + fbNum + `mb/s,?\s+(?:[0-9.]+us cpu/op,\s+)?` + fbNum + `ms(?:/op| latency)\s*$`)
)

// ParseFilebench reads filebench's output. Each "IO Summary:" line ends
// a run: it gives an "IO Summary" result (operations, operations per
// second, bytes per second, mean latency, and the run's length from
// "Run took N seconds"), after a result per flowop of the "Per-Operation
// Breakdown" before it. Flowops are named by the workload, so they have
// no direction; the summary's is read from its reads and writes per
// second (none of either: Metadata). filebench's "mb/s" is MiB/s.
func ParseFilebench(r io.Reader) (Summary, error) {
	lines, err := readLines(r)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Tool: Filebench}
	var pending []Result
	var secs *float64
	run := 1
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(filebenchStamp.ReplaceAllString(raw, ""))
		if m := filebenchVersion.FindStringSubmatch(line); m != nil {
			s.Version = m[1]
			continue
		}
		if m := filebenchRunTook.FindStringSubmatch(line); m != nil {
			v, err := number(m[1])
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			secs = &v
			continue
		}
		if strings.HasPrefix(line, "IO Summary:") {
			m := filebenchSummary.FindStringSubmatch(line)
			if m == nil {
				return Summary{}, fmt.Errorf("line %d: filebench IO Summary in an unknown layout: %q", n, parse.Clip(raw))
			}
			res, err := filebenchResult(m, secs)
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			for _, p := range append(pending, res) {
				p.Run = run
				s.Results = append(s.Results, p)
			}
			s.Headline = res.Printed
			pending, secs = nil, nil
			run++
			continue
		}
		if m := filebenchFlowop.FindStringSubmatch(line); m != nil {
			res, err := filebenchFlowopResult(m)
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			pending = append(pending, res)
			continue
		}
		if low := strings.ToLower(line); strings.Contains(low, "error") || strings.Contains(low, "failed") {
			s.Messages = append(s.Messages, line)
		}
	}
	if len(s.Results) == 0 {
		return Summary{}, noSummary(Filebench, `no "IO Summary:" line: the run did not finish`, lines, s.Messages)
	}
	return s, nil
}

// filebenchFigures reads the figures of a match but its first element; a
// figure not printed (an empty submatch) is nil.
func filebenchFigures(m []string) ([]*float64, error) {
	out := make([]*float64, len(m))
	for k, v := range m {
		if k == 0 || v == "" {
			continue
		}
		f, err := number(v)
		if err != nil {
			return nil, err
		}
		out[k] = &f
	}
	return out, nil
}

func filebenchResult(m []string, secs *float64) (Result, error) {
	f, err := filebenchFigures(m)
	if err != nil {
		return Result{}, fmt.Errorf("filebench IO Summary: %w", err)
	}
	// ops, ops/s, reads/s, writes/s, mb/s, ms/op.
	res := Result{
		Name:                "IO Summary",
		Seconds:             secs,
		Operations:          f[1],
		OperationsPerSecond: f[2],
		BytesPerSecond:      ptr(*f[5] * (1 << 20)),
		LatencySeconds:      ptr(*f[6] / 1000),
		Printed:             m[2] + " ops/s, " + m[5] + "mb/s, " + m[6] + "ms/op",
	}
	switch reads, writes := *f[3] > 0, *f[4] > 0; {
	case reads && writes:
		res.Direction = Mixed
	case reads:
		res.Direction = Read
	case writes:
		res.Direction = Write
	default:
		res.Direction = Metadata
	}
	return res, nil
}

func filebenchFlowopResult(m []string) (Result, error) {
	f, err := filebenchFigures(m[1:]) // without the match, and the name as its first
	if err != nil {
		return Result{}, fmt.Errorf("filebench flowop %s: %w", m[1], err)
	}
	// ops, ops/s, mb/s, ms/op, min ms, max ms.
	res := Result{
		Name:                m[1],
		Operations:          f[1],
		OperationsPerSecond: f[2],
		BytesPerSecond:      ptr(*f[3] * (1 << 20)),
		LatencySeconds:      ptr(*f[4] / 1000),
		Printed:             m[3] + "ops/s " + m[4] + "mb/s",
	}
	if f[6] != nil {
		res.MaxLatencySeconds = ptr(*f[6] / 1000)
	}
	return res, nil
}
