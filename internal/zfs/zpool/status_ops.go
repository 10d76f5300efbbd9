package zpool

import (
	"fmt"
	"iter"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The long operations that `zpool status` reports besides scans: a vdev
// removal (remove:), a RAID-Z expansion (expand:) and a checkpoint
// (checkpoint:), one header line each, the first two with continuation
// lines while they run. Each pattern below is one wording of
// print_removal_status, print_raidz_expand_status or
// print_checkpoint_status, which have not changed since they appeared
// (0.8 for removals and checkpoints, 2.3 for expansions).

type removalMatch struct {
	re   *regexp.Regexp
	fill func(r *Removal, m []string, loc *time.Location) error
}

var removalHeaders = []removalMatch{
	// A finished removal names the vdev by its index only, and its
	// duration in whole minutes: "Removal of vdev 1 copied 2.10G in 0h1m,
	// completed on <date>".
	{regexp.MustCompile(`^Removal of vdev ([0-9]+) copied (\S+) in (\S+), completed on (.+)$`), func(r *Removal, m []string, loc *time.Location) error {
		r.State = ScanFinished
		return fill(setIndex(&r.VdevIndex, m[1]), setSize(&r.Copied, m[2]), setDuration(&r.Duration, m[3]), setTime(&r.End, m[4], loc))
	}},
	{regexp.MustCompile(`^Removal of (.+) canceled on (.+)$`), func(r *Removal, m []string, loc *time.Location) error {
		r.State, r.Vdev = ScanCanceled, m[1]
		return setTime(&r.End, m[2], loc)
	}},
	{regexp.MustCompile(`^Evacuation of (.+) in progress since (.+)$`), func(r *Removal, m []string, loc *time.Location) error {
		r.State, r.Vdev = ScanScanning, m[1]
		return setTime(&r.Start, m[2], loc)
	}},
}

var (
	// "158M copied out of 698M at 39.4M/s, 22.57% done, 0h0m to go"
	removalCopied = regexp.MustCompile(`^(\S+) copied out of (\S+) at (\S+)$`)
	// "183K memory used for removed device mappings", after any state.
	removalMemory = regexp.MustCompile(`^(\S+) memory used for removed device mappings$`)
	// Both removals and expansions write "(copy is slow, no estimated
	// time)" past 30 days to go, whose comma would split it.
	copyIsSlow = regexp.MustCompile(`\(?copy is slow, no estimated time\)?`)
)

// parseRemovalHeader reads the text after "remove:".
func parseRemovalHeader(text string, loc *time.Location) (*Removal, error) {
	form := collapseSpaces(text)
	for _, h := range removalHeaders {
		if m := h.re.FindStringSubmatch(form); m != nil {
			r := &Removal{}
			if err := h.fill(r, m, loc); err != nil {
				return nil, headerError(text, err)
			}
			return r, nil
		}
	}
	return nil, headerError(text, errUnknownForm)
}

// continuation reads one continuation line of a remove: block.
func (r *Removal) continuation(line string) error {
	text := collapseSpaces(line)
	if m := removalMemory.FindStringSubmatch(text); m != nil {
		return setSize(&r.MappingMemory, m[1])
	}
	for _, c := range strings.Split(copyIsSlow.ReplaceAllString(text, "copy is slow"), ", ") {
		if m := removalCopied.FindStringSubmatch(c); m != nil {
			if err := fill(setSize(&r.Copied, m[1]), setSize(&r.Total, m[2]), setSize(&r.Rate, m[3])); err != nil {
				return err
			}
			continue
		}
		if ok, err := progressClause(c, &r.Progress, &r.Remaining); !ok {
			return fmt.Errorf("unknown clause %q", c)
		} else if err != nil {
			return err
		}
	}
	return nil
}

var (
	// "expansion of raidz2-0 in progress since <date>"
	expansionRunning = regexp.MustCompile(`^expansion of (\S+) in progress since (.+)$`)
	// "expanded raidz1-0 copied 1.50G in 00:01:02, on <date>"
	expansionFinished = regexp.MustCompile(`^expanded (\S+) copied (\S+) in (.+?), on (.+)$`)
	// "62.9M / 129M copied at 550K/s"
	expansionCopied = regexp.MustCompile(`^(\S+) / (\S+) copied at (\S+)$`)
)

// parseExpansionHeader reads the text after "expand:".
func parseExpansionHeader(text string, loc *time.Location) (*Expansion, error) {
	form := collapseSpaces(text)
	if m := expansionRunning.FindStringSubmatch(form); m != nil {
		e := &Expansion{State: ScanScanning, Vdev: m[1]}
		return e, headerError(text, setTime(&e.Start, m[2], loc))
	}
	if m := expansionFinished.FindStringSubmatch(form); m != nil {
		e := &Expansion{State: ScanFinished, Vdev: m[1]}
		return e, headerError(text, fill(setSize(&e.Copied, m[2]), setDuration(&e.Duration, m[3]), setTime(&e.End, m[4], loc)))
	}
	return nil, headerError(text, errUnknownForm)
}

// continuation reads the continuation line of a running expansion:
// "62.9M / 129M copied at 550K/s, 48.80% done, 00:02:02 to go", which
// ends in "paused for resilver or clear" while it waits.
func (e *Expansion) continuation(line string) error {
	text := copyIsSlow.ReplaceAllString(collapseSpaces(line), "copy is slow")
	for _, c := range strings.Split(text, ", ") {
		if m := expansionCopied.FindStringSubmatch(c); m != nil {
			if err := fill(setSize(&e.Copied, m[1]), setSize(&e.Total, m[2]), setSize(&e.Rate, m[3])); err != nil {
				return err
			}
			continue
		}
		if c == "paused for resilver or clear" {
			e.WaitingForResilver = true
			continue
		}
		if ok, err := progressClause(c, &e.Progress, &e.Remaining); !ok {
			return fmt.Errorf("unknown clause %q", c)
		} else if err != nil {
			return err
		}
	}
	return nil
}

var remainingClause = regexp.MustCompile(`^(.+) to go$`)

// progressClause reads the clauses that removals and expansions share:
// "22.57% done", "0h0m to go" (removals), "00:02:02 to go" (expansions),
// and "copy is slow". It tells whether c was one of them.
func progressClause(c string, progress, remaining **float64) (bool, error) {
	if p, ok := strings.CutSuffix(c, "% done"); ok {
		return true, setPercent(progress, p)
	}
	if m := remainingClause.FindStringSubmatch(c); m != nil {
		return true, setDuration(remaining, m[1])
	}
	return c == "copy is slow", nil
}

var (
	// "created Tue Jun  8 08:08:45 2021, consumes 468K"
	checkpointExists = regexp.MustCompile(`^created (.+), consumes (\S+)$`)
	// "discarding, 1.21M remaining."
	checkpointDiscarding = regexp.MustCompile(`^discarding, (\S+) remaining\.?$`)
)

// parseCheckpoint reads the text after "checkpoint:".
func parseCheckpoint(text string, loc *time.Location) (*Checkpoint, error) {
	form := collapseSpaces(text)
	if m := checkpointExists.FindStringSubmatch(form); m != nil {
		c := &Checkpoint{State: CheckpointExists}
		return c, headerError(text, fill(setTime(&c.Created, m[1], loc), setSize(&c.Space, m[2])))
	}
	if m := checkpointDiscarding.FindStringSubmatch(form); m != nil {
		c := &Checkpoint{State: CheckpointDiscarding}
		return c, headerError(text, setSize(&c.Space, m[1]))
	}
	return nil, headerError(text, errUnknownForm)
}

func setIndex(dst **int, s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("invalid vdev index %q", s)
	}
	*dst = &n
	return nil
}

