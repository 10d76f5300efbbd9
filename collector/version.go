package collector

import (
	"context"
	"errors"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

func init() {
	register("version", true, "The ZFS release of the userland tools and of the kernel module, from zpool version", newVersionCollector)
}

var versionInfoDesc = desc("", "version_info",
	"ZFS releases of the userland tools and of the loaded kernel module (zpool version); empty where not printed. They differ after a package upgrade until the module is reloaded.",
	"userland", "kernel")

type versionCollector struct{}

func newVersionCollector(Config, *slog.Logger) (Collector, error) { return versionCollector{}, nil }

func (versionCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	v, err := s.Version(ctx)
	if errors.Is(err, zfs.ErrNoVersion) {
		return nil // zfs-fuse, Solaris, illumos: the pool version is in zfs_pool_info
	}
	if err != nil {
		return err
	}
	gauge(ch, versionInfoDesc, 1, v.Userland, v.Kernel)
	return nil
}
