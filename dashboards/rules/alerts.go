package rules

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// Alert names; RUNBOOK.md has a section for each.
const (
	AlertPoolNotOnline        = "ZFSPoolNotOnline"
	AlertPoolSuspended        = "ZFSPoolSuspended"
	AlertVdevNotOnline        = "ZFSVdevNotOnline"
	AlertHotSpareInUse        = "ZFSHotSpareInUse"
	AlertVdevErrorsIncreasing = "ZFSVdevErrorsIncreasing"
	AlertPoolDataErrors       = "ZFSPoolDataErrors"
	AlertPoolCapacityWarning  = "ZFSPoolCapacityWarning"
	AlertPoolCapacityCritical = "ZFSPoolCapacityCritical"
	AlertResilverStalled      = "ZFSResilverStalled"
	AlertScrubOverdue         = "ZFSScrubOverdue"
	AlertSourceStale          = "ZFSExporterSourceStale"
	AlertCollectorFailing     = "ZFSExporterCollectorFailing"
	AlertPoolMetricsAbsent    = "ZFSPoolMetricsAbsent"

	AlertDatasetQuotaNearlyFull = "ZFSDatasetQuotaNearlyFull"
	AlertSnapshotsStale         = "ZFSSnapshotsStale"
	AlertDatasetKeyUnavailable  = "ZFSDatasetKeyUnavailable"

	AlertVdevSlowDisk          = "ZFSVdevSlowDisk"
	AlertVdevSlowIOsIncreasing = "ZFSVdevSlowIOsIncreasing"

	AlertVdevErrorsPresent         = "ZFSVdevErrorsPresent"
	AlertPoolFillingUp             = "ZFSPoolFillingUp"
	AlertPoolFragmentationHigh     = "ZFSPoolFragmentationHigh"
	AlertPoolReadOnly              = "ZFSPoolReadOnly"
	AlertPoolDegradedWithoutRepair = "ZFSPoolDegradedWithoutResilver"
	AlertVersionMismatch           = "ZFSVersionMismatch"
	AlertPoolOperationStalled      = "ZFSPoolOperationStalled"

	AlertVdevEreportsIncreasing    = "ZFSVdevEreportsIncreasing"
	AlertVdevDelayEventsIncreasing = "ZFSVdevDelayEventsIncreasing"
	AlertPoolDeadman               = "ZFSPoolDeadman"
	AlertEventsDropped             = "ZFSEventsDropped"
)

const (
	warning  = "warning"
	critical = "critical"
)

func (b builder) alerts() []group {
	return []group{
		{Name: "zfs-pools", Rules: b.poolAlerts()},
		{Name: "zfs-scans", Rules: b.scanAlerts()},
		{Name: "zfs-datasets", Rules: b.datasetAlerts()},
		{Name: "zfs-slow-disks", Rules: b.slowDiskAlerts()},
		{Name: "zfs-events", Rules: b.eventAlerts()},
		{Name: "zfs-host", Rules: b.hostAlerts()},
		{Name: "zfs-exporter", Rules: b.exporterAlerts()},
	}
}

