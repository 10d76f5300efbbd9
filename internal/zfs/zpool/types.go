// Package zpool parses what the zpool command prints: status (text and
// JSON), iostat, list and get. The parsers are pure: they read an io.Reader
// and return typed values, with no exec, no files and no metrics.
//
// Numbers that zpool may print in human-readable form ("1.94K") are
// float64; optional figures are pointers, nil when zpool did not print them
// (or printed "-"), so that callers export no series rather than a false 0.
//
// Output a parser cannot read gives a parse error (package parse) naming
// its line, which the caller that ran zpool names the command line of; a
// failed read, or a line past the parser's bound, is returned as it is.
package zpool

import "time"

// Status is one `zpool status` output: its pools, in the order printed.
type Status struct {
	Pools []*Pool
}

// Pool is one pool of a status output.
type Pool struct {
	Name string
	// State is the pool's health, lowercased: "online", "degraded",
	// "faulted", "offline", "unavail", "removed", "suspended", or whatever
	// new word zpool prints.
	State string
	GUID  string // only JSON output carries it

	Status    string // the "status:" paragraph, its lines joined by spaces
	Action    string // the "action:" paragraph
	MessageID string // "ZFS-8000-9P", from the "see:" line

	// Scans are the scan: lines in print order. OpenZFS prints two after
	// a sequential rebuild (the rebuild and the scrub that follows it).
	Scans []Scan

	// Removal, Expansion and Checkpoint are the remove:, expand: and
	// checkpoint: lines (JSON removal_stats, raidz_expand_stats and
	// checkpoint_stats); nil when the pool has none of them.
	Removal    *Removal    `json:",omitempty"`
	Expansion  *Expansion  `json:",omitempty"`
	Checkpoint *Checkpoint `json:",omitempty"`

	// Root is the pool's own row of the config table (Type "root"). Its
	// children are the top-level vdevs of every class, in print order,
	// each carrying its Class.
	Root *Vdev

	// DataErrors is the count from the "errors:" line: 0 for "No known
	// data errors", nil when the line is missing or unreadable (for
	// example "List of errors unavailable").
	DataErrors *float64
	// ErrorFiles lists the permanent errors printed by `status -v`.
	ErrorFiles []string

	// Warnings name lines that could not be read and were skipped (a scan
	// line worded in a way this parser does not know), so that the pool's
	// health is still reported.
	Warnings []string `json:",omitempty"`
}

// Vdev classes.
const (
	ClassNormal  = "normal"
	ClassLog     = "log"
	ClassCache   = "cache"
	ClassSpare   = "spare"
	ClassSpecial = "special"
	ClassDedup   = "dedup"
)

// Vdev is one row of the config tree.
type Vdev struct {
	// Name is unique within the pool and matches modern zpool naming:
	// interior vdevs are "<type>-<index>" ("mirror-0", "spare-1"). Old
	// outputs that print a bare "mirror" are numbered by position among
	// the top-level vdevs, as current zpool does. spare-N and replacing-N
	// below a top-level vdev are named after it ("raidz1-0/replacing-0"),
	// since zpool repeats them under different parents.
	Name string
	// Printed is the name zpool printed, where Name had to qualify it
	// (see qualifyNames); other zpool commands know the vdev by it.
	Printed string `json:",omitempty"`
	// Type is "root", "mirror", "raidz1".."raidz3", "draid1".."draid3",
	// "replacing", "spare", "disk", "file", "dspare" (a dRAID distributed
	// spare), "missing", "hole", or "indirect". Leaves whose type is
	// unknown (text output) are "disk", or "file" when the name is an
	// absolute path outside /dev; an interior vdev whose text name does not
	// tell (a GUID under `status -g`) has no type ("").
	Type  string
	Class string // one of the Class constants

	// State is lowercased: "online", "degraded", ..., and "avail" or
	// "inuse" for hot spares.
	State string
	Path  string // device path, when known ("was /dev/sdb", JSON path, or an absolute name)
	GUID  string // from JSON, or when the row is named by its GUID

	ReadErrors, WriteErrors, ChecksumErrors float64
	SlowIOs                                 *float64 // only with `status -s` or JSON

	// Note is the text printed after the counters, verbatim
	// ("too many errors", "(resilvering)", "was /dev/sdb1").
	Note string
	// ResilveredBytes and RepairedBytes come from the "151M resilvered"
	// and "199M repaired" annotations (JSON: scan_processed).
	ResilveredBytes *float64
	RepairedBytes   *float64

	// Trim and Initialize are the leaf's TRIM and initialization, read
	// from the "(12% trimmed, started at ...)" annotations of `status -t`
	// and `-i` (or "(trimming)" without them) and from the trim_* and
	// init_* fields of JSON. Nil when the output tells nothing.
	Trim       *VdevOp `json:",omitempty"`
	Initialize *VdevOp `json:",omitempty"`

	// Activities are what zpool status notes the vdev is doing, as the
	// Activity constants: "(resilvering)", "(removing)"... after the
	// counters, or the JSON fields that print them.
	Activities []string `json:",omitempty"`

	Children []*Vdev
}

