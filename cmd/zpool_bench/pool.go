package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchsource"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/poolconfig"
)

// Where the pool's configuration is read from (--pool.config-from).
const (
	configAuto     = "auto"
	configZpool    = "zpool"
	configExporter = "exporter"
)

var configSources = []string{configAuto, configZpool, configExporter}

// poolConfigReader reads the configuration of the pool a run is on.
type poolConfigReader struct {
	from            string                // one of configSources
	zpool, zfs, zdb string                // the commands, for configZpool
	exporter        *benchsource.Exporter // for configExporter
	warn            func(format string, args ...any)
}

// read reads the configuration of pool, or of the only pool when pool is
// empty: with zpool here, or from the exporter's metrics on a machine
// without it (auto), or as asked.
func (r poolConfigReader) read(ctx context.Context, pool string) (poolconfig.Config, error) {
	if r.from != configExporter {
		cfg, err := poolconfig.Read(ctx, poolconfig.Reader{Zpool: r.zpool, Zfs: r.zfs, Zdb: r.zdb}, pool)
		if err == nil || r.from == configZpool || !errors.Is(err, runner.ErrNotFound) {
			return cfg, err
		}
		r.warn("%s is not installed here: the pool's configuration comes from the metrics of the %s", r.zpool, r.exporter)
	}
	fams, err := r.exporter.Metrics(ctx)
	if err != nil {
		return poolconfig.Config{}, fmt.Errorf("reading the pool's configuration from the exporter: %w", err)
	}
	return poolconfig.FromMetrics(fams, pool)
}