func (b builder) poolAlerts() []rule {
	// The vdevs of the alert's pool that are not online, from a query at
	// alert time: names the disk to look at. The pool's own row is left
	// out, it says the same as the pool. The query is a printf format:
	// the selector's % is doubled.
	matchers := []string{`instance=%q`, `pool=%q`, `state!~"online|avail|inuse"`}
	if b.cfg.Selector != "" {
		matchers = append([]string{strings.ReplaceAll(b.cfg.Selector, "%", "%%")}, matchers...)
	}
	badVdevs := "{{ range printf `zfs_vdev_state{" + strings.Join(matchers, ", ") + "} == 1` $labels.instance $labels.pool | query | sortByLabel \"vdev\" }}" +
		"{{ if ne .Labels.vdev $labels.pool }} Vdev {{ .Labels.vdev }} is {{ .Labels.state }}.{{ end }}{{ end }}"

	rules := []rule{
		alert(AlertPoolNotOnline, critical, "1m",
			// Each pool has one series at 1 in its state set: that one
			// names the state. A suspended pool has an alert of its own.
			b.sel("zfs_pool_state", `state!~"online|suspended"`)+" == 1",
			"ZFS pool {{ $labels.pool }} is {{ $labels.state }}.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} is {{ $labels.state }}: it runs with less redundancy than it was built with, or some of its data is unreachable."+
				badVdevs+" See zpool status -v {{ $labels.pool }}."),
		alert(AlertPoolSuspended, critical, "1m",
			b.sel("zfs_pool_state", `state="suspended"`)+" == 1",
			"ZFS pool {{ $labels.pool }} is suspended.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} is suspended: ZFS stopped all I/O to it after losing too many devices, and processes that touch it hang. Where zpool commands hang too, the exporter takes its state from the kernel's kstats."),
		alert(AlertVdevNotOnline, warning, "5m",
			// In a pool that is not online ZFSPoolNotOnline speaks (and
			// lists the vdevs); here: a cache device or a spare, which
			// fail without degrading their pool. Spares are avail or inuse
			// when healthy, the members of a healthy spare-N or
			// replacing-N online.
			fmt.Sprintf("(%s == 1)\nand on (instance, pool)\n(%s == 1)",
				b.sel("zfs_vdev_state", `state!~"online|avail|inuse"`),
				b.sel("zfs_pool_state", `state="online"`)),
			"ZFS vdev {{ $labels.vdev }} of pool {{ $labels.pool }} is {{ $labels.state }}.",
			"Vdev {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} is {{ $labels.state }} while the pool is online: a cache device or a hot spare failed, or a device is missing that the pool does not need to run. See zpool status -v {{ $labels.pool }}."),
		alert(AlertHotSpareInUse, warning, "5m",
			b.sel("zfs_vdev_state", `state="inuse"`)+" == 1",
			"Hot spare {{ $labels.vdev }} of pool {{ $labels.pool }} is in use.",
			"Hot spare {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} stands in for a failed device: the pool has one spare fewer for the next failure until the failed device is replaced or detached."),
	}
	for _, kind := range []string{"read", "write", "checksum"} {
		r := alert(AlertVdevErrorsIncreasing, warning, "",
			fmt.Sprintf("increase(%s[%s]) > 0", b.sel("zfs_vdev_"+kind+"_errors_total"), promDuration(errorWindow)),
			"ZFS vdev {{ $labels.vdev }} of pool {{ $labels.pool }} has new "+kind+" errors.",
			"Vdev {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} counted about {{ printf \"%.0f\" $value }} new "+kind+
				" errors in the last "+config.Prose(errorWindow)+". The counters go back to 0 at export or zpool clear.")
		r.Labels["errors"] = kind
		rules = append(rules, r)
	}
	// A counter above 0 stays so until zpool clear: errors counted before
	// the exporter started, which ZFSVdevErrorsIncreasing never sees, or
	// that nobody has dealt with.
	for _, kind := range []string{"read", "write", "checksum"} {
		r := alert(AlertVdevErrorsPresent, warning, promDuration(errorsPresentFor),
			b.sel("zfs_vdev_"+kind+"_errors_total")+" > 0",
			"ZFS vdev {{ $labels.vdev }} of pool {{ $labels.pool }} has "+kind+" errors.",
			"Vdev {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} has counted {{ printf \"%.0f\" $value }} "+kind+
				" errors since the pool was imported or last cleared. Once their cause is dealt with, zpool clear {{ $labels.pool }} sets the counters back to 0 and ends this alert.")
		r.Labels["errors"] = kind
		rules = append(rules, r)
	}
	capacity := fmt.Sprintf("%s\n/\n(%s > 0)", b.sel("zfs_pool_allocated_bytes"), b.sel("zfs_pool_size_bytes"))
	// Seconds until the pool is full at the trend of its free space over
	// window, for a pool that shrinks and is more than half full: a young
	// pool's first copy is no trend.
	fill := func(window, horizon time.Duration, severity string) rule {
		r := alert(AlertPoolFillingUp, severity, promDuration(fillFor),
			fmt.Sprintf("(\n  %s\n  /\n  -(deriv(%s[%s]) < 0)\n  < %s\n)\nand on (instance, pool)\n(\n  %s\n  > 0.5\n)",
				b.sel("zfs_pool_free_bytes"), b.sel("zfs_pool_free_bytes"), promDuration(window), seconds(horizon), strings.ReplaceAll(capacity, "\n", "\n  ")),
			"ZFS pool {{ $labels.pool }} fills up within "+config.Prose(horizon)+".",
			"At the trend of the last "+config.Prose(window)+", pool {{ $labels.pool }} on {{ $labels.instance }} has no free space left in {{ $value | humanizeDuration }}. Find what grows (the datasets dashboard's growth per day), and free or add space before writes fail.")
		r.Labels["within"] = promDuration(horizon)
		return r
	}
	rules = append(rules,
		fill(6*time.Hour, 24*time.Hour, critical),
		fill(2*24*time.Hour, 7*24*time.Hour, warning),
		alert(AlertPoolFragmentationHigh, warning, "1h",
			b.sel("zfs_pool_fragmentation_ratio")+" > "+strconv.FormatFloat(fragmentationWarning, 'f', -1, 64),
			"ZFS pool {{ $labels.pool }}'s free space is fragmented.",
			"The free space of pool {{ $labels.pool }} on {{ $labels.instance }} is {{ $value | humanizePercentage }} fragmented (warning at "+config.Percent(fragmentationWarning)+"): ZFS finds large free runs slowly and writes become slower, the more so as the pool fills."),
		alert(AlertPoolReadOnly, warning, "5m",
			b.sel("zfs_pool_info", `readonly="on"`)+" == 1",
			"ZFS pool {{ $labels.pool }} is read-only.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} is imported read-only: every write to it fails. It was imported with -o readonly=on, by hand or by a recovery; export it and import it again without to write."),
		alert(AlertPoolDegradedWithoutRepair, warning, promDuration(degradedWithoutRepairFor),
			// A spare in use has restored the redundancy, and
			// ZFSHotSpareInUse asks for the replacement.
			fmt.Sprintf("max without (state) (%s == 1)\nunless on (instance, pool)\n(%s == 1)\nunless on (instance, pool)\n(%s == 1)",
				b.sel("zfs_pool_state", `state="degraded"`),
				b.sel("zfs_scan_state", `function=~"resilver|rebuild"`, `state="scanning"`),
				b.sel("zfs_vdev_state", `state="inuse"`)),
			"ZFS pool {{ $labels.pool }} is degraded and nothing repairs it.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} has been degraded for more than "+config.Prose(degradedWithoutRepairFor)+" with no resilver running and no spare in use: it stays without its full redundancy until a disk is replaced or brought back online."),
	)
	return append(rules,
		alert(AlertPoolDataErrors, critical, "1m",
			b.sel("zfs_pool_data_errors")+" > 0",
			"ZFS pool {{ $labels.pool }} has permanent data errors.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} reports {{ $value }} data errors: files or metadata that ZFS could not repair from redundancy. zpool status -v {{ $labels.pool }} lists the files."),
		alert(AlertPoolCapacityWarning, warning, "5m",
			fmt.Sprintf("%s\n> %s", capacity, strconv.FormatFloat(b.cfg.CapacityWarning, 'f', -1, 64)),
			"ZFS pool {{ $labels.pool }} is more than "+config.Percent(b.cfg.CapacityWarning)+" full.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} has {{ $value | humanizePercentage }} of its space allocated (warning at "+config.Percent(b.cfg.CapacityWarning)+"): allocation slows down and fragments as a pool fills."),
		alert(AlertPoolCapacityCritical, critical, "5m",
			fmt.Sprintf("%s\n> %s", capacity, strconv.FormatFloat(b.cfg.CapacityCritical, 'f', -1, 64)),
			"ZFS pool {{ $labels.pool }} is more than "+config.Percent(b.cfg.CapacityCritical)+" full.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} has {{ $value | humanizePercentage }} of its space allocated (critical at "+config.Percent(b.cfg.CapacityCritical)+"): writes will soon fail, and a full pool can even refuse to delete files."),
	)
}

