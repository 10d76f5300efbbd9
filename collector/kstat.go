package collector

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"runtime"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

func init() {
	register("kstat", slices.Contains([]string{"linux", "freebsd", "illumos", "solaris"}, runtime.GOOS), "ARC, L2ARC, ZIL, DMU transaction, prefetch and ABD statistics, per-pool I/O and TRIM, per-dataset I/O and transaction-group histograms from the kernel's ZFS kstats (Linux /proc/spl/kstat/zfs, FreeBSD sysctl kstat.zfs, illumos kstat -p)", newKstatCollector)
}

var (
	arcSizeDescs = []struct {
		stat string
		desc *prometheus.Desc
	}{
		{kstat.ARCSize, desc("arc", "size_bytes", "Bytes in the ARC.")},
		{kstat.ARCTargetSize, desc("arc", "target_size_bytes", "The size the ARC is steering to (c).")},
		{kstat.ARCMinSize, desc("arc", "min_size_bytes", "Floor of the ARC's target size (c_min).")},
		{kstat.ARCMaxSize, desc("arc", "max_size_bytes", "Ceiling of the ARC's target size (c_max).")},
		{kstat.ARCMRUSize, desc("arc", "mru_size_bytes", "Bytes in the ARC's most-recently-used list.")},
		{kstat.ARCMFUSize, desc("arc", "mfu_size_bytes", "Bytes in the ARC's most-frequently-used list.")},
		{kstat.ARCDataSize, desc("arc", "data_size_bytes", "Bytes of file data in the ARC.")},
		{kstat.ARCMetadataSize, desc("arc", "metadata_size_bytes", "Bytes of metadata in the ARC.")},
		{kstat.ARCCompressedSize, desc("arc", "compressed_size_bytes", "Bytes the ARC's data takes as stored (compressed).")},
		{kstat.ARCUncompressedSize, desc("arc", "uncompressed_size_bytes", "Bytes the ARC's data would take uncompressed.")},
		{kstat.ARCL2Size, desc("l2arc", "size_bytes", "Bytes of data in the L2ARC (uncompressed).")},
	}
	arcCounterDescs = []struct {
		stat string
		desc *prometheus.Desc
	}{
		{kstat.ARCL2Hits, desc("l2arc", "hits_total", "Reads served by the L2ARC.")},
		{kstat.ARCL2Misses, desc("l2arc", "misses_total", "Reads the L2ARC could not serve.")},
		{kstat.ARCL2ReadBytes, desc("l2arc", "read_bytes_total", "Bytes read from the cache devices.")},
		{kstat.ARCL2WriteBytes, desc("l2arc", "write_bytes_total", "Bytes written to the cache devices.")},
	}
	arcHitsDesc   = desc("arc", "hits_total", "ARC hits by kind (demand or prefetch, data or metadata): the hit ratio is sum(rate(hits)) / (sum(rate(hits)) + sum(rate(misses))).", "kind")
	arcMissesDesc = desc("arc", "misses_total", "ARC misses by kind (demand or prefetch, data or metadata).", "kind")
	arcKinds      = []struct{ kind, hits, misses string }{
		{"demand_data", kstat.ARCDemandDataHits, kstat.ARCDemandDataMisses},
		{"demand_metadata", kstat.ARCDemandMetadataHits, kstat.ARCDemandMetadataMisses},
		{"prefetch_data", kstat.ARCPrefetchDataHits, kstat.ARCPrefetchDataMisses},
		{"prefetch_metadata", kstat.ARCPrefetchMetadataHits, kstat.ARCPrefetchMetadataMisses},
	}

	datasetReadBytesDesc  = desc("dataset", "read_bytes_total", "Bytes read from the dataset through the file system (objset kstats).", "pool", "dataset")
	datasetWriteBytesDesc = desc("dataset", "write_bytes_total", "Bytes written to the dataset through the file system.", "pool", "dataset")
	datasetReadOpsDesc    = desc("dataset", "read_operations_total", "Read operations on the dataset.", "pool", "dataset")
	datasetWriteOpsDesc   = desc("dataset", "write_operations_total", "Write operations on the dataset.", "pool", "dataset")
)

type kstatCollector struct {
	txgs   *txgHistory
	logger *slog.Logger
}

func newKstatCollector(_ Config, logger *slog.Logger) (Collector, error) {
	return &kstatCollector{txgs: newTxgHistory(), logger: logger}, nil
}

