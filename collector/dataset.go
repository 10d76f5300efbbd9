package collector

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/dataset"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

func init() {
	register("dataset", true, "Space, quotas, reservations and settings of every filesystem and volume, from one zfs run", newDatasetCollector)
}

var (
	datasetInfoDesc = desc("dataset", "info", "A dataset's type and settings, as zfs prints them; empty where one does not apply (the origin of a dataset that is not a clone) or this zfs does not know it. block_size is the recordsize of a filesystem, the volblocksize of a volume.",
		"pool", "dataset", "type", "canmount", "compression", "block_size", "atime", "sync", "dedup", "primarycache", "encryption", "mountpoint", "origin")
	datasetMountedDesc      = desc("dataset", "mounted", "1 when the filesystem is mounted, 0 when not.", "pool", "dataset")
	datasetKeyAvailableDesc = desc("dataset", "key_available", "1 when the encryption key of an encrypted dataset is loaded, 0 when not; no series for a dataset that is not encrypted.", "pool", "dataset")
	datasetsLeftOutDesc     = desc("exporter", "datasets_left_out", "Datasets of the last listing that --collector.dataset.max left out, after the patterns and the depth limit.")

	datasetSnapshotsDesc      = desc("dataset", "snapshots", "Snapshots of the dataset in the last snapshot listing, which runs in the background: see the freshness of source zfs_list_snapshots.", "pool", "dataset")
	datasetOldestSnapshotDesc = desc("dataset", "oldest_snapshot_timestamp_seconds", "Creation time of the dataset's oldest snapshot (Unix time); no series without snapshots.", "pool", "dataset")
	datasetNewestSnapshotDesc = desc("dataset", "newest_snapshot_timestamp_seconds", "Creation time of the dataset's newest snapshot (Unix time); no series without snapshots. A snapshot job that stopped shows as a time that stops moving.", "pool", "dataset")
	datasetSnapshotsUsedDesc  = desc("dataset", "snapshots_used_bytes", "Sum of the used of the dataset's snapshots: what each holds alone. Blocks that several snapshots share count in used_by_snapshots_bytes only.", "pool", "dataset")
	snapshotCreationDesc      = desc("snapshot", "creation_timestamp_seconds", "Creation time of the snapshot (Unix time); with --collector.dataset.per-snapshot.", "pool", "dataset", "snapshot")
	snapshotUsedDesc          = desc("snapshot", "used_bytes", "Space only this snapshot holds: what destroying it alone frees; with --collector.dataset.per-snapshot.", "pool", "dataset", "snapshot")
	snapshotReferencedDesc    = desc("snapshot", "referenced_bytes", "Data the snapshot refers to; with --collector.dataset.per-snapshot.", "pool", "dataset", "snapshot")
)

