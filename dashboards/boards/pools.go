package boards

import (
	"fmt"
	"time"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// fillTrends are the windows over which the pools dashboard takes the
// trend of each pool's free space (deriv, a least-squares fit), and the
// horizons of its colours: those of the ZFSPoolFillingUp alerts, critical
// within a day at the trend of 6 hours, warning within a week at the trend
// of 2 days (rules/alerts.go; TestTimeUntilFullMatchesAlerts keeps them
// equal). Fixed windows, not $__range: the time until full must not change
// with the time picker, and must read as the alerts do.
var fillTrends = []struct {
	window  string
	horizon time.Duration
}{
	{"6h", 24 * time.Hour},
	{"2d", 7 * 24 * time.Hour},
}

// fillInterval is the finest step of the time-until-full graph: each of
// its points reads up to 2 days of samples of every pool.
const fillInterval = "15m"

// untilFull is the seconds until a pool has no free space left at the
// trend of its free space over window; no value for a pool whose free
// space does not shrink.
func (s sel) untilFull(window string) string {
	return fmt.Sprintf(`zfs_pool_free_bytes%s / -(deriv(zfs_pool_free_bytes%s[%s]) < 0)`, s.pool(), s.pool(), window)
}

// poolsBoard is the zpool status of every pool: states in colour, error
// counters, data errors, capacity, fragmentation, the last scrub, spares;
// and the kernel's events of its vdevs.
func poolsBoard(cfg config.Config) (dashboard.Dashboard, error) {
	b := newBoard(cfg, "zfs-pools", "ZFS / Pools",
		"Every pool and vdev with its state, errors, capacity, last scrub and spares, as zpool status shows them, and the events the kernel posted for them: ereports per vdev, and vdev state changes, scrubs and resilvers marked on the graphs.", "pools")
	s := b.s
	b.eventAnnotations()
	stateCol := col{"state", "state", []dashboard.DynamicConfigValue{mappings(stateMap()), colorBackground()}}
	errCol := func(field, title string) col {
		return col{field, title, []dashboard.DynamicConfigValue{colorText(), thresholds(base("text"), step(1, "red"))}}
	}

	b.row("Health")
	b.WithPanel(b.stat("Pools not online",
		"Pools whose state is anything but online (degraded, faulted, offline, unavail, removed, suspended).",
		"short", 6, 4,
		q(fmt.Sprintf(`count(zfs_pool_state%s == 1) or vector(0)`, s.pool(`state!="online"`)), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "red"))))
	b.WithPanel(b.stat("Vdevs not online",
		"Vdevs whose state is anything but online; an available hot spare counts as healthy, a spare in use does not.",
		"short", 6, 4,
		q(fmt.Sprintf(`count(zfs_vdev_state%s == 1) or vector(0)`, s.pool(`state!~"online|avail"`)), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "orange"))))
	b.WithPanel(b.stat("Data errors",
		"Permanent data errors summed over the pools (the errors: line of zpool status). Files listed by zpool status -v need restoring.",
		"short", 6, 4,
		q(fmt.Sprintf(`sum(zfs_pool_data_errors%s) or vector(0)`, s.pool()), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "red"))))
	b.WithPanel(b.stat("Spares in use",
		"Hot spares standing in for a failed disk. Replace the disk, then detach the spare to make it available again.",
		"short", 6, 4,
		q(fmt.Sprintf(`count(zfs_vdev_state%s == 1) or vector(0)`, s.pool(`state="inuse"`)), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "yellow"))))

	capSteps := []dashboard.Threshold{base("green"), step(cfg.CapacityWarning, "orange"), step(cfg.CapacityCritical, "red")}
	// Red within the critical alert's horizon, orange within the
	// warning's.
	fullSteps := []dashboard.Threshold{base("red"), step(fillTrends[0].horizon.Seconds(), "orange"), step(fillTrends[1].horizon.Seconds(), "green")}
	poolQueries := []query{
		tq(fmt.Sprintf(`zfs_pool_state%s == 1`, s.pool())),
		cell(poolKeys, fmt.Sprintf(`zfs_pool_size_bytes%s`, s.pool())),
		cell(poolKeys, fmt.Sprintf(`zfs_pool_allocated_bytes%s`, s.pool())),
		cell(poolKeys, fmt.Sprintf(`zfs_pool_allocated_bytes%s / zfs_pool_size_bytes%s`, s.pool(), s.pool())),
		cell(poolKeys, fmt.Sprintf(`zfs_pool_fragmentation_ratio%s`, s.pool())),
		cell(poolKeys, fmt.Sprintf(`zfs_pool_dedup_ratio%s`, s.pool())),
		cell(poolKeys, fmt.Sprintf(`zfs_pool_data_errors%s`, s.pool())),
	}
	poolCols := []col{
		{"instance", "instance", nil},
		{"pool", "pool", nil},
		stateCol,
		{"Value #B", "size", []dashboard.DynamicConfigValue{unit("bytes")}},
		{"Value #C", "allocated", []dashboard.DynamicConfigValue{unit("bytes")}},
		{"Value #D", "capacity", []dashboard.DynamicConfigValue{unit("percentunit"), colorBackground(), thresholds(capSteps...)}},
		{"Value #E", "fragmentation", []dashboard.DynamicConfigValue{unit("percentunit")}},
		{"Value #F", "dedup", []dashboard.DynamicConfigValue{unit("short")}},
		errCol("Value #G", "data errors"),
	}
	for _, tr := range fillTrends {
		poolCols = append(poolCols, col{"Value #" + refID(len(poolQueries)), "full in (" + tr.window + " trend)",
			[]dashboard.DynamicConfigValue{unit("s"), colorText(), thresholds(fullSteps...)}})
		poolQueries = append(poolQueries, cell(poolKeys, s.untilFull(tr.window)))
	}
	b.WithPanel(b.table("Pools",
		fmt.Sprintf("One row per pool: its state, size, allocated share, free-space fragmentation, dedup ratio, permanent data errors, and the time until it is full at the trend of its free space over %s and over %s (empty while its free space does not shrink; red within %s, orange within %s, as the alerts).",
			fillTrends[0].window, fillTrends[1].window, config.Prose(fillTrends[0].horizon), config.Prose(fillTrends[1].horizon)),
		24, 6, poolQueries, poolCols,
		"Value #A").
		SortBy(sortBy("pool")))

	b.WithPanel(b.table("Vdevs",
		"The vdev tree of each pool, shaped like zpool status: the pool's own row (type root), its top-level vdevs and their disks, with the state in colour and the READ, WRITE and CKSUM error counters (since import or zpool clear). parent names the vdev above.",
		24, 12,
		[]query{
			tq(fmt.Sprintf(`zfs_vdev_info%s * on(instance, pool, vdev) group_left(state) (zfs_vdev_state%s == 1)`, s.pool(), s.pool())),
			cell(vdevKeys, fmt.Sprintf(`zfs_vdev_read_errors_total%s`, s.pool())),
			cell(vdevKeys, fmt.Sprintf(`zfs_vdev_write_errors_total%s`, s.pool())),
			cell(vdevKeys, fmt.Sprintf(`zfs_vdev_checksum_errors_total%s`, s.pool())),
			cell(vdevKeys, fmt.Sprintf(`zfs_vdev_slow_ios_total%s`, s.pool())),
		},
		[]col{
			{"instance", "instance", nil},
			{"pool", "pool", nil},
			{"vdev", "vdev", nil},
			{"parent", "parent", nil},
			{"vdev_type", "type", nil},
			{"class", "class", nil},
			stateCol,
			errCol("Value #B", "read"),
			errCol("Value #C", "write"),
			errCol("Value #D", "cksum"),
			{"Value #E", "slow I/Os", nil},
			{"path", "path", nil},
		},
		"Value #A", "guid").
		SortBy(sortBy("pool")))

	b.WithPanel(b.table("Spares",
		"Hot spares of each pool: avail while ready, inuse while standing in for a disk (parent is then the spare-N vdev).",
		12, 6,
		[]query{
			tq(fmt.Sprintf(`zfs_vdev_info%s * on(instance, pool, vdev) group_left(state) (zfs_vdev_state%s == 1)`, s.pool(`class="spare"`), s.pool())),
		},
		[]col{
			{"instance", "instance", nil},
			{"pool", "pool", nil},
			{"vdev", "spare", nil},
			{"parent", "parent", nil},
			stateCol,
			{"path", "path", nil},
		},
		"Value", "guid", "class", "vdev_type"))
	b.WithPanel(b.table("Pool status messages",
		"Pools for which zpool status prints a status and action; message_id is the ZFS-8000 article that explains it.",
		12, 6,
		[]query{tq(fmt.Sprintf(`zfs_pool_status_info%s == 1`, s.pool()))},
		[]col{
			{"instance", "instance", nil},
			{"pool", "pool", nil},
			{"message_id", "message", nil},
		},
		"Value"))

	b.row("Errors")
	b.WithPanel(b.timeseries("Vdev errors",
		"READ, WRITE and CKSUM errors counted per vdev in each interval. Any rise deserves a look at zpool status and the disk's SMART data.",
		"short", 12, 8,
		q(fmt.Sprintf(`sum by (instance, pool, vdev) (increase(zfs_vdev_read_errors_total%s[$__rate_interval])) > 0`, s.pool()), "{{pool}} {{vdev}} read"),
		q(fmt.Sprintf(`sum by (instance, pool, vdev) (increase(zfs_vdev_write_errors_total%s[$__rate_interval])) > 0`, s.pool()), "{{pool}} {{vdev}} write"),
		q(fmt.Sprintf(`sum by (instance, pool, vdev) (increase(zfs_vdev_checksum_errors_total%s[$__rate_interval])) > 0`, s.pool()), "{{pool}} {{vdev}} cksum")).
		DrawStyle(common.GraphDrawStyleBars))
	b.WithPanel(b.timeseries("Data errors",
		"Permanent data errors per pool, as zpool status reports them.",
		"short", 12, 8,
		q(fmt.Sprintf(`zfs_pool_data_errors%s`, s.pool()), "{{pool}}")))
	b.WithPanel(b.timeseries("Slow I/Os",
		"I/Os per second that took longer than zio_slow_io_ms (30 s by default) per vdev; only where zpool reports them (JSON status or -s).",
		"iops", 12, 8,
		q(fmt.Sprintf(`rate(zfs_vdev_slow_ios_total%s[$__rate_interval])`, s.pool()), "{{pool}} {{vdev}}")))
	b.WithPanel(b.timeseries("Vdevs not online",
		"How many vdevs of each pool were not online (available spares excluded) over time.",
		"short", 12, 8,
		q(fmt.Sprintf(`count by (instance, pool) (zfs_vdev_state%s == 1)`, s.pool(`state!~"online|avail"`)), "{{pool}}")))
	// The kernel's events, from zpool events: per event rather than per
	// counter, so zpool clear takes nothing back.
	b.WithPanel(b.timeseries("Vdev ereports",
		"Ereports the kernel posted per vdev in each interval, by class: checksum and I/O errors, delay (an I/O slower than zio_slow_io_ms, 30 s by default), deadman (an I/O hung for minutes) and others, as zpool events -v lists them. Unlike the counters of Vdev errors, zpool clear does not take them back.",
		"short", 12, 8,
		q(shortEvent(fmt.Sprintf(`sum by (instance, pool, vdev, class) (increase(zfs_vdev_events_total%s[$__rate_interval])) > 0`, s.pool(`class=~"ereport[.].+"`))), "{{pool}} {{vdev}} {{event}}")).
		DrawStyle(common.GraphDrawStyleBars))
	b.WithPanel(b.timeseries("Pool events",
		"Events the kernel posted per pool in each interval, by class: ereports, vdev state changes, scrub and resilver starts and ends, and the history_event and config_sync that most zfs and zpool commands post when they change something (a snapshot, a property). Dropped: events the kernel's queue lost before the exporter read them, in a burst larger than zfs_zevent_len_max.",
		"short", 12, 8,
		q(shortEvent(fmt.Sprintf(`sum by (instance, pool, class) (increase(zfs_pool_events_total%s[$__rate_interval])) > 0`, s.pool())), "{{pool}} {{event}}"),
		q(fmt.Sprintf(`increase(zfs_events_dropped_total%s[$__rate_interval]) > 0`, s.host()), "{{instance}} dropped")).
		DrawStyle(common.GraphDrawStyleBars))

	b.row("Capacity")
	b.WithPanel(b.timeseries("Capacity used",
		fmt.Sprintf("Allocated share of each pool. Lines mark the warning (%.0f%%) and critical (%.0f%%) thresholds of the alerts; ZFS slows down as pools fill.",
			cfg.CapacityWarning*100, cfg.CapacityCritical*100),
		"percentunit", 8, 8,
		q(fmt.Sprintf(`zfs_pool_allocated_bytes%s / zfs_pool_size_bytes%s`, s.pool(), s.pool()), "{{pool}}")).
		Min(0).Max(1).
		Thresholds(thresholdsBuilder(capSteps...)).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine)))
	b.WithPanel(b.timeseries("Allocated and free",
		"Allocated and free bytes of each pool (zpool list ALLOC and FREE).",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_pool_allocated_bytes%s`, s.pool()), "{{pool}} allocated"),
		q(fmt.Sprintf(`zfs_pool_free_bytes%s`, s.pool()), "{{pool}} free")))
	b.WithPanel(b.timeseries("Fragmentation",
		"Free-space fragmentation of each pool (zpool list FRAG): how scattered the free space is, not the data.",
		"percentunit", 8, 8,
		q(fmt.Sprintf(`zfs_pool_fragmentation_ratio%s`, s.pool()), "{{pool}}")).
		Min(0).Max(1))
	var fillQueries []query
	for _, tr := range fillTrends {
		fillQueries = append(fillQueries, q(s.untilFull(tr.window), "{{pool}} ("+tr.window+" trend)"))
	}
	b.WithPanel(b.timeseries("Time until full",
		fmt.Sprintf("How long until each pool has no free space left, at the trend of its free space (deriv, a least-squares fit) over the last %s and the last %s: the windows of the pool-filling-up alerts, whose horizons the lines mark (%s, %s). A pool whose free space does not shrink has no line. Logarithmic scale; drawn every %s at most, as each point reads up to %s of samples.",
			fillTrends[0].window, fillTrends[1].window, config.Prose(fillTrends[0].horizon), config.Prose(fillTrends[1].horizon), fillInterval, fillTrends[1].window),
		"s", 12, 8, fillQueries...).
		Interval(fillInterval).
		ScaleDistribution(common.NewScaleDistributionConfigBuilder().Type(common.ScaleDistributionLog).Log(10)).
		Thresholds(thresholdsBuilder(fullSteps...)).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine)))
	b.WithPanel(b.timeseries("Vdev capacity used",
		"Allocated share of each top-level vdev, zpool list -v's CAP: allocated over size, both raw, parity included, on raidz and dRAID as on mirrors. ZFS steers new writes to the emptier vdevs, so a vdev added to a full pool stays apart for a long time.",
		"percentunit", 12, 8,
		q(fmt.Sprintf(`zfs_vdev_allocated_bytes%s / (zfs_vdev_size_bytes%s > 0) and on(instance, pool, vdev) (%s)`, s.pool(), s.pool(), s.topLevel()), "{{pool}} {{vdev}}")).
		Min(0).
		Thresholds(thresholdsBuilder(capSteps...)).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine)))
	// The vdevs with allocated space: the pool's own row, the top-level
	// vdevs, log and cache devices. Every column keeps to them, as the
	// merge would add a row for any other vdev (the disks have a size and
	// an ashift too).
	allocating := func(metric string) string {
		return fmt.Sprintf(`%s%s and on(instance, pool, vdev) zfs_vdev_allocated_bytes%s`, metric, s.pool(), s.pool())
	}
	b.WithPanel(b.table("Vdev capacity",
		"Space of the pool's own row and of each top-level vdev, log and cache device, as zpool list -v shows it: size (raw, parity included, so the top-level vdevs add up to the pool), allocated, free, the allocated share (CAP), the fragmentation of the free space (FRAG), and ashift (log2 of the sector size, its smallest allocation: 12 is 4 KiB; from the vdev properties of OpenZFS 2.2+). Empty on zfs-fuse, whose zpool lists no vdevs.",
		24, 8,
		[]query{
			tq(allocating("zfs_vdev_info")),
			cell(vdevKeys, allocating("zfs_vdev_size_bytes")),
			cell(vdevKeys, fmt.Sprintf(`zfs_vdev_allocated_bytes%s`, s.pool())),
			cell(vdevKeys, allocating("zfs_vdev_free_bytes")),
			cell(vdevKeys, fmt.Sprintf(`zfs_vdev_allocated_bytes%s / (zfs_vdev_size_bytes%s > 0)`, s.pool(), s.pool())),
			cell(vdevKeys, allocating("zfs_vdev_fragmentation_ratio")),
			cell(vdevKeys, allocating("zfs_vdev_ashift")),
		},
		[]col{
			{"instance", "instance", nil},
			{"pool", "pool", nil},
			{"vdev", "vdev", nil},
			{"vdev_type", "type", nil},
			{"class", "class", nil},
			{"Value #B", "size", []dashboard.DynamicConfigValue{unit("bytes")}},
			{"Value #C", "allocated", []dashboard.DynamicConfigValue{unit("bytes")}},
			{"Value #D", "free", []dashboard.DynamicConfigValue{unit("bytes")}},
			{"Value #E", "allocated share", []dashboard.DynamicConfigValue{unit("percentunit"), gaugeCell(), fieldMin(0), fieldMax(1), thresholds(capSteps...)}},
			{"Value #F", "fragmentation", []dashboard.DynamicConfigValue{unit("percentunit")}},
			{"Value #G", "ashift", []dashboard.DynamicConfigValue{unit("none")}},
		},
		"Value #A", "guid", "path", "parent").
		SortBy(sortBy("pool")))

	b.row("Scrub")
	b.WithPanel(b.table("Last scan",
		"The last scrub, resilver or rebuild of each pool (rebuilds per top-level vdev): its state, when it ran, how long it took, what it repaired or resilvered, and the errors it could not repair. Expansions and removals are on the scrub and resilver dashboard.",
		16, 7,
		[]query{
			tq(fmt.Sprintf(`zfs_scan_state%s == 1`, s.pool(scanOnly))),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_start_time_seconds%s * 1000`, s.pool(scanOnly))),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_end_time_seconds%s * 1000`, s.pool(scanOnly))),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_duration_seconds%s`, s.pool(scanOnly))),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_processed_bytes%s`, s.pool(scanOnly))),
			cell(scanKeys, fmt.Sprintf(`zfs_scan_errors%s`, s.pool(scanOnly))),
		},
		append(scanCols(), []col{
			{"Value #B", "started", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #C", "ended", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #D", "took", []dashboard.DynamicConfigValue{unit("s")}},
			{"Value #E", "repaired or resilvered", []dashboard.DynamicConfigValue{unit("bytes")}},
			errCol("Value #F", "errors"),
		}...),
		"Value #A"))
	b.WithPanel(b.stat("Since last finished scrub",
		fmt.Sprintf("Time since each pool's last scrub finished; orange past %s, when the scrub-overdue alert fires. A pool that never finished a scrub shows no value.",
			cfg.ScrubMaxAge),
		"s", 8, 7,
		q(fmt.Sprintf(`time() - max by (instance, pool) (zfs_scan_end_time_seconds%s * on(instance, pool, function, vdev) group_left() (zfs_scan_state%s == 1))`,
			s.pool(`function="scrub"`), s.pool(`function="scrub"`, `state="finished"`)), "{{pool}}")).
		TextMode(common.BigValueTextModeValueAndName).
		Thresholds(thresholdsBuilder(base("green"), step(cfg.ScrubMaxAge.Seconds(), "orange"))))

	return b.Build()
}

// scanOnly keeps the scans that read the pool (scrub, resilver, rebuild,
// error scrub) and leaves out the copies that share their metrics: a
// finished removal stays in zpool status until the pool is exported.
const scanOnly = `function!~"expand|remove"`
