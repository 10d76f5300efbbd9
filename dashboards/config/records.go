package config

// Names of the series the recording rules (out/rules/zfs-rules.yaml)
// write, for the dashboards to read. They follow level:metric:operations;
// every one keeps the target's labels (job, instance) so that the
// dashboards' selector still applies. Rates are over 5m: long enough for
// a 1m scrape interval, short enough to follow a benchmark.
const (
	// RecordTopVdevReadBytesRate is bytes read per second from each
	// top-level vdev (a child of the pool's root: mirror-0, raidz1-1, a
	// single-disk vdev, log, cache and spare devices), with the vdev_type
	// and class labels of zfs_vdev_info.
	RecordTopVdevReadBytesRate = "instance_pool_vdev:zfs_top_level_vdev_read_bytes:rate5m"
	// RecordTopVdevWriteBytesRate is bytes written per second to each
	// top-level vdev, labelled like RecordTopVdevReadBytesRate.
	RecordTopVdevWriteBytesRate = "instance_pool_vdev:zfs_top_level_vdev_write_bytes:rate5m"
	// RecordTopVdevReadOpsRate is read operations per second on each
	// top-level vdev, labelled like RecordTopVdevReadBytesRate.
	RecordTopVdevReadOpsRate = "instance_pool_vdev:zfs_top_level_vdev_read_operations:rate5m"
	// RecordTopVdevWriteOpsRate is write operations per second on each
	// top-level vdev, labelled like RecordTopVdevReadBytesRate.
	RecordTopVdevWriteOpsRate = "instance_pool_vdev:zfs_top_level_vdev_write_operations:rate5m"

	// RecordPoolReadBytesRate is bytes read per second from a pool: the
	// sum of its top-level vdevs without cache and spare devices, which is
	// what the pool's row of `zpool iostat` shows. (The pool's own vdev
	// row is 0 where the counters come from vdev properties.)
	RecordPoolReadBytesRate = "instance_pool:zfs_pool_read_bytes:rate5m"
	// RecordPoolWriteBytesRate is bytes written per second to a pool,
	// summed like RecordPoolReadBytesRate.
	RecordPoolWriteBytesRate = "instance_pool:zfs_pool_write_bytes:rate5m"
	// RecordPoolReadOpsRate is read operations per second on a pool,
	// summed like RecordPoolReadBytesRate.
	RecordPoolReadOpsRate = "instance_pool:zfs_pool_read_operations:rate5m"
	// RecordPoolWriteOpsRate is write operations per second on a pool,
	// summed like RecordPoolReadBytesRate.
	RecordPoolWriteOpsRate = "instance_pool:zfs_pool_write_operations:rate5m"

	// RecordARCHitRatio is the share of ARC accesses that hit, all kinds
	// together (0 to 1); no sample while the ARC sees no access.
	RecordARCHitRatio = "instance:zfs_arc_hits:ratio_rate5m"
	// RecordARCHitRatioByKind is the ARC hit ratio per kind label
	// (demand_data, demand_metadata, prefetch_data, prefetch_metadata).
	RecordARCHitRatioByKind = "instance_kind:zfs_arc_hits:ratio_rate5m"

	// RecordHostCPUBusyRatio is the share of the host's CPU capacity that
	// was busy (0 to 1): everything but idle and iowait.
	RecordHostCPUBusyRatio = "instance:zfs_host_cpu_busy:ratio_rate5m"
	// RecordEngineCPURate is CPU seconds per second (cores) used by each
	// family of ZFS engine threads, all modes together.
	RecordEngineCPURate = "instance_family:zfs_engine_cpu_seconds:rate5m"
	// RecordEngineCPUTotalRate is CPU seconds per second used by all ZFS
	// engine threads together.
	RecordEngineCPUTotalRate = "instance:zfs_engine_cpu_seconds:rate5m"
	// RecordEngineCPURatio is each engine thread family's share of the
	// host's whole CPU capacity (0 to 1).
	RecordEngineCPURatio = "instance_family:zfs_engine_cpu:ratio_rate5m"

	// RecordTxgSyncMean is the mean time a transaction group took to sync
	// in each pool, in seconds; no sample while no txg committed.
	RecordTxgSyncMean = "instance_pool:zfs_pool_txg_sync_seconds:mean5m"
	// RecordTxgSyncQuantile is the 0.5 and 0.99 quantiles (quantile
	// label) of txg sync time in each pool, in seconds, from the
	// histogram's buckets.
	RecordTxgSyncQuantile = "instance_pool:zfs_pool_txg_sync_seconds:histogram_quantile"
)