func (c *kstatCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	snap, err := s.Kstats(ctx)
	if errors.Is(err, zfs.ErrNoKstats) {
		return ErrNoData
	}
	if snap == nil {
		return err
	}
	if snap.ARC != nil {
		collectARC(*snap.ARC, ch)
	}
	for _, d := range snap.Datasets {
		counter(ch, datasetReadBytesDesc, float64(d.ReadBytes), d.Pool, d.Name)
		counter(ch, datasetWriteBytesDesc, float64(d.WriteBytes), d.Pool, d.Name)
		counter(ch, datasetReadOpsDesc, float64(d.Reads), d.Pool, d.Name)
		counter(ch, datasetWriteOpsDesc, float64(d.Writes), d.Pool, d.Name)
	}
	c.txgs.update(snap.Txgs, ch)
	collectMisc(snap.Misc, ch)
	for _, p := range snap.PoolIOStats {
		collectPoolIOStats(p, ch)
	}
	for _, pool := range slices.Sorted(maps.Keys(snap.PoolIO)) {
		collectPoolIO(pool, snap.PoolIO[pool], ch)
	}
	return err
}

// collectARC sends the ARC's figures that this kernel has: a statistic an
// older or newer ZFS lacks gives no series.
func collectARC(arc kstat.ARC, ch chan<- prometheus.Metric) {
	for _, s := range arcSizeDescs {
		if v, ok := arc.Get(s.stat); ok {
			gauge(ch, s.desc, v)
		}
	}
	for _, s := range arcCounterDescs {
		if v, ok := arc.Get(s.stat); ok {
			counter(ch, s.desc, v)
		}
	}
	for _, k := range arcKinds {
		if v, ok := arc.Get(k.hits); ok {
			counter(ch, arcHitsDesc, v, k.kind)
		}
		if v, ok := arc.Get(k.misses); ok {
			counter(ch, arcMissesDesc, v, k.kind)
		}
	}
}

// kstatSeries maps one statistic of a module-wide kstat (zil, dmu_tx,
// abdstats, zfetchstats) to a series, with the label values it gets.
type kstatSeries struct {
	stat   string
	desc   *prometheus.Desc
	gauge  bool // a level now, not a count since the module loaded
	labels []string
}

