package poolconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Reader says how Read reaches a host's ZFS. Commands run through Runner;
// files are read under SysRoot and ProcRoot. The zero Reader reads this
// host.
type Reader struct {
	// Runner runs zpool, zfs and zdb: a runner.Exec unless set, or a
	// runner.Replay for captured outputs.
	Runner runner.Runner
	// Zpool, Zfs and Zdb are the commands: "zpool", "zfs" and "zdb" unless
	// set.
	Zpool, Zfs, Zdb string
	// SysRoot is where sysfs is mounted ("/sys" unless set): the Linux
	// module's version is SysRoot/module/zfs/version.
	SysRoot string
	// ProcRoot is where procfs is mounted ("/proc" unless set), searched
	// for a zfs-fuse daemon.
	ProcRoot string
	// OS is the host's operating system as GOOS names it (runtime.GOOS
	// unless set), for naming a ZFS that tells only its pool version.
	OS string
	// Timeout bounds each command (30 s unless set): a zpool or zdb that
	// hangs on a sick pool leaves that field missing, not the run waiting.
	Timeout time.Duration
	// Logger receives the detected zpool capabilities; nil discards.
	Logger *slog.Logger
}

// ErrUnknownPool is wrapped by Read's error for a pool that does not exist.
var ErrUnknownPool = errors.New("no such pool")

// Read reads the configuration of pool (of the only pool when pool is
// ""): the layout, states and classes of
// its vdevs from `zpool status`, ashift from vdev properties (OpenZFS
// 2.2+), else `zdb -C`, else the pool property; compression and recordsize
// of its root dataset from `zfs get`; and the version of ZFS. A pool that
// does not exist, or a `zpool status` that cannot be read, is an error;
// whatever else cannot be read is left empty and explained in
// Config.Missing.
func Read(ctx context.Context, r Reader, pool string) (Config, error) {
	r = r.withDefaults()
	sc := zfs.New(zfs.Config{Runner: r.Runner, Zpool: r.Zpool}, r.Logger).NewScrape()

	cctx, cancel := context.WithTimeout(ctx, r.Timeout)
	st, err := sc.Status(cctx)
	cancel()
	if err != nil {
		if pool == "" {
			return Config{}, fmt.Errorf("reading the pools' configuration: %w", err)
		}
		return Config{}, fmt.Errorf("reading the configuration of pool %s: %w", pool, err)
	}
	var p *zpool.Pool
	names := make([]string, 0, len(st.Pools))
	for _, sp := range st.Pools {
		names = append(names, sp.Name)
		if sp.Name == pool || (pool == "" && len(st.Pools) == 1) {
			p = sp
		}
	}
	if p == nil {
		sort.Strings(names)
		switch {
		case len(names) == 0:
			return Config{}, fmt.Errorf("%w %q: there are no pools", ErrUnknownPool, pool)
		case pool == "":
			return Config{}, fmt.Errorf("no pool named, and there are several: %s", strings.Join(names, ", "))
		}
		return Config{}, fmt.Errorf("%w %q: the pools are %s", ErrUnknownPool, pool, strings.Join(names, ", "))
	}
	pool = p.Name

	cfg := Config{Pool: pool, State: p.State, Vdevs: topLevelVdevs(p)}
	cfg.Layout = Layout(cfg.Vdevs)
	if cfg.Layout == "" {
		cfg.missing("layout", "zpool status printed no vdevs for the pool")
	}
	if cfg.State == "" {
		cfg.missing("state", "zpool status printed no state for the pool")
	}

	var poolProps map[string]string
	cctx, cancel = context.WithTimeout(ctx, r.Timeout)
	props, propsErr := sc.Properties(cctx)
	cancel()
	if propsErr == nil {
		poolProps = map[string]string{}
		for _, pr := range props {
			if pr.Name == pool {
				poolProps[pr.Property] = pr.Value
			}
		}
	}

	r.readAshift(ctx, sc, &cfg, poolProps, propsErr)
	r.readDataset(ctx, &cfg)
	r.readVersion(ctx, &cfg, poolProps)
	return cfg, nil
}

