package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

// kstatSnapshot is one read of the kernel's ZFS statistics, in the same
// shape whatever the OS, so that each concept has one metric name.
type kstatSnapshot struct {
	arc      *kstat.ARC             // nil where the OS has none
	datasets []kstat.Dataset        // per-dataset I/O (Linux, FreeBSD)
	txgs     map[string][]kstat.Txg // recent transaction groups by pool (Linux, FreeBSD)
	// misc holds the module-wide kstats (zil, dmu_tx, abdstats,
	// zfetchstats) this kernel has, by name.
	misc map[string]kstat.Misc
	// poolIOStats is each pool's iostats (Linux, FreeBSD; OpenZFS 0.8+),
	// poolIO each pool's I/O kstat by pool (illumos, Solaris, and Linux
	// before OpenZFS 2.1).
	poolIOStats []kstat.PoolIOStats
	poolIO      map[string]kstat.IO
}

// kstatReader reads the kstats of one OS: Linux's /proc/spl/kstat/zfs,
// FreeBSD's sysctl kstat.zfs, illumos's kstat -p.
type kstatReader interface {
	snapshot(ctx context.Context) (*kstatSnapshot, error)
	// poolStates is pool health that needs no zpool process; nil where
	// the OS has no such kstat (illumos).
	poolStates(ctx context.Context) (map[string]string, error)
}

// procfsKstats reads /proc/spl/kstat/zfs (or a copy of it).
type procfsKstats struct{ fsys fs.FS }

func (p procfsKstats) snapshot(context.Context) (*kstatSnapshot, error) {
	data, err := fs.ReadFile(p.fsys, "arcstats")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoData // no ZFS module loaded
	}
	if err != nil {
		return nil, err
	}
	named, err := kstat.ParseNamed(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("arcstats: %w", err)
	}
	arc := kstat.ARCFromNamed(named)
	snap := &kstatSnapshot{arc: &arc, txgs: map[string][]kstat.Txg{}, misc: map[string]kstat.Misc{}, poolIO: map[string]kstat.IO{}}
	var errs []error
	if snap.datasets, err = p.datasets(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs,
		p.each("*/txgs", func(pool string, data []byte) error {
			txgs, err := kstat.ParseTxgs(bytes.NewReader(data))
			snap.txgs[pool] = txgs
			return err
		}),
		p.misc(snap.misc),
		// iostats since OpenZFS 0.8, io until 2.1: a pool may have both.
		p.each("*/iostats", func(pool string, data []byte) error {
			n, err := kstat.ParseNamed(bytes.NewReader(data))
			if err == nil {
				snap.poolIOStats = append(snap.poolIOStats, kstat.PoolIOStatsFromNamed(pool, n))
			}
			return err
		}),
		p.each("*/io", func(pool string, data []byte) error {
			io, err := kstat.ParseIO(bytes.NewReader(data))
			if err == nil {
				snap.poolIO[pool] = *io
			}
			return err
		}),
	)
	return snap, errors.Join(errs...)
}

