// Package config is the mixin's _config: the selector that finds the
// exporter's series in the rules and the thresholds of the alerts, shared
// by the dashboards and the rules.
package config

import (
	"strconv"
	"time"
)

// Config tunes the generated dashboards and rules.
type Config struct {
	// Selector picks the exporter's series in the rules, e.g. `job="zfs"`:
	// set it to the job that scrapes the exporter. The dashboards pick
	// theirs with a job variable instead, which lists every job.
	Selector string
	// CapacityWarning and CapacityCritical are the allocated share of a
	// pool (0 to 1) that warns and pages.
	CapacityWarning, CapacityCritical float64
	// ScrubMaxAge is how old a pool's last finished scrub may get.
	ScrubMaxAge time.Duration
	// ResilverStallFor is how long a resilver may make no progress.
	ResilverStallFor time.Duration
	// StaleAfter is how long a source may go without answering.
	StaleAfter time.Duration
	// DatasetQuotaWarning is the share (0 to 1) of a dataset's quota
	// (used over quota) or refquota (referenced over refquota) that warns.
	DatasetQuotaWarning float64
	// SnapshotMaxAge is how old the newest snapshot of a dataset that has
	// snapshots may get before its snapshot or replication job is taken
	// for stopped.
	SnapshotMaxAge time.Duration
	// SnapshotListingStaleAfter is how long the snapshot listing may go
	// without answering. The exporter lists snapshots in the background,
	// not at every scrape, so this is StaleAfter for that one source: it
	// must exceed the time between two listings.
	SnapshotListingStaleAfter time.Duration

	// SlowDiskFactor is how many times its fastest sibling's p90 of disk
	// time (zfs_vdev_disk_wait_seconds) a leaf vdev's p90 must be to count
	// as slow, among the leaves of one mirror, raidz or dRAID vdev. It must
	// be more than 1.
	SlowDiskFactor float64
	// SlowDiskMinLatency is the p90 of disk time below which no leaf is
	// slow, however much faster its siblings are.
	SlowDiskMinLatency time.Duration
	// SlowDiskMinOps is the I/Os per second, reads and writes together,
	// that a leaf must complete over SlowDiskWindow for its p90 to count,
	// as the slow leaf or as a sibling.
	SlowDiskMinOps float64
	// SlowDiskWindow is the window of the rates the p90s and the I/Os per
	// second are taken over.
	SlowDiskWindow time.Duration
	// SlowDiskFor is how long a leaf must stay slow before it alerts.
	SlowDiskFor time.Duration
	// SlowDiskSitOutFor is how long OpenZFS 2.4 must have sat a leaf out
	// (zfs_vdev_sit_out) before it alerts. A sit-out lasts
	// vdev_read_sit_out_secs (10 minutes unless tuned): a longer time
	// would not see one.
	SlowDiskSitOutFor time.Duration
}

// Default is the configuration the committed files are generated with.
func Default() Config {
	return Config{
		Selector:         `job="zfs"`,
		CapacityWarning:  0.80,
		CapacityCritical: 0.90,
		ScrubMaxAge:      35 * 24 * time.Hour,
		ResilverStallFor: 30 * time.Minute,
		StaleAfter:       5 * time.Minute,

		DatasetQuotaWarning:       0.90,
		SnapshotMaxAge:            36 * time.Hour,
		SnapshotListingStaleAfter: time.Hour,

		// The leaves of one mirror or raidz see the same load, so their
		// p90s stay within a factor of 2 of each other; the exporter's
		// default buckets are 4 times apart, and a p90 moving one bucket
		// up must not alert: 5 is above both.
		SlowDiskFactor: 5,
		// Above a healthy hard disk's p90 under load (seek and rotation,
		// 10 to 30 ms), well below a failing one's, whose retries take
		// hundreds of milliseconds; an SSD's p90 is under a millisecond.
		SlowDiskMinLatency: 50 * time.Millisecond,
		// At least 600 I/Os per window, of which 60 are above the p90: an
		// idle disk's p90 is that of a handful of I/Os, where one slow
		// I/O (a spin-up) makes it.
		SlowDiskMinOps: 1,
		// Ten 1-minute scrapes: smooths a txg's burst, and still sees a
		// disk that turns slow.
		SlowDiskWindow: 10 * time.Minute,
		// With the window, a disk slow for about 25 minutes: longer than
		// a passing stall (a command timeout and reset, an SMR disk
		// cleaning up), short enough to act on before a resilver needs
		// the disk.
		SlowDiskFor: 15 * time.Minute,
		// OpenZFS's own test is strict (Tukey's fence at 50 times the
		// interquartile range, every second) and a sit-out ends after 10
		// minutes: half of one confirms it.
		SlowDiskSitOutFor: 5 * time.Minute,
	}
}

// Prose writes a duration of the configuration for people, in its largest
// whole unit: "35 days", "1 hour", "30 minutes".
func Prose(d time.Duration) string {
	for _, u := range []struct {
		unit string
		d    time.Duration
	}{{"day", 24 * time.Hour}, {"hour", time.Hour}, {"minute", time.Minute}} {
		if d >= u.d && d%u.d == 0 {
			n := int64(d / u.d)
			if n == 1 {
				return "1 " + u.unit
			}
			return strconv.FormatInt(n, 10) + " " + u.unit + "s"
		}
	}
	return d.String()
}

// Percent writes a share (0 to 1) of the configuration as a percent: 0.9
// is "90%".
func Percent(r float64) string { return strconv.FormatFloat(r*100, 'f', -1, 64) + "%" }