// datasetValues maps the numeric properties of a dataset to their metrics.
// A quota or reservation of 0 is none: no series, as for "-".
var datasetValues = []struct {
	property   string
	desc       *prometheus.Desc
	zeroIsNone bool
}{
	{"used", desc("dataset", "used_bytes", "Space the dataset and everything in it use: its data, snapshots, children and reservation.", "pool", "dataset"), false},
	{"available", desc("dataset", "available_bytes", "Space available to the dataset and its children: the pool's free space, less what quotas and reservations hold back.", "pool", "dataset"), false},
	{"referenced", desc("dataset", "referenced_bytes", "Data the dataset refers to, shared with its snapshots or not.", "pool", "dataset"), false},
	{"logicalused", desc("dataset", "logical_used_bytes", "used before compression.", "pool", "dataset"), false},
	{"logicalreferenced", desc("dataset", "logical_referenced_bytes", "referenced before compression.", "pool", "dataset"), false},
	{"written", desc("dataset", "written_bytes", "Data written since the dataset's latest snapshot.", "pool", "dataset"), false},
	{"usedbydataset", desc("dataset", "used_by_dataset_bytes", "Part of used taken by the dataset's own data.", "pool", "dataset"), false},
	{"usedbychildren", desc("dataset", "used_by_children_bytes", "Part of used taken by the dataset's children.", "pool", "dataset"), false},
	{"usedbysnapshots", desc("dataset", "used_by_snapshots_bytes", "Part of used that destroying all the dataset's snapshots would free.", "pool", "dataset"), false},
	{"usedbyrefreservation", desc("dataset", "used_by_refreservation_bytes", "Part of used held by the dataset's refreservation.", "pool", "dataset"), false},
	{"quota", desc("dataset", "quota_bytes", "Most space the dataset and its children may use; no series without a quota.", "pool", "dataset"), true},
	{"refquota", desc("dataset", "refquota_bytes", "Most space the dataset itself may refer to; no series without one.", "pool", "dataset"), true},
	{"reservation", desc("dataset", "reservation_bytes", "Space kept for the dataset and its children; no series without a reservation.", "pool", "dataset"), true},
	{"refreservation", desc("dataset", "refreservation_bytes", "Space kept for the dataset itself; no series without one.", "pool", "dataset"), true},
	{"volsize", desc("dataset", "volume_size_bytes", "Size of a volume; no series for a filesystem.", "pool", "dataset"), false},
	{"compressratio", desc("dataset", "compression_ratio", "Logical size over the size on disk of the dataset's data, as zfs prints compressratio: 1.50 means the data takes two thirds of its logical size; 1 without compression.", "pool", "dataset"), false},
}

// snapshotValues maps the properties of a snapshot to its metrics, with
// --collector.dataset.per-snapshot.
var snapshotValues = []struct {
	property string
	desc     *prometheus.Desc
}{{"creation", snapshotCreationDesc}, {"used", snapshotUsedDesc}, {"referenced", snapshotReferencedDesc}}

type datasetCollector struct {
	include, exclude *regexp.Regexp
	depth, max       int
	snapshots        *SnapshotLister
	logger           *slog.Logger
}

// holdSnapshots keeps the snapshot lister from running zfs until a scrape
// tells which pools it can list.
func (c *datasetCollector) holdSnapshots() {
	if c.snapshots != nil {
		c.snapshots.setPools(nil, false)
	}
}

// listablePools returns the pools whose datasets zfs can list, and
// whether that is every pool: all but the suspended ones.
func listablePools(st *zpool.Status) (pools []string, all bool) {
	all = true
	for _, p := range st.Pools {
		if p.State == "suspended" {
			all = false
			continue
		}
		pools = append(pools, p.Name)
	}
	return pools, all
}

func newDatasetCollector(cfg Config, logger *slog.Logger) (Collector, error) {
	if !cfg.ZFS.HasZfs() {
		return nil, fmt.Errorf("%w: the replay holds no outputs of zfs", ErrNoData)
	}
	return &datasetCollector{include: cfg.DatasetInclude, exclude: cfg.DatasetExclude, depth: cfg.DatasetDepth, max: cfg.DatasetMax,
		snapshots: cfg.Snapshots, logger: logger}, nil
}

