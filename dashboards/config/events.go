package config

// Classes of the kernel's ZFS events (the class label of
// zfs_pool_events_total, zfs_pool_event_last_timestamp_seconds and
// zfs_vdev_events_total) that the dashboards and rules single out, as
// zpool events prints them. The exporter's module names them
// (internal/zfs/events), which this module does not import: the two are
// kept equal by hand.
const (
	// EventChecksum is a checksum ereport: a block read from a vdev did
	// not match its checksum. The exporter has it at 0 for every pool and
	// leaf from the start.
	EventChecksum = "ereport.fs.zfs.checksum"
	// EventIO is an I/O ereport: a vdev failed a read or a write. At 0
	// from the start, as EventChecksum.
	EventIO = "ereport.fs.zfs.io"
	// EventDelay is a delay ereport: an I/O took longer than
	// zio_slow_io_ms to complete. At 0 from the start, as EventChecksum.
	EventDelay = "ereport.fs.zfs.delay"
	// EventDeadman is a deadman ereport: an I/O that has hung for minutes.
	// Its series starts with the pool's first one.
	EventDeadman = "ereport.fs.zfs.deadman"
	// EventStateChange is a vdev changing state (faulted, removed,
	// online...).
	EventStateChange = "resource.fs.zfs.statechange"
	// EventResilverStart and EventResilverFinish open and close a
	// resilver, or a sequential rebuild.
	EventResilverStart  = "sysevent.fs.zfs.resilver_start"
	EventResilverFinish = "sysevent.fs.zfs.resilver_finish"
	// EventScrubStart and EventScrubFinish open and close a scrub; a
	// canceled scrub ends with EventScrubAbort instead.
	EventScrubStart  = "sysevent.fs.zfs.scrub_start"
	EventScrubFinish = "sysevent.fs.zfs.scrub_finish"
	EventScrubAbort  = "sysevent.fs.zfs.scrub_abort"
)