func (r Reader) withDefaults() Reader {
	if r.Runner == nil {
		r.Runner = runner.NewExec(runner.ExecOptions{})
	}
	if r.Zpool == "" {
		r.Zpool = "zpool"
	}
	if r.Zfs == "" {
		r.Zfs = "zfs"
	}
	if r.Zdb == "" {
		r.Zdb = "zdb"
	}
	if r.SysRoot == "" {
		r.SysRoot = "/sys"
	}
	if r.ProcRoot == "" {
		r.ProcRoot = "/proc"
	}
	if r.OS == "" {
		r.OS = runtime.GOOS
	}
	if r.Timeout <= 0 {
		r.Timeout = 30 * time.Second
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	return r
}

// run runs a command with the Reader's timeout.
func (r Reader) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	return r.Runner.Run(ctx, runner.Cmd(name, args...))
}

func (c *Config) missing(field, format string, args ...any) {
	c.Missing = append(c.Missing, field+": "+fmt.Sprintf(format, args...))
}

// hasAshift tells the classes whose vdevs allocate blocks, and so have an
// ashift, from cache devices and spares.
func hasAshift(class string) bool {
	return class != zpool.ClassCache && class != zpool.ClassSpare
}

// readAshift fills the vdevs' ashift and the pool's. Sources, best first:
// vdev properties (exact, per vdev, OpenZFS 2.2+); `zdb -C`, which prints
// each top-level vdev's ashift everywhere else (zfs-fuse, older OpenZFS,
// FreeBSD, illumos, Solaris); and last the pool property, which is only the
// default for vdevs added later and 0 when left to auto-detection.
func (r Reader) readAshift(ctx context.Context, sc *zfs.Scrape, cfg *Config, poolProps map[string]string, propsErr error) {
	var why []string
	cctx, cancel := context.WithTimeout(ctx, r.Timeout)
	vprops, ok, err := sc.VdevProperties(cctx, cfg.Pool, "ashift")
	cancel()
	switch {
	case err != nil:
		why = append(why, err.Error())
	case !ok:
		why = append(why, "no vdev properties (OpenZFS 2.2+)")
	default:
		byName := map[string]int{}
		for _, p := range vprops {
			if p.Property == "ashift" {
				if n, err := strconv.Atoi(p.Value); err == nil && n > 0 {
					byName[p.Name] = n
				}
			}
		}
		for i := range cfg.Vdevs {
			cfg.Vdevs[i].Ashift = byName[cfg.Vdevs[i].Name]
		}
	}
	if !vdevAshiftsKnown(cfg.Vdevs) {
		if err := r.zdbAshift(ctx, cfg); err != nil {
			why = append(why, err.Error())
		}
	}
	if a, ok, reason := commonAshift(cfg.Vdevs); ok {
		cfg.Ashift = a
		return
	} else if reason != "" {
		why = append(why, reason)
	}
	switch v, found := poolProps["ashift"]; {
	case propsErr != nil:
		why = append(why, propsErr.Error())
	case !found:
		why = append(why, "no ashift pool property")
	default:
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			cfg.Ashift = n
			return
		}
		why = append(why, fmt.Sprintf("the ashift pool property is %s (detected per vdev)", v))
	}
	cfg.missing("ashift", "%s", strings.Join(why, "; "))
}

// vdevAshiftsKnown reports whether every vdev that has an ashift has it
// filled in.
func vdevAshiftsKnown(vdevs []Vdev) bool {
	n := 0
	for _, v := range vdevs {
		if _, ok := kind(v); ok && hasAshift(v.Class) {
			if v.Ashift == 0 {
				return false
			}
			n++
		}
	}
	return n > 0
}

