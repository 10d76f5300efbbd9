package collector

import (
	"fmt"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The long operations of zpool status besides scans: a vdev removal and a
// RAID-Z expansion, a checkpoint, and each leaf's TRIM and initialization.
//
// A removal and an expansion copy a whole vdev's data for hours, as a
// resilver does, and go through the same states: they are exported in the
// scan family, with functions of their own, so that the scans dashboard
// follows them and a stall alert can be written for them as for a
// resilver. Their copied bytes are the issued bytes: copying has no
// separate examining phase, and issued is what the progress of a scan is
// measured against.
const (
	scanExpand = "expand" // vdev is the raidz vdev being expanded
	// A pool keeps one removal record, and the removed vdev's printed name
	// is not stable (a path while it runs, an index once finished): vdev
	// is "".
	scanRemove = "remove"
)

var (
	scanWaitingDesc = desc("scan", "waiting",
		"1 while the running scan waits before it can go on, 0 while it works: a RAID-Z expansion (function expand) waits for a resilver, or for zpool clear. Only expansions report it.", scanLabels...)
	removalMappingMemoryDesc = desc("pool", "removal_mapping_memory_bytes",
		"Memory the mappings of the pool's removed vdevs (where their blocks went) cost while the pool is imported; zpool status prints it when it is not zero.", "pool")

	checkpointBytesDesc = desc("pool", "checkpoint_bytes",
		"Space the pool's checkpoint holds, which the pool cannot use until the checkpoint is discarded; while it is being discarded, the bytes still to free. Present only while the pool has a checkpoint.", "pool")
	checkpointCreatedDesc = desc("pool", "checkpoint_created_timestamp_seconds",
		"When the pool's checkpoint was created (Unix time); zpool status does not print it while the checkpoint is being discarded.", "pool")
	checkpointDiscardingDesc = desc("pool", "checkpoint_discarding",
		"1 while the pool's checkpoint is being discarded, 0 while it is kept. Present only while the pool has a checkpoint.", "pool")
)

// vdevOpStates are the states a leaf's TRIM or initialization is exported
// in. A leaf never trimmed or initialized, or one that cannot TRIM, has no
// series: zpool status -t -i says so of every leaf, and a state set for
// each would add a tenth to a large host's series to say nothing ran.
var vdevOpStates = []string{zpool.VdevOpActive, zpool.VdevOpSuspended, zpool.VdevOpCanceled, zpool.VdevOpComplete}

// vdevOpDescs are the metrics of one kind of leaf operation.
type vdevOpDescs struct {
	states                                           []string
	state, progress, done, total, errors, start, end *prometheus.Desc
}

var (
	vdevTrimDescs       = newVdevOpDescs("trim", "TRIM", "trimmed", "-t")
	vdevInitializeDescs = newVdevOpDescs("initialize", "initialization", "initialized", "-i")
)

// newVdevOpDescs describes the metrics of a leaf operation, named
// zfs_vdev_<name>_*; flag is the zpool status option that prints its
// details.
func newVdevOpDescs(name, what, done, flag string) vdevOpDescs {
	l := []string{"pool", "vdev"}
	return vdevOpDescs{
		states: vdevOpStates,
		state: desc("vdev", name+"_state",
			fmt.Sprintf("1 for the state of the leaf vdev's last %s, 0 for the others: active, suspended, canceled or complete (zpool status without %s: active only; text output: a canceled one is not shown). No series for a leaf whose %s never ran.", what, flag, what),
			append(l, "state")...),
		progress: desc("vdev", name+"_progress_ratio",
			fmt.Sprintf("Share of the leaf vdev's current or last %s done (zpool status %s prints whole percents).", what, flag), l...),
		done: desc("vdev", name+"_done_bytes",
			fmt.Sprintf("Bytes the leaf vdev's current or last %s has %s (JSON status with %s).", what, done, flag), l...),
		total: desc("vdev", name+"_total_bytes",
			fmt.Sprintf("Bytes the leaf vdev's current or last %s has to go through (JSON status with %s).", what, flag), l...),
		errors: desc("vdev", name+"_errors",
			fmt.Sprintf("Errors the leaf vdev's current or last %s met (JSON status with %s).", what, flag), l...),
		start: desc("vdev", name+"_start_time_seconds",
			fmt.Sprintf("When the leaf vdev's running or suspended %s started (Unix time).", what), l...),
		end: desc("vdev", name+"_end_time_seconds",
			fmt.Sprintf("When the leaf vdev's %s completed or was canceled (Unix time).", what), l...),
	}
}

// collectLongOps sends a pool's removal, expansion and checkpoint; the
// removal and the expansion as scans.
func collectLongOps(p *zpool.Pool, ch chan<- prometheus.Metric) {
	if r := p.Removal; r != nil {
		collectScan(p.Name, zpool.Scan{Function: scanRemove, State: r.State, Start: r.Start, End: r.End,
			Issued: r.Copied, Total: r.Total, IssueRate: r.Rate, Progress: r.Progress, Remaining: r.Remaining, Duration: r.Duration}, ch)
		optGauge(ch, removalMappingMemoryDesc, r.MappingMemory, p.Name)
	}
	if e := p.Expansion; e != nil {
		collectScan(p.Name, zpool.Scan{Function: scanExpand, State: e.State, Vdev: e.Vdev, Start: e.Start, End: e.End,
			Issued: e.Copied, Total: e.Total, IssueRate: e.Rate, Progress: e.Progress, Remaining: e.Remaining, Duration: e.Duration}, ch)
		// zpool tells the wait only while the expansion runs.
		if e.State == zpool.ScanScanning {
			gauge(ch, scanWaitingDesc, boolValue(e.WaitingForResilver), p.Name, scanExpand, e.Vdev)
		}
	}
	if c := p.Checkpoint; c != nil {
		optGauge(ch, checkpointBytesDesc, c.Space, p.Name)
		optTime(ch, checkpointCreatedDesc, c.Created, p.Name)
		gauge(ch, checkpointDiscardingDesc, boolValue(c.State == zpool.CheckpointDiscarding), p.Name)
	}
}

// collectVdevOps sends a leaf's TRIM and initialization, when the output
// tells them.
func collectVdevOps(pool string, v *zpool.Vdev, ch chan<- prometheus.Metric) {
	if v.Trim != nil {
		collectVdevOp(vdevTrimDescs, v.Trim, ch, pool, v.Name)
	}
	if v.Initialize != nil {
		collectVdevOp(vdevInitializeDescs, v.Initialize, ch, pool, v.Name)
	}
}

func collectVdevOp(d vdevOpDescs, op *zpool.VdevOp, ch chan<- prometheus.Metric, l ...string) {
	if !slices.Contains(d.states, op.State) {
		return // never ran, or cannot: nothing to follow
	}
	stateSet(ch, d.state, d.states, op.State, l...)
	optGauge(ch, d.progress, op.Progress, l...)
	optGauge(ch, d.done, op.Done, l...)
	optGauge(ch, d.total, op.Total, l...)
	optGauge(ch, d.errors, op.Errors, l...)
	optTime(ch, d.start, op.Start, l...)
	optTime(ch, d.end, op.End, l...)
}

// optTime sends a time as Unix seconds, unless it was not printed.
func optTime(ch chan<- prometheus.Metric, d *prometheus.Desc, t time.Time, labels ...string) {
	if !t.IsZero() {
		gauge(ch, d, float64(t.Unix()), labels...)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
