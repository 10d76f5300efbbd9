package zfs

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
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
		return nil, parse.WithSource(err, "arcstats")
	}
	arc := kstat.ARCFromNamed(named)
	snap := &Kstats{ARC: &arc, Txgs: map[string][]kstat.Txg{}, Misc: map[string]kstat.Misc{}, PoolIO: map[string]kstat.IO{}}
	dirs, err := p.poolDirs()
	errs := []error{err}
	if snap.Datasets, err = p.datasets(dirs); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs,
		p.each(dirs, fileNamed("txgs"), func(pool string, data []byte) error {
			txgs, err := kstat.ParseTxgs(bytes.NewReader(data))
			snap.Txgs[pool] = txgs
			return err
		}),
		p.misc(snap.Misc),
		// iostats since OpenZFS 0.8, io until 2.1: a pool may have both.
		p.each(dirs, fileNamed("iostats"), func(pool string, data []byte) error {
			n, err := kstat.ParseNamed(bytes.NewReader(data))
			if err == nil {
				snap.PoolIOStats = append(snap.PoolIOStats, kstat.PoolIOStatsFromNamed(pool, n))
			}
			return err
		}),
		p.each(dirs, fileNamed("io"), func(pool string, data []byte) error {
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
			errs = append(errs, parse.WithSource(err, name))
			continue
		}
		misc[name] = kstat.MiscFromNamed(name, n)
	}
	return errors.Join(errs...)
}

// datasets reads every <pool>/objset-0x... kstat (OpenZFS 0.8+).
func (p procfsKstats) datasets(dirs []poolDir) ([]kstat.Dataset, error) {
	var out []kstat.Dataset
	isObjset := func(name string) bool { return strings.HasPrefix(name, "objset-") }
	err := p.each(dirs, isObjset, func(_ string, data []byte) error {
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
	dirs, err := p.poolDirs()
	states := map[string]string{}
	return states, errors.Join(err, p.each(dirs, fileNamed("state"), func(pool string, data []byte) error {
		state, err := kstat.ParsePoolState(bytes.NewReader(data))
		states[pool] = state
		return err
	}))
}

// poolDir is a pool's kstat directory and the names of its files.
type poolDir struct {
	pool  string
	files []string
}

// poolDirs lists the pools' directories and their files, in order: each
// directory is read once, where a glob for each kind of file read the
// root again and looked for that file in every entry.
func (p procfsKstats) poolDirs() ([]poolDir, error) {
	entries, err := fs.ReadDir(p.fsys, ".")
	if err != nil {
		return nil, err
	}
	var dirs []poolDir
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, err := fs.ReadDir(p.fsys, e.Name())
		if errors.Is(err, fs.ErrNotExist) {
			continue // exported since the listing
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name()
		}
		dirs = append(dirs, poolDir{pool: e.Name(), files: names})
	}
	return dirs, errors.Join(errs...)
}

// fileNamed matches the file called name.
func fileNamed(name string) func(string) bool {
	return func(file string) bool { return file == name }
}

// each calls fn with the pool and contents of every file of dirs that
// match; a file gone since the listing is skipped.
func (p procfsKstats) each(dirs []poolDir, match func(file string) bool, fn func(pool string, data []byte) error) error {
	var errs []error
	for _, d := range dirs {
		for _, file := range d.files {
			if !match(file) {
				continue
			}
			path := d.pool + "/" + file
			data, err := fs.ReadFile(p.fsys, path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err == nil {
				err = fn(d.pool, data)
			}
			if err != nil {
				errs = append(errs, parse.WithSource(err, path))
			}
		}
	}
	return errors.Join(errs...)
}
