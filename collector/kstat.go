package collector

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/collector/internal/kstat"
)

func init() {
	register("kstat", slices.Contains([]string{"linux", "freebsd", "illumos", "solaris"}, runtime.GOOS), "ARC, L2ARC, per-dataset I/O and transaction-group histograms from the kernel's ZFS kstats (Linux /proc/spl/kstat/zfs, FreeBSD sysctl kstat.zfs, illumos kstat -p)", newKstatCollector)
}

// SourceKstat names the kstat files in the freshness metrics.
const SourceKstat = "kstat"

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
	reader kstatReader
	source *Source
	txgs   *txgHistory
	logger *slog.Logger
}

func newKstatCollector(src *Source, logger *slog.Logger) (Collector, error) {
	return &kstatCollector{reader: src.kstatReader(), source: src, txgs: newTxgHistory(), logger: logger}, nil
}

func (c *kstatCollector) Update(ctx context.Context, _ *Scrape, ch chan<- prometheus.Metric) error {
	if c.reader == nil {
		return ErrNoData
	}
	snap, err := c.reader.snapshot(ctx)
	if snap == nil {
		if !errors.Is(err, ErrNoData) {
			c.source.record(SourceKstat, err)
		}
		return err
	}
	c.source.record(SourceKstat, err)
	if snap.arc != nil {
		collectARC(*snap.arc, ch)
	}
	for _, d := range snap.datasets {
		counter(ch, datasetReadBytesDesc, float64(d.ReadBytes), d.Pool, d.Name)
		counter(ch, datasetWriteBytesDesc, float64(d.WriteBytes), d.Pool, d.Name)
		counter(ch, datasetReadOpsDesc, float64(d.Reads), d.Pool, d.Name)
		counter(ch, datasetWriteOpsDesc, float64(d.Writes), d.Pool, d.Name)
	}
	c.txgs.update(snap.txgs, ch)
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
