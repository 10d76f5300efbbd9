package boards

import (
	"fmt"
	"strconv"

	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// topDatasets is how many datasets the top-N graphs draw: a host may
// export thousands (--collector.dataset.max).
const topDatasets = 10

// topSnapshots is how many snapshots the table of the largest lists.
const topSnapshots = 20

// growthInterval is the finest step of the growth graph: each of its
// points reads a day of samples of every dataset.
const growthInterval = "15m"

// datasetsBoard is zfs list -o space for every filesystem and volume:
// what each uses and may still use, quotas, growth, compression, its
// snapshots, and how fresh the two listings behind them are.
func datasetsBoard(cfg config.Config) (dashboard.Dashboard, error) {
	b := newBoard(cfg, "zfs-datasets", "ZFS / Datasets",
		"Space, quotas, growth, compression and snapshots of every filesystem and volume, as zfs list -o space shows them, from the exporter's dataset collector (on unless --no-collector.dataset), and the freshness of its dataset and snapshot listings.", "datasets")
	s := b.s
	b.WithVariable(queryVar("dataset", "Dataset",
		fmt.Sprintf("label_values(zfs_dataset_used_bytes%s, dataset)", s.pool())))

	warn := cfg.DatasetQuotaWarning
	maxAge := cfg.SnapshotMaxAge.Seconds()
	quotaSteps := []dashboard.Threshold{base("green"), step(warn, "orange"), step(1, "red")}
	ageSteps := []dashboard.Threshold{base("green"), step(maxAge, "orange")}
	bytesCol := func(field, title string) col { return col{field, title, []dashboard.DynamicConfigValue{unit("bytes")}} }
	quotaCol := func(field, title string) col {
		return col{field, title, []dashboard.DynamicConfigValue{unit("percentunit"), colorBackground(), thresholds(quotaSteps...)}}
	}
	usedOfQuota := fmt.Sprintf(`zfs_dataset_used_bytes%s / (zfs_dataset_quota_bytes%s > 0)`, s.dataset(), s.dataset())
	refOfRefquota := fmt.Sprintf(`zfs_dataset_referenced_bytes%s / (zfs_dataset_refquota_bytes%s > 0)`, s.dataset(), s.dataset())
	newestAge := fmt.Sprintf(`time() - zfs_dataset_newest_snapshot_timestamp_seconds%s`, s.dataset())
	threshold := strconv.FormatFloat(warn, 'f', -1, 64)
	listings := s.host(fmt.Sprintf(`source=~"%s|%s"`, config.SourceDatasets, config.SourceSnapshots))

	b.row("Attention")
	b.WithPanel(b.stat("Quotas nearly full",
		fmt.Sprintf("Datasets that use more than %s of their quota, or refer to more than %s of their refquota: ZFSDatasetQuotaNearlyFull.", config.Percent(warn), config.Percent(warn)),
		"short", 6, 4,
		q(fmt.Sprintf(`count((%s > %s) or (%s > %s)) or vector(0)`, usedOfQuota, threshold, refOfRefquota, threshold), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "orange"))))
	b.WithPanel(b.stat("Snapshots stale",
		fmt.Sprintf("Datasets whose newest snapshot is older than %s, the limit of ZFSSnapshotsStale: a snapshot or replication job stopped. Datasets without snapshots are not counted; while the snapshot listing is stale, the count comes from its last listing.", config.Prose(cfg.SnapshotMaxAge)),
		"short", 6, 4,
		q(fmt.Sprintf(`count(%s > %s) or vector(0)`, newestAge, strconv.FormatFloat(maxAge, 'f', -1, 64)), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "orange"))))
	b.WithPanel(b.stat("Keys not loaded",
		"Encrypted datasets meant to be mounted (canmount=on) whose key is not loaded: their data can be neither read nor written (ZFSDatasetKeyUnavailable).",
		"short", 6, 4,
		q(fmt.Sprintf(`count((zfs_dataset_key_available%s == 0) and on(instance, pool, dataset) zfs_dataset_info%s) or vector(0)`,
			s.dataset(), s.dataset(`canmount="on"`)), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "red"))))
	b.WithPanel(b.stat("Datasets left out",
		"Datasets of the chosen instances that --collector.dataset.max left out of the last listing, after --collector.dataset.include, --collector.dataset.exclude and --collector.dataset.depth: they are on no panel here. Raise the cap or narrow the patterns.",
		"short", 6, 4,
		q(fmt.Sprintf(`sum(zfs_exporter_datasets_left_out%s) or vector(0)`, s.host()), "")).
		Thresholds(thresholdsBuilder(base("green"), step(1, "orange"))))

	b.row("Space")
	b.WithPanel(b.table("Datasets",
		"The dataset tree of each pool, in name order, like zfs list -o space: used (the dataset, its snapshots, children and reservation), available, referenced, the part of used its snapshots hold (usedbysnapshots), its quota and refquota, and how much of each is taken (used over quota, referenced over refquota).",
		24, 10,
		[]query{
			tq(fmt.Sprintf(`zfs_dataset_info%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_used_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_available_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_referenced_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_used_by_snapshots_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_quota_bytes%s`, s.dataset())),
			cell(datasetKeys, usedOfQuota),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_refquota_bytes%s`, s.dataset())),
			cell(datasetKeys, refOfRefquota),
		},
		[]col{
			{"instance", "instance", nil},
			{"dataset", "dataset", nil},
			{"type", "type", nil},
			bytesCol("Value #B", "used"),
			bytesCol("Value #C", "available"),
			bytesCol("Value #D", "referenced"),
			bytesCol("Value #E", "snapshots"),
			bytesCol("Value #F", "quota"),
			quotaCol("Value #G", "quota used"),
			bytesCol("Value #H", "refquota"),
			quotaCol("Value #I", "refquota used"),
			{"mountpoint", "mountpoint", nil},
		},
		"Value #A", "pool", "canmount", "compression", "block_size", "atime", "sync", "dedup", "primarycache", "encryption", "origin").
		SortBy(sortBy("dataset")))

	b.WithPanel(b.timeseries(fmt.Sprintf("Used, top %d", topDatasets),
		fmt.Sprintf("The %d datasets that use the most space: their data, snapshots, children and reservation (zfs list USED). A parent counts its children, so pools' root datasets lead.", topDatasets),
		"bytes", 8, 8,
		q(fmt.Sprintf(`topk(%d, zfs_dataset_used_bytes%s)`, topDatasets, s.dataset()), "{{dataset}}")))
	b.WithPanel(b.timeseries(fmt.Sprintf("Growth per day, top %d", topDatasets),
		fmt.Sprintf("How fast the %d fastest-growing datasets grow, in bytes a day: the slope of used over the last day (deriv, a least-squares fit). Drawn every %s at most, as each point reads a day of samples.", topDatasets, growthInterval),
		"bytes", 8, 8,
		q(fmt.Sprintf(`topk(%d, deriv(zfs_dataset_used_bytes%s[1d]) * 86400)`, topDatasets, s.dataset()), "{{dataset}}")).
		Interval(growthInterval))
	b.WithPanel(b.timeseries("Quota use",
		fmt.Sprintf("Used over quota and referenced over refquota of each dataset that has one. Lines mark the warning of the alert (%s) and the quota itself: writes fail with \"Disk quota exceeded\" when it is reached.", config.Percent(warn)),
		"percentunit", 8, 8,
		q(usedOfQuota, "{{dataset}} quota"),
		q(refOfRefquota, "{{dataset}} refquota")).
		Min(0).
		Thresholds(thresholdsBuilder(quotaSteps...)).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine)))

	b.WithPanel(b.table("Compression",
		"Each dataset's compression setting and ratio (zfs compressratio: logical size over the size on disk, 1.50 means the data takes two thirds of its logical size), with its used and referenced space before compression (logicalused, logicalreferenced) and on disk.",
		24, 8,
		[]query{
			tq(fmt.Sprintf(`zfs_dataset_info%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_compression_ratio%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_logical_used_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_used_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_logical_referenced_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_referenced_bytes%s`, s.dataset())),
		},
		[]col{
			{"instance", "instance", nil},
			{"dataset", "dataset", nil},
			{"compression", "compression", nil},
			{"Value #B", "ratio", []dashboard.DynamicConfigValue{unit("short")}},
			bytesCol("Value #C", "logical used"),
			bytesCol("Value #D", "used"),
			bytesCol("Value #E", "logical referenced"),
			bytesCol("Value #F", "referenced"),
		},
		"Value #A", "pool", "type", "canmount", "block_size", "atime", "sync", "dedup", "primarycache", "encryption", "mountpoint", "origin").
		SortBy(sortBy("dataset")))

	b.row("Snapshots")
	b.WithPanel(b.table("Snapshots by dataset",
		fmt.Sprintf("Each dataset's snapshots from the last snapshot listing, which the exporter runs in the background (see the Listings table): how many, when the oldest and newest were taken, the newest one's age (orange past %s, when ZFSSnapshotsStale fires), the space destroying all of them would free (usedbysnapshots) and the sum of what each holds alone (their used; blocks that several share are in neither). Stalest first.", config.Prose(cfg.SnapshotMaxAge)),
		24, 8,
		[]query{
			tq(fmt.Sprintf(`zfs_dataset_snapshots%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_oldest_snapshot_timestamp_seconds%s * 1000`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_newest_snapshot_timestamp_seconds%s * 1000`, s.dataset())),
			cell(datasetKeys, newestAge),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_used_by_snapshots_bytes%s`, s.dataset())),
			cell(datasetKeys, fmt.Sprintf(`zfs_dataset_snapshots_used_bytes%s`, s.dataset())),
		},
		[]col{
			{"instance", "instance", nil},
			{"dataset", "dataset", nil},
			{"Value #A", "snapshots", []dashboard.DynamicConfigValue{unit("short")}},
			{"Value #B", "oldest", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #C", "newest", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #D", "newest age", []dashboard.DynamicConfigValue{unit("s"), colorBackground(), thresholds(ageSteps...)}},
			bytesCol("Value #E", "held by snapshots"),
			bytesCol("Value #F", "sum of snapshots' used"),
		},
		"pool").
		SortBy(sortByDesc("newest age")))
	b.WithPanel(b.timeseries(fmt.Sprintf("Snapshot count, top %d", topDatasets),
		fmt.Sprintf("The %d datasets with the most snapshots. A count that only grows means the snapshot job does not prune.", topDatasets),
		"short", 8, 8,
		q(fmt.Sprintf(`topk(%d, zfs_dataset_snapshots%s)`, topDatasets, s.dataset()), "{{dataset}}")))
	b.WithPanel(b.timeseries(fmt.Sprintf("Newest snapshot age, stalest %d", topDatasets),
		fmt.Sprintf("Time since the newest snapshot of the %d datasets whose newest snapshot is oldest. A saw-tooth is a snapshot job at work; a line that keeps rising is one that stopped. The line marks %s, where ZFSSnapshotsStale fires.", topDatasets, config.Prose(cfg.SnapshotMaxAge)),
		"s", 8, 8,
		q(fmt.Sprintf(`topk(%d, %s)`, topDatasets, newestAge), "{{dataset}}")).
		Min(0).
		Thresholds(thresholdsBuilder(ageSteps...)).
		ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeLine)))
	b.WithPanel(b.timeseries(fmt.Sprintf("Held by snapshots, top %d", topDatasets),
		fmt.Sprintf("The %d datasets whose snapshots hold the most space: what destroying all their snapshots would free (usedbysnapshots).", topDatasets),
		"bytes", 8, 8,
		q(fmt.Sprintf(`topk(%d, zfs_dataset_used_by_snapshots_bytes%s)`, topDatasets, s.dataset()), "{{dataset}}")))
	largest := fmt.Sprintf(`topk(%d, zfs_snapshot_used_bytes%s)`, topSnapshots, s.dataset())
	b.WithPanel(b.table("Largest snapshots",
		fmt.Sprintf("The %d snapshots that hold the most space alone (their used: what destroying that one snapshot frees), with when they were taken and what they refer to. Only with --collector.dataset.per-snapshot, which exports a series per snapshot.", topSnapshots),
		24, 7,
		[]query{
			tq(largest),
			cell(snapshotKeys, fmt.Sprintf(`zfs_snapshot_creation_timestamp_seconds%s * 1000 and on(instance, pool, dataset, snapshot) %s`, s.dataset(), largest)),
			cell(snapshotKeys, fmt.Sprintf(`zfs_snapshot_referenced_bytes%s and on(instance, pool, dataset, snapshot) %s`, s.dataset(), largest)),
		},
		[]col{
			{"instance", "instance", nil},
			{"dataset", "dataset", nil},
			{"snapshot", "snapshot", nil},
			bytesCol("Value #A", "used"),
			{"Value #B", "taken", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			bytesCol("Value #C", "referenced"),
		},
		"pool").
		SortBy(sortByDesc("used")))

	b.row("Exporter")
	b.WithPanel(b.table("Listings",
		fmt.Sprintf("The exporter's two zfs listings: %s (filesystems and volumes, at every scrape) and %s (snapshots, in the background every --collector.dataset.snapshot-interval; scrapes serve the last listing that worked). Whether the last run worked, when one last did, and how long ago: ZFSExporterSourceStale fires past %s for the first and %s for the second.",
			config.SourceDatasets, config.SourceSnapshots, config.Prose(cfg.StaleAfter), config.Prose(cfg.SnapshotListingStaleAfter)),
		12, 6,
		[]query{
			tq(fmt.Sprintf(`zfs_exporter_source_up%s`, listings)),
			cell(sourceKeys, fmt.Sprintf(`zfs_exporter_source_last_success_timestamp_seconds%s * 1000`, listings)),
			cell(sourceKeys, fmt.Sprintf(`time() - zfs_exporter_source_last_success_timestamp_seconds%s`, listings)),
		},
		[]col{
			{"instance", "instance", nil},
			{"source", "listing", nil},
			{"Value #A", "last run", []dashboard.DynamicConfigValue{mappings(textMap([][3]string{{"1", "worked", "green"}, {"0", "failed", "red"}})), colorBackground()}},
			{"Value #B", "last success", []dashboard.DynamicConfigValue{unit("dateTimeAsIso")}},
			{"Value #C", "age", []dashboard.DynamicConfigValue{unit("s")}},
		}).
		SortBy(sortBy("instance")))
	b.WithPanel(b.timeseries("Listing age",
		fmt.Sprintf("Time since each listing last worked. The snapshot listing's age climbs to its interval and drops at each run; a line that keeps rising is a listing that fails or hangs (the exporter's log says why). Its snapshot figures are then as old as its age, and ZFSSnapshotsStale waits for it (past %s).", config.Prose(cfg.SnapshotListingStaleAfter)),
		"s", 12, 6,
		q(fmt.Sprintf(`time() - zfs_exporter_source_last_success_timestamp_seconds%s`, listings), "{{instance}} {{source}}")).
		Min(0))

	return b.Build()
}
