package zfs

import (
	"context"
	"errors"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// SourceVersion is the freshness name of `zpool version`.
const SourceVersion = "zpool_version"

// ErrNoVersion tells that this zpool has no version command: zfs-fuse,
// Solaris, illumos and ZFS on Linux before 0.8.
var ErrNoVersion = errors.New("this zpool prints no version (zpool version)")

// Version is the ZFS release of the userland tools and of the kernel
// module, as `zpool version` prints them; either is "" when not printed
// (the module is not loaded).
type Version struct {
	Userland, Kernel string
}

// Version reads `zpool version`. The userland changes with a package
// upgrade and the module only with its reload, so it is read every time.
// The first refusal of the command is remembered: from then on it returns
// ErrNoVersion without running zpool.
func (c *Client) Version(ctx context.Context) (Version, error) {
	c.mu.Lock()
	refused := c.noVersion
	c.mu.Unlock()
	if refused {
		return Version{}, ErrNoVersion
	}
	out, err := c.learn(ctx, SourceVersion, "zpool", "version")
	c.learned(SourceVersion, err)
	replayed := errors.Is(err, runner.ErrNoCapture)
	if err != nil && !runner.Inconclusive(ctx, err) && (replayed || strings.Contains(err.Error(), "unrecognized command")) {
		c.mu.Lock()
		c.noVersion = true
		c.mu.Unlock()
		if replayed {
			c.logger.Info("the replay holds no zpool version; not asking again")
		} else {
			c.logger.Info("zpool has no version command here; not asking again", "err", err)
		}
		return Version{}, ErrNoVersion
	}
	var v Version
	if err == nil {
		v.Userland, v.Kernel, err = zpool.ParseVersion(out)
		err = parse.WithSource(err, "zpool version")
	}
	c.record(SourceVersion, err)
	return v, err
}