func (b builder) scanAlerts() []rule {
	stall := b.cfg.ResilverStallFor
	maxAge := b.cfg.ScrubMaxAge
	// zpool status keeps one scrub-or-resilver per pool: a resilver or a
	// canceled scrub replaces the last finished scrub, so the end of
	// whichever is shown is the latest a finished scrub can be. A paused
	// scrub has no end: its start counts.
	lastScrub := fmt.Sprintf(`(
  time() - max without (function, vdev) (%s)
  > %s
)
or
(
  time() - max without (function, vdev) (
      %s
    and on (instance, pool, function, vdev)
      (%s == 1)
  )
  > %s
)`,
		b.sel("zfs_scan_end_time_seconds", `function=~"scrub|resilver"`), seconds(maxAge),
		b.sel("zfs_scan_start_time_seconds", `function="scrub"`),
		b.sel("zfs_scan_state", `function="scrub"`, `state="paused"`), seconds(maxAge))
	// A pool with no scan at all in zpool status: its age is unknown, so
	// the alert waits the whole maximum age.
	neverScanned := fmt.Sprintf("max without (state) (%s)\nunless on (instance, pool)\n%s",
		b.sel("zfs_pool_state", `state="online"`),
		b.sel("zfs_scan_state", `function=~"scrub|resilver"`))
	// Older zpool prints no issued figure: examined stands in.
	progress := func(offset string) string {
		return fmt.Sprintf("(%s%s or %s%s)",
			b.sel("zfs_scan_issued_bytes", `function=~"resilver|rebuild"`), offset,
			b.sel("zfs_scan_examined_bytes", `function=~"resilver|rebuild"`), offset)
	}
	stalled := fmt.Sprintf(`max without (state) (%s == 1)
and on (instance, pool, function, vdev)
(
  %s
  <=
  %s
)
and on (instance, pool, function, vdev)
(%s < time() - %s)`,
		b.sel("zfs_scan_state", `function=~"resilver|rebuild"`, `state="scanning"`),
		progress(""), progress(" offset "+promDuration(stall)),
		b.sel("zfs_scan_start_time_seconds", `function=~"resilver|rebuild"`), seconds(stall))

	// A raidz expansion or a device removal copies data: stalled when its
	// copied bytes stay put, unless it waits for a resilver, as an
	// expansion does.
	opStall := operationStallFor
	opStalled := fmt.Sprintf(`max without (state) (%s == 1)
and on (instance, pool, function, vdev)
(
  %s
  <=
  %s offset %s
)
and on (instance, pool, function, vdev)
(%s < time() - %s)
unless on (instance, pool)
(%s == 1)`,
		b.sel("zfs_scan_state", `function=~"expand|remove"`, `state="scanning"`),
		b.sel("zfs_scan_issued_bytes", `function=~"expand|remove"`), b.sel("zfs_scan_issued_bytes", `function=~"expand|remove"`), promDuration(opStall),
		b.sel("zfs_scan_start_time_seconds", `function=~"expand|remove"`), seconds(opStall),
		b.sel("zfs_scan_state", `function=~"resilver|rebuild"`, `state="scanning"`))

	overdue := alert(AlertScrubOverdue, warning, "",
		lastScrub,
		"ZFS pool {{ $labels.pool }} is overdue for a scrub.",
		"No scrub of pool {{ $labels.pool }} on {{ $labels.instance }} has finished in the last {{ $value | humanizeDuration }} (the limit is "+config.Prose(maxAge)+"): latent errors on disks that are rarely read go unnoticed until a resilver needs them.")
	overdue.Labels["last_scan"] = "old"
	never := alert(AlertScrubOverdue, warning, promDuration(maxAge),
		neverScanned,
		"ZFS pool {{ $labels.pool }} shows no scrub.",
		"zpool status has shown no scrub or resilver of pool {{ $labels.pool }} on {{ $labels.instance }} for "+config.Prose(maxAge)+": the pool may never have been scrubbed.")
	never.Labels["last_scan"] = "none"
	return []rule{
		alert(AlertResilverStalled, warning, "",
			// Compared with the figure a stall time ago, not with changes(),
			// so that a resilver that restarted and runs again is not
			// stalled; the start time keeps a restarted one quiet until it
			// has had the whole stall time.
			stalled,
			"ZFS {{ $labels.function }} of pool {{ $labels.pool }} makes no progress.",
			"The {{ $labels.function }} of pool {{ $labels.pool }}{{ with $labels.vdev }} (vdev {{ . }}){{ end }} on {{ $labels.instance }} has issued no more bytes for "+config.Prose(stall)+": the pool stays without its full redundancy until it ends."),
		alert(AlertPoolOperationStalled, warning, "",
			opStalled,
			"ZFS {{ if eq $labels.function \"expand\" }}expansion{{ else }}device removal{{ end }} in pool {{ $labels.pool }} makes no progress.",
			"The {{ if eq $labels.function \"expand\" }}raidz expansion of {{ $labels.vdev }}{{ else }}device removal{{ end }} in pool {{ $labels.pool }} on {{ $labels.instance }} has copied no more bytes for "+config.Prose(opStall)+", with no resilver to wait for: the pool takes no other expansion or removal until it ends."),
		overdue,
		never,
	}
}

