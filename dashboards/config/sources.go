package config

// Freshness sources of the exporter (the source label of
// zfs_exporter_source_up and zfs_exporter_source_last_success_timestamp_seconds)
// that the dashboards and rules single out. The exporter's module names
// them (internal/zfs), which this module does not import: the two are
// kept equal by hand.
const (
	// SourceDatasets is the listing of filesystems and volumes (zfs list),
	// run at every scrape of the dataset collector.
	SourceDatasets = "zfs_list"
	// SourceSnapshots is the listing of snapshots, which the exporter runs
	// in the background rather than at every scrape: its age is held to
	// SnapshotListingStaleAfter instead of StaleAfter.
	SourceSnapshots = "zfs_list_snapshots"
)