// The ZIL, DMU transaction, ABD and prefetch series, by kstat. Names are
// the same on every OS; a statistic this kernel lacks gives no series.
var (
	zilCommitsDesc = desc("zil", "commits_total",
		"ZIL commits asked for (zil_commit_count): fsync, O_SYNC and O_DSYNC writes, sync=always.")
	zilCommitWritersDesc = desc("zil", "commit_writers_total",
		"ZIL commits that wrote the log themselves (zil_commit_writer_count); the others were served by a concurrent commit's write.")
	zilCommitFallbacksDesc = desc("zil", "commit_fallbacks_total",
		"ZIL commits that fell back to waiting for the transaction group to sync, by reason (OpenZFS 2.3+): error (a log write or flush failed), stall (no log block could be allocated), suspend (the ZIL was suspended), crash (the ZIL failed and awaits a reset; OpenZFS 2.4+).", "reason")
	zilItxDesc = desc("zil", "itx_total",
		"Intent log transactions (itx) of every kind copied into log blocks (zil_itx_count).")
	zilItxWritesDesc = desc("zil", "itx_writes_total",
		"Write records copied into log blocks, by how their data reaches the log: indirect (written in place, the log points to it), copied (copied into the record when created), needcopy (copied at commit).", "kind")
	zilItxWriteBytesDesc = desc("zil", "itx_write_bytes_total",
		"Bytes of data of the write records copied into log blocks, by kind as zfs_zil_itx_writes_total.", "kind")
	zilLogBlocksDesc = desc("zil", "log_blocks_total",
		"Log blocks written, by where they were allocated: slog (separate log devices) or normal (the main pool, without or past a slog).", "class")
	zilLogRecordBytesDesc = desc("zil", "log_record_bytes_total",
		"Bytes of log records in the log blocks written, by class.", "class")
	zilLogWrittenBytesDesc = desc("zil", "log_written_bytes_total",
		"Bytes of log blocks written, padding included, by class (OpenZFS 2.2+).", "class")
	zilLogAllocatedBytesDesc = desc("zil", "log_allocated_bytes_total",
		"Bytes allocated for log blocks, by class (OpenZFS 2.2+).", "class")

	dmuTxDesc = desc("dmu_tx", "total",
		"Attempts to assign DMU transactions to a transaction group, by result (the dmu_tx kstat's names without dmu_tx_): assigned; "+
			"the write throttle's dirty_delay, wrlog_delay, dirty_throttle and dirty_over_max (dirty data past zfs_dirty_data_max), which rise first when a benchmark outruns the disks; "+
			"and the other waits and failures delay, group, memory_reserve, memory_reclaim, dirty_frees_delay, suspended, quota and error.", "result")

	abdBuffersDesc = desc("abd", "buffers",
		"ARC buffered data (ABD) buffers allocated now, by kind: linear (one contiguous buffer) or scatter (pages or chunks).", "kind")
	abdDataBytesDesc = desc("abd", "data_bytes",
		"Bytes of data in ABD buffers now, by kind.", "kind")
	abdStructBytesDesc = desc("abd", "struct_bytes",
		"Bytes taken by the ABD structures themselves (struct_size).")
	abdScatterWasteBytesDesc = desc("abd", "scatter_waste_bytes",
		"Bytes unused at the end of the last chunk of scatter ABDs (scatter_chunk_waste).")

	prefetchHitsDesc = desc("prefetch", "hits_total",
		"Reads that continued a prefetch stream (zfetchstats hits): the prefetch hit ratio is rate(hits) / (rate(hits) + rate(misses)).")
	prefetchMissesDesc = desc("prefetch", "misses_total",
		"Reads that matched no prefetch stream (zfetchstats misses).")
	prefetchMaxStreamsDesc = desc("prefetch", "max_streams_total",
		"Reads that started no new prefetch stream because the file already had zfetch_max_streams of them (max_streams).")
	prefetchReorderedDesc = desc("prefetch", "reordered_total",
		"Reads near a prefetch stream but not at its position, neither hits nor misses (OpenZFS 2.2+): future and stride ahead of it within zfetch_max_reorder (stride when they moved the stream on), past behind it.", "kind")
	prefetchReadsIssuedDesc = desc("prefetch", "reads_issued_total",
		"Block reads the prefetcher issued (io_issued, OpenZFS 2.2+).")
	prefetchReadsActiveDesc = desc("prefetch", "reads_active",
		"Prefetch reads in flight now (io_active, OpenZFS 2.2+).")

	miscSeries = map[string][]kstatSeries{
		kstat.MiscZIL: {
			{stat: "zil_commit_count", desc: zilCommitsDesc},
			{stat: "zil_commit_writer_count", desc: zilCommitWritersDesc},
			{stat: "zil_commit_error_count", desc: zilCommitFallbacksDesc, labels: []string{"error"}},
			{stat: "zil_commit_stall_count", desc: zilCommitFallbacksDesc, labels: []string{"stall"}},
			{stat: "zil_commit_suspend_count", desc: zilCommitFallbacksDesc, labels: []string{"suspend"}},
			{stat: "zil_commit_crash_count", desc: zilCommitFallbacksDesc, labels: []string{"crash"}},
			{stat: "zil_itx_count", desc: zilItxDesc},
			{stat: "zil_itx_indirect_count", desc: zilItxWritesDesc, labels: []string{"indirect"}},
			{stat: "zil_itx_copied_count", desc: zilItxWritesDesc, labels: []string{"copied"}},
			{stat: "zil_itx_needcopy_count", desc: zilItxWritesDesc, labels: []string{"needcopy"}},
			{stat: "zil_itx_indirect_bytes", desc: zilItxWriteBytesDesc, labels: []string{"indirect"}},
			{stat: "zil_itx_copied_bytes", desc: zilItxWriteBytesDesc, labels: []string{"copied"}},
			{stat: "zil_itx_needcopy_bytes", desc: zilItxWriteBytesDesc, labels: []string{"needcopy"}},
			{stat: "zil_itx_metaslab_normal_count", desc: zilLogBlocksDesc, labels: []string{"normal"}},
			{stat: "zil_itx_metaslab_slog_count", desc: zilLogBlocksDesc, labels: []string{"slog"}},
			{stat: "zil_itx_metaslab_normal_bytes", desc: zilLogRecordBytesDesc, labels: []string{"normal"}},
			{stat: "zil_itx_metaslab_slog_bytes", desc: zilLogRecordBytesDesc, labels: []string{"slog"}},
			{stat: "zil_itx_metaslab_normal_write", desc: zilLogWrittenBytesDesc, labels: []string{"normal"}},
			{stat: "zil_itx_metaslab_slog_write", desc: zilLogWrittenBytesDesc, labels: []string{"slog"}},
			{stat: "zil_itx_metaslab_normal_alloc", desc: zilLogAllocatedBytesDesc, labels: []string{"normal"}},
			{stat: "zil_itx_metaslab_slog_alloc", desc: zilLogAllocatedBytesDesc, labels: []string{"slog"}},
		},
		kstat.MiscDMUTx: dmuTxSeries(
			"assigned", "delay", "error", "suspended", "group", "memory_reserve", "memory_reclaim",
			"dirty_throttle", "dirty_delay", "dirty_over_max", "dirty_frees_delay", "wrlog_delay", "quota"),
		kstat.MiscABD: {
			{stat: "linear_cnt", desc: abdBuffersDesc, gauge: true, labels: []string{"linear"}},
			{stat: "scatter_cnt", desc: abdBuffersDesc, gauge: true, labels: []string{"scatter"}},
			{stat: "linear_data_size", desc: abdDataBytesDesc, gauge: true, labels: []string{"linear"}},
			{stat: "scatter_data_size", desc: abdDataBytesDesc, gauge: true, labels: []string{"scatter"}},
			{stat: "struct_size", desc: abdStructBytesDesc, gauge: true},
			{stat: "scatter_chunk_waste", desc: abdScatterWasteBytesDesc, gauge: true},
		},
		kstat.MiscPrefetch: {
			{stat: "hits", desc: prefetchHitsDesc},
			{stat: "misses", desc: prefetchMissesDesc},
			{stat: "max_streams", desc: prefetchMaxStreamsDesc},
			{stat: "future", desc: prefetchReorderedDesc, labels: []string{"future"}},
			{stat: "stride", desc: prefetchReorderedDesc, labels: []string{"stride"}},
			{stat: "past", desc: prefetchReorderedDesc, labels: []string{"past"}},
			{stat: "io_issued", desc: prefetchReadsIssuedDesc},
			{stat: "io_active", desc: prefetchReadsActiveDesc, gauge: true},
		},
	}
)