func (b builder) datasetAlerts() []rule {
	warn := b.cfg.DatasetQuotaWarning
	maxAge := b.cfg.SnapshotMaxAge
	// A quota of 0 is none and gives no series; the > 0 only guards the
	// division.
	share := func(part, limit string) string {
		return fmt.Sprintf("%s\n/\n(%s > 0)\n> %s", b.sel(part), b.sel(limit), strconv.FormatFloat(warn, 'f', -1, 64))
	}
	quota := alert(AlertDatasetQuotaNearlyFull, warning, "15m",
		share("zfs_dataset_used_bytes", "zfs_dataset_quota_bytes"),
		"ZFS dataset {{ $labels.dataset }} has used more than "+config.Percent(warn)+" of its quota.",
		"Dataset {{ $labels.dataset }} on {{ $labels.instance }} uses {{ $value | humanizePercentage }} of its quota (warning at "+config.Percent(warn)+"), snapshots and the datasets below it included: when it is reached, writes to any of them fail with \"Disk quota exceeded\".")
	quota.Labels["quota"] = "quota"
	refquota := alert(AlertDatasetQuotaNearlyFull, warning, "15m",
		share("zfs_dataset_referenced_bytes", "zfs_dataset_refquota_bytes"),
		"ZFS dataset {{ $labels.dataset }} has used more than "+config.Percent(warn)+" of its refquota.",
		"Dataset {{ $labels.dataset }} on {{ $labels.instance }} refers to {{ $value | humanizePercentage }} of its refquota (warning at "+config.Percent(warn)+"), its snapshots and the datasets below it not counted: when it is reached, writes to it fail with \"Disk quota exceeded\".")
	refquota.Labels["quota"] = "refquota"

	// Ages come from the snapshot listing, which runs in the background:
	// while it is stale, ZFSExporterSourceStale says so, and the ages it
	// left behind are not taken for stopped snapshot jobs.
	stale := fmt.Sprintf(`(
  time() - %s
  > %s
)
unless on (instance)
(
  time() - %s
  > %s
)`,
		b.sel("zfs_dataset_newest_snapshot_timestamp_seconds"), seconds(maxAge),
		b.sel("zfs_exporter_source_last_success_timestamp_seconds", fmt.Sprintf("source=%q", config.SourceSnapshots)),
		seconds(b.cfg.SnapshotListingStaleAfter))

	return []rule{
		quota,
		refquota,
		alert(AlertSnapshotsStale, warning, "30m",
			stale,
			"ZFS dataset {{ $labels.dataset }} has no snapshot newer than "+config.Prose(maxAge)+".",
			"The newest snapshot of dataset {{ $labels.dataset }} on {{ $labels.instance }} was taken {{ $value | humanizeDuration }} ago (the limit is "+config.Prose(maxAge)+"): the job that snapshots it, or replicates snapshots to it, has stopped or no longer covers it."),
		alert(AlertDatasetKeyUnavailable, critical, "5m",
			// canmount=on: the dataset is meant to be mounted. noauto and
			// off (a raw replication target, a container of datasets) are
			// left locked on purpose.
			fmt.Sprintf("(%s == 0)\nand on (instance, pool, dataset)\n%s",
				b.sel("zfs_dataset_key_available"), b.sel("zfs_dataset_info", `canmount="on"`)),
			"Encryption key of ZFS dataset {{ $labels.dataset }} is not loaded.",
			"Dataset {{ $labels.dataset }} on {{ $labels.instance }} is encrypted, meant to be mounted (canmount=on), and its key is not loaded: it cannot be mounted, and its data can be neither read nor written until the key is loaded (zfs load-key) and the dataset mounted (zfs mount)."),
	}
}