// What a vdev is doing, as zpool status notes it.
const (
	ActivityResilvering      = "resilvering"       // a leaf receiving a resilver or a rebuild
	ActivityRepairing        = "repairing"         // a leaf a scrub repairs
	ActivityAwaitingResilver = "awaiting_resilver" // a resilver deferred until the running one ends
	ActivityRemoving         = "removing"          // a top-level vdev being evacuated by zpool remove
	ActivityNonAllocating    = "non_allocating"    // a top-level vdev that takes no new data
)

// activityNotes are the notes of the text output, by activity.
var activityNotes = []struct{ note, activity string }{
	{"(resilvering)", ActivityResilvering},
	{"(repairing)", ActivityRepairing},
	{"(awaiting resilver)", ActivityAwaitingResilver},
	{"(removing)", ActivityRemoving},
	{"(non-allocating)", ActivityNonAllocating},
}

// States of a VdevOp: the kernel's vdev_trim_state_t and
// vdev_initializing_state_t, lowercased as JSON names them.
const (
	// VdevOpNone is a leaf never trimmed or initialized: "(untrimmed)",
	// "(uninitialized)". The text output says so of a canceled one too.
	VdevOpNone      = "none"
	VdevOpActive    = "active"
	VdevOpSuspended = "suspended"
	VdevOpCanceled  = "canceled" // only JSON tells it from none
	VdevOpComplete  = "complete"
	// VdevOpUnsupported is a leaf that cannot TRIM: "(trim unsupported)".
	VdevOpUnsupported = "unsupported"
)

// VdevOp is the TRIM or the initialization of one leaf vdev. zpool keeps a
// single time per leaf, the time of the last change of state: a running or
// suspended operation has it as Start ("started at"), a complete or
// canceled one as End.
type VdevOp struct {
	State    string   // one of the VdevOp constants
	Progress *float64 // ratio; the text prints whole percents, 1 once complete

	Start time.Time // zero when not printed
	End   time.Time

	Done   *float64 // bytes trimmed or initialized: JSON only
	Total  *float64 // bytes to trim or to initialize: JSON only
	Errors *float64 // JSON only
}

// Removal is a top-level vdev evacuated by `zpool remove` (the remove: line
// and its continuation lines, or JSON removal_stats). The pool keeps the
// figures of the last removal after it ends, with the memory its mapping
// of moved blocks still costs.
//
// Removals and expansions are not Scans, although the kernel counts their
// states as it counts a scan's: they copy data rather than read it, and a
// removal has a memory cost that no scan has. They share the Scan state
// constants and the Scan field names where the meaning is the same, so
// that the exporter can show them beside scans (function expand and
// remove), where alerts written for scrubs and resilvers select those.
type Removal struct {
	State string // ScanScanning, ScanFinished or ScanCanceled
	// Vdev names the removed vdev as zpool printed it: a device path
	// ("/dev/da0p4") or a bare type ("mirror"). A finished removal prints
	// only VdevIndex, so Vdev is "" there in text output.
	Vdev      string
	VdevIndex *int // position among the top-level vdevs

	Start time.Time // zero when not printed (finished and canceled text)
	End   time.Time // finish or cancel time; zero while running

	Copied *float64 // bytes copied so far
	Total  *float64 // bytes to copy: running removals only in text output

	Rate      *float64 // bytes per second since the start
	Progress  *float64 // ratio of Copied to Total while running
	Remaining *float64 // seconds; nil for "copy is slow, no estimated time"
	Duration  *float64 // seconds the finished removal took (text: whole minutes)

	// MappingMemory is the memory, in bytes, that the table mapping the
	// removed vdev's blocks to their new places costs, as long as the
	// pool lives. The text prints it only when it is not zero.
	MappingMemory *float64
}

