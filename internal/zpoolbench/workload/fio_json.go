package workload

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// fioJSONHead is how fio's JSON report starts: a line of "{", then the
// "fio version" key.
var fioJSONHead = regexp.MustCompile(`(?m)^\{[ \t]*\r?\n[ \t]*"fio version"`)

// fioJSONStart is the offset of the first JSON report in data, when data
// holds one: fio prints it alone with --output-format=json, and after or
// before the text report with --output-format=normal,json.
func fioJSONStart(data []byte) (int, bool) {
	loc := fioJSONHead.FindIndex(data)
	if loc == nil {
		return 0, false
	}
	return loc[0], true
}

// fioReport is the part of fio's JSON report the package reads, fio 3.x
// (3.0 renamed the latencies clat_ns and lat_ns, in nanoseconds, and made
// io_bytes bytes).
type fioReport struct {
	Version string       `json:"fio version"`
	Jobs    []fioJSONJob `json:"jobs"`
}

type fioJSONJob struct {
	Name  string `json:"jobname"`
	Group *int   `json:"groupid"`
	Error int    `json:"error"`
	Read  *fioOp `json:"read"`
	Write *fioOp `json:"write"`
	Trim  *fioOp `json:"trim"`
}

// fioOp is one direction of a job. Numbers are kept as printed.
type fioOp struct {
	IOBytes  json.Number `json:"io_bytes"`
	BWBytes  json.Number `json:"bw_bytes"`
	IOPS     json.Number `json:"iops"`
	Runtime  json.Number `json:"runtime"` // milliseconds
	TotalIOs json.Number `json:"total_ios"`
	Clat     *fioLatJSON `json:"clat_ns"`
	Lat      *fioLatJSON `json:"lat_ns"`
	// OldClat is fio 2.x's clat, in microseconds, which 3.0 replaced.
	OldClat json.RawMessage `json:"clat"`
}

// fioLatJSON is a latency of fio's JSON, in nanoseconds: N I/Os timed, and
// the percentiles when fio computed them for this measure, keyed by
// percent as "99.000000".
type fioLatJSON struct {
	Max        json.Number            `json:"max"`
	Mean       json.Number            `json:"mean"`
	N          json.Number            `json:"N"`
	Percentile map[string]json.Number `json:"percentile"`
}

// parseFioJSON reads the JSON reports of fio from offset at of data: one
// report, or one per --status-interval, each a run. Each job gives a
// result per direction it ran ("read", "write", "trim" with a non-zero
// runtime, as the text report prints them), with its bytes, bandwidth,
// IOPS, I/O count and run time; its latency is lat_ns's mean and maximum
// (clat_ns's mean where lat_ns timed nothing), and its distribution
// clat_ns's percentiles with clat_ns's mean and N, or lat_ns's when only
// they have percentiles (lat_percentiles=1). JSON has no group summary.
// Lines starting with "fio: " around the reports, and jobs with a
// non-zero error, are messages.
func parseFioJSON(data []byte, at int) (Summary, error) {
	s := Summary{Tool: Fio}
	messages := func(text []byte) {
		for _, l := range strings.Split(string(text), "\n") {
			if l = strings.TrimSpace(l); strings.HasPrefix(l, "fio: ") {
				s.Messages = append(s.Messages, l)
			}
		}
	}
	messages(data[:at])
	for run := 1; ; run++ {
		dec := json.NewDecoder(bytes.NewReader(data[at:]))
		dec.UseNumber()
		var rep fioReport
		if err := dec.Decode(&rep); err != nil {
			offset := at + int(dec.InputOffset())
			var syntax *json.SyntaxError
			if errors.As(err, &syntax) {
				offset = at + int(syntax.Offset)
			}
			return Summary{}, fmt.Errorf("line %d: fio JSON: %w", lineAt(data, offset), err)
		}
		end := at + int(dec.InputOffset())
		if rep.Version != "" {
			s.Version = rep.Version
		}
		for _, job := range rep.Jobs {
			if job.Error != 0 {
				s.Messages = append(s.Messages, fmt.Sprintf("job %s: err=%d", job.Name, job.Error))
			}
			for _, d := range []struct {
				name string
				op   *fioOp
			}{{"read", job.Read}, {"write", job.Write}, {"trim", job.Trim}} {
				res, ok, err := fioJSONResult(d.name, d.op)
				if err != nil {
					return Summary{}, fmt.Errorf("line %d: fio JSON job %s: %w", lineAt(data, end), job.Name, err)
				}
				if !ok {
					continue
				}
				res.Job, res.Run = job.Name, run
				if job.Group != nil {
					res.Group = ptr(*job.Group)
				}
				s.Results = append(s.Results, res)
			}
		}
		// Text up to the next report (fio's messages on stderr, the text
		// report of --output-format=normal,json) is read for messages.
		next, ok := fioJSONStart(data[end:])
		if !ok {
			messages(data[end:])
			break
		}
		messages(data[end : end+next])
		at = end + next
	}
	if len(s.Results) == 0 {
		lines, _ := readLines(bytes.NewReader(data))
		return Summary{}, noSummary(Fio, "no job in the JSON report ran", lines, s.Messages)
	}
	renumber(s.Results)
	s.Headline = fioHeadline(s.Final())
	return s, nil
}

