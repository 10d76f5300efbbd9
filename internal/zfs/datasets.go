package zfs

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/dataset"
)

// SourceDatasets is the freshness source of Datasets.
const SourceDatasets = "zfs_list"

// DatasetProperties are the properties Datasets asks zfs for, as far as
// the zfs at hand knows them; name and type always come first.
var DatasetProperties = []string{
	"name", "type", "used", "available", "referenced", "logicalused", "logicalreferenced", "written",
	"usedbydataset", "usedbychildren", "usedbysnapshots", "usedbyrefreservation",
	"quota", "refquota", "reservation", "refreservation", "volsize", "compressratio",
	"encryption", "keystatus", "mounted",
	"compression", "recordsize", "volblocksize", "atime", "sync", "dedup", "primarycache", "origin",
	// Last, as the only value that may hold a tab.
	"mountpoint",
}

// datasetQuery is how this zfs is asked for datasets: `zfs list -Hp` where
// it takes -p (OpenZFS 0.7 on, FreeBSD, illumos), else `zfs get -Hp`
// (zfs-fuse, old Solaris), with the properties it knows.
type datasetQuery struct {
	get        bool
	properties []string // starting with name
}

func (q datasetQuery) args() []string {
	if q.get {
		// zfs get has no -t everywhere: snapshots come too, and are
		// dropped by their type.
		return []string{"get", "-Hp", "-o", "name,property,value", strings.Join(q.properties[1:], ",")}
	}
	return []string{"list", "-Hp", "-t", "filesystem,volume", "-o", strings.Join(q.properties, ",")}
}

// Datasets lists every filesystem and volume with the properties of
// DatasetProperties that this zfs knows, in one zfs run. The first call
// learns which command and properties this zfs takes: a refused option or
// property is left out and the run tried again. Each read counts in the
// freshness of zfs_list.
func (c *Client) Datasets(ctx context.Context) (*dataset.List, error) {
	l, err := c.readDatasets(ctx)
	c.record(SourceDatasets, err)
	return l, err
}

func (c *Client) readDatasets(ctx context.Context) (*dataset.List, error) {
	c.mu.Lock()
	q := c.datasets
	c.mu.Unlock()
	if q.properties == nil {
		q.properties = DatasetProperties
	}
	for {
		out, err := c.zfs(ctx, q.args()...)
		if err != nil {
			next, learned := q.without(err)
			if !learned || runner.Inconclusive(ctx, err) {
				return nil, err
			}
			c.logger.Info("zfs refused part of the dataset listing; asking without it", "err", err, "next", "zfs "+strings.Join(next.args(), " "))
			q = next
			continue
		}
		c.mu.Lock()
		c.datasets = q
		c.mu.Unlock()
		return parseDatasets(out, q)
	}
}

// without is q less what zfs refused in err, whose message holds the
// first line zfs printed on stderr: -p, or a property it does not know.
func (q datasetQuery) without(err error) (datasetQuery, bool) {
	msg := err.Error()
	if !q.get && strings.Contains(msg, "invalid option 'p'") {
		return datasetQuery{get: true, properties: q.properties}, true
	}
	_, property, ok := strings.Cut(msg, "bad property list: invalid property '")
	property, _, closed := strings.Cut(property, "'")
	if !ok || !closed || property == "name" || property == "type" || !slices.Contains(q.properties, property) {
		return q, false
	}
	rest := slices.DeleteFunc(slices.Clone(q.properties), func(p string) bool { return p == property })
	return datasetQuery{get: q.get, properties: rest}, true
}

func parseDatasets(out []byte, q datasetQuery) (*dataset.List, error) {
	var (
		l   *dataset.List
		err error
	)
	if q.get {
		l, err = dataset.ParseGet(bytes.NewReader(out), q.properties[1:])
	} else {
		l, err = dataset.ParseList(bytes.NewReader(out), q.properties)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing output of `zfs %s`: %w", strings.Join(q.args(), " "), err)
	}
	if q.get {
		typ := l.Column("type")
		l.Datasets = slices.DeleteFunc(l.Datasets, func(d dataset.Dataset) bool {
			t := d.Value(typ)
			return t != "filesystem" && t != "volume"
		})
	}
	return l, nil
}