// slowDiskTopLevel is the vdev types whose leaves ZFSVdevSlowDisk compares
// with each other: every stripe of a raidz or dRAID spans its disks, and
// every write to a mirror goes to all of them, so their loads are alike.
// The leaves right under the pool's root (single disks, log, cache and
// spare devices) may be of other kinds with other loads; a replacing-N or
// spare-N pairs a disk that is written alone with one on its way out.
const slowDiskTopLevel = "mirror|raidz.*|draid.*"

func (b builder) slowDiskAlerts() []rule {
	cfg := b.cfg
	p90 := b.sel(RecordLeafDiskWaitQuantile(cfg.SlowDiskWindow), fmt.Sprintf("quantile=%q", slowDiskQuantile))
	busy := fmt.Sprintf("%s >= %s", b.sel(RecordLeafDiskOpsRate(cfg.SlowDiskWindow)), strconv.FormatFloat(cfg.SlowDiskMinOps, 'f', -1, 64))
	// The leaf is compared with the least p90 of the busy leaves of its
	// parent, itself among them: with a factor above 1 that is the same as
	// leaving it out, and needs no join of each leaf with the others. The
	// joins are and (which cannot fail) and one group_left whose right
	// side is an aggregation, one series per parent: duplicate series of
	// zfs_vdev_info cannot make them fail. The count asks for a sibling
	// to compare with; a factor above 1 asks as much, the count says so
	// whatever the factor.
	slow := fmt.Sprintf(`(
    %s > %s
  and on (instance, pool, vdev)
    %s
  and on (instance, pool, parent)
    label_replace(%s, "parent", "$1", "vdev", "(.+)")
)
> on (instance, pool, parent) group_left ()
(
  %s * min by (instance, pool, parent) (
      %s
    and on (instance, pool, vdev)
      %s
  )
)
and on (instance, pool, parent)
(
  count by (instance, pool, parent) (%s) >= 2
)`,
		p90, strconv.FormatFloat(cfg.SlowDiskMinLatency.Seconds(), 'f', -1, 64), busy,
		b.sel("zfs_vdev_info", fmt.Sprintf("vdev_type=~%q", slowDiskTopLevel)),
		strconv.FormatFloat(cfg.SlowDiskFactor, 'f', -1, 64), p90, busy, busy)

	// The siblings' best, from a query at alert time; a printf format, as
	// in ZFSPoolNotOnline.
	q := b
	q.cfg.Selector = strings.ReplaceAll(cfg.Selector, "%", "%%")
	siblings := "{{ with printf `min(" +
		q.sel(RecordLeafDiskWaitQuantile(cfg.SlowDiskWindow), `instance=%q`, `pool=%q`, `parent=%q`, `vdev!=%q`, fmt.Sprintf("quantile=%q", slowDiskQuantile)) +
		" and on (instance, pool, vdev) " + strings.ReplaceAll(busy, "%", "%%") +
		")` $labels.instance $labels.pool $labels.parent $labels.vdev | query }}, against {{ . | first | value | humanizeDuration }} for the fastest of its siblings{{ end }}"
	factor := strconv.FormatFloat(cfg.SlowDiskFactor, 'f', -1, 64)
	latency := alert(AlertVdevSlowDisk, warning, promDuration(cfg.SlowDiskFor),
		slow,
		"ZFS disk {{ $labels.vdev }} of pool {{ $labels.pool }} is much slower than its siblings.",
		"Disk {{ $labels.vdev }} of {{ $labels.parent }} in pool {{ $labels.pool }} on {{ $labels.instance }} takes {{ $value | humanizeDuration }} or more for the slowest tenth of its I/Os (p90 of its disk time, reads and writes over "+config.Prose(cfg.SlowDiskWindow)+")"+siblings+
			": more than "+factor+" times as long, for "+config.Prose(cfg.SlowDiskFor)+". A failing disk slows its whole vdev down before it fails. Check its SMART data (smartctl -x) and its cabling, compare it with its siblings in zpool iostat -v -l {{ $labels.pool }} 5 and zpool iostat -w -v {{ $labels.pool }}, and replace it if it stays slow.")
	latency.Labels["signal"] = "latency"
	sitOut := alert(AlertVdevSlowDisk, warning, promDuration(cfg.SlowDiskSitOutFor),
		// ZFS's own judgement, without the vdev_latency collector.
		b.sel("zfs_vdev_sit_out")+" == 1",
		"ZFS sits disk {{ $labels.vdev }} of pool {{ $labels.pool }} out for being slow.",
		"OpenZFS has sat disk {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} out for "+config.Prose(cfg.SlowDiskSitOutFor)+": its raidz or dRAID vdev found it far slower than its siblings (autosit), or sit_out was set by hand. Reads skip it and rebuild its data from parity; writes still go to it. Check its SMART data (smartctl -x) and its cabling, and replace it if it keeps being sat out.")
	sitOut.Labels["signal"] = "sit_out"

	// zpool counts slow I/Os on leaves only.
	slowIOs := alert(AlertVdevSlowIOsIncreasing, warning, "",
		fmt.Sprintf("increase(%s[%s]) > 0", b.sel("zfs_vdev_slow_ios_total"), promDuration(errorWindow)),
		"ZFS vdev {{ $labels.vdev }} of pool {{ $labels.pool }} has new slow I/Os.",
		"Vdev {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} counted about {{ printf \"%.0f\" $value }} new slow I/Os in the last "+config.Prose(errorWindow)+
			": I/Os that took longer than zio_slow_io_ms (30 seconds unless tuned) to complete. The counter goes back to 0 at export or zpool clear.")
	return []rule{latency, sitOut, slowIOs}
}

