package zfs

import (
	"bytes"
	"context"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

// kstatPKstats reads illumos's and Solaris's ZFS kstats with `kstat -p`:
// every kstat of module zfs, instance 0, which holds arcstats, the other
// module-wide kstats and one I/O kstat per pool, named after the pool.
type kstatPKstats struct{ runner runner.Runner }

// kstatPArgs is the kstat command line: one run reads them all.
var kstatPArgs = []string{"-p", "-m", "zfs", "-i", "0"}

func (k kstatPKstats) snapshot(ctx context.Context) (*Kstats, error) {
	out, err := k.runner.Run(ctx, runner.Cmd("kstat", kstatPArgs...))
	if err != nil {
		return nil, err
	}
	source := runner.CommandLine("kstat", kstatPArgs...)
	stats, err := kstat.ParseKstatP(bytes.NewReader(out))
	if err != nil {
		return nil, parse.WithSource(err, source)
	}
	arc, ok := kstat.ARCFromKstatP(stats)
	if !ok {
		return nil, ErrNoKstats
	}
	snap := &Kstats{ARC: &arc, Misc: map[string]kstat.Misc{}}
	for _, name := range kstat.MiscKstats {
		if m, ok := kstat.MiscFromKstatP(stats, name); ok {
			snap.Misc[name] = m
		}
	}
	snap.PoolIO, err = kstat.PoolIOFromKstatP(stats)
	return snap, parse.WithSource(err, source)
}

func (kstatPKstats) poolStates(context.Context) (map[string]string, error) { return nil, nil }