// Per-vdev annotations of TRIM and initialization, each in parentheses
// after the counters (print_status_trim and print_status_initialize).

// annotations yields the text inside each innermost pair of parentheses
// of a note: every leaf has two under -t -i, so this is done without a
// regular expression.
func annotations(note string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for {
			open := strings.IndexByte(note, '(')
			if open < 0 {
				return
			}
			note = note[open+1:]
			end := strings.IndexAny(note, "()")
			if end < 0 {
				return
			}
			if note[end] == '(' {
				note = note[end:]
				continue
			}
			if !yield(note[:end]) {
				return
			}
			note = note[end+1:]
		}
	}
}

var (
	// "100% trimmed, completed at <date>", "12% initialized, suspended,
	// started at <date>"; 0.8 development builds printed the percentage
	// alone when no time was kept.
	vdevOpProgress = regexp.MustCompile(`^([0-9]+)% (trimmed|initialized)(?:, (suspended, started|started|completed) at (.+))?$`)
)

// vdevOpWords are the annotations without figures: the state of a leaf
// under -t or -i that has nothing running, and the word that plain
// `zpool status` prints while one runs.
var vdevOpWords = map[string]struct {
	trim  bool
	state string
}{
	"untrimmed":        {true, VdevOpNone},
	"trim unsupported": {true, VdevOpUnsupported},
	"trimming":         {true, VdevOpActive},
	"uninitialized":    {false, VdevOpNone},
	"initializing":     {false, VdevOpActive},
}