// dmuTxSeries maps each dmu_tx_<result> statistic to zfs_dmu_tx_total.
func dmuTxSeries(results ...string) []kstatSeries {
	series := make([]kstatSeries, len(results))
	for i, r := range results {
		series[i] = kstatSeries{stat: "dmu_tx_" + r, desc: dmuTxDesc, labels: []string{r}}
	}
	return series
}

// collectMisc sends the series of the module-wide kstats this kernel has.
func collectMisc(misc map[string]kstat.Misc, ch chan<- prometheus.Metric) {
	for _, name := range kstat.MiscKstats {
		m, ok := misc[name]
		if !ok {
			continue
		}
		for _, s := range miscSeries[name] {
			v, ok := m.Get(s.stat)
			switch {
			case !ok:
			case s.gauge:
				gauge(ch, s.desc, v, s.labels...)
			default:
				counter(ch, s.desc, v, s.labels...)
			}
		}
	}
}

// Per-pool I/O. The iostats kstat (Linux and FreeBSD, OpenZFS 0.8+) counts
// TRIM and, from OpenZFS 2.3, the reads and writes of files and zvols;
// the pool I/O kstat (illumos, Solaris, Linux before OpenZFS 2.1) counts
// the I/O ZFS queues to the pool's disks, as iostat reads a disk's.
var (
	poolTrimBytesDesc = desc("pool", "trim_bytes_total",
		"Bytes of TRIM by kind (manual: zpool trim; auto: autotrim; simple: the L2ARC's TRIM of cache devices) and result "+
			"(written: sent to the device; skipped: not sent, too small or the device unavailable; failed: the device returned an error), from the pool's iostats kstat (OpenZFS 0.8+).",
		"pool", "kind", "result")
	poolTrimExtentsDesc = desc("pool", "trim_extents_total",
		"Extents (ranges) of TRIM by kind and result, as zfs_pool_trim_bytes_total.", "pool", "kind", "result")
	poolLogicalReadBytesDesc = desc("pool", "logical_read_bytes_total",
		"Bytes the pool's file systems and zvols read, by path: arc (buffered, through the ARC) or direct (Direct I/O, bypassing it); from iostats, OpenZFS 2.3+. "+
			"Logical I/O, before redundancy and compression: device I/O is zfs_vdev_read_bytes_total.", "pool", "path")
	poolLogicalWriteBytesDesc = desc("pool", "logical_write_bytes_total",
		"Bytes the pool's file systems and zvols wrote, by path (arc or direct), from iostats, OpenZFS 2.3+.", "pool", "path")
	poolLogicalReadOpsDesc = desc("pool", "logical_read_operations_total",
		"Block reads of the pool's file systems and zvols, by path (arc or direct), from iostats, OpenZFS 2.3+.", "pool", "path")
	poolLogicalWriteOpsDesc = desc("pool", "logical_write_operations_total",
		"Block writes of the pool's file systems and zvols, by path (arc or direct), from iostats, OpenZFS 2.3+.", "pool", "path")

	poolKstatReadBytesDesc = desc("pool", "kstat_read_bytes_total",
		"Bytes read by the I/Os ZFS queued to the pool's disks, from the pool's I/O kstat (illumos and Solaris zfs:0:<pool>, Linux <pool>/io before OpenZFS 2.1): each side of a mirror counts.", "pool")
	poolKstatWriteBytesDesc = desc("pool", "kstat_write_bytes_total",
		"Bytes written by the I/Os ZFS queued to the pool's disks, from the pool's I/O kstat.", "pool")
	poolKstatReadOpsDesc = desc("pool", "kstat_read_operations_total",
		"Read I/Os ZFS queued to the pool's disks, from the pool's I/O kstat.", "pool")
	poolKstatWriteOpsDesc = desc("pool", "kstat_write_operations_total",
		"Write I/Os ZFS queued to the pool's disks, from the pool's I/O kstat.", "pool")
	poolKstatQueueBusyDesc = desc("pool", "kstat_queue_busy_seconds_total",
		"Time the queue held at least one I/O, by queue: wait (queued in ZFS, not yet issued; wtime) or run (issued to the disks; rtime). "+
			"rate() is the busy fraction, iostat's %w and %b.", "pool", "queue")
	poolKstatQueueWeightedDesc = desc("pool", "kstat_queue_weighted_seconds_total",
		"The queue's length integrated over time, by queue (wlentime, rlentime): rate() is the average number of I/Os in it, iostat's wait and actv; "+
			"divided by the rate of operations it is the average time an I/O spent there.", "pool", "queue")
	poolKstatQueueLengthDesc = desc("pool", "kstat_queue_length",
		"I/Os in the queue now, by queue (wcnt, rcnt).", "pool", "queue")
)

