package workload

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

const (
	fioNum  = `([0-9]+(?:\.[0-9]+)?)`
	fioUnit = `([A-Za-z]*)`
)

var (
	fioVersion = regexp.MustCompile(`^fio-[0-9]\S*$`)
	fioTerse   = regexp.MustCompile(`^[0-9];fio-[0-9]`)
	// "seq-write: (groupid=0, jobs=1): err= 0: pid=9682: Thu May 30 ...",
	// "full: (groupid=0, jobs=1): err=28 (file:io_u.c:1876, ...): pid=...".
	fioJob = regexp.MustCompile(`^(.+?): \(groupid=([0-9]+), jobs=([0-9]+)\): err=\s*([0-9]+)(?: \((.*)\))?: pid=`)
	// fio 3.x: "write: IOPS=14.3k, BW=1792MiB/s (1879MB/s)(8745MiB/4880msec); 0 zone resets".
	fioOp3 = regexp.MustCompile(`^(read|write|trim)\s*: IOPS=([0-9.]+[kMGT]?), BW=` + fioNum + fioUnit + `/s(?: \(` + fioNum + fioUnit + `/s\))?\(` + fioNum + fioUnit + `/` + fioNum + `(\w+)\)`)
	// fio 2.x: "write: io=10240KB, bw=1250.7KB/s, iops=1250, runt=  8188msec".
	fioOp2 = regexp.MustCompile(`^(read|write|trim)\s*: io=` + fioNum + fioUnit + `, bw=` + fioNum + fioUnit + `/s, iops=([0-9.]+[kKMGT]?), runt=\s*` + fioNum + `(\w+)`)
	// "clat (usec): min=10, max=938354, avg=728.89, stdev=21651.15"; the
	// values may carry an SI suffix ("max=42220k").
	fioLat = regexp.MustCompile(`^(c?lat) \((nsec|usec|msec|sec)\): min=\s*[0-9.]+[kKMG]?, max=\s*([0-9.]+[kKMG]?), avg=\s*([0-9.]+[kKMG]?),`)
	// "clat percentiles (usec):", then lines of
	// "|  1.00th=[  135],  5.00th=[  143], ...".
	fioPercentiles = regexp.MustCompile(`^(c?lat|slat) percentiles \((nsec|usec|msec|sec)\):$`)
	fioPercentile  = regexp.MustCompile(`([0-9]+(?:\.[0-9]+)?)th=\[\s*([0-9.]+[kKMG]?)\]`)
	// "Run status group 0 (all jobs):".
	fioGroup = regexp.MustCompile(`^Run status group ([0-9]+) `)
	// fio 3.x: "WRITE: bw=1586MiB/s (1663MB/s), 1586MiB/s-1586MiB/s (...), io=19.5GiB (21.0GB), run=12611-12611msec".
	fioGroup3 = regexp.MustCompile(`^(READ|WRITE|TRIM): bw=` + fioNum + fioUnit + `/s(?: \(` + fioNum + fioUnit + `/s\))?, .*\bio=` + fioNum + fioUnit + `(?: \([^)]*\))?, run=` + fioNum + `-` + fioNum + `(\w+)`)
	// fio 2.x: "WRITE: io=10240KB, aggrb=1250KB/s, minb=1250KB/s, maxb=1250KB/s, mint=8188msec, maxt=8188msec".
	fioGroup2 = regexp.MustCompile(`^(READ|WRITE|TRIM): io=` + fioNum + fioUnit + `, aggrb=` + fioNum + fioUnit + `/s, .*\bmaxt=` + fioNum + `(\w+)`)
)

var fioDirection = map[string]Direction{"read": Read, "write": Write, "READ": Read, "WRITE": Write}