// eventAlerts read the kernel's events, from the events collector: the
// ereports that zpool clear does not take back, the deadman's, and the
// events the kernel's queue dropped before the exporter read them.
func (b builder) eventAlerts() []rule {
	window := promDuration(errorWindow)
	class := func(c string) string { return fmt.Sprintf("class=%q", c) }
	var rules []rule
	// The exporter has every leaf's checksum, I/O and delay classes at 0
	// from the start, so that increase() sees the first event of each.
	for _, e := range []struct{ kind, class, words string }{
		{"checksum", config.EventChecksum, "checksum"},
		{"io", config.EventIO, "I/O"},
	} {
		r := alert(AlertVdevEreportsIncreasing, warning, "",
			fmt.Sprintf("increase(%s[%s]) > 0", b.sel("zfs_vdev_events_total", class(e.class)), window),
			"ZFS vdev {{ $labels.vdev }} of pool {{ $labels.pool }} has new "+e.words+" ereports.",
			"The kernel posted about {{ printf \"%.0f\" $value }} "+e.words+" ereports for vdev {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} in the last "+config.Prose(errorWindow)+
				". They are counted one by one as ZFS posts them, and zpool clear does not take them back: zpool events -v {{ $labels.pool }} shows each.")
		r.Labels["ereport"] = e.kind
		rules = append(rules, r)
	}
	delay := alert(AlertVdevDelayEventsIncreasing, warning, "",
		fmt.Sprintf("increase(%s[%s]) > 0", b.sel("zfs_vdev_events_total", class(config.EventDelay)), window),
		"ZFS vdev {{ $labels.vdev }} of pool {{ $labels.pool }} has new delay events.",
		"The kernel posted about {{ printf \"%.0f\" $value }} delay events for vdev {{ $labels.vdev }} of pool {{ $labels.pool }} on {{ $labels.instance }} in the last "+config.Prose(errorWindow)+
			": I/Os that took longer than zio_slow_io_ms (30 seconds unless tuned) to complete. They are the slow I/Os of zpool status -s, posted as events, which zpool clear does not take back.")

	// No pool has the deadman's class at 0 beforehand: its first deadman
	// event makes the series, which increase() cannot see, but the
	// event's time can. The increase keeps the later ones in view where
	// the host's clock runs behind Prometheus's.
	deadman := b.sel("zfs_pool_events_total", class(config.EventDeadman))
	deadmanExpr := fmt.Sprintf("increase(%s[%s]) > 0\nor\n(\n  %s\n  and on (instance, pool)\n  (time() - %s < %s)\n)",
		deadman, window, deadman, b.sel("zfs_pool_event_last_timestamp_seconds", class(config.EventDeadman)), seconds(errorWindow))
	return append(rules,
		delay,
		alert(AlertPoolDeadman, critical, "",
			deadmanExpr,
			"ZFS pool {{ $labels.pool }} has hung I/O.",
			"ZFS's deadman posted events for pool {{ $labels.pool }} on {{ $labels.instance }} in the last "+config.Prose(errorWindow)+
				": an I/O to one of its disks has not completed for minutes (its limits are 5 and 10 minutes unless tuned), and what waits for it hangs with it, txg syncs and the writes behind them. zpool events -v {{ $labels.pool }} names the disk."),
		alert(AlertEventsDropped, warning, "",
			fmt.Sprintf("increase(%s[%s]) > 0", b.sel("zfs_events_dropped_total"), promDuration(droppedWindow)),
			"ZFS events on {{ $labels.instance }} were dropped before the exporter read them.",
			"The kernel's queue of ZFS events on {{ $labels.instance }} dropped about {{ printf \"%.0f\" $value }} events in "+config.Prose(droppedWindow)+
				" before the exporter read them: a burst overflowed the queue. The event counts miss those events, and the event alerts may have missed an ereport. Raise the queue's length, the zevent_len_max module parameter."),
	)
}