// annotateOps reads the TRIM and initialization annotations of a Note. An
// annotation whose date cannot be read still gives its state and
// progress; the error names it.
func annotateOps(v *Vdev, loc *time.Location) error {
	if strings.IndexByte(v.Note, '(') < 0 {
		return nil
	}
	var first error
	for text := range annotations(v.Note) {
		w, ok := vdevOpWords[text]
		if !ok {
			text = collapseSpaces(text)
			w, ok = vdevOpWords[text]
		}
		if ok {
			op := &VdevOp{State: w.state}
			if w.trim {
				v.Trim = op
			} else {
				v.Initialize = op
			}
			continue
		}
		pm := vdevOpProgress.FindStringSubmatch(text)
		if pm == nil {
			continue // (resilvering), (removing), script output...
		}
		op := &VdevOp{State: VdevOpActive}
		if err := setPercent(&op.Progress, pm[1]); err != nil && first == nil {
			first = err
		}
		var when *time.Time
		switch pm[3] {
		case "suspended, started":
			op.State, when = VdevOpSuspended, &op.Start
		case "started":
			when = &op.Start
		case "completed":
			op.State, when = VdevOpComplete, &op.End
		}
		if when != nil {
			if err := setLocaleTime(when, pm[4], loc); err != nil && first == nil {
				first = fmt.Errorf("(%s): %w", text, err)
			}
		}
		if pm[2] == "trimmed" {
			v.Trim = op
		} else {
			v.Initialize = op
		}
	}
	return first
}

var (
	// strftime's %c in a 12-hour locale such as en_US, as ZFS on Linux
	// 0.8 to 2.2 printed the times of these annotations: "Thu 21 Feb
	// 2019 07:32:44 PM UTC". The zone, when there is one, is dropped:
	// zpool printed local time.
	localeDate     = regexp.MustCompile(`^([A-Z][a-z]{2} [0-9]{1,2} [A-Z][a-z]{2} [0-9]{4} [0-9]{1,2}:[0-9]{2}:[0-9]{2} [AP]M)(?: [A-Z][A-Za-z0-9+-]*)?$`)
	localeDateForm = "Mon 2 Jan 2006 03:04:05 PM"
)

// setLocaleTime reads a time of a per-vdev annotation: ctime's form (the C
// locale, and every locale since OpenZFS 2.2.4), or the en_US form of %c.
func setLocaleTime(dst *time.Time, s string, loc *time.Location) error {
	if err := setTime(dst, s, loc); err == nil {
		return nil
	}
	if m := localeDate.FindStringSubmatch(collapseSpaces(s)); m != nil {
		if t, err := time.ParseInLocation(localeDateForm, m[1], loc); err == nil {
			*dst = t
			return nil
		}
	}
	return fmt.Errorf("invalid date %q", strings.TrimSpace(s))
}
