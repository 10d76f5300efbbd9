package workload

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// Tool is a benchmark, named by the command that runs it.
type Tool string

// The tools the package reads.
const (
	DD        Tool = "dd"
	Fio       Tool = "fio"
	Bonnie    Tool = "bonnie++"
	Dbench    Tool = "dbench"
	Filebench Tool = "filebench"
)

// Tools lists every tool the package reads.
var Tools = []Tool{DD, Fio, Bonnie, Dbench, Filebench}

// Direction says which way a result's data went.
type Direction string

// Directions. A result whose direction the output does not tell (dd,
// whose direction depends on its if= and of= operands; fio trim;
// filebench flowops, named by the workload's author) has none ("").
const (
	Read     Direction = "read"
	Write    Direction = "write"
	Mixed    Direction = "mixed"    // reads and writes together: dbench's throughput, bonnie++ rewrite and seeks, filebench runs with both
	Metadata Direction = "metadata" // file creation, stat and deletion: bonnie++ create tests, filebench runs without reads or writes
)

var (
	// ErrNoSummary is wrapped by the error for output without any
	// summary: an interrupted or failed run, or a run told not to print
	// one.
	ErrNoSummary = errors.New("no benchmark summary")
	// ErrUnsupported is wrapped by the error for an output format the
	// package does not read (fio --output-format=terse, or the JSON of
	// fio before 3.0).
	ErrUnsupported = errors.New("unsupported output format")
	// ErrUnknownTool is wrapped by the error of Parse for a tool the
	// package does not know, and of Detect for output of none of them.
	ErrUnknownTool = errors.New("unknown benchmark tool")
)

// Summary is what a benchmark tool reported about one run of it.
type Summary struct {
	Tool    Tool
	Version string `json:",omitempty"` // as printed: "fio-3.33", "2.00a", "4.00"; "" when not printed
	// Results are the tool's figures, in the order printed.
	Results []Result
	// Headline is the tool's main figure of its last report as it
	// printed it, for display beside ZFS's figures: "885 MB/s",
	// "WRITE: bw=1586MiB/s (1663MB/s)", "492.324 MB/sec".
	Headline string
	// Messages are the lines in which the tool reported a problem, as
	// printed ("dd: error writing '/dev/full': No space left on device").
	Messages []string `json:",omitempty"`
}

// Result is one figure set of a report: one operation of one job.
type Result struct {
	// Name is the operation as the tool calls it: "copied" (GNU dd),
	// "transferred" (BSD dd), "write" (fio job), "WRITE" (fio group),
	// "Sequential Output Block" (bonnie++), "Throughput" and "ReadX"
	// (dbench), "IO Summary" and flowop names (filebench).
	Name string
	// Job is the fio job name or the bonnie++ machine name.
	Job string `json:",omitempty"`
	// Group is the fio group id (groupid=N, "Run status group N").
	Group *int `json:",omitempty"`
	// Run numbers the reports of one output from 1; see Summary.Final.
	Run       int
	Direction Direction `json:",omitempty"`

	Bytes               *float64 `json:",omitempty"` // bytes moved
	Seconds             *float64 `json:",omitempty"` // duration of the operation or run
	BytesPerSecond      *float64 `json:",omitempty"`
	Operations          *float64 `json:",omitempty"` // count
	OperationsPerSecond *float64 `json:",omitempty"`
	LatencySeconds      *float64 `json:",omitempty"` // mean
	MaxLatencySeconds   *float64 `json:",omitempty"`
	CPURatio            *float64 `json:",omitempty"` // bonnie++ %CP as a ratio (above 1 with several CPUs)
	// Latency is the distribution whose percentiles the tool printed
	// (fio's job blocks); nil when it printed none.
	Latency *Latency `json:",omitempty"`

	// Printed is the result's main figure as the tool printed it:
	// "885 MB/s", "IOPS=14.3k, BW=1792MiB/s (1879MB/s)", "1.4g/sec",
	// "+++++" (bonnie++: too fast to measure).
	Printed string `json:",omitempty"`
	// Note says why a printed figure is missing from the numbers.
	Note string `json:",omitempty"`
}

// Latency is the distribution of the I/O latencies a tool measured, with
// the percentiles it printed. Its mean and its percentiles are of one
// measure, so that they can be read together: fio's LatencySeconds is of
// "lat" where fio printed it, and its percentiles are of "clat" by
// default.
type Latency struct {
	// Measure is what the tool timed, in its words: fio's "clat" (from
	// submission to completion) or "lat" (from issue to completion,
	// slat and clat, with lat_percentiles=1 alone).
	Measure string
	// Operations is how many I/Os were timed; nil when not printed (fio's
	// text report).
	Operations *float64 `json:",omitempty"`
	// MeanSeconds is the mean of the measure; nil when not printed.
	MeanSeconds *float64 `json:",omitempty"`
	// Percentiles are the percentiles printed, in increasing order: fio's
	// default list is 1, 5, 10, 20 ... 90, 95, 99, 99.5, 99.9, 99.95 and
	// 99.99 (its percentile_list sets others).
	Percentiles []Percentile
}

// Percentile is the latency within which Percent % of the I/Os completed.
type Percentile struct {
	Percent float64
	Seconds float64
}

