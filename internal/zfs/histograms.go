package zfs

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The sources of the vdev histograms and queue lengths, by the name the
// freshness metrics give them.
const (
	SourceLatency = "zpool_iostat_latency" // zpool iostat -vHp -w
	SourceSizes   = "zpool_iostat_sizes"   // zpool iostat -vHp -r
	SourceQueues  = "zpool_iostat_queues"  // zpool iostat -vHp -q
)

// ErrNoHistograms tells that this zpool prints no histograms or queue
// lengths: zfs-fuse, Solaris, illumos and OpenZFS before 0.7 refuse -w,
// -r, -q, or the -H and -p that go with them.
var ErrNoHistograms = errors.New("this zpool has no latency or request-size histograms nor queue lengths (zpool iostat -w, -r, -q)")

// Histograms reads the latency (-w) or request-size (-r) tables of every
// pool and vdev, as `zpool iostat -vHp` prints them: counts since each
// pool was imported, in print order. The first refusal of an option is
// remembered: from then on it returns ErrNoHistograms without running
// zpool.
func (c *Client) Histograms(ctx context.Context, kind zpool.HistogramKind, keep func(column string) bool) ([]zpool.Histograms, error) {
	flag, source := "-w", SourceLatency
	if kind == zpool.SizeHistogram {
		flag, source = "-r", SourceSizes
	}
	out, err := c.iostatTables(ctx, flag)
	if errors.Is(err, ErrNoHistograms) {
		return nil, err
	}
	var tables []zpool.Histograms
	if err == nil {
		tables, err = zpool.ParseHistogramColumns(bytes.NewReader(out), kind, keep)
		err = parse.WithSource(err, "zpool iostat -vHp "+flag)
	}
	c.record(source, err)
	return tables, err
}

// Queues reads the I/Os each vdev holds in its queues now, pending and
// active by class, from `zpool iostat -vHp -q`: the rows' Extra columns
// (see QueueClasses).
func (c *Client) Queues(ctx context.Context) ([]zpool.IostatRow, error) {
	out, err := c.iostatTables(ctx, "-q")
	if errors.Is(err, ErrNoHistograms) {
		return nil, err
	}
	var rows []zpool.IostatRow
	if err == nil {
		var reports []zpool.IostatReport
		reports, err = zpool.ParseIostat(bytes.NewReader(out))
		switch {
		case err != nil:
		case len(reports) > 1:
			err = parse.Errorf(0, "%d reports where one was asked", len(reports))
		case len(reports) == 1:
			rows = reports[0].Rows
		}
		err = parse.WithSource(err, "zpool iostat -vHp -q")
	}
	c.record(SourceQueues, err)
	return rows, err
}

// QueueClasses are the classes of the -q columns, each printed as pending
// then active, in print order: 0.7 has the first five, 0.8 adds trim and
// 2.2 rebuild.
var QueueClasses = []string{"sync_read", "sync_write", "async_read", "async_write", "scrub", "trim", "rebuild"}

// iostatTables runs `zpool iostat -vHp FLAG` for every pool, unless this
// zpool is known to refuse it. A replay without a capture of it refuses
// it too.
func (c *Client) iostatTables(ctx context.Context, flag string) ([]byte, error) {
	c.mu.Lock()
	refused := c.noHistograms
	c.mu.Unlock()
	if refused {
		return nil, ErrNoHistograms
	}
	what := "iostat " + flag
	out, err := c.learn(ctx, what, "zpool", "iostat", "-vHp", flag)
	c.learned(what, err)
	if err == nil || runner.Inconclusive(ctx, err) {
		return out, err
	}
	replayed := errors.Is(err, runner.ErrNoCapture)
	if !replayed && !refusesOption(err) {
		return out, err
	}
	c.mu.Lock()
	c.noHistograms = true
	c.mu.Unlock()
	if replayed {
		c.logger.Info("the replay holds no zpool iostat histograms or queue lengths; not asking again", "flag", flag)
	} else {
		c.logger.Info("zpool iostat has no histograms or queue lengths here; not asking again", "flag", flag, "err", err)
	}
	return nil, ErrNoHistograms
}

// refusesOption tells a zpool that refused an option, by its usage
// message: "invalid option 'w'" (OpenZFS, zfs-fuse) or "illegal option
// -- w" (Solaris getopt).
func refusesOption(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "invalid option") || strings.Contains(msg, "illegal option")
}
