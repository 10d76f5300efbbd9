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

// SourceVdevList is the freshness name of `zpool list -v`.
const SourceVdevList = "zpool_list_vdevs"

// ErrNoVdevList tells that this zpool lists no vdevs: zfs-fuse, Solaris 10
// and OpenSolaris take no `zpool list -v`.
var ErrNoVdevList = errors.New("this zpool lists no vdevs (zpool list -v)")

// vdevListForms are the forms of `zpool list -v`, best first: exact
// figures (-p: OpenZFS 0.7 on, FreeBSD 10 on, illumos 2013 on), scripted
// (-H), and the table with its header that every zpool with -v prints.
// Each keeps zpool's default columns: the vdev rows of every release
// before 2.4.1 ignore -o (see zpool.ParseListVerbose).
var vdevListForms = [][]string{
	{"list", "-v", "-Hp"},
	{"list", "-v", "-H"},
	{"list", "-v"},
}

// VdevList reads the space of every pool and vdev from `zpool list -v`, in
// the first of its forms this zpool takes; a form refused is remembered,
// and when none is left it returns ErrNoVdevList without running zpool. A
// replay without a capture of a form refuses it too.
func (c *Client) VdevList(ctx context.Context) ([]zpool.ListRow, error) {
	out, args, err := c.listVdevs(ctx)
	if errors.Is(err, ErrNoVdevList) {
		return nil, err
	}
	var rows []zpool.ListRow
	if err == nil {
		rows, err = zpool.ParseListVerbose(bytes.NewReader(out))
		err = parse.WithSource(err, runner.CommandLine("zpool", args...))
	}
	c.record(SourceVdevList, err)
	return rows, err
}

// listVdevs runs the first form of zpool list -v not refused yet, and the
// next ones while they are refused.
func (c *Client) listVdevs(ctx context.Context) ([]byte, []string, error) {
	c.mu.Lock()
	form := c.vdevListForm
	c.mu.Unlock()
	if form >= len(vdevListForms) {
		return nil, nil, ErrNoVdevList
	}
	replayed := false
	for ; form < len(vdevListForms); form++ {
		args := vdevListForms[form]
		out, err := c.learn(ctx, SourceVdevList, "zpool", args...)
		c.learned(SourceVdevList, err)
		if err == nil || runner.Inconclusive(ctx, err) {
			return out, args, err
		}
		noCapture := errors.Is(err, runner.ErrNoCapture)
		if !noCapture && !refusesOption(err) {
			return out, args, err // a failure, not a refusal: asked again next time
		}
		replayed = replayed || noCapture
		c.mu.Lock()
		c.vdevListForm = max(c.vdevListForm, form+1)
		c.mu.Unlock()
		if !noCapture {
			c.logger.Info("zpool list refuses this form; trying the next", "command", "zpool "+strings.Join(args, " "), "err", err)
		}
	}
	if replayed {
		c.logger.Info("the replay holds no zpool list -v; not asking again")
	} else {
		c.logger.Info("zpool list has no -v here; not asking again")
	}
	return nil, nil, ErrNoVdevList
}