// commonAshift returns the ashift the vdevs share. When they differ, the
// reason lists them.
func commonAshift(vdevs []Vdev) (ashift int, ok bool, reason string) {
	var seen []string
	differ := false
	for _, v := range vdevs {
		if v.Ashift == 0 {
			continue
		}
		seen = append(seen, fmt.Sprintf("%s %d", v.Name, v.Ashift))
		if ashift == 0 {
			ashift = v.Ashift
		} else if ashift != v.Ashift {
			differ = true
		}
	}
	if differ {
		return 0, false, "the vdevs' ashift differs (" + strings.Join(seen, ", ") + ")"
	}
	return ashift, ashift > 0, ""
}

// zdbAshift reads the top-level vdevs' ashift from `zdb -C`.
func (r Reader) zdbAshift(ctx context.Context, cfg *Config) error {
	// The pool's name comes from zpool's output: "--" keeps it from being
	// read as an option.
	out, err := r.run(ctx, r.Zdb, "-C", "--", cfg.Pool)
	if err != nil {
		return err
	}
	zc, err := ParseZdbConfig(bytes.NewReader(out))
	if err != nil {
		return parse.WithSource(err, runner.CommandLine(r.Zdb, "-C", "--", cfg.Pool))
	}
	assignZdbAshift(cfg.Vdevs, zc.Vdevs)
	return nil
}

var vdevIDSuffixRE = regexp.MustCompile(`-([0-9]+)$`)

// assignZdbAshift gives each top-level vdev of the status the ashift of
// its zdb counterpart: an interior vdev by the id its name ends with
// ("mirror-2" is id 2), a single disk by its path. Vdevs left unmatched
// take the ashift all of zdb's vdevs share, if they share one.
func assignZdbAshift(vdevs []Vdev, zdb []ZdbVdev) {
	byID := map[int]ZdbVdev{}
	common, same := 0, true
	for _, z := range zdb {
		if z.Ashift == 0 {
			continue
		}
		byID[z.ID] = z
		if common == 0 {
			common = z.Ashift
		} else if common != z.Ashift {
			same = false
		}
	}
	for i := range vdevs {
		v := &vdevs[i]
		if !hasAshift(v.Class) || v.Ashift != 0 {
			continue
		}
		if k, ok := kind(*v); !ok {
			continue
		} else if k != "" {
			if m := vdevIDSuffixRE.FindStringSubmatch(v.Name); m != nil {
				id, _ := strconv.Atoi(m[1])
				if z, ok := byID[id]; ok && z.Children > 0 {
					v.Ashift = z.Ashift
					continue
				}
			}
		} else {
			for _, z := range byID {
				if z.Children == 0 && samePath(z.Path, v.Name) {
					v.Ashift = z.Ashift
					break
				}
			}
			if v.Ashift != 0 {
				continue
			}
		}
		if same && common > 0 {
			v.Ashift = common
		}
	}
}

var partitionSuffixRE = regexp.MustCompile(`^(-part[0-9]+|p?[0-9]+|s[0-9]+)$`)

// samePath tells whether zdb's path of a leaf is the device zpool status
// names: the same path, or its base name, possibly without the partition
// zpool hides for whole disks ("sdb" for /dev/sdb1, "ata-X" for
// /dev/disk/by-id/ata-X-part1, "c0t1d0" for /dev/dsk/c0t1d0s0).
func samePath(path, name string) bool {
	if path == "" || name == "" {
		return false
	}
	if path == name {
		return true
	}
	base := filepath.Base(path)
	if base == name {
		return true
	}
	rest, ok := strings.CutPrefix(base, name)
	return ok && partitionSuffixRE.MatchString(rest)
}

// datasetForms are the forms of `zfs get` for the root dataset's
// properties, best first: exact values, then human-readable ones, then the
// table of a zfs that takes no -H. Each ends its options with "--" before
// the first operand, as getopt without glibc's reordering (FreeBSD,
// illumos) stops there, so that the pool's name, from zpool's output, is
// never read as an option; every zfs get parses its options with getopt.
var datasetForms = [][]string{
	{"get", "-Hp", "--", "compression,recordsize"},
	{"get", "-H", "--", "compression,recordsize"},
	{"get", "--", "compression,recordsize"},
}

