package boards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// scansBoard follows scrubs, resilvers and sequential rebuilds, and the
// RAID-Z expansions and device removals exported beside them (functions
// expand and remove): progress, issue rate, time left, what each vdev had
// repaired or resilvered, and the start and end of each as annotations.
// Checkpoints, removal mappings and the TRIM and initialization of leaves
// close it: long-running work of the pool that is not a scan.
func scansBoard(cfg config.Config) (dashboard.Dashboard, error) {
	b := newBoard(cfg, "zfs-scans", "ZFS / Scrub and resilver",
		"Progress, issue rate and time left of scrubs, resilvers, rebuilds, RAID-Z expansions and device removals, the bytes each vdev had repaired or resilvered, when each started and ended, checkpoints, and the TRIM and initialization of leaves. Scans are marked from zpool status and from the kernel's events, with the vdev state changes that start resilvers.", "scrub", "resilver")
	s := b.s
	scan := "{{pool}} {{function}} {{vdev}}"

	// The exporter serves the last scan's start and end times; a change of
	// either is a scan starting or ending.
	b.annotation("Scan started", "blue",
		fmt.Sprintf(`changes(zfs_scan_start_time_seconds%s[$__rate_interval]) > 0`, s.pool()),
		"{{function}} started", "{{function}} of {{pool}} {{vdev}} started", "pool,function")
	b.annotation("Scan ended", "green",
		fmt.Sprintf(`changes(zfs_scan_end_time_seconds%s[$__rate_interval]) > 0`, s.pool()),
		"{{function}} ended", "{{function}} of {{pool}} {{vdev}} ended", "pool,function")
	// The kernel's events mark them too, each restart of a resilver
	// included, and the vdev state changes that start resilvers.
	b.eventAnnotations()

	b.row("Scans")
	b.WithPanel(b.table("Scans",
		"The current or last scan of each pool (rebuilds per top-level vdev), with RAID-Z expansions (function expand, per raidz vdev) and device removals (function remove): state, progress, issue rate and time left while it runs, and when it started and ended. An expansion waiting for a resilver or zpool clear says so.",
		24, 7,
		[]query{
			tq(fmt.Sprintf(`zfs_scan_state%s == 1`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_progress_ratio%s`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_issue_rate_bytes_per_second%s`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_remaining_seconds%s`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_start_time_seconds%s * 1000`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_end_time_seconds%s * 1000`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_waiting%s`, s.pool())),
		},
		append(scanCols(), []col{
			{"Value #B", "progress", []dashboard.DynamicConfigValue{unit("percentunit")}},
			{"Value #C", "issue rate", []dashboard.DynamicConfigValue{unit("Bps")}},
			{"Value #D", "time left", []dashboard.DynamicConfigValue{unit("s")}},
			{"Value #E", "started", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #F", "ended", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #G", "waiting", []dashboard.DynamicConfigValue{mappings(textMap([][3]string{{"1", "for resilver or clear", "orange"}, {"0", "no", "green"}})), colorText()}},
		}...),
		"Value #A").
		// Running scans first: scanning, paused, then finished and
		// canceled ones, as the states sort backwards.
		SortBy([]cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName("state").Desc(true)}))

	b.WithPanel(b.timeseries("Progress",
		"Share of the scan, expansion or removal done, as zpool status reports it. It can pass 100% when the pool gained data meanwhile.",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`zfs_scan_progress_ratio%s`, s.pool()), scan)).
		Min(0))
	b.WithPanel(b.timeseries("Issue rate",
		"Bytes per second the running scan issues for verification or repair; for an expansion or a removal, the bytes it copies, averaged since it started. A resilver whose rate stays near zero is stalled.",
		"Bps", 12, 8,
		q(fmt.Sprintf(`zfs_scan_issue_rate_bytes_per_second%s`, s.pool()), scan)))
	b.WithPanel(b.timeseries("Time left",
		"Time zpool estimates the running scan, expansion or removal still needs. None while zpool gives no estimate: a slow scan, an expansion waiting for a resilver, a copy that would take more than 30 days.",
		"s", 12, 8,
		q(fmt.Sprintf(`zfs_scan_remaining_seconds%s`, s.pool()), scan)))
	b.WithPanel(b.timeseries("Examined and issued",
		"Bytes the scan has examined (scanned metadata) and issued (data verified) against the total it has to go through; older zpools report only some of these. Expansions and removals copy without examining first: their copied bytes are issued.",
		"bytes", 12, 8,
		q(fmt.Sprintf(`zfs_scan_examined_bytes%s`, s.pool()), scan+" examined"),
		q(fmt.Sprintf(`zfs_scan_issued_bytes%s`, s.pool()), scan+" issued"),
		q(fmt.Sprintf(`zfs_scan_total_bytes%s`, s.pool()), scan+" total")))

	b.row("Repairs")
	b.WithPanel(b.timeseries("Repaired per vdev",
		"Bytes the current or last scrub repaired on each vdev (the 12.9M repaired of zpool status). Repairs mean the vdev returned bad data: check its disk.",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_vdev_repaired_bytes%s`, s.pool()), "{{pool}} {{vdev}}")))
	b.WithPanel(b.timeseries("Resilvered per vdev",
		"Bytes the current or last resilver wrote to each vdev (the 151M resilvered of zpool status): the new or returning disk.",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_vdev_resilvered_bytes%s`, s.pool()), "{{pool}} {{vdev}}")))
	b.WithPanel(b.timeseries("Scan errors",
		"Errors the scan found and could not repair; the files affected are listed by zpool status -v.",
		"short", 8, 8,
		q(fmt.Sprintf(`zfs_scan_errors%s`, s.pool()), scan)))

	b.row("Checkpoints, TRIM and initialization")
	b.WithPanel(b.timeseries("Checkpoint space",
		"Space each pool's checkpoint holds: what was freed since zpool checkpoint stays allocated until the checkpoint is discarded (zpool checkpoint -d), so the pool fills as if nothing were deleted. While it is being discarded, the bytes still to free. No series: no checkpoint.",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_pool_checkpoint_bytes%s`, s.pool()), "{{pool}}")))
	b.WithPanel(b.timeseries("Removal mapping memory",
		"Memory the mappings of each pool's removed vdevs (where their blocks went) cost for as long as the pool is imported, as zpool status prints it after a device removal.",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_pool_removal_mapping_memory_bytes%s`, s.pool()), "{{pool}}")))
	b.WithPanel(b.timeseries("TRIM and initialization",
		"Share of each leaf's last TRIM (zpool trim) and initialization (zpool initialize) done; a complete one stays at 100%. Leaves never trimmed or initialized have no line. zfs-fuse and Solaris print no progress: there zfs_vdev_trim_state{state=\"active\"} tells a running TRIM.",
		"percentunit", 8, 8,
		q(fmt.Sprintf(`zfs_vdev_trim_progress_ratio%s`, s.pool()), "{{pool}} {{vdev}} TRIM"),
		q(fmt.Sprintf(`zfs_vdev_initialize_progress_ratio%s`, s.pool()), "{{pool}} {{vdev}} initialize")).
		Min(0).Max(1))

	return b.Build()
}

// scanCols are the first columns of a table of scans: which scan of which
// pool, and its state in colour.
func scanCols() []col {
	return []col{
		{"instance", "instance", nil},
		{"pool", "pool", nil},
		{"function", "scan", nil},
		{"vdev", "vdev", nil},
		{"state", "state", []dashboard.DynamicConfigValue{mappings(scanStateMap()), colorBackground()}},
	}
}