// ParseFio reads fio's text report (the default --output-format=normal)
// or its JSON (--output-format=json or json+, see parseFioJSON). Each job
// block gives a result per direction ("read", "write", "trim"), with the
// latency of its "lat" line (submission plus completion), or of its
// "clat" line when there is no "lat" line, and the distribution of its
// percentiles block: "clat percentiles" (fio's default), else "lat
// percentiles", with the mean of the same line. Each "Run status group"
// gives a result per direction ("READ", "WRITE", "TRIM") with the
// group's aggregate bandwidth, its bytes and its longest job's run time.
//
// With --status-interval fio prints a whole report every interval: a job
// block after a group summary starts the next run. Lines starting with
// "fio: " and jobs with a non-zero err= are messages.
func ParseFio(r io.Reader) (Summary, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Summary{}, err
	}
	if at, ok := fioJSONStart(data); ok {
		return parseFioJSON(data, at)
	}
	lines, err := readLines(bytes.NewReader(data))
	if err != nil {
		return Summary{}, err
	}
	s := Summary{Tool: Fio}
	run := 1
	var job string
	var group *int
	inSummary := false // after "Run status group" lines of this run
	op := -1           // index of the current job's last operation in s.Results
	// means are the clat and lat means of each job result, by index:
	// the percentiles take the mean of their own measure.
	means := map[int]map[string]float64{}
	// percentiles is the measure and unit of the percentiles block being
	// read, "" outside one.
	var percentiles, unit string
	for i, raw := range lines {
		n := i + 1
		line := strings.TrimSpace(raw)
		if percentiles != "" {
			if rest, ok := strings.CutPrefix(line, "|"); ok {
				if err := addPercentiles(&s.Results[op], percentiles, unit, rest); err != nil {
					return Summary{}, fmt.Errorf("line %d: %w", n, err)
				}
				continue
			}
			percentiles = ""
		}
		if fioTerse.MatchString(line) {
			return Summary{}, fmt.Errorf("line %d: %w: fio terse output; run fio with --output-format=normal or json", n, ErrUnsupported)
		}
		if strings.HasPrefix(line, "fio: ") {
			s.Messages = append(s.Messages, line)
			continue
		}
		if fioVersion.MatchString(line) {
			s.Version = line
			continue
		}
		if m := fioJob.FindStringSubmatch(raw); m != nil {
			if inSummary {
				run++
				inSummary = false
			}
			job, op = m[1], -1
			g, _ := strconv.Atoi(m[2])
			group = &g
			if m[4] != "0" {
				msg := fmt.Sprintf("job %s: err=%s", job, m[4])
				if m[5] != "" {
					msg += " (" + m[5] + ")"
				}
				s.Messages = append(s.Messages, msg)
			}
			continue
		}
		if m := fioGroup.FindStringSubmatch(line); m != nil {
			g, _ := strconv.Atoi(m[1])
			group, job, op, inSummary = &g, "", -1, true
			continue
		}
		res, ok, err := fioResult(line)
		if err != nil {
			return Summary{}, fmt.Errorf("line %d: %w", n, err)
		}
		if ok {
			res.Run = run
			if group != nil {
				res.Group = ptr(*group)
			}
			if !inSummary {
				res.Job = job
			}
			s.Results = append(s.Results, res)
			op = len(s.Results) - 1
			if inSummary {
				op = -1
			}
			continue
		}
		if m := fioPercentiles.FindStringSubmatch(line); m != nil && op >= 0 {
			// clat's are kept over lat's, whichever fio prints first:
			// fio prints them by default, so runs compare alike.
			if m[1] != "slat" && (s.Results[op].Latency == nil || m[1] == "clat") {
				percentiles, unit = m[1], m[2]
				s.Results[op].Latency = &Latency{Measure: m[1]}
			}
			continue
		}
		if m := fioLat.FindStringSubmatch(line); m != nil && op >= 0 {
			avg, err := fioLatency(m[4], m[2])
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			if means[op] == nil {
				means[op] = map[string]float64{}
			}
			means[op][m[1]] = avg
			if m[1] == "clat" && s.Results[op].LatencySeconds != nil {
				continue
			}
			maxLat, err := fioLatency(m[3], m[2])
			if err != nil {
				return Summary{}, fmt.Errorf("line %d: %w", n, err)
			}
			s.Results[op].LatencySeconds, s.Results[op].MaxLatencySeconds = &avg, &maxLat
		}
	}
	if len(s.Results) == 0 {
		return Summary{}, noSummary(Fio, "no job results and no group summary", lines, s.Messages)
	}
	for i := range s.Results {
		l := s.Results[i].Latency
		if l == nil {
			continue
		}
		if len(l.Percentiles) == 0 {
			// A heading whose lines were cut off.
			s.Results[i].Latency = nil
			continue
		}
		if mean, ok := means[i][l.Measure]; ok {
			l.MeanSeconds = &mean
		}
	}
	renumber(s.Results)
	s.Headline = fioHeadline(s.Final())
	return s, nil
}

