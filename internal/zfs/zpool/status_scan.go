package zpool

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// A scan block is a "scan:" (or old " scrub:") header line, then for a
// running scan one to three continuation lines. Their wording changed with
// every generation; each pattern below is one form zpool printed, the
// function that printed it named after the version.

type scanMatch struct {
	re   *regexp.Regexp
	fill func(s *Scan, m []string, loc *time.Location) error
}

// Header lines, whitespace collapsed.
var scanHeaders = []scanMatch{
	{regexp.MustCompile(`^none requested$`), func(s *Scan, _ []string, _ *time.Location) error {
		s.State = ScanNone
		return nil
	}},
	// OpenZFS, ZoL, illumos, FreeBSD since 2012:
	// "scrub repaired 66.5M in 0h2m with 0 errors on <date>" (also "in
	// 00:01:39" and "in 0 days 00:16:24").
	{regexp.MustCompile(`^scrub repaired (\S+) in (.+?) with ([0-9]+) errors on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = ScanScrub, ScanFinished
		return fill(setSize(&s.Processed, m[1]), setDuration(&s.Duration, m[2]), setSize(&s.Errors, m[3]), setTime(&s.End, m[4], loc))
	}},
	// Sequential rebuild (2.0+): "resilvered (mirror-0) 101M in 00:02:15
	// with 0 errors on <date>".
	{regexp.MustCompile(`^resilvered \((\S+)\) (\S+) in (.+?) with ([0-9]+) errors on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State, s.Vdev = ScanRebuild, ScanFinished, m[1]
		return fill(setSize(&s.Processed, m[2]), setDuration(&s.Duration, m[3]), setSize(&s.Errors, m[4]), setTime(&s.End, m[5], loc))
	}},
	{regexp.MustCompile(`^resilvered (\S+) in (.+?) with ([0-9]+) errors on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = ScanResilver, ScanFinished
		return fill(setSize(&s.Processed, m[1]), setDuration(&s.Duration, m[2]), setSize(&s.Errors, m[3]), setTime(&s.End, m[4], loc))
	}},
	{regexp.MustCompile(`^(scrub|resilver) canceled on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = m[1], ScanCanceled
		return setTime(&s.End, m[2], loc)
	}},
	{regexp.MustCompile(`^resilver \((\S+)\) canceled on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State, s.Vdev = ScanRebuild, ScanCanceled, m[1]
		return setTime(&s.End, m[2], loc)
	}},
	{regexp.MustCompile(`^(scrub|resilver) in progress since (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = m[1], ScanScanning
		return setTime(&s.Start, m[2], loc)
	}},
	{regexp.MustCompile(`^resilver \((\S+)\) in progress since (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State, s.Vdev = ScanRebuild, ScanScanning, m[1]
		return setTime(&s.Start, m[2], loc)
	}},
	// The pause time has no field: the start follows on "scrub started on".
	{regexp.MustCompile(`^scrub paused since (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = ScanScrub, ScanPaused
		var paused time.Time
		return setTime(&paused, m[1], loc)
	}},
	// Solaris, zfs-fuse, FreeBSD 7/8: "scrub completed after 0h0m with 0
	// errors on <date>"; "stopped" when it was canceled.
	{regexp.MustCompile(`^(scrub|resilver) (completed|stopped) after (\S+) with ([0-9]+) errors on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = m[1], ScanFinished
		if m[2] == "stopped" {
			s.State = ScanCanceled
		}
		return fill(setDuration(&s.Duration, m[3]), setSize(&s.Errors, m[4]), setTime(&s.End, m[5], loc))
	}},
	{regexp.MustCompile(`^(scrub|resilver) completed with ([0-9]+) errors on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = m[1], ScanFinished
		return fill(setSize(&s.Errors, m[2]), setTime(&s.End, m[3], loc))
	}},
	// "scrub in progress for 0h1m, 12.34% done, 0h5m to go": the elapsed
	// time gives no start without the time of the run, so it is not kept.
	{regexp.MustCompile(`^(scrub|resilver) in progress for \S+, (\S+)% done, (\S+) to go$`), func(s *Scan, m []string, _ *time.Location) error {
		s.Function, s.State = m[1], ScanScanning
		return fill(setPercent(&s.Progress, m[2]), setDuration(&s.Remaining, m[3]))
	}},
	{regexp.MustCompile(`^(scrub|resilver) in progress, (\S+)% done, (\S+) to go$`), func(s *Scan, m []string, _ *time.Location) error {
		s.Function, s.State = m[1], ScanScanning
		return fill(setPercent(&s.Progress, m[2]), setDuration(&s.Remaining, m[3]))
	}},
	// Error scrub (`zpool scrub -e`, 2.2+), printed after " scrub:". Like
	// the JSON error_scrub stats, Examined counts error blocks, not bytes.
	{regexp.MustCompile(`^scrubbed ([0-9]+) error blocks in (.+?) on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = ScanErrorScrub, ScanFinished
		return fill(setSize(&s.Examined, m[1]), setDuration(&s.Duration, m[2]), setTime(&s.End, m[3], loc))
	}},
	{regexp.MustCompile(`^error scrub canceled on (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = ScanErrorScrub, ScanCanceled
		return setTime(&s.End, m[1], loc)
	}},
	{regexp.MustCompile(`^error scrub in progress since (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = ScanErrorScrub, ScanScanning
		return setTime(&s.Start, m[1], loc)
	}},
	{regexp.MustCompile(`^error scrub paused since (.+)$`), func(s *Scan, m []string, loc *time.Location) error {
		s.Function, s.State = ScanErrorScrub, ScanPaused
		var paused time.Time
		return setTime(&paused, m[1], loc)
	}},
}

// parseScanHeader reads the text after "scan:" or " scrub:".
func parseScanHeader(text string, loc *time.Location) (Scan, error) {
	form := collapseSpaces(text)
	for _, h := range scanHeaders {
		if m := h.re.FindStringSubmatch(form); m != nil {
			var s Scan
			if err := h.fill(&s, m, loc); err != nil {
				return Scan{}, headerError(text, err)
			}
			return s, nil
		}
	}
	return Scan{}, headerError(text, errUnknownForm)
}

// errUnknownForm is why the text after a header (scan:, remove:, expand:,
// checkpoint:) worded in none of the forms zpool is known to print is
// skipped: a release that words it anew.
var errUnknownForm = errors.New("unknown form")

// headerError is the parse error of the text after a header, which it
// quotes (clipped): the pool's warning adds only the header and the line
// number. A nil err is no error.
func headerError(text string, err error) error {
	if err == nil {
		return nil
	}
	return parse.Errorf(0, "%q: %w", parse.Clip(text), err)
}

// Clauses of the continuation lines, split at ", ".
var scanClauses = []scanMatch{
	// 0.6/0.7, illumos, FreeBSD: "116G scanned out of 8.60T at 649M/s";
	// the only rate these print counts as the issue rate.
	{regexp.MustCompile(`^(\S+) scanned out of (\S+)(?: at (\S+))?$`), func(s *Scan, m []string, _ *time.Location) error {
		return fill(setSize(&s.Examined, m[1]), setSize(&s.Total, m[2]), setSize(&s.IssueRate, m[3]))
	}},
	// 2.2+: "403M / 405M scanned at 100M/s" (no rate when paused or zero).
	{regexp.MustCompile(`^(\S+) / (\S+) scanned(?: at (\S+))?$`), func(s *Scan, m []string, _ *time.Location) error {
		return fill(setSize(&s.Examined, m[1]), setSize(&s.Total, m[2]), setSize(&s.ScanRate, m[3]))
	}},
	// 0.8-2.1: "590G scanned at 497M/s"; paused: "590G scanned".
	{regexp.MustCompile(`^(\S+) scanned(?: at (\S+))?$`), func(s *Scan, m []string, _ *time.Location) error {
		return fill(setSize(&s.Examined, m[1]), setSize(&s.ScanRate, m[2]))
	}},
	// 2.2+: "68.4M / 405M issued at 10.0M/s"; the second figure is the
	// total less the skipped bytes, which has no field.
	{regexp.MustCompile(`^(\S+) / \S+ issued(?: at (\S+))?$`), func(s *Scan, m []string, _ *time.Location) error {
		return fill(setSize(&s.Issued, m[1]), setSize(&s.IssueRate, m[2]))
	}},
	// 0.8-2.1: "229G issued at 193M/s"; rebuilds of 2.0/2.1 drop the
	// "at": "1.59T issued 6.07G/s".
	{regexp.MustCompile(`^(\S+) issued(?: at)?(?: (\S+))?$`), func(s *Scan, m []string, _ *time.Location) error {
		return fill(setSize(&s.Issued, m[1]), setSize(&s.IssueRate, m[2]))
	}},
	{regexp.MustCompile(`^(\S+) total$`), func(s *Scan, m []string, _ *time.Location) error {
		return setSize(&s.Total, m[1])
	}},
	{regexp.MustCompile(`^(\S+) (?:repaired|resilvered)(?: at (\S+))?$`), func(s *Scan, m []string, _ *time.Location) error {
		if err := setSize(&s.Processed, m[1]); err != nil || m[2] == "" || s.IssueRate != nil {
			return err
		}
		return setSize(&s.IssueRate, m[2])
	}},
	{regexp.MustCompile(`^(\S+)% done$`), func(s *Scan, m []string, _ *time.Location) error {
		return setPercent(&s.Progress, m[1])
	}},
	{regexp.MustCompile(`^(.+) to go$`), func(s *Scan, m []string, _ *time.Location) error {
		return setDuration(&s.Remaining, m[1])
	}},
	{regexp.MustCompile(`^(?:no estimated completion time|scan is slow)$`), func(*Scan, []string, *time.Location) error {
		return nil
	}},
	// Error scrub: "50.00% done, issued I/O for 2 error blocks".
	{regexp.MustCompile(`^issued I/O for ([0-9]+) error blocks$`), func(s *Scan, m []string, _ *time.Location) error {
		return setSize(&s.Examined, m[1])
	}},
}

var (
	// "\tscrub started on <date>" follows "scrub paused since"; 0.7 pads
	// it with three spaces.
	scanStartedOn = regexp.MustCompile(`^(?:error )?scrub started on (.+)$`)
	// 0.6/0.7 write "(scan is slow, no estimated time)", whose comma would
	// split it.
	scanIsSlow = regexp.MustCompile(`\(?scan is slow, no estimated time\)?`)
)

// continuation reads one continuation line of a scan block.
func (s *Scan) continuation(line string, loc *time.Location) error {
	text := collapseSpaces(line)
	if strings.HasPrefix(text, "scan warning:") {
		return nil // a checkpoint hides blocks from the scan: nothing to read
	}
	if m := scanStartedOn.FindStringSubmatch(text); m != nil {
		return setTime(&s.Start, m[1], loc)
	}
	text = scanIsSlow.ReplaceAllString(text, "scan is slow")
	for _, clause := range strings.Split(text, ", ") {
		if err := s.clause(clause, loc); err != nil {
			return err
		}
	}
	return nil
}

func (s *Scan) clause(c string, loc *time.Location) error {
	for _, cm := range scanClauses {
		if m := cm.re.FindStringSubmatch(c); m != nil {
			return cm.fill(s, m, loc)
		}
	}
	return fmt.Errorf("unknown clause %q", c)
}

// fill returns the first error of several setters.
func fill(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// setSize stores a figure as zpool prints it ("1.66T", "0B", "22,5M/s");
// an empty match leaves the field nil.
func setSize(dst **float64, s string) error {
	if s == "" {
		return nil
	}
	v, ok, err := ParseSize(s)
	if err != nil {
		return err
	}
	if ok {
		*dst = &v
	}
	return nil
}

// setPercent stores "34.79" (or "100,09" in a decimal-comma locale) as a
// ratio.
func setPercent(dst **float64, s string) error {
	// Scaling in the exponent gives the float nearest the printed ratio.
	v, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1)+"e-2", 64)
	if err != nil {
		return fmt.Errorf("invalid percentage %q", s)
	}
	*dst = &v
	return nil
}

func setDuration(dst **float64, s string) error {
	v, err := parseScanDuration(s)
	if err != nil {
		return err
	}
	*dst = &v
	return nil
}

var (
	hoursMinutes = regexp.MustCompile(`^([0-9]+)h([0-9]+)m$`)
	daysClock    = regexp.MustCompile(`^(?:([0-9]+) days? )?([0-9]+):([0-9]{2}):([0-9]{2})$`)
)

// parseScanDuration reads a duration in seconds: "0h2m" and "52h55m" (to
// 0.7), "00:01:39" (2.0+), "0 days 00:16:24" (0.8) and "1 days 02:03:04".
func parseScanDuration(s string) (float64, error) {
	s = collapseSpaces(s)
	if m := hoursMinutes.FindStringSubmatch(s); m != nil {
		return atof(m[1])*3600 + atof(m[2])*60, nil
	}
	if m := daysClock.FindStringSubmatch(s); m != nil {
		return atof(m[1])*86400 + atof(m[2])*3600 + atof(m[3])*60 + atof(m[4]), nil
	}
	return 0, fmt.Errorf("invalid duration %q", s)
}

// atof reads digits that a regular expression already checked; "" is 0.
func atof(s string) float64 {
	v, _ := strconv.ParseFloat(s, 64)
	return v
}

// setTime reads a date as ctime(3) prints it in the C locale ("Mon Jun  2
// 14:21:35 2014"), or as 0.7 printed the pause time ("Sun Jun 08 ...").
func setTime(dst *time.Time, s string, loc *time.Location) error {
	t, err := time.ParseInLocation("Mon Jan 2 15:04:05 2006", collapseSpaces(s), loc)
	if err != nil {
		return fmt.Errorf("invalid date %q", strings.TrimSpace(s))
	}
	*dst = t
	return nil
}

func collapseSpaces(s string) string { return strings.Join(strings.Fields(s), " ") }
