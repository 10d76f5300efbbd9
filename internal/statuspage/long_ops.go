package statuspage

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The long operations of zpool status besides scans: a vdev removal and a
// RAID-Z expansion, shown as scans with the functions the metrics give
// them (see collector/long_ops.go); a checkpoint, one line under them;
// and each leaf's TRIM and initialization, in its row's note.
const (
	functionRemove = "remove"
	functionExpand = "expand"
)

// copyNouns name the operations that copy data rather than scan it, in the
// head line; they read "copying" where a scan reads "scanning".
var copyNouns = map[string]string{
	functionRemove: "removal",
	functionExpand: "expansion",
}

// removalView shows a removal as the metrics export it: its copied bytes as
// the issued bytes, and no vdev, since zpool names the removed vdev by a
// path or a type while it runs and by an index once it has finished. The
// tree shows which vdev is "removing".
func removalView(r *zpool.Removal) ScanView {
	return ScanView{
		Function: functionRemove, State: r.State, Progress: r.Progress,
		Issued: r.Copied, Total: r.Total, IssueRate: r.Rate, Remaining: r.Remaining, Duration: r.Duration,
		Start: r.Start, End: r.End, MappingMemory: r.MappingMemory,
	}.described()
}

// expansionView shows an expansion as the metrics export it, on its raidz
// vdev.
func expansionView(e *zpool.Expansion) ScanView {
	return ScanView{
		Function: functionExpand, State: e.State, Vdev: e.Vdev, Progress: e.Progress,
		Issued: e.Copied, Total: e.Total, IssueRate: e.Rate, Remaining: e.Remaining, Duration: e.Duration,
		Start: e.Start, End: e.End,
		// zpool tells the wait only while the expansion runs.
		Waiting: e.WaitingForResilver && e.State == zpool.ScanScanning,
	}.described()
}

// CheckpointView is the pool's checkpoint: space the pool cannot use until
// it is discarded, which is easy to forget once the change it guarded is
// done.
type CheckpointView struct {
	State   string    // "exists" or "discarding"
	Space   *float64  // bytes held; while discarding, bytes still to free
	Created time.Time // zero while discarding
	Age     *float64  // seconds since Created at the reading
}

func checkpointView(c *zpool.Checkpoint, now time.Time) *CheckpointView {
	if c == nil {
		return nil
	}
	v := &CheckpointView{State: c.State, Space: c.Space, Created: c.Created}
	if !c.Created.IsZero() && !now.Before(c.Created) {
		age := now.Sub(c.Created).Seconds()
		v.Age = &age
	}
	return v
}

// activityWords are what zpool status notes for each activity, without
// the parentheses.
var activityWords = map[string]string{
	zpool.ActivityResilvering:      "resilvering",
	zpool.ActivityRepairing:        "repairing",
	zpool.ActivityAwaitingResilver: "awaiting resilver",
	zpool.ActivityRemoving:         "removing",
	zpool.ActivityNonAllocating:    "non-allocating",
}

func activityWord(activity string) string {
	if w, ok := activityWords[activity]; ok {
		return w
	}
	return strings.ReplaceAll(activity, "_", " ")
}

// note is what a row says after its counters: zpool's own note, where the
// annotations that the vdev's fields tell are said again from the fields,
// in short. A JSON status has no such annotations, so its rows then read
// as those of the text: "removing", "trimming 31.0%".
func note(vd *zpool.Vdev) string {
	var parts []string
	if rest := untoldNote(vd); rest != "" {
		parts = append(parts, rest)
	}
	for _, a := range vd.Activities {
		parts = append(parts, activityWord(a))
	}
	// In zpool's order: initialization, then TRIM.
	for _, op := range []string{opNote(vd.Initialize, "initializing", "initialization"), opNote(vd.Trim, "trimming", "TRIM")} {
		if op != "" {
			parts = append(parts, op)
		}
	}
	return strings.Join(parts, " · ")
}

var annotation = regexp.MustCompile(`\(([^()]*)\)`)

// untoldNote is zpool's note without the parenthesized annotations that
// the vdev's activities, TRIM and initialization were read from; what is
// left ("was /dev/sdb1", "too many errors") only the note tells.
func untoldNote(vd *zpool.Vdev) string {
	told := func(text string) bool {
		switch {
		case vd.Trim != nil && strings.Contains(text, "trim"):
			return true
		case vd.Initialize != nil && strings.Contains(text, "initializ"):
			return true
		}
		return slices.ContainsFunc(vd.Activities, func(a string) bool { return activityWord(a) == text })
	}
	rest := annotation.ReplaceAllStringFunc(vd.Note, func(m string) string {
		if told(m[1 : len(m)-1]) {
			return ""
		}
		return m
	})
	return strings.Join(strings.Fields(rest), " ")
}

// opNote is the note of a running or suspended TRIM or initialization:
// "trimming 31.0%", "TRIM suspended at 31.0%". A leaf never trimmed, or
// done with it, needs no note.
func opNote(op *zpool.VdevOp, running, name string) string {
	if op == nil {
		return ""
	}
	switch op.State {
	case zpool.VdevOpActive:
		if op.Progress == nil {
			return running // plain `zpool status` tells no percent
		}
		return running + " " + formatPercent(op.Progress)
	case zpool.VdevOpSuspended:
		if op.Progress == nil {
			return name + " suspended"
		}
		return name + " suspended at " + formatPercent(op.Progress)
	}
	return ""
}