// misc reads the module-wide kstats this kernel has into misc.
func (p procfsKstats) misc(misc map[string]kstat.Misc) error {
	var errs []error
	for _, name := range kstat.MiscKstats {
		data, err := fs.ReadFile(p.fsys, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue // not in this release
		}
		var n *kstat.Named
		if err == nil {
			n, err = kstat.ParseNamed(bytes.NewReader(data))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		misc[name] = kstat.MiscFromNamed(name, n)
	}
	return errors.Join(errs...)
}

// datasets reads every <pool>/objset-0x... kstat (OpenZFS 0.8+).
func (p procfsKstats) datasets() ([]kstat.Dataset, error) {
	var out []kstat.Dataset
	err := p.each("*/objset-*", func(path string, data []byte) error {
		n, err := kstat.ParseNamed(bytes.NewReader(data))
		if err != nil {
			return err
		}
		d, err := kstat.DatasetFromNamed(n)
		if err != nil {
			return err
		}
		if d.Name != "" { // not an objset being created or destroyed
			out = append(out, d)
		}
		return nil
	})
	return out, err
}

func (p procfsKstats) poolStates(context.Context) (map[string]string, error) {
	states := map[string]string{}
	err := p.each("*/state", func(pool string, data []byte) error {
		state, err := kstat.ParsePoolState(bytes.NewReader(data))
		states[pool] = state
		return err
	})
	return states, err
}

// each calls fn with the pool (the first path element) and contents of
// every file matching pattern; a file gone since the listing is skipped.
// For objset files fn gets the whole path, and the dataset's pool and
// objset are set from it.
func (p procfsKstats) each(pattern string, fn func(pool string, data []byte) error) error {
	paths, err := fs.Glob(p.fsys, pattern)
	if err != nil {
		return err
	}
	sort.Strings(paths)
	var errs []error
	for _, path := range paths {
		data, err := fs.ReadFile(p.fsys, path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		pool, _, _ := strings.Cut(path, "/")
		if err == nil {
			err = fn(pool, data)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
		}
	}
	return errors.Join(errs...)
}

// sysctlKstats reads FreeBSD's `sysctl kstat.zfs` through the runner.
type sysctlKstats struct{ runner runner.Runner }

func (s sysctlKstats) read(ctx context.Context) ([]kstat.SysctlStat, error) {
	out, err := s.runner.Run(ctx, "sysctl", "-q", "kstat.zfs")
	if err != nil {
		return nil, err
	}
	stats, err := kstat.ParseSysctl(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("parsing output of `sysctl -q kstat.zfs`: %w", err)
	}
	return stats, nil
}

func (s sysctlKstats) snapshot(ctx context.Context) (*kstatSnapshot, error) {
	stats, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	snap := &kstatSnapshot{
		datasets:    kstat.DatasetsFromSysctl(stats),
		txgs:        map[string][]kstat.Txg{},
		misc:        map[string]kstat.Misc{},
		poolIOStats: kstat.PoolIOStatsFromSysctl(stats),
	}
	if arc, ok := kstat.ARCFromSysctl(stats); ok {
		snap.arc = &arc
	}
	for _, name := range kstat.MiscKstats {
		if m, ok := kstat.MiscFromSysctl(stats, name); ok {
			snap.misc[name] = m
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
			errs = append(errs, fmt.Errorf("%s: %w", st.Name, err))
			continue
		}
		snap.txgs[pool] = txgs
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

// kstatPKstats reads illumos's and Solaris's ZFS kstats with `kstat -p`:
// every kstat of module zfs, instance 0, which holds arcstats, the other
// module-wide kstats and one I/O kstat per pool, named after the pool.
type kstatPKstats struct{ runner runner.Runner }

// kstatPArgs is the kstat command line: one run reads them all.
var kstatPArgs = []string{"-p", "-m", "zfs", "-i", "0"}

func (k kstatPKstats) snapshot(ctx context.Context) (*kstatSnapshot, error) {
	out, err := k.runner.Run(ctx, "kstat", kstatPArgs...)
	if err != nil {
		return nil, err
	}
	stats, err := kstat.ParseKstatP(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("parsing output of `kstat %s`: %w", strings.Join(kstatPArgs, " "), err)
	}
	arc, ok := kstat.ARCFromKstatP(stats)
	if !ok {
		return nil, ErrNoData
	}
	snap := &kstatSnapshot{arc: &arc, misc: map[string]kstat.Misc{}}
	for _, name := range kstat.MiscKstats {
		if m, ok := kstat.MiscFromKstatP(stats, name); ok {
			snap.misc[name] = m
		}
	}
	snap.poolIO, err = kstat.PoolIOFromKstatP(stats)
	return snap, err
}

func (kstatPKstats) poolStates(context.Context) (map[string]string, error) { return nil, nil }
