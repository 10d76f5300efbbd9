package kstat

import (
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ARC is the ARC and L2ARC statistics (arcstats), one shape for Linux,
// FreeBSD and illumos, which all use the kernel's names. Stats holds every
// numeric statistic; one that a release does not have is absent, so that
// callers export no series rather than a false 0.
type ARC struct {
	Stats map[string]float64 `json:"stats"`
}

// Get returns the arcstats statistic called name.
func (a ARC) Get(name string) (float64, bool) {
	v, ok := a.Stats[name]
	return v, ok
}

// Names of the arcstats statistics the exporter reads. Sizes are bytes;
// hits, misses and the other event counts count since the module loaded.
const (
	ARCSize       = "size"  // bytes in the ARC now
	ARCTargetSize = "c"     // the size the ARC is steering to
	ARCMinSize    = "c_min" // floor of the target size
	ARCMaxSize    = "c_max" // ceiling of the target size
	// ARCMRUTargetSize is the target size of the MRU lists; OpenZFS 2.2
	// replaced it with a balance and removed it.
	ARCMRUTargetSize = "p"

	ARCHits   = "hits"
	ARCMisses = "misses"
	// ARCIOHits counts reads of blocks already being read in (OpenZFS
	// 2.2+), neither a hit nor a miss.
	ARCIOHits                 = "iohits"
	ARCDemandDataHits         = "demand_data_hits"
	ARCDemandDataMisses       = "demand_data_misses"
	ARCDemandMetadataHits     = "demand_metadata_hits"
	ARCDemandMetadataMisses   = "demand_metadata_misses"
	ARCPrefetchDataHits       = "prefetch_data_hits"
	ARCPrefetchDataMisses     = "prefetch_data_misses"
	ARCPrefetchMetadataHits   = "prefetch_metadata_hits"
	ARCPrefetchMetadataMisses = "prefetch_metadata_misses"
	ARCMRUHits                = "mru_hits"
	ARCMRUGhostHits           = "mru_ghost_hits"
	ARCMFUHits                = "mfu_hits"
	ARCMFUGhostHits           = "mfu_ghost_hits"
	ARCDeleted                = "deleted"    // buffers evicted
	ARCMutexMisses            = "mutex_miss" // evictions skipped on a busy lock
	ARCEvictSkips             = "evict_skip"
	ARCMemoryThrottles        = "memory_throttle_count"
	ARCMRUSize                = "mru_size"
	ARCMRUGhostSize           = "mru_ghost_size"
	ARCMFUSize                = "mfu_size"
	ARCMFUGhostSize           = "mfu_ghost_size"
	ARCAnonSize               = "anon_size"
	ARCDataSize               = "data_size"
	ARCMetadataSize           = "metadata_size"
	ARCHeaderSize             = "hdr_size"
	ARCDnodeSize              = "dnode_size"
	ARCDbufSize               = "dbuf_size"
	ARCBonusSize              = "bonus_size"
	ARCCompressedSize         = "compressed_size"   // data as stored
	ARCUncompressedSize       = "uncompressed_size" // the same data uncompressed
	ARCMetaUsed               = "arc_meta_used"
	ARCMemoryAvailable        = "memory_available_bytes" // can be negative under pressure
	ARCL2Size                 = "l2_size"                // L2ARC data, uncompressed
	ARCL2AllocatedSize        = "l2_asize"               // L2ARC space used on the cache devices
	ARCL2Hits                 = "l2_hits"
	ARCL2Misses               = "l2_misses"
	ARCL2ReadBytes            = "l2_read_bytes"
	ARCL2WriteBytes           = "l2_write_bytes"
	ARCL2HeaderSize           = "l2_hdr_size" // ARC memory spent on L2ARC headers
	ARCL2IOErrors             = "l2_io_error"
	ARCL2ChecksumErrors       = "l2_cksum_bad"
)

// ARCFromNamed returns the ARC of a Linux arcstats kstat
// (/proc/spl/kstat/zfs/arcstats).
func ARCFromNamed(n *Named) ARC {
	return ARC{Stats: n.Values()}
}

// ARCFromKstatP returns the ARC from illumos kstat output (zfs:0:arcstats);
// ok is false when the output has no arcstats.
func ARCFromKstatP(stats []Stat) (arc ARC, ok bool) {
	k := Find(Group(stats), "zfs", 0, "arcstats")
	if k == nil {
		return ARC{}, false
	}
	return ARC{Stats: k.Values()}, true
}

// ARCFromSysctl returns the ARC from FreeBSD sysctl output
// (kstat.zfs.misc.arcstats.*); ok is false when the output has none.
func ARCFromSysctl(stats []SysctlStat) (arc ARC, ok bool) {
	arc = ARC{Stats: map[string]float64{}}
	for _, s := range stats {
		name, found := strings.CutPrefix(s.Name, "kstat.zfs.misc.arcstats.")
		if found && s.Numeric && name != "" && !strings.Contains(name, ".") {
			arc.Stats[name] = s.Number
		}
	}
	return arc, len(arc.Stats) > 0
}

// Dataset is the I/O of one dataset since its pool was imported, from its
// objset kstat (OpenZFS 0.8+: /proc/spl/kstat/zfs/<pool>/objset-0x<id> on
// Linux, kstat.zfs.<pool>.dataset.objset-0x<id> on FreeBSD). These count
// operations at the file system and zvol interface, before the ARC.
type Dataset struct {
	Pool       string `json:"pool"`
	Name       string `json:"name"`        // dataset_name, "tank/home"
	Objset     string `json:"objset"`      // "objset-0x36"; set by the caller on Linux, where it is the file name
	Writes     uint64 `json:"writes"`      // write operations
	WriteBytes uint64 `json:"write_bytes"` // nwritten
	Reads      uint64 `json:"reads"`       // read operations
	ReadBytes  uint64 `json:"read_bytes"`  // nread
	// Unlinks counts files queued for deletion, Unlinked files deleted
	// (nunlinks, nunlinked; absent from 0.8 pre-releases).
	Unlinks  uint64 `json:"unlinks"`
	Unlinked uint64 `json:"unlinked"`
	// Stats holds every numeric statistic by its kernel name, including
	// the ones above and the per-dataset zil_* counters of OpenZFS 2.3.
	Stats map[string]float64 `json:"stats"`
}

// DatasetFromNamed reads a Linux objset kstat. The kstat does not name its
// objset or pool: Pool is taken from the dataset name, and Objset is left
// for the caller, which knows the file name.
func DatasetFromNamed(n *Named) (Dataset, error) {
	e, ok := n.Lookup("dataset_name")
	if !ok || e.String == "" {
		return Dataset{}, parse.Errorf(0, "objset kstat without a dataset_name")
	}
	d := Dataset{Name: e.String, Pool: poolOf(e.String), Stats: n.Values()}
	for _, e := range n.Entries {
		if e.Type.Numeric() && !e.Type.signed() {
			d.set(e.Name, e.Uint)
		}
	}
	return d, nil
}

// DatasetsFromSysctl returns the datasets of FreeBSD sysctl output
// (kstat.zfs.<pool>.dataset.objset-0x*.*), in the order they first appear.
// An objset printed without its dataset_name is skipped.
func DatasetsFromSysctl(stats []SysctlStat) []Dataset {
	type id struct{ pool, objset string }
	var order []id
	byID := map[id]*Dataset{}
	for _, s := range stats {
		m, ok := matchPoolKstat(s.Name, "dataset", "objset-")
		if !ok {
			continue
		}
		k := id{m.pool, m.kstat}
		d := byID[k]
		if d == nil {
			d = &Dataset{Pool: m.pool, Objset: m.kstat, Stats: map[string]float64{}}
			byID[k] = d
			order = append(order, k)
		}
		if m.statistic == "dataset_name" {
			d.Name = s.Value
			continue
		}
		if !s.Numeric {
			continue
		}
		d.Stats[m.statistic] = s.Number
		if v, err := strconv.ParseUint(s.Value, 10, 64); err == nil {
			d.set(m.statistic, v)
		}
	}
	datasets := []Dataset{}
	for _, k := range order {
		if d := byID[k]; d.Name != "" {
			datasets = append(datasets, *d)
		}
	}
	return datasets
}

func (d *Dataset) set(name string, v uint64) {
	switch name {
	case "writes":
		d.Writes = v
	case "nwritten":
		d.WriteBytes = v
	case "reads":
		d.Reads = v
	case "nread":
		d.ReadBytes = v
	case "nunlinks":
		d.Unlinks = v
	case "nunlinked":
		d.Unlinked = v
	}
}

// poolOf returns the pool of a dataset name: "tank" of "tank/home".
func poolOf(dataset string) string {
	pool, _, _ := strings.Cut(dataset, "/")
	return pool
}

// PoolIOStats is a pool's iostats kstat (OpenZFS 0.8+): TRIM counters
// (trim_*, autotrim_*, simple_trim_*, each with extents and bytes
// written, skipped and failed) and, from OpenZFS 2.3, arc_* and direct_*
// read and write counts and bytes. Stats holds each by its kernel name;
// a counter a release does not have is absent.
type PoolIOStats struct {
	Pool  string             `json:"pool"`
	Stats map[string]float64 `json:"stats"`
}

// PoolIOStatsFromNamed returns the iostats of pool from a Linux named
// kstat (/proc/spl/kstat/zfs/<pool>/iostats).
func PoolIOStatsFromNamed(pool string, n *Named) PoolIOStats {
	return PoolIOStats{Pool: pool, Stats: n.Values()}
}

// PoolIOStatsFromSysctl returns the iostats of each pool in FreeBSD sysctl
// output (kstat.zfs.<pool>.misc.iostats.*), in the order they first appear.
func PoolIOStatsFromSysctl(stats []SysctlStat) []PoolIOStats {
	var pools []PoolIOStats
	index := map[string]int{}
	for _, s := range stats {
		m, ok := matchPoolKstat(s.Name, "misc", "iostats")
		if !ok || m.kstat != "iostats" || !s.Numeric {
			continue
		}
		i, seen := index[m.pool]
		if !seen {
			i = len(pools)
			index[m.pool] = i
			pools = append(pools, PoolIOStats{Pool: m.pool, Stats: map[string]float64{}})
		}
		pools[i].Stats[m.statistic] = s.Number
	}
	return pools
}

// PoolStatesFromSysctl returns the state of each pool in FreeBSD sysctl
// output (kstat.zfs.<pool>.misc.state: ONLINE), lowercased like
// ParsePoolState.
func PoolStatesFromSysctl(stats []SysctlStat) map[string]string {
	states := map[string]string{}
	for _, s := range stats {
		rest, ok := strings.CutPrefix(s.Name, "kstat.zfs.")
		if !ok {
			continue
		}
		pool, ok := strings.CutSuffix(rest, ".misc.state")
		if !ok || pool == "" || strings.TrimSpace(s.Value) == "" {
			continue
		}
		states[pool] = strings.ToLower(strings.TrimSpace(s.Value))
	}
	return states
}

// PoolIOFromKstatP returns the I/O kstat of each pool in illumos kstat
// output: zfs:0:<pool>, recognised by its I/O statistics. illumos has no
// iostats, objset or state kstats; pool state comes from zpool there.
func PoolIOFromKstatP(stats []Stat) (map[string]IO, error) {
	pools := map[string]IO{}
	for _, k := range Group(stats) {
		if k.Module != "zfs" || !k.isIO() {
			continue
		}
		c, err := IOFromKstat(k)
		if err != nil {
			return nil, err
		}
		pools[k.Name] = c
	}
	return pools, nil
}
