// Package config is the mixin's _config: the selector that finds the
// exporter's series and the thresholds of the alerts, shared by the
// dashboards and the rules.
package config

import (
	"strconv"
	"time"
)

// Config tunes the generated dashboards and rules.
type Config struct {
	// Selector picks the exporter's series, e.g. `job="zfs"`.
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