func (c *datasetCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	// zfs hangs on a suspended pool as zpool does, in a process no kill
	// ends: it runs once status has answered, and not for those pools,
	// nor at all when status hung. A status that failed otherwise says
	// nothing of a hang.
	st, err := s.Status(ctx)
	var pools []string
	switch {
	case err == nil:
		var all bool
		pools, all = listablePools(st)
		if all {
			pools = nil // every pool: the listing names none
		} else if len(pools) == 0 {
			c.holdSnapshots()
			return fmt.Errorf("%w: every pool is suspended", ErrNoData)
		}
	case runner.Inconclusive(ctx, err):
		c.holdSnapshots()
		return fmt.Errorf("not running zfs, which would hang too: %w", err)
	}
	if c.snapshots != nil {
		c.snapshots.setPools(pools, true)
	}
	l, err := s.Datasets(ctx, pools...)
	if err != nil {
		return err
	}
	columns := make([]int, len(datasetValues))
	for i, v := range datasetValues {
		columns[i] = l.Column(v.property)
	}
	typ, mounted, keystatus, canmount := l.Column("type"), l.Column("mounted"), l.Column("keystatus"), l.Column("canmount")
	compression, atime, sync := l.Column("compression"), l.Column("atime"), l.Column("sync")
	dedup, primarycache, encryption := l.Column("dedup"), l.Column("primarycache"), l.Column("encryption")
	mountpoint, origin := l.Column("mountpoint"), l.Column("origin")
	recordsize, volblocksize := l.Column("recordsize"), l.Column("volblocksize")
	var snapshots *snapshotListing
	if c.snapshots != nil {
		c.snapshots.Need()
		snapshots = c.snapshots.latest()
	}
	exported, leftOut := 0, 0
	for _, d := range l.Datasets {
		if !c.wanted(d.Name) {
			continue
		}
		if c.max > 0 && exported == c.max {
			leftOut++
			continue
		}
		exported++
		pool, name := d.Pool(), d.Name
		for i, v := range datasetValues {
			if x, ok := dataset.Number(d.Value(columns[i])); ok && !(v.zeroIsNone && x == 0) {
				gauge(ch, v.desc, x, pool, name)
			}
		}
		switch d.Value(mounted) {
		case "yes":
			gauge(ch, datasetMountedDesc, 1, pool, name)
		case "no":
			gauge(ch, datasetMountedDesc, 0, pool, name)
		}
		switch d.Value(keystatus) {
		case "available":
			gauge(ch, datasetKeyAvailableDesc, 1, pool, name)
		case "unavailable":
			gauge(ch, datasetKeyAvailableDesc, 0, pool, name)
		}
		kind, block := d.Value(typ), recordsize
		if kind == "volume" {
			block = volblocksize
		}
		setting := func(column int) string { return dash(d.Value(column)) }
		gauge(ch, datasetInfoDesc, 1, pool, name, kind, setting(canmount), setting(compression), setting(block), setting(atime), setting(sync),
			setting(dedup), setting(primarycache), setting(encryption), setting(mountpoint), setting(origin))
		if snapshots != nil {
			sendSnapshotSummary(ch, snapshots.byDataset[name], pool, name)
			sendEachSnapshot(ch, snapshots, pool, name)
		}
	}
	gauge(ch, datasetsLeftOutDesc, float64(leftOut))
	if leftOut > 0 {
		c.logger.Debug("datasets left out by --collector.dataset.max", "left_out", leftOut, "max", c.max)
	}
	return nil
}

// sendSnapshotSummary sends what a dataset's snapshots add up to: a
// count, 0 for a dataset without snapshots, and times and space where it
// has some.
func sendSnapshotSummary(ch chan<- prometheus.Metric, s dataset.Snapshots, pool, name string) {
	gauge(ch, datasetSnapshotsDesc, float64(s.Count), pool, name)
	if s.Count == 0 {
		return
	}
	if s.Newest > 0 {
		gauge(ch, datasetOldestSnapshotDesc, s.Oldest, pool, name)
		gauge(ch, datasetNewestSnapshotDesc, s.Newest, pool, name)
	}
	gauge(ch, datasetSnapshotsUsedDesc, s.Used, pool, name)
}

// sendEachSnapshot sends the series of each snapshot of a dataset, when
// the listing kept them.
func sendEachSnapshot(ch chan<- prometheus.Metric, l *snapshotListing, pool, name string) {
	for _, s := range l.each[name] {
		_, snapshot, _ := strings.Cut(s.Name, "@")
		for i, v := range snapshotValues {
			if x, ok := dataset.Number(s.Value(l.columns[i])); ok {
				gauge(ch, v.desc, x, pool, name, snapshot)
			}
		}
	}
}

// wanted tells whether a dataset passes the include and exclude patterns
// and the depth limit.
func (c *datasetCollector) wanted(name string) bool {
	if c.depth > 0 && strings.Count(name, "/") > c.depth {
		return false
	}
	if c.include != nil && !c.include.MatchString(name) {
		return false
	}
	return c.exclude == nil || !c.exclude.MatchString(name)
}