// fioJSONResult reads one direction of a job: false when it did not run.
func fioJSONResult(name string, op *fioOp) (Result, bool, error) {
	if op == nil || op.Runtime == "" || op.Runtime == "0" {
		return Result{}, false, nil
	}
	if op.Clat == nil && op.Lat == nil && op.OldClat != nil {
		return Result{}, false, fmt.Errorf("%w: the JSON of fio before 3.0 (latencies in microseconds, sizes in KiB); run fio with --output-format=normal", ErrUnsupported)
	}
	var f jsonFigures
	res := Result{Name: name, Direction: fioDirection[name]}
	res.Bytes = f.get(op.IOBytes, 1)
	res.BytesPerSecond = f.get(op.BWBytes, 1)
	res.OperationsPerSecond = f.get(op.IOPS, 1)
	res.Operations = f.get(op.TotalIOs, 1)
	res.Seconds = f.get(op.Runtime, 1e-3)
	res.Printed = "bw_bytes=" + string(op.BWBytes) + ", iops=" + string(op.IOPS)
	timed := func(l *fioLatJSON) bool { return l != nil && l.N != "" && l.N != "0" }
	switch {
	case timed(op.Lat):
		res.LatencySeconds, res.MaxLatencySeconds = f.get(op.Lat.Mean, 1e-9), f.get(op.Lat.Max, 1e-9)
	case timed(op.Clat):
		res.LatencySeconds, res.MaxLatencySeconds = f.get(op.Clat.Mean, 1e-9), f.get(op.Clat.Max, 1e-9)
	}
	for _, m := range []struct {
		measure string
		l       *fioLatJSON
	}{{"clat", op.Clat}, {"lat", op.Lat}} {
		if !timed(m.l) || len(m.l.Percentile) == 0 {
			continue
		}
		l := &Latency{Measure: m.measure, Operations: f.get(m.l.N, 1), MeanSeconds: f.get(m.l.Mean, 1e-9)}
		for key, v := range m.l.Percentile {
			// fio writes each percent with %f: "99.000000".
			pct, err := strconv.ParseFloat(key, 64)
			if err != nil || !(pct >= 0 && pct <= 100) {
				return Result{}, false, fmt.Errorf("%s %s percentile %q: not a percentage", name, m.measure, key)
			}
			if secs := f.get(v, 1e-9); secs != nil {
				l.Percentiles = append(l.Percentiles, Percentile{Percent: pct, Seconds: *secs})
			}
		}
		slices.SortFunc(l.Percentiles, func(a, b Percentile) int { return cmp.Compare(a.Percent, b.Percent) })
		for i := 1; i < len(l.Percentiles); i++ {
			if l.Percentiles[i].Percent == l.Percentiles[i-1].Percent {
				return Result{}, false, fmt.Errorf("%s %s percentile %v given twice", name, m.measure, l.Percentiles[i].Percent)
			}
		}
		res.Latency = l
		break
	}
	if f.err != nil {
		return Result{}, false, fmt.Errorf("%s: %w", name, f.err)
	}
	return res, true, nil
}

// jsonFigures reads the numbers of one JSON object, keeping the first
// error, as lineFigures does for a line.
type jsonFigures struct{ err error }

// get is n times scale; nil for a number fio did not print.
func (f *jsonFigures) get(n json.Number, scale float64) *float64 {
	if f.err != nil || n == "" {
		return nil
	}
	v, err := number(string(n))
	if err != nil {
		f.err = err
		return nil
	}
	v *= scale
	return &v
}

// lineAt is the line number of offset in data.
func lineAt(data []byte, offset int) int {
	offset = min(max(offset, 0), len(data))
	return 1 + bytes.Count(data[:offset], []byte("\n"))
}
