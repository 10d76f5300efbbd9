package boards

import (
	"fmt"

	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// arcBoard is the ARC and the L2ARC of each host: their size against the
// ARC's target and limits, what fills them, and how often they serve a
// read. The ARC is the host's, not a pool's: only the cache devices panel
// reads the pool variable.
func arcBoard(cfg config.Config) (dashboard.Dashboard, error) {
	b := newBoard(cfg, "zfs-arc", "ZFS / ARC and caches",
		"The ARC (ZFS's cache in memory) and the L2ARC (its second level on cache devices) of each host: size against the target and limits, the MRU and MFU lists, data and metadata, compression, hit ratios overall and per kind, hits and misses per second, and the prefetcher. The ARC is host-wide, so the pool variable only narrows the cache devices panel.", "arc")
	s := b.s

	// ratio is hits over hits and misses, summed by the by labels, with no
	// value while there is no access (rather than 0/0).
	ratio := func(hits, misses, by string, match ...string) string {
		h := fmt.Sprintf("sum by (%s) (rate(%s%s[$__rate_interval]))", by, hits, s.host(match...))
		m := fmt.Sprintf("sum by (%s) (rate(%s%s[$__rate_interval]))", by, misses, s.host(match...))
		return fmt.Sprintf("%s / (%s + %s > 0)", h, h, m)
	}
	info := thresholdsBuilder(base("blue"))
	// A dashed, unfilled line: a limit, not an amount.
	limit := []dashboard.DynamicConfigValue{
		{Id: "custom.lineStyle", Value: map[string]any{"fill": "dash", "dash": []int{10, 10}}},
		{Id: "custom.fillOpacity", Value: 0},
	}

	b.row("Overview")
	b.WithPanel(b.stat("ARC size now",
		"Bytes in the ARC now (arcstats size): data, metadata and the ARC's own headers.",
		"bytes", 4, 4,
		q(fmt.Sprintf(`zfs_arc_size_bytes%s`, s.host()), "{{instance}}")).
		Thresholds(info))
	b.WithPanel(b.stat("ARC size of c_max",
		"The ARC's size as a share of its ceiling (c_max, zfs_arc_max). Well below it on a busy host, the ARC was made to shrink: memory pressure from applications, or a lower zfs_arc_max.",
		"percentunit", 4, 4,
		q(fmt.Sprintf(`zfs_arc_size_bytes%s / (zfs_arc_max_size_bytes%s > 0)`, s.host(), s.host()), "{{instance}}")).
		Thresholds(info))
	b.WithPanel(b.stat("ARC hit ratio now",
		"Share of ARC accesses that hit over the last 5 minutes, all kinds together (recorded series "+config.RecordARCHitRatio+"); no value while the ARC sees no access. Orange below 80%: a hint to look at the demand kinds, not a rule, as a streaming or backup workload misses by nature.",
		"percentunit", 4, 4,
		q(s.hostRecorded(config.RecordARCHitRatio), "{{instance}}")).
		Thresholds(thresholdsBuilder(base("orange"), step(0.8, "green"))))
	b.WithPanel(b.stat("ARC compression ratio",
		"What the ARC's data would take uncompressed over what it takes (compressed ARC): 2 means the ARC holds twice the data its memory would hold uncompressed.",
		"short", 4, 4,
		q(fmt.Sprintf(`zfs_arc_uncompressed_size_bytes%s / (zfs_arc_compressed_size_bytes%s > 0)`, s.host(), s.host()), "{{instance}}")).
		Decimals(2).
		Thresholds(info))
	b.WithPanel(b.stat("L2ARC size now",
		"Bytes of data in the L2ARC, uncompressed (l2_size); 0 without cache devices.",
		"bytes", 4, 4,
		q(fmt.Sprintf(`zfs_l2arc_size_bytes%s`, s.host()), "{{instance}}")).
		Thresholds(info))
	b.WithPanel(b.stat("L2ARC hit ratio now",
		"Share of the reads that missed the ARC and went to the L2ARC that it served; no value without L2ARC accesses (no cache devices).",
		"percentunit", 4, 4,
		q(ratio("zfs_l2arc_hits_total", "zfs_l2arc_misses_total", "instance"), "{{instance}}")).
		Thresholds(info))

	b.row("Size")
	b.WithPanel(b.timeseries("ARC size, target and limits",
		"The ARC's size against its target (c), which the ARC steers to: c grows while memory is plentiful and the ARC is full, and shrinks under memory pressure. Dashed: the floor (c_min, zfs_arc_min) and the ceiling (c_max, zfs_arc_max) of c.",
		"bytes", 12, 8,
		q(fmt.Sprintf(`zfs_arc_size_bytes%s`, s.host()), "{{instance}} size"),
		q(fmt.Sprintf(`zfs_arc_target_size_bytes%s`, s.host()), "{{instance}} target (c)"),
		q(fmt.Sprintf(`zfs_arc_min_size_bytes%s`, s.host()), "{{instance}} c_min"),
		q(fmt.Sprintf(`zfs_arc_max_size_bytes%s`, s.host()), "{{instance}} c_max")).
		Min(0).
		OverrideByQuery("C", limit).
		OverrideByQuery("D", limit))
	b.WithPanel(b.stacked("MRU and MFU",
		"Bytes in the ARC's most-recently-used list (blocks read once lately) and most-frequently-used list (blocks read more than once), stacked. Their sum is less than the ARC's size: anonymous buffers and headers are in neither. The ghost lists are not exported.",
		"bytes", 12, 8,
		q(fmt.Sprintf(`zfs_arc_mru_size_bytes%s`, s.host()), "{{instance}} MRU"),
		q(fmt.Sprintf(`zfs_arc_mfu_size_bytes%s`, s.host()), "{{instance}} MFU")))
	b.WithPanel(b.stacked("Data and metadata",
		"Bytes of file data and of metadata (indirect blocks, dnodes, directories) in the ARC, stacked. Metadata misses cost more than data misses: each one is a disk read before the data can be found.",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_arc_data_size_bytes%s`, s.host()), "{{instance}} data"),
		q(fmt.Sprintf(`zfs_arc_metadata_size_bytes%s`, s.host()), "{{instance}} metadata")))
	b.WithPanel(b.timeseries("Compressed and uncompressed",
		"Bytes the ARC's data takes as stored on disk (compressed ARC) and would take uncompressed: the gap is memory that compression saves.",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_arc_compressed_size_bytes%s`, s.host()), "{{instance}} compressed"),
		q(fmt.Sprintf(`zfs_arc_uncompressed_size_bytes%s`, s.host()), "{{instance}} uncompressed")).
		Min(0))
	b.WithPanel(b.timeseries("ARC buffers (ABD)",
		"Memory of the ARC's buffered data (ABD, Linux): the data in linear and scatter buffers, the room wasted at the end of scatter buffers' last chunk, and the ABD structures themselves.",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_abd_data_bytes%s`, s.host()), "{{instance}} {{kind}}"),
		q(fmt.Sprintf(`zfs_abd_scatter_waste_bytes%s`, s.host()), "{{instance}} scatter waste"),
		q(fmt.Sprintf(`zfs_abd_struct_bytes%s`, s.host()), "{{instance}} structures")).
		Min(0))

	b.row("Hits and misses")
	b.WithPanel(b.timeseries("ARC hit ratio",
		"Share of ARC accesses that hit over 5 minutes, all kinds together and per kind (recorded series "+config.RecordARCHitRatio+" and "+config.RecordARCHitRatioByKind+"): demand reads are the ones applications wait for; prefetch reads are the prefetcher's reads ahead, whose misses cost no one a wait.",
		"percentunit", 12, 8,
		q(s.hostRecorded(config.RecordARCHitRatio), "{{instance}} all"),
		q(s.hostRecorded(config.RecordARCHitRatioByKind), "{{instance}} {{kind}}")).
		Min(0).Max(1))
	b.WithPanel(b.timeseries("ARC hits and misses",
		"ARC accesses per second that hit and that missed, all kinds together. A miss is a read from the L2ARC or the pool's disks.",
		"ops", 12, 8,
		q(fmt.Sprintf(`sum by (instance) (rate(zfs_arc_hits_total%s[$__rate_interval]))`, s.host()), "{{instance}} hits"),
		q(fmt.Sprintf(`sum by (instance) (rate(zfs_arc_misses_total%s[$__rate_interval]))`, s.host()), "{{instance}} misses")))
	b.WithPanel(b.stacked("ARC misses by kind",
		"ARC misses per second by kind, stacked: demand data and metadata misses are reads applications wait for, prefetch misses are reads ahead.",
		"ops", 12, 8,
		q(fmt.Sprintf(`sum by (instance, kind) (rate(zfs_arc_misses_total%s[$__rate_interval]))`, s.host()), "{{instance}} {{kind}}")))
	b.WithPanel(b.timeseries("Prefetch stream hit ratio",
		"Share of reads that continued one of the prefetcher's streams (zfetchstats hits over hits and misses): high for sequential reads, low for random ones, which the prefetcher leaves alone.",
		"percentunit", 12, 8,
		q(ratio("zfs_prefetch_hits_total", "zfs_prefetch_misses_total", "instance"), "{{instance}}")).
		Min(0).Max(1))

	b.row("L2ARC")
	b.WithPanel(b.timeseries("L2ARC size",
		"Bytes of data in the L2ARC, uncompressed (l2_size). It fills slowly, at the feed rate of zfs_l2arc_write_max, and starts empty at boot unless persistent (OpenZFS 2.0+).",
		"bytes", 8, 8,
		q(fmt.Sprintf(`zfs_l2arc_size_bytes%s`, s.host()), "{{instance}}")).
		Min(0))
	b.WithPanel(b.timeseries("L2ARC hit ratio",
		"Share of the reads that missed the ARC and went to the L2ARC that it served. Low with a full L2ARC: its cache devices hold little of what is read again.",
		"percentunit", 8, 8,
		q(ratio("zfs_l2arc_hits_total", "zfs_l2arc_misses_total", "instance"), "{{instance}}")).
		Min(0).Max(1))
	b.WithPanel(b.timeseries("L2ARC hits and misses",
		"Reads per second that the L2ARC served and that it could not.",
		"ops", 8, 8,
		q(fmt.Sprintf(`sum by (instance) (rate(zfs_l2arc_hits_total%s[$__rate_interval]))`, s.host()), "{{instance}} hits"),
		q(fmt.Sprintf(`sum by (instance) (rate(zfs_l2arc_misses_total%s[$__rate_interval]))`, s.host()), "{{instance}} misses")))
	b.WithPanel(b.timeseries("L2ARC read and write",
		"Bytes per second read from the cache devices (hits) and written to them (the feed of blocks about to leave the ARC). Writes well above reads: the L2ARC is churned, not read.",
		"Bps", 12, 8,
		q(fmt.Sprintf(`sum by (instance) (rate(zfs_l2arc_read_bytes_total%s[$__rate_interval]))`, s.host()), "{{instance}} read"),
		q(fmt.Sprintf(`sum by (instance) (rate(zfs_l2arc_write_bytes_total%s[$__rate_interval]))`, s.host()), "{{instance}} write")))
	b.WithPanel(b.timeseries("Cache devices",
		"Bytes per second read from and written to each cache device of the chosen pools, where the exporter has the vdev's counters.",
		"Bps", 12, 8,
		q(s.vdevRate("zfs_vdev_read_bytes_total", "zfs_vdev_info"+s.pool(`class="cache"`)), "{{pool}} {{vdev}} read"),
		q(s.vdevRate("zfs_vdev_write_bytes_total", "zfs_vdev_info"+s.pool(`class="cache"`)), "{{pool}} {{vdev}} write")))

	return b.Build()
}
