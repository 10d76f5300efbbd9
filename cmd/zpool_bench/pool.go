package main

import (
	"context"

	"github.com/zpool-exporter/zpool_exporter/internal/poolconfig"
)

// readPoolConfig reads the configuration of pool, or of the only pool
// when pool is empty.
func readPoolConfig(ctx context.Context, zpool, zfs, pool string) (poolconfig.Config, error) {
	return poolconfig.Read(ctx, poolconfig.Reader{Zpool: zpool, Zfs: zfs}, pool)
}
