package collector

import (
	"regexp"
	"runtime"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// Config is what the collectors read: ZFS through its client, and the
// operating system's disks and CPU, which are not ZFS.
type Config struct {
	// ZFS reads zpool and the kernel's ZFS statistics; required.
	ZFS *zfs.Client
	// Runner runs the operating system's commands (ps for the ZFS
	// threads' CPU, glabel on FreeBSD); required. It is the client's
	// runner, so that one runner keeps every command line to one process,
	// and its per-command counts, exported when it keeps them, count
	// zpool's commands too.
	Runner runner.Runner
	// Sampler integrates a long-running `zpool iostat -v INTERVAL` into
	// counters where vdev properties are not available. Nil disables it.
	Sampler *IostatSampler
	// ProcRoot, SysRoot and DevRoot are where procfs, sysfs and /dev are
	// mounted ("/proc", "/sys", "/dev" unless set): the disk collector reads
	// diskstats and resolves vdev paths under them, the cpu collector reads
	// the host's and the ZFS threads' CPU time.
	ProcRoot string
	SysRoot  string
	DevRoot  string
	// DiskAll makes the disk collector also report disks that back no
	// pool, with empty pool and vdev labels.
	DiskAll bool
	// DiskOS chooses how the disk collector reads disks: "linux"
	// (/proc/diskstats under ProcRoot), or "illumos", "solaris" and
	// "freebsd" (DiskSampler). The host's OS unless set.
	DiskOS string
	// DiskSampler integrates a long-running `iostat -x INTERVAL` into
	// per-disk counters on illumos, Solaris and FreeBSD. Nil there leaves
	// the disk collector without data.
	DiskSampler *OSIostatSampler
	// DatasetInclude and DatasetExclude choose the datasets the dataset
	// collector exports by name (nil: every one, none), DatasetDepth by
	// how many levels below its pool's root dataset it lies at most (0:
	// any depth); DatasetMax caps how many it exports (0: no cap).
	DatasetInclude, DatasetExclude *regexp.Regexp
	DatasetDepth                   int
	DatasetMax                     int
	// Snapshots lists snapshots in the background for the dataset
	// collector. Nil: no snapshot series.
	Snapshots *SnapshotLister
	// Events follows the kernel's ZFS events for the events collector. Nil
	// leaves it without data.
	Events *EventFollower
	// Latency is what the vdev_latency collector sends beyond its default.
	Latency LatencyDetail
	// CPUOS chooses how the cpu collector finds the ZFS threads: "linux"
	// (procfs), "freebsd", "illumos" or "solaris" (ps). The host's OS
	// unless set.
	CPUOS string
	// NotInstalled, if set, hears of each collector failure whose command
	// is not installed (runner.ErrNotFound) in place of the log: such a
	// failure repeats for every collector that runs the command at every
	// scrape, and is best told once, with what to do about it.
	NotInstalled func(error)
}

func (cfg Config) withDefaults() Config {
	if cfg.DiskOS == "" {
		cfg.DiskOS = runtime.GOOS
	}
	if cfg.CPUOS == "" {
		cfg.CPUOS = runtime.GOOS
	}
	if cfg.ProcRoot == "" {
		cfg.ProcRoot = "/proc"
	}
	if cfg.SysRoot == "" {
		cfg.SysRoot = "/sys"
	}
	if cfg.DevRoot == "" {
		cfg.DevRoot = "/dev"
	}
	return cfg
}
