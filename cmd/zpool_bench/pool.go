package main

import (
	"context"

	"github.com/zpool-exporter/zpool_exporter/internal/poolconfig"
)

// readPoolConfig reads the configuration of pool, or of the only pool
// when pool is empty.
func readPoolConfig(ctx context.Context, zpool, zfs, pool string) (poolconfig.Config, error) {
	r := poolconfig.HostReader()
	r.Zpool, r.Zfs = zpool, zfs
	return poolconfig.Read(ctx, r, pool)
}
