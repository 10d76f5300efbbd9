package zfs

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
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
	"canmount", "compression", "recordsize", "volblocksize", "atime", "sync", "dedup", "primarycache", "origin",
	// Last, as the only value that may hold a tab.
	"mountpoint",
}

// listing is how this zfs is asked for one kind of dataset, and with
// which of the properties asked for, as learned from what it refused.
type listing struct {
	types      string // of zfs list -t: "filesystem,volume" or "snapshot"
	form       listForm
	properties []string // starting with name
	// jsonTried is set once the text of zfs list could not be read and
	// the JSON form was asked for instead: it is asked for once.
	jsonTried bool
}

// listForm is a form of the listing command.
type listForm int

const (
	// `zfs list -Hp`: exact, where -p is taken (OpenZFS 0.7 on, FreeBSD,
	// illumos), and a tenth of the size of JSON, which costs in
	// proportion to read.
	formList listForm = iota
	// `zfs list -j --json-int` (OpenZFS 2.3 on), asked for when the text
	// cannot be read: a value that holds a newline (a mountpoint can)
	// breaks a line of text, not JSON.
	formJSON
	// `zfs get -Hp`: where zfs list takes no -p (zfs-fuse, old Solaris).
	formGet
)

func (q listing) args() []string {
	switch q.form {
	case formJSON:
		return []string{"list", "-j", "--json-int", "-t", q.types, "-o", strings.Join(q.properties, ",")}
	case formGet:
		// zfs get has no -t everywhere: every kind comes, and keep drops
		// the others.
		return []string{"get", "-Hp", "-o", "name,property,value", strings.Join(q.properties[1:], ",")}
	}
	return []string{"list", "-Hp", "-t", q.types, "-o", strings.Join(q.properties, ",")}
}

// withPools restricts the arguments of a listing to the datasets of
// pools, if any are named: -r after the subcommand (before the property
// list of zfs get, as getopt without reordering stops there) and the
// pools last.
func withPools(args, pools []string) []string {
	if len(pools) == 0 {
		return args
	}
	out := append([]string{args[0], "-r"}, args[1:]...)
	return append(out, pools...)
}

// keep tells whether a dataset that zfs get printed is of q's kind: a
// snapshot by the "@" in its name, a filesystem or volume by its type.
func (q listing) keep(d dataset.Dataset, typ int) bool {
	if q.types == "snapshot" {
		return strings.Contains(d.Name, "@")
	}
	t := d.Value(typ)
	return t == "filesystem" || t == "volume"
}

// Datasets lists every filesystem and volume with the properties of
// DatasetProperties that this zfs knows, in one zfs run. The first call
// learns which command and properties this zfs takes: a refused option or
// property is left out and the run tried again. Each read counts in the
// freshness of zfs_list.
//
// Named pools restrict the listing to their datasets: zfs hangs on a
// suspended pool, in a process no kill ends, so the others are listed
// without it.
func (c *Client) Datasets(ctx context.Context, pools ...string) (*dataset.List, error) {
	l, err := c.list(ctx, &c.datasets, pools)
	c.record(SourceDatasets, err)
	return l, err
}

// list runs the listing that *learned holds, and keeps there, under mu,
// what the run learned of this zfs.
func (c *Client) list(ctx context.Context, learned *listing, pools []string) (*dataset.List, error) {
	c.mu.Lock()
	q := *learned
	c.mu.Unlock()
	for {
		what := "zfs list " + q.types
		out, err := c.learn(ctx, what, "zfs", withPools(q.args(), pools)...)
		c.learned(what, err)
		if err != nil {
			next, learned := q.without(err)
			if !learned || runner.Inconclusive(ctx, err) {
				return nil, err
			}
			c.logger.Info("zfs refused part of a listing; asking without it", "err", err, "next", "zfs "+strings.Join(next.args(), " "))
			q = next
			continue
		}
		l, err := parseListing(out, q)
		if err != nil && q.form == formList && !q.jsonTried {
			q.form, q.jsonTried = formJSON, true
			c.logger.Warn("cannot read the text of zfs list; asking for JSON", "err", err, "next", "zfs "+strings.Join(q.args(), " "))
			continue
		}
		c.mu.Lock()
		*learned = q
		c.mu.Unlock()
		return l, err
	}
}

// without is q less what zfs refused in err, whose message holds the
// first line zfs printed on stderr: -j, -p, or a property it does not
// know.
func (q listing) without(err error) (listing, bool) {
	msg := err.Error()
	switch {
	case q.form == formJSON && strings.Contains(msg, "invalid option 'j'"):
		// No JSON before OpenZFS 2.3: the text stays, unreadable as it is.
		q.form = formList
		return q, true
	case q.form == formList && strings.Contains(msg, "invalid option 'p'"):
		q.form = formGet
		return q, true
	}
	property, ok := invalidProperty(err)
	if !ok || property == "name" || property == "type" || !slices.Contains(q.properties, property) {
		return q, false
	}
	q.properties = slices.DeleteFunc(slices.Clone(q.properties), func(p string) bool { return p == property })
	return q, true
}

func parseListing(out []byte, q listing) (*dataset.List, error) {
	var (
		l   *dataset.List
		err error
	)
	switch q.form {
	case formJSON:
		l, err = dataset.ParseJSON(bytes.NewReader(out), q.properties)
	case formGet:
		l, err = dataset.ParseGet(bytes.NewReader(out), q.properties[1:])
	default:
		l, err = dataset.ParseList(bytes.NewReader(out), q.properties)
	}
	if err != nil {
		return nil, parse.WithSource(err, "zfs "+strings.Join(q.args(), " "))
	}
	if q.form == formGet {
		typ := l.Column("type")
		l.Datasets = slices.DeleteFunc(l.Datasets, func(d dataset.Dataset) bool { return !q.keep(d, typ) })
	}
	return l, nil
}
