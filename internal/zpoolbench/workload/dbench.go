package workload

import (
	"fmt"
	"io"
	"regexp"
	"strings"
)

var (
	dbenchVersion = regexp.MustCompile(`^dbench version (\S+)`)
	dbenchRunning = regexp.MustCompile(`^Running for ([0-9]+) seconds`)
	dbenchTable   = regexp.MustCompile(`^\s*Operation\s+Count\s+AvgLat\s+MaxLat\s*$`)
	// " NTCreateX     940362     0.031    13.741": count, mean and
	// longest latency in milliseconds.
	dbenchOp = regexp.MustCompile(`^\s*(\w+)\s+([0-9]+)\s+([0-9.]+)\s+([0-9.]+)$`)
	// 4.x: "Throughput 225.11 MB/sec (sync open)  4 clients  4 procs  max_latency=86.861 ms";
	// 3.x: "Throughput 225.11 MB/sec (sync open) 4 procs".
	dbenchThroughput = regexp.MustCompile(`^\s*Throughput ([0-9][0-9.]*(?:e[-+]?[0-9]+)?) MB/sec((?: \(sync (?:open|dirs)\))*)\s+(?:([0-9]+) clients\s+)?([0-9]+) procs(?:\s+max_latency=([0-9.]+) ms)?`)
	// "[1075] read failed on handle 10094 (No such file or directory)".
	dbenchClientError = regexp.MustCompile(`^\[[0-9]+\] `)
)

// dbenchDirection of the operations in dbench's table; the others work on
// names and metadata, except Flush, which syncs a file.
var dbenchDirection = map[string]Direction{"ReadX": Read, "WriteX": Write, "Flush": ""}

// ParseDbench reads dbench's output. The final "Throughput" line gives
// a "Throughput" result (reads and writes together, 10^6 bytes per MB,
// the longest latency of any operation, and the run's length from
// "Running for N seconds"); the operation table of dbench 4 before it
// gives a result per operation, with its count and its mean and longest
// latency. Progress lines are skipped. Without a Throughput line the run
// did not finish, and the error says so.
func ParseDbench(r io.Reader) (Summary, error) {
	lines, err := readLines(r)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Tool: Dbench}
	var pending []Result // the operation table of the run in progress
	var secs *float64
	inTable := false
	for i, line := range lines {
		n := i + 1
		if m := dbenchVersion.FindStringSubmatch(line); m != nil {
			s.Version = m[1]
			continue
		}
		if m := dbenchRunning.FindStringSubmatch(line); m != nil {
			v, err := number(m[1])
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			secs = &v
			continue
		}
		if dbenchTable.MatchString(line) {
			inTable, pending = true, nil
			continue
		}
		if m := dbenchThroughput.FindStringSubmatch(line); m != nil {
			res, err := dbenchResult(m, secs)
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			run := 1
			if len(s.Results) > 0 {
				run = s.Results[len(s.Results)-1].Run + 1
			}
			for _, p := range append(pending, res) {
				p.Run = run
				s.Results = append(s.Results, p)
			}
			s.Headline = res.Printed
			pending, inTable, secs = nil, false, nil
			continue
		}
		if inTable {
			if strings.Trim(line, "- ") == "" {
				continue
			}
			if m := dbenchOp.FindStringSubmatch(line); m != nil {
				res, err := dbenchOpResult(m)
				if err != nil {
					return Summary{}, fmt.Errorf("line %d: %w", n, err)
				}
				pending = append(pending, res)
				continue
			}
			inTable = false
		}
		if dbenchClientError.MatchString(line) || strings.Contains(line, "failed") {
			s.Messages = append(s.Messages, line)
		}
	}
	if len(s.Results) == 0 {
		return Summary{}, noSummary(Dbench, `no "Throughput" line: the run did not finish`, lines, s.Messages)
	}
	return s, nil
}

func dbenchResult(m []string, secs *float64) (Result, error) {
	mbs, err := number(m[1])
	if err != nil {
		return Result{}, fmt.Errorf("dbench throughput: %w", err)
	}
	res := Result{
		Name:           "Throughput",
		Direction:      Mixed,
		BytesPerSecond: ptr(mbs * 1e6),
		Seconds:        secs,
		Printed:        m[1] + " MB/sec" + m[2],
	}
	if m[5] != "" {
		ms, err := number(m[5])
		if err != nil {
			return Result{}, fmt.Errorf("dbench max_latency: %w", err)
		}
		res.MaxLatencySeconds = ptr(ms / 1000)
	}
	return res, nil
}

func dbenchOpResult(m []string) (Result, error) {
	dir, ok := dbenchDirection[m[1]]
	if !ok {
		dir = Metadata
	}
	res := Result{Name: m[1], Direction: dir}
	var figures [3]float64
	for k, v := range m[2:5] {
		f, err := number(v)
		if err != nil {
			return Result{}, fmt.Errorf("dbench %s: %w", m[1], err)
		}
		figures[k] = f
	}
	res.Operations = &figures[0]
	res.LatencySeconds = ptr(figures[1] / 1000)
	res.MaxLatencySeconds = ptr(figures[2] / 1000)
	return res, nil
}