// sourceStale is ZFSExporterSourceStale for the sources that matcher
// picks, which may go after without answering; snapshots tells the
// snapshot listing, whose descriptions say what its age holds back.
func (b builder) sourceStale(matcher string, after time.Duration, snapshots bool) []rule {
	lastSuccess := b.sel("zfs_exporter_source_last_success_timestamp_seconds", matcher)
	oldText := "The exporter on {{ $labels.instance }} last read {{ $labels.source }} {{ $value | humanizeDuration }} ago: the metrics that come from it are missing or old. A zpool command may hang on a suspended pool (zfs_exporter_command_hung)."
	noneText := "The exporter on {{ $labels.instance }} has not once read {{ $labels.source }} since it started, and it has been failing for " + config.Prose(after) + "."
	if snapshots {
		oldText = "The exporter on {{ $labels.instance }} last listed snapshots {{ $value | humanizeDuration }} ago (it lists them in the background; the limit is " + config.Prose(after) + "): snapshot counts and ages are missing or old, and " + AlertSnapshotsStale + " waits for a fresh listing."
		noneText = "The exporter on {{ $labels.instance }} has not once listed snapshots since it started, and the listing has been failing for " + config.Prose(after) + ": snapshot counts and ages are missing, and " + AlertSnapshotsStale + " cannot fire."
	}
	// Two rules, told apart by last_success: a source that never answered
	// has no last success time, and only for can tell how long it failed.
	stale := alert(AlertSourceStale, warning, "",
		fmt.Sprintf("time() - %s > %s", lastSuccess, seconds(after)),
		"ZFS exporter source {{ $labels.source }} on {{ $labels.instance }} is stale.",
		oldText)
	stale.Labels["last_success"] = "old"
	never := alert(AlertSourceStale, warning, promDuration(after),
		fmt.Sprintf("(%s == 0)\nunless on (instance, source)\n%s", b.sel("zfs_exporter_source_up", matcher), lastSuccess),
		"ZFS exporter source {{ $labels.source }} on {{ $labels.instance }} has never answered.",
		noneText)
	never.Labels["last_success"] = "none"
	// The limit tells the rules for the sources apart, which promtool
	// would otherwise take for duplicates.
	stale.Labels["stale_after"], never.Labels["stale_after"] = promDuration(after), promDuration(after)
	return []rule{stale, never}
}

