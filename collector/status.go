package collector

import (
	"context"
	"log/slog"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

func init() {
	register("status", true, "Pool and vdev health, error counters, scrub/resilver, removal and expansion progress, checkpoints and TRIM from zpool status", newStatusCollector)
}

// Known states get one series each, so that an alert can test
// state="degraded" == 1 and a dashboard can colour a row without knowing
// every value in advance. A state outside these lists gets a series too.
var (
	poolStates = []string{"online", "degraded", "faulted", "offline", "unavail", "removed", "suspended"}
	vdevStates = []string{"online", "degraded", "faulted", "offline", "unavail", "removed", "avail", "inuse"}
	scanStates = []string{zpool.ScanScanning, zpool.ScanPaused, zpool.ScanFinished, zpool.ScanCanceled}
)

var (
	poolStateDesc = desc("pool", "state",
		"1 for the pool's current health state, 0 for the others (from zpool status).", "pool", "state")
	poolDataErrorsDesc = desc("pool", "data_errors",
		"Data errors zpool status reports for the pool (permanent errors in files or metadata).", "pool")
	poolStatusInfoDesc = desc("pool", "status_info",
		"Present while zpool status explains a problem with the pool; message_id is the ZFS-8000-xx message it refers to.", "pool", "message_id")
	poolUpgradeDesc = desc("pool", "upgrade_available",
		"1 while zpool status asks for zpool upgrade (features this ZFS supports are not enabled on the pool, or its on-disk version is older), else 0. Not a fault: zfs_pool_status_info is present then too, with no message_id.", "pool")

	vdevStateDesc = desc("vdev", "state",
		"1 for the vdev's current state, 0 for the others; hot spares report avail or inuse.", "pool", "vdev", "state")
	vdevInfoDesc = desc("vdev", "info",
		"The vdev's place in the pool: type, allocation class, parent vdev, device path and GUID. The pool's own row is the vdev named after the pool, of type root.",
		"pool", "vdev", "vdev_type", "class", "parent", "path", "guid")
	vdevReadErrorsDesc = desc("vdev", "read_errors_total",
		"Read errors counted on the vdev since import or the last zpool clear.", "pool", "vdev")
	vdevWriteErrorsDesc = desc("vdev", "write_errors_total",
		"Write errors counted on the vdev since import or the last zpool clear.", "pool", "vdev")
	vdevChecksumErrorsDesc = desc("vdev", "checksum_errors_total",
		"Checksum errors counted on the vdev since import or the last zpool clear.", "pool", "vdev")
	vdevSlowIOsDesc = desc("vdev", "slow_ios_total",
		"I/Os on the vdev that took longer than zio_slow_io_ms, since import or the last zpool clear.", "pool", "vdev")
	vdevResilveredDesc = desc("vdev", "resilvered_bytes",
		"Bytes resilvered onto the vdev by the current or last resilver.", "pool", "vdev")
	vdevRepairedDesc = desc("vdev", "repaired_bytes",
		"Bytes repaired on the vdev by the current or last scrub.", "pool", "vdev")
	vdevActivityDesc = desc("vdev", "activity",
		"1 for each thing zpool status notes the vdev is doing: resilvering, repairing (a scrub repairs it), awaiting_resilver, removing, non_allocating. No series when it notes none.",
		"pool", "vdev", "activity")

	scanLabels        = []string{"pool", "function", "vdev"}
	scanStateDesc     = desc("scan", "state", "1 for the scan's current state, 0 for the others. function is scrub, resilver, rebuild (sequential resilver, per top-level vdev), error_scrub, expand (RAID-Z expansion, per raidz vdev) or remove (vdev removal, vdev empty).", append(scanLabels, "state")...)
	scanExaminedDesc  = desc("scan", "examined_bytes", "Bytes the scan has examined (scanned) so far.", scanLabels...)
	scanIssuedDesc    = desc("scan", "issued_bytes", "Bytes the scan has issued for verification so far; for expand and remove, the bytes copied.", scanLabels...)
	scanTotalDesc     = desc("scan", "total_bytes", "Bytes the scan has to examine; for expand and remove, to copy.", scanLabels...)
	scanProcessedDesc = desc("scan", "processed_bytes", "Bytes repaired (scrub) or resilvered so far.", scanLabels...)
	scanErrorsDesc    = desc("scan", "errors", "Errors the scan found that it could not repair.", scanLabels...)
	scanProgressDesc  = desc("scan", "progress_ratio", "Share of the scan done, as zpool reports it (may exceed 1).", scanLabels...)
	scanRateDesc      = desc("scan", "issue_rate_bytes_per_second", "Rate at which the running scan issues (expand, remove: copies) bytes.", scanLabels...)
	scanRemainingDesc = desc("scan", "remaining_seconds", "Time zpool estimates the running scan still needs.", scanLabels...)
	scanStartDesc     = desc("scan", "start_time_seconds", "When the scan started (Unix time).", scanLabels...)
	scanEndDesc       = desc("scan", "end_time_seconds", "When the scan finished or was canceled (Unix time).", scanLabels...)
	scanDurationDesc  = desc("scan", "duration_seconds", "How long the finished scan took.", scanLabels...)
)

type statusCollector struct{ logger *slog.Logger }

func newStatusCollector(_ Config, logger *slog.Logger) (Collector, error) {
	return statusCollector{logger: logger}, nil
}

func (c statusCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	fallback := s.KstatPoolStates(ctx)
	st, err := s.Status(ctx)
	if err != nil {
		c.fallBackToKstat(ctx, fallback, ch)
		return err
	}
	for _, p := range st.Pools {
		collectPool(p, ch)
	}
	return nil
}

// fallBackToKstat reports pool health from the kernel's per-pool state
// kstat when zpool status fails (a suspended pool can hang zpool in the
// kernel): the health alerts keep working, and the freshness metrics say
// which source answered.
func (c statusCollector) fallBackToKstat(ctx context.Context, fallback *zfs.PoolStatesRead, ch chan<- prometheus.Metric) {
	states, err := fallback.Wait(ctx)
	if err != nil {
		c.logger.Warn("cannot read pool states from kstats either", "err", err)
		return
	}
	for pool, state := range states {
		stateSet(ch, poolStateDesc, poolStates, state, pool)
	}
}

func collectPool(p *zpool.Pool, ch chan<- prometheus.Metric) {
	stateSet(ch, poolStateDesc, poolStates, p.State, p.Name)
	if p.DataErrors != nil {
		gauge(ch, poolDataErrorsDesc, *p.DataErrors, p.Name)
	}
	if p.Status != "" || p.MessageID != "" {
		gauge(ch, poolStatusInfoDesc, 1, p.Name, p.MessageID)
	}
	upgrade := 0.0
	if upgradeAvailable(p) {
		upgrade = 1
	}
	gauge(ch, poolUpgradeDesc, upgrade, p.Name)
	for _, scan := range p.Scans {
		collectScan(p.Name, scan, ch)
	}
	collectLongOps(p, ch)
	if p.Root == nil {
		return
	}
	p.Root.WalkOnce(func(v *zpool.Vdev, parent string, spare *zpool.Vdev) {
		if spare != nil {
			v = standIn(v, spare)
		}
		collectVdev(p.Name, v, parent, ch)
	})
}

// standIn is the in-tree copy of an active spare with the state of its
// entry in the spares section ("inuse"), unless the copy itself is in
// trouble (faulted, unavail...), which matters more.
func standIn(v, spare *zpool.Vdev) *zpool.Vdev {
	merged := *v
	merged.Class = zpool.ClassSpare
	if v.State == "online" || v.State == "" {
		merged.State = spare.State
	}
	return &merged
}

func collectVdev(pool string, v *zpool.Vdev, parent string, ch chan<- prometheus.Metric) {
	stateSet(ch, vdevStateDesc, vdevStates, v.State, pool, v.Name)
	gauge(ch, vdevInfoDesc, 1, pool, v.Name, v.Type, v.Class, parent, v.Path, v.GUID)
	// Spares print no counters.
	if v.Class != zpool.ClassSpare || v.Type == "root" {
		counter(ch, vdevReadErrorsDesc, v.ReadErrors, pool, v.Name)
		counter(ch, vdevWriteErrorsDesc, v.WriteErrors, pool, v.Name)
		counter(ch, vdevChecksumErrorsDesc, v.ChecksumErrors, pool, v.Name)
	}
	optCounter(ch, vdevSlowIOsDesc, v.SlowIOs, pool, v.Name)
	optGauge(ch, vdevResilveredDesc, v.ResilveredBytes, pool, v.Name)
	optGauge(ch, vdevRepairedDesc, v.RepairedBytes, pool, v.Name)
	for _, a := range v.Activities {
		gauge(ch, vdevActivityDesc, 1, pool, v.Name, a)
	}
	collectVdevOps(pool, v, ch)
}

func collectScan(pool string, s zpool.Scan, ch chan<- prometheus.Metric) {
	if s.Function == "" || s.State == zpool.ScanNone {
		return
	}
	l := []string{pool, s.Function, s.Vdev}
	stateSet(ch, scanStateDesc, scanStates, s.State, l...)
	// An error scrub counts error blocks, not bytes: no byte figures.
	if s.Function != zpool.ScanErrorScrub {
		optGauge(ch, scanExaminedDesc, s.Examined, l...)
		optGauge(ch, scanIssuedDesc, s.Issued, l...)
		optGauge(ch, scanTotalDesc, s.Total, l...)
	}
	optGauge(ch, scanProcessedDesc, s.Processed, l...)
	optGauge(ch, scanErrorsDesc, s.Errors, l...)
	optGauge(ch, scanProgressDesc, s.Progress, l...)
	optGauge(ch, scanRateDesc, s.IssueRate, l...)
	optGauge(ch, scanRemainingDesc, s.Remaining, l...)
	optGauge(ch, scanDurationDesc, s.Duration, l...)
	optTime(ch, scanStartDesc, s.Start, l...)
	optTime(ch, scanEndDesc, s.End, l...)
}

// upgradeAvailable tells a pool whose status asks for zpool upgrade:
// "Enable all features using 'zpool upgrade'" (feature flags not enabled)
// or "Upgrade the pool using 'zpool upgrade'" (an older on-disk version).
// Neither has a message ID.
func upgradeAvailable(p *zpool.Pool) bool {
	return strings.Contains(p.Action, "'zpool upgrade'")
}
