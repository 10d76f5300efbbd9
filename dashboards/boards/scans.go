package boards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// scansBoard follows scrubs, resilvers and sequential rebuilds: progress,
// issue rate, time left, what each vdev had repaired or resilvered, and
// the start and end of each scan as annotations.
func scansBoard(cfg config.Config) (dashboard.Dashboard, error) {
	b := newBoard(cfg, "zfs-scans", "ZFS / Scrub and resilver",
		"Progress, issue rate and time left of scrubs, resilvers and rebuilds, the bytes each vdev had repaired or resilvered, and when each scan started and ended.", "scrub", "resilver")
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

	b.row("Scans")
	b.WithPanel(b.table("Scans",
		"The current or last scan of each pool (rebuilds per top-level vdev): state, progress, issue rate and time left while it runs, and when it started and ended.",
		24, 7,
		[]query{
			tq(fmt.Sprintf(`zfs_scan_state%s == 1`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_progress_ratio%s`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_issue_rate_bytes_per_second%s`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_remaining_seconds%s`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_start_time_seconds%s * 1000`, s.pool())),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_end_time_seconds%s * 1000`, s.pool())),
		},
		append(scanCols(), []col{
			{"Value #B", "progress", []dashboard.DynamicConfigValue{unit("percentunit")}},
			{"Value #C", "issue rate", []dashboard.DynamicConfigValue{unit("Bps")}},
			{"Value #D", "time left", []dashboard.DynamicConfigValue{unit("s")}},
			{"Value #E", "started", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #F", "ended", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
		}...),
		"Value #A"))

	b.WithPanel(b.timeseries("Progress",
		"Share of the scan done, as zpool status reports it. It can pass 100% when the pool gained data during the scan.",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`zfs_scan_progress_ratio%s`, s.pool()), scan)).
		Min(0))
	b.WithPanel(b.timeseries("Issue rate",
		"Bytes per second the running scan issues for verification or repair. A resilver whose rate stays near zero is stalled.",
		"Bps", 12, 8,
		q(fmt.Sprintf(`zfs_scan_issue_rate_bytes_per_second%s`, s.pool()), scan)))
	b.WithPanel(b.timeseries("Time left",
		"Time zpool estimates the running scan still needs.",
		"s", 12, 8,
		q(fmt.Sprintf(`zfs_scan_remaining_seconds%s`, s.pool()), scan)))
	b.WithPanel(b.timeseries("Examined and issued",
		"Bytes the scan has examined (scanned metadata) and issued (data verified) against the total it has to go through; older zpools report only some of these.",
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
