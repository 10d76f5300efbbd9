package zfs

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Properties returns every pool's properties from `zpool get all`, and
// notes how the read went in the freshness of zpool_get. Where zpool get
// takes no -H, it reads the table of the pools that status shows.
func (c *Client) Properties(ctx context.Context) ([]zpool.Property, error) {
	return c.properties(ctx, c.Status)
}

// properties is Properties, taking the pools from status.
func (c *Client) properties(ctx context.Context, status func(context.Context) (*zpool.Status, error)) ([]zpool.Property, error) {
	props, err := c.readProperties(ctx, status)
	c.record(SourceProperties, err)
	return props, err
}

func (c *Client) readProperties(ctx context.Context, status func(context.Context) (*zpool.Status, error)) ([]zpool.Property, error) {
	caps, err := c.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	args := caps.GetArgs
	if args == nil {
		st, err := status(ctx)
		if err != nil {
			return nil, err
		}
		if len(st.Pools) == 0 {
			return nil, nil
		}
		// No "--" here: the zpools that take no -H (zfs-fuse, old
		// Solaris) read get's arguments by position, without getopt, and
		// take "--" for a pool's name.
		args = []string{"get", "all"}
		for _, p := range st.Pools {
			args = append(args, p.Name)
		}
	}
	out, err := c.zpool(ctx, args...)
	if err != nil {
		return nil, err
	}
	props, err := zpool.ParseGet(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("parsing output of `%s %s`: %w", c.cfg.Zpool, strings.Join(args, " "), err)
	}
	return props, nil
}

// VdevProperties returns the named properties of every vdev of a pool
// (OpenZFS 2.2 on: among them I/O counters and ashift), or ok=false when
// this zpool has none. Naming them keeps zpool's output small: all of
// them come to 2.3 MB at 1,000 leaves. The first pool asked decides
// whether this zpool has vdev properties; from then on each read counts in
// the freshness of zpool_vdev_properties.
func (c *Client) VdevProperties(ctx context.Context, pool string, properties ...string) (props []zpool.Property, ok bool, err error) {
	available, known := c.vdevProperties()
	if known && !available {
		return nil, false, nil
	}
	// The pool's name comes from zpool's output: "--" keeps it from being
	// read as an option. It goes before the first operand, as getopt
	// without glibc's reordering (FreeBSD, illumos) stops there.
	out, err := c.zpool(ctx, "get", "-Hp", "--", strings.Join(properties, ","), pool, "all-vdevs")
	if !known {
		if runner.Inconclusive(ctx, err) {
			return nil, false, err
		}
		c.learnVdevProperties(err == nil, err)
		if err != nil {
			return nil, false, nil
		}
	}
	if err == nil {
		props, err = zpool.ParseGet(bytes.NewReader(out))
		if err != nil {
			err = fmt.Errorf("parsing vdev properties of pool %s: %w", pool, err)
		}
	}
	c.record(SourceVdevProperties, err)
	return props, true, err
}