// At returns the percent-th percentile, when the tool printed it.
func (l Latency) At(percent float64) (float64, bool) {
	for _, p := range l.Percentiles {
		if p.Percent == percent {
			return p.Seconds, true
		}
	}
	return 0, false
}

// Final returns the results of the summary's last report.
func (s Summary) Final() []Result {
	last := 0
	for _, r := range s.Results {
		last = max(last, r.Run)
	}
	var out []Result
	for _, r := range s.Results {
		if r.Run == last {
			out = append(out, r)
		}
	}
	return out
}

// ToolFor returns the tool a command runs: its base name (after the last
// '/') must be a tool's name.
func ToolFor(command string) (Tool, bool) {
	name := command[strings.LastIndex(command, "/")+1:]
	for _, t := range Tools {
		if string(t) == name {
			return t, true
		}
	}
	return "", false
}

// Parse reads the output of tool. An empty tool is detected from the
// output.
func Parse(tool Tool, r io.Reader) (Summary, error) {
	if tool == "" {
		data, err := io.ReadAll(r)
		if err != nil {
			return Summary{}, err
		}
		if tool, err = Detect(bytes.NewReader(data)); err != nil {
			return Summary{}, err
		}
		r = bytes.NewReader(data)
	}
	switch tool {
	case DD:
		return ParseDD(r)
	case Fio:
		return ParseFio(r)
	case Bonnie:
		return ParseBonnie(r)
	case Dbench:
		return ParseDbench(r)
	case Filebench:
		return ParseFilebench(r)
	}
	return Summary{}, fmt.Errorf("%w %q (known: dd, fio, bonnie++, dbench, filebench)", ErrUnknownTool, tool)
}

// signatures recognise each tool by lines only it prints.
var signatures = []struct {
	tool Tool
	re   *regexp.Regexp
}{
	{Fio, regexp.MustCompile(`^fio-\d|^fio: |\(groupid=\d+, jobs=\d+\)|^Run status group \d+ |^\s*"fio version"|^\d;fio-\d`)},
	{DD, regexp.MustCompile(`\d+\+\d+ records (in|out)$|\d bytes? (\([^)]*\) )?copied, |\d bytes transferred in \S+ secs`)},
	{Bonnie, regexp.MustCompile(`^Version\s+\S+\s+-+Sequential (Output|Create)-+|-Per Chr- --Block--|^Writing intelligently\.\.\.|^(1\.9[6-9]|[2-9]\.\d+),\S+,[^,]*,\d+,`)},
	{Dbench, regexp.MustCompile(`^dbench version |^\s*Throughput [0-9.]+ MB/sec|^\s*Operation\s+Count\s+AvgLat\s+MaxLat`)},
	{Filebench, regexp.MustCompile(`IO Summary:|Per-Operation Breakdown|^Filebench Version`)},
}

// Detect tells which tool printed an output, from the first line that
// only one of them prints.
func Detect(r io.Reader) (Tool, error) {
	lines, err := readLines(r)
	if err != nil {
		return "", err
	}
	for _, l := range lines {
		for _, s := range signatures {
			if s.re.MatchString(l) {
				return s.tool, nil
			}
		}
	}
	return "", fmt.Errorf("%w: no line of dd, fio, bonnie++, dbench or filebench output in %d lines", ErrUnknownTool, len(lines))
}

// readLines returns the lines of r as a terminal shows them: without
// trailing blanks (fio pads its lines to the terminal's width when copied
// from one) and, where a line holds carriage returns (dd status=progress,
// fio's status line), only the text after the last one. Line n of the
// input is lines[n-1].
func readLines(r io.Reader) ([]string, error) {
	var lines []string
	br := bufio.NewReader(r)
	for {
		l, err := br.ReadString('\n')
		if l != "" || err == nil {
			l = strings.TrimRight(l, " \t\r\n")
			if i := strings.LastIndexByte(l, '\r'); i >= 0 {
				l = l[i+1:]
			}
			lines = append(lines, l)
		}
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// lastLine describes where an output ends, for errors about what it lacks.
func lastLine(lines []string) string {
	for n := len(lines); n > 0; n-- {
		if strings.TrimSpace(lines[n-1]) != "" {
			return fmt.Sprintf("output ends at line %d: %q", n, parse.Clip(lines[n-1]))
		}
	}
	return "output is empty"
}

// noSummary builds the error for output without any summary.
func noSummary(tool Tool, what string, lines, messages []string) error {
	msg := fmt.Sprintf("%s: %s (%s)", tool, what, lastLine(lines))
	if len(messages) > 0 {
		msg += fmt.Sprintf("; it said %q", parse.Clip(messages[0]))
	}
	return fmt.Errorf("%w: %s", ErrNoSummary, msg)
}

// renumber numbers the runs of results from 1 without gaps, in order: a
// report without figures (a fio interval in which every job failed) is no
// run.
func renumber(results []Result) {
	n, last := 0, -1
	for i := range results {
		if results[i].Run != last {
			n, last = n+1, results[i].Run
		}
		results[i].Run = n
	}
}

func ptr[T any](v T) *T { return &v }