// Expansion is a RAID-Z expansion by `zpool attach` (OpenZFS 2.3+): the
// expand: line and its continuation line, or JSON raidz_expand_stats. It
// is not a Scan for the reasons given at Removal.
type Expansion struct {
	State string // ScanScanning or ScanFinished
	Vdev  string // the raidz vdev, "raidz2-0"

	Start time.Time // zero when not printed (finished text)
	End   time.Time // finish time; zero while running

	Copied *float64 // bytes reflowed so far (the finished text prints it too)
	Total  *float64 // bytes to reflow

	Rate      *float64 // bytes per second since the start
	Progress  *float64 // ratio of Copied to Total while running
	Remaining *float64 // seconds; nil when not estimated
	Duration  *float64 // seconds the finished expansion took

	// WaitingForResilver is set while the expansion waits for a
	// resilver, or for `zpool clear`, before it goes on.
	WaitingForResilver bool
}

// Checkpoint states.
const (
	CheckpointExists     = "exists"
	CheckpointDiscarding = "discarding"
)

// Checkpoint is the pool's checkpoint (`zpool checkpoint`): the
// checkpoint: line, or JSON checkpoint_stats. Blocks it holds are not
// freed, so its space is space the pool cannot use until it is discarded.
type Checkpoint struct {
	State   string    // one of the Checkpoint constants
	Created time.Time // zero while discarding (not printed)
	// Space is the bytes the checkpoint holds; while discarding, the bytes
	// still to free.
	Space *float64
}

// Scan functions.
const (
	ScanScrub      = "scrub"
	ScanResilver   = "resilver"
	ScanRebuild    = "rebuild" // sequential resilver (`zpool replace -s`, dRAID spares)
	ScanErrorScrub = "error_scrub"
)

// Scan states.
const (
	ScanNone     = "none" // never scanned ("none requested")
	ScanScanning = "scanning"
	ScanPaused   = "paused"
	ScanFinished = "finished"
	ScanCanceled = "canceled"
)

// Scan is one scan: line (and its continuation lines), or JSON scan_stats.
type Scan struct {
	Function string // one of the Scan function constants
	State    string // one of the Scan state constants
	Vdev     string // for rebuilds: the top-level vdev being rebuilt

	Start time.Time // zero when not printed
	End   time.Time // finish or cancel time; zero while running

	Examined  *float64 // bytes scanned so far
	Issued    *float64 // bytes issued so far
	Total     *float64 // bytes to scan
	Processed *float64 // bytes repaired (scrub) or resilvered
	Errors    *float64

	IssueRate *float64 // bytes per second (the "issued at" rate, or the only rate old outputs print)
	ScanRate  *float64 // bytes per second (the "scanned at" rate)
	Progress  *float64 // ratio, may exceed 1
	Remaining *float64 // seconds, nil for "no estimated completion time"
	Duration  *float64 // seconds the finished scan took

	// Raw figures of the current pass, from JSON scan_stats. Rates need
	// the current time, which the output does not carry: Scan.Estimate
	// derives them as zpool does.
	PassStart     time.Time // start of the current pass; zero when not given
	PassExamined  *float64  // bytes examined in this pass
	PassIssued    *float64  // bytes issued in this pass
	PausedSeconds *float64  // seconds this pass spent paused
}

// IostatReport is one report of `zpool iostat -v`: every row of every pool
// printed between two headers (or one interval).
type IostatReport struct {
	Time time.Time // from `-T u` / `-T d`; zero otherwise
	Rows []IostatRow
}

// IostatRow is one line of `zpool iostat -v`.
type IostatRow struct {
	Pool  string
	Name  string // as printed: old outputs print a bare "mirror"
	Depth int    // 0 for the pool row, 1 for top-level vdevs, 2 for their children...
	Class string // from the section header ("logs" -> ClassLog); ClassNormal otherwise

	Alloc, Free *float64 // bytes; nil for "-"

	// Operations and bytes per second over the interval; in the first
	// report, the average since import.
	ReadOps, WriteOps     float64
	ReadBytes, WriteBytes float64

	// Extra holds the columns printed after the six above, verbatim:
	// -l latencies, -q queue depths, -c script output.
	Extra []string
	// Break marks the first row after an empty line. With -H, zpool prints
	// an empty line where text output has the logs/cache/special/dedup
	// header, so Break is all that tells those sections apart. With -H,
	// rows after the first of a report also have Pool "", Depth -1 and
	// Class "" (unknown): MatchIostatReport resolves them from the status.
	Break bool
}

// Property is one row of `zpool get -H` or of vdev properties
// (`zpool get -H all POOL all-vdevs`): Name is the pool or vdev.
type Property struct {
	Name, Property, Value, Source string
}
