package zfs

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

// sysctlKstats reads FreeBSD's `sysctl kstat.zfs` through the runner.
type sysctlKstats struct{ runner runner.Runner }

func (s sysctlKstats) read(ctx context.Context) ([]kstat.SysctlStat, error) {
	out, err := s.runner.Run(ctx, runner.Cmd("sysctl", "-q", "kstat.zfs"))
	if err != nil {
		return nil, err
	}
	stats, err := kstat.ParseSysctl(bytes.NewReader(out))
	if err != nil {
		return nil, parse.WithSource(err, "sysctl -q kstat.zfs")
	}
	return stats, nil
}

func (s sysctlKstats) snapshot(ctx context.Context) (*Kstats, error) {
	stats, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	snap := &Kstats{
		Datasets:    kstat.DatasetsFromSysctl(stats),
		Txgs:        map[string][]kstat.Txg{},
		Misc:        map[string]kstat.Misc{},
		PoolIOStats: kstat.PoolIOStatsFromSysctl(stats),
	}
	if arc, ok := kstat.ARCFromSysctl(stats); ok {
		snap.ARC = &arc
	}
	for _, name := range kstat.MiscKstats {
		if m, ok := kstat.MiscFromSysctl(stats, name); ok {
			snap.Misc[name] = m
		}
	}
	var errs []error
	for _, st := range stats {
		// kstat.zfs.<pool>.txgs holds the same table as Linux's <pool>/txgs.
		pool, ok := strings.CutPrefix(st.Name, "kstat.zfs.")
		if !ok {
			continue
		}
		if pool, ok = strings.CutSuffix(pool, ".txgs"); !ok || strings.Contains(pool, ".misc") {
			continue
		}
		txgs, err := kstat.ParseTxgs(strings.NewReader(st.Value))
		if err != nil {
			errs = append(errs, parse.WithSource(err, st.Name))
			continue
		}
		snap.Txgs[pool] = txgs
	}
	return snap, errors.Join(errs...)
}

func (s sysctlKstats) poolStates(ctx context.Context) (map[string]string, error) {
	stats, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return kstat.PoolStatesFromSysctl(stats), nil
}