func (b builder) hostAlerts() []rule {
	// The tools' release against the module's: label_replace gives each
	// series a kernel label holding its userland's, which matches the
	// real one only when both are the same.
	return []rule{
		alert(AlertVersionMismatch, warning, "15m",
			fmt.Sprintf("%s\nunless on (instance, kernel)\nlabel_replace(%s, \"kernel\", \"$1\", \"userland\", \"(.+)\")",
				b.sel("zfs_version_info", `userland!=""`, `kernel!=""`), b.sel("zfs_version_info")),
			"ZFS tools and kernel module differ on {{ $labels.instance }}.",
			"On {{ $labels.instance }} the ZFS tools are release {{ $labels.userland }} and the loaded kernel module {{ $labels.kernel }}: packages were upgraded and the module not reloaded. Some zpool and zfs commands fail or misreport until the host reboots (or the module is reloaded)."),
	}
}

func (b builder) exporterAlerts() []rule {
	after := b.cfg.StaleAfter
	// The snapshot listing runs in the background, every so often: its
	// age between two listings is no sign of trouble.
	rules := b.sourceStale(fmt.Sprintf("source!=%q", config.SourceSnapshots), after, false)
	rules = append(rules, b.sourceStale(fmt.Sprintf("source=%q", config.SourceSnapshots), b.cfg.SnapshotListingStaleAfter, true)...)
	return append(rules,
		alert(AlertCollectorFailing, warning, promDuration(after),
			b.sel("zfs_exporter_collector_success")+" == 0",
			"ZFS exporter collector {{ $labels.collector }} on {{ $labels.instance }} is failing.",
			"Collector {{ $labels.collector }} of the exporter on {{ $labels.instance }} has failed every scrape for "+config.Prose(after)+": its metrics are missing. The exporter's log says why."),
		alert(AlertPoolMetricsAbsent, warning, promDuration(after),
			// A pool's state series is there while the exporter runs, even
			// when zpool hangs (kstats stand in), so its absence means the
			// pool or the exporter is gone. last_over_time rather than
			// absent(): absent() cannot name the pool that went missing.
			fmt.Sprintf("max without (state) (last_over_time(%s[%s]))\nunless on (instance, pool)\n%s",
				b.sel("zfs_pool_state", `state="online"`), promDuration(absentWindow),
				b.sel("zfs_pool_state", `state="online"`)),
			"ZFS pool {{ $labels.pool }} on {{ $labels.instance }} is no longer reported.",
			"Pool {{ $labels.pool }} on {{ $labels.instance }} was reported in the last "+config.Prose(absentWindow)+" but is not now: it was exported or destroyed, failed to import after a reboot, or the exporter is down. This alert ends by itself "+config.Prose(absentWindow)+" after the pool went away."),
	)
}
