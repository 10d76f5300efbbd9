package zfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

// procfsKstats reads /proc/spl/kstat/zfs (or a copy of it).
type procfsKstats struct{ fsys fs.FS }

func (p procfsKstats) snapshot(context.Context) (*Kstats, error) {
	data, err := fs.ReadFile(p.fsys, "arcstats")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoKstats // no ZFS module loaded
	}
	if err != nil {
		return nil, err
	}
	named, err := kstat.ParseNamed(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("arcstats: %w", err)
	}
	arc := kstat.ARCFromNamed(named)
	snap := &Kstats{ARC: &arc, Txgs: map[string][]kstat.Txg{}, Misc: map[string]kstat.Misc{}, PoolIO: map[string]kstat.IO{}}
	var errs []error
	if snap.Datasets, err = p.datasets(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs,
		p.each("*/txgs", func(pool string, data []byte) error {
			txgs, err := kstat.ParseTxgs(bytes.NewReader(data))
			snap.Txgs[pool] = txgs
			return err
		}),
		p.misc(snap.Misc),
		// iostats since OpenZFS 0.8, io until 2.1: a pool may have both.
		p.each("*/iostats", func(pool string, data []byte) error {
			n, err := kstat.ParseNamed(bytes.NewReader(data))
			if err == nil {
				snap.PoolIOStats = append(snap.PoolIOStats, kstat.PoolIOStatsFromNamed(pool, n))
			}
			return err
		}),
		p.each("*/io", func(pool string, data []byte) error {
			io, err := kstat.ParseIO(bytes.NewReader(data))
			if err == nil {
				snap.PoolIO[pool] = *io
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