// fioResult reads a job's operation line or a group summary line.
func fioResult(line string) (res Result, ok bool, err error) {
	var f lineFigures
	done := func() (Result, bool, error) {
		if f.err != nil {
			return Result{}, false, fmt.Errorf("fio %s: %w", res.Name, f.err)
		}
		return res, true, nil
	}
	if m := fioOp3.FindStringSubmatch(line); m != nil {
		res = Result{Name: m[1], Direction: fioDirection[m[1]]}
		res.Printed = "IOPS=" + m[2] + ", BW=" + m[3] + m[4] + "/s"
		if m[5] != "" {
			res.Printed += " (" + m[5] + m[6] + "/s)"
		}
		res.OperationsPerSecond, res.BytesPerSecond = f.count(m[2]), f.bytes(m[3], m[4], false)
		res.Bytes, res.Seconds = f.bytes(m[7], m[8], false), f.seconds(m[9], m[10])
		return done()
	}
	if m := fioOp2.FindStringSubmatch(line); m != nil {
		res = Result{Name: m[1], Direction: fioDirection[m[1]]}
		res.Printed = "bw=" + m[4] + m[5] + "/s, iops=" + m[6]
		res.Bytes, res.BytesPerSecond = f.bytes(m[2], m[3], true), f.bytes(m[4], m[5], true)
		res.OperationsPerSecond, res.Seconds = f.count(m[6]), f.seconds(m[7], m[8])
		return done()
	}
	if m := fioGroup3.FindStringSubmatch(line); m != nil {
		res = Result{Name: m[1], Direction: fioDirection[m[1]]}
		res.Printed = "bw=" + m[2] + m[3] + "/s"
		if m[4] != "" {
			res.Printed += " (" + m[4] + m[5] + "/s)"
		}
		res.BytesPerSecond, res.Bytes = f.bytes(m[2], m[3], false), f.bytes(m[6], m[7], false)
		res.Seconds = f.seconds(m[9], m[10]) // the longest job's
		return done()
	}
	if m := fioGroup2.FindStringSubmatch(line); m != nil {
		res = Result{Name: m[1], Direction: fioDirection[m[1]]}
		res.Printed = "aggrb=" + m[4] + m[5] + "/s"
		res.Bytes, res.BytesPerSecond = f.bytes(m[2], m[3], true), f.bytes(m[4], m[5], true)
		res.Seconds = f.seconds(m[6], m[7])
		return done()
	}
	return res, false, nil
}

// lineFigures reads the numbers of one matched line, keeping the first error,
// so that each figure of a line reads as one statement.
type lineFigures struct{ err error }

func (f *lineFigures) keep(x float64, err error) *float64 {
	if f.err != nil {
		return nil
	}
	if err != nil {
		f.err = err
		return nil
	}
	return &x
}

func (f *lineFigures) bytes(num, unit string, legacyBinary bool) *float64 {
	return f.keep(bytesOf(num, unit, legacyBinary))
}

func (f *lineFigures) count(s string) *float64 { return f.keep(count(s)) }

func (f *lineFigures) seconds(num, unit string) *float64 { return f.keep(seconds(num, unit)) }

// addPercentiles reads one line of a percentiles block, the text after
// its "|" (" 99.00th=[ 1123], 99.50th=[ 1156],"), into res.Latency, of
// measure in unit.
func addPercentiles(res *Result, measure, unit, text string) error {
	l := res.Latency
	if l == nil || l.Measure != measure {
		return nil
	}
	for _, m := range fioPercentile.FindAllStringSubmatch(text, -1) {
		pct, err := number(m[1])
		if err != nil || pct > 100 {
			return fmt.Errorf("fio %s percentile %q: not a percentage", measure, m[1])
		}
		v, err := fioLatency(m[2], unit)
		if err != nil {
			return err
		}
		if n := len(l.Percentiles); n > 0 && pct <= l.Percentiles[n-1].Percent {
			return fmt.Errorf("fio %s percentiles out of order: %v after %v", measure, pct, l.Percentiles[n-1].Percent)
		}
		l.Percentiles = append(l.Percentiles, Percentile{Percent: pct, Seconds: v})
	}
	return nil
}

// fioLatency reads a latency figure ("728.89", "42220k") in its unit.
func fioLatency(v, unit string) (float64, error) {
	c, err := count(v)
	if err != nil {
		return 0, fmt.Errorf("fio latency: %w", err)
	}
	return c * timeUnit[unit], nil
}

// fioHeadline joins the group summary lines of a report as fio prints
// them ("WRITE: bw=1586MiB/s (1663MB/s)"), or its jobs' lines when the
// output has no group summary.
func fioHeadline(results []Result) string {
	var groups, jobs []string
	names := map[string]bool{}
	for _, r := range results {
		if r.Job == "" {
			groups = append(groups, r.Name+": "+r.Printed)
		} else {
			names[r.Job] = true
		}
	}
	if len(groups) > 0 {
		return strings.Join(groups, "; ")
	}
	for _, r := range results {
		h := r.Name + ": " + r.Printed
		if len(names) > 1 {
			h = r.Job + " " + h
		}
		jobs = append(jobs, h)
	}
	return strings.Join(jobs, "; ")
}