// readDataset reads compression and recordsize of the pool's root dataset.
func (r Reader) readDataset(ctx context.Context, cfg *Config) {
	var errs []string
	var props []zpool.Property
	for _, form := range datasetForms {
		args := append(append([]string(nil), form...), cfg.Pool)
		out, err := r.run(ctx, r.Zfs, args...)
		if err == nil {
			props, err = zpool.ParseGet(bytes.NewReader(out))
			if err != nil {
				err = parse.WithSource(err, runner.CommandLine(r.Zfs, args...))
			}
		}
		if err == nil {
			errs = nil
			break
		}
		errs = append(errs, err.Error())
		if ctx.Err() != nil {
			break
		}
	}
	if errs != nil {
		reason := strings.Join(errs, "; ")
		cfg.missing("compression", "%s", reason)
		cfg.missing("recordsize", "%s", reason)
		return
	}
	values := map[string]string{}
	for _, p := range props {
		if p.Name == cfg.Pool {
			values[p.Property] = p.Value
		}
	}
	if v := values["compression"]; v != "" && v != "-" {
		cfg.Compression = v
	} else {
		cfg.missing("compression", "zfs get printed no compression for %s", cfg.Pool)
	}
	if v, found := values["recordsize"]; !found {
		cfg.missing("recordsize", "zfs get printed no recordsize for %s", cfg.Pool)
	} else if size, ok, err := zpool.ParseSize(v); err != nil || !ok || size <= 0 {
		cfg.missing("recordsize", "zfs get printed recordsize %q", v)
	} else {
		cfg.Recordsize = int64(size)
	}
}

// readVersion names the ZFS implementation and its version. Sources, best
// first: `zfs version` (OpenZFS 0.8+ everywhere; the kernel module's
// version, the one that runs the pool, is preferred to the userland's);
// the Linux module's version in sysfs (ZFS on Linux before 0.8); and last
// `zpool upgrade -v`, which tells the pool version only (zfs-fuse,
// Solaris, illumos, FreeBSD before 13), or the pool's own version
// property. zfs-fuse is told by its daemon's process.
func (r Reader) readVersion(ctx context.Context, cfg *Config, poolProps map[string]string) {
	var why []string
	out, err := r.run(ctx, r.Zfs, "version")
	if err == nil {
		user, kernel, perr := zpool.ParseVersion(out)
		if perr != nil {
			err = parse.WithSource(perr, runner.CommandLine(r.Zfs, "version"))
		} else {
			cfg.Version = releaseName(user, kernel, r.OS)
			return
		}
	}
	why = append(why, err.Error())

	path := filepath.Join(r.SysRoot, "module", "zfs", "version")
	if content, err := os.ReadFile(path); err == nil {
		v, err := ParseModuleVersion(content)
		if err == nil {
			cfg.Version = openZFSName(v, "linux")
			return
		}
		why = append(why, path+": "+err.Error())
	} else if !errors.Is(err, os.ErrNotExist) {
		why = append(why, err.Error())
	}

	zfsFuse := r.zfsFuseRunning()
	out, err = r.run(ctx, r.Zpool, "upgrade", "-v")
	if err == nil {
		info, perr := ParseUpgradeV(out)
		if perr == nil {
			cfg.Version = poolVersionName(info, r.OS, zfsFuse)
			return
		}
		err = parse.WithSource(perr, runner.CommandLine(r.Zpool, "upgrade", "-v"))
	}
	why = append(why, err.Error())
	if v, err := strconv.Atoi(poolProps["version"]); err == nil && v > 0 {
		cfg.Version = poolVersionName(PoolVersionInfo{Version: v}, r.OS, zfsFuse)
		return
	}
	cfg.missing("version", "%s", strings.Join(why, "; "))
}

// zfsFuseRunning looks for the zfs-fuse daemon among the processes under
// ProcRoot.
func (r Reader) zfsFuseRunning() bool {
	entries, err := os.ReadDir(r.ProcRoot)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(r.ProcRoot, e.Name(), "comm"))
		if err == nil && strings.TrimSpace(string(comm)) == "zfs-fuse" {
			return true
		}
	}
	return false
}