// trimKinds are the TRIM kinds of iostats, by their statistics' prefix.
var trimKinds = []struct{ prefix, kind string }{
	{"trim_", "manual"}, {"autotrim_", "auto"}, {"simple_trim_", "simple"},
}

// collectPoolIOStats sends the counters of one pool's iostats kstat that
// this kernel has.
func collectPoolIOStats(p kstat.PoolIOStats, ch chan<- prometheus.Metric) {
	send := func(d *prometheus.Desc, stat string, labels ...string) {
		if v, ok := p.Stats[stat]; ok {
			counter(ch, d, v, append([]string{p.Pool}, labels...)...)
		}
	}
	for _, k := range trimKinds {
		for _, result := range []string{"written", "skipped", "failed"} {
			send(poolTrimBytesDesc, k.prefix+"bytes_"+result, k.kind, result)
			send(poolTrimExtentsDesc, k.prefix+"extents_"+result, k.kind, result)
		}
	}
	for _, path := range []string{"arc", "direct"} {
		send(poolLogicalReadBytesDesc, path+"_read_bytes", path)
		send(poolLogicalWriteBytesDesc, path+"_write_bytes", path)
		send(poolLogicalReadOpsDesc, path+"_read_count", path)
		send(poolLogicalWriteOpsDesc, path+"_write_count", path)
	}
}

// collectPoolIO sends one pool's I/O kstat.
func collectPoolIO(pool string, io kstat.IO, ch chan<- prometheus.Metric) {
	counter(ch, poolKstatReadBytesDesc, float64(io.NRead), pool)
	counter(ch, poolKstatWriteBytesDesc, float64(io.NWritten), pool)
	counter(ch, poolKstatReadOpsDesc, float64(io.Reads), pool)
	counter(ch, poolKstatWriteOpsDesc, float64(io.Writes), pool)
	counter(ch, poolKstatQueueBusyDesc, io.WTime.Seconds(), pool, "wait")
	counter(ch, poolKstatQueueBusyDesc, io.RTime.Seconds(), pool, "run")
	counter(ch, poolKstatQueueWeightedDesc, io.WLenTime.Seconds(), pool, "wait")
	counter(ch, poolKstatQueueWeightedDesc, io.RLenTime.Seconds(), pool, "run")
	gauge(ch, poolKstatQueueLengthDesc, float64(io.WCnt), pool, "wait")
	gauge(ch, poolKstatQueueLengthDesc, float64(io.RCnt), pool, "run")
}
