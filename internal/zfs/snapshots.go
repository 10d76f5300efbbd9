package zfs

import (
	"context"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/dataset"
)

// SourceSnapshots is the freshness source of Snapshots.
const SourceSnapshots = "zfs_list_snapshots"

// SnapshotProperties are the properties Snapshots asks zfs for.
var SnapshotProperties = []string{"name", "creation", "used", "referenced"}

// Snapshots lists every snapshot with SnapshotProperties, in one zfs run,
// learning what this zfs takes as Datasets does. A host can hold hundreds
// of thousands of snapshots, whose listing takes minutes: it is not for a
// scrape to wait on. Each read counts in the freshness of
// zfs_list_snapshots. Named pools restrict it to their snapshots, as for
// Datasets.
func (c *Client) Snapshots(ctx context.Context, pools ...string) (*dataset.List, error) {
	l, err := c.list(ctx, &c.snapshots, pools)
	c.record(SourceSnapshots, err)
	return l, err
}
