package zfs

import (
	"bytes"
	"context"
	"slices"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Properties returns every pool's properties from `zpool get all`, and
// notes how the read went in the freshness of zpool_get. Where zpool get
// takes no -H, it reads the table of the pools that status shows.
func (c *Client) Properties(ctx context.Context) ([]zpool.Property, error) {
	return c.properties(ctx, c.detection, c.Status)
}

// properties is Properties, with the capabilities from detect, taking the
// pools from status.
func (c *Client) properties(ctx context.Context, detect detection, status func(context.Context) (*zpool.Status, error)) ([]zpool.Property, error) {
	props, err := c.readProperties(ctx, detect, status)
	c.record(SourceProperties, err)
	return props, err
}

func (c *Client) readProperties(ctx context.Context, detect detection, status func(context.Context) (*zpool.Status, error)) ([]zpool.Property, error) {
	caps, probed, err := detect(ctx)
	if err != nil {
		return nil, err
	}
	args, out := caps.GetArgs, probed.get // out: printed by the only scrape's detection
	if !probed.hasGet {
		if args == nil {
			st, err := status(ctx)
			if err != nil {
				return nil, err
			}
			if len(st.Pools) == 0 {
				return nil, nil
			}
			// No "--" here: the zpools that take no -H (zfs-fuse, old
			// Solaris) read get's arguments by position, without getopt,
			// and take "--" for a pool's name.
			args = []string{"get", "all"}
			for _, p := range st.Pools {
				args = append(args, p.Name)
			}
		}
		if out, err = c.zpool(ctx, args...); err != nil {
			return nil, err
		}
	}
	props, err := zpool.ParseGet(bytes.NewReader(out))
	if err != nil {
		return nil, parse.WithSource(err, runner.CommandLine(c.cfg.Zpool, args...))
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
	asked := c.knownVdevProperties(properties)
	var args []string
	get := func() ([]byte, error) {
		args = []string{"get", "-Hp", "--", strings.Join(asked, ","), pool, "all-vdevs"}
		out, err := c.learn(ctx, SourceVdevProperties, "zpool", args...)
		c.learned(SourceVdevProperties, err)
		return out, err
	}
	out, err := get()
	for err != nil && !runner.Inconclusive(ctx, err) && len(asked) > 1 {
		// A property of a later release (sit_out is 2.4's) fails the
		// whole run: it is left out from then on.
		refused, ok := invalidProperty(err)
		if !ok || !slices.Contains(asked, refused) {
			break
		}
		c.refuseVdevProperty(refused, err)
		asked = c.knownVdevProperties(properties)
		out, err = get()
	}
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
		err = parse.WithSource(err, runner.CommandLine("zpool", args...))
	}
	c.record(SourceVdevProperties, err)
	return props, true, err
}

// knownVdevProperties is properties less those this zpool refused.
func (c *Client) knownVdevProperties(properties []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(properties), func(p string) bool { return c.refusedVdevProperties[p] })
}

// refuseVdevProperty remembers, and logs once, a vdev property this zpool
// does not know.
func (c *Client) refuseVdevProperty(property string, why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.refusedVdevProperties[property] {
		return
	}
	if c.refusedVdevProperties == nil {
		c.refusedVdevProperties = map[string]bool{}
	}
	c.refusedVdevProperties[property] = true
	c.logger.Info("zpool has no such vdev property; not asking for it again", "property", property, "err", why)
}

// invalidProperty is the property that zpool or zfs refused in err, whose
// message holds the first line it printed on stderr: "bad property list:
// invalid property 'sit_out'".
func invalidProperty(err error) (string, bool) {
	_, property, ok := strings.Cut(err.Error(), "bad property list: invalid property '")
	property, _, closed := strings.Cut(property, "'")
	return property, ok && closed && property != ""
}
