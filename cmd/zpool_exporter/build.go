package main

import (
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/demo"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// wiring is the exporter as its flags put it together: the collectors
// over the ZFS client and its runner (real or replay), the samplers that
// run beside them, and the registry of the exporter's own metrics. A
// server (serve) and --once (once) run it.
type wiring struct {
	o        options
	logger   *slog.Logger
	missing  *notInstalled // hears of the commands found not installed
	exporter *collector.Exporter
	client   *zfs.Client
	// snapshots lists snapshots, when they are listed: in the background
	// as one of the samplers, or once before the only scrape of --once.
	snapshots *collector.SnapshotLister
	// samplers wait until a collector needs them; none with --once or
	// when turned off.
	samplers []namedSampler
	// events follows the kernel's ZFS events, when the events collector
	// runs; nil otherwise, and with --once.
	events *collector.EventFollower
	base   *prometheus.Registry
}

// build wires the exporter as o says.
func build(o options, logger *slog.Logger) (*wiring, error) {
	w := &wiring{o: o, logger: logger, missing: &notInstalled{logger: logger, zpool: o.zpool, zfs: o.zfs}}
	if err := w.buildCollectors(); err != nil {
		return nil, err
	}
	w.base = prometheus.NewRegistry()
	w.base.MustRegister(versioncollector.NewCollector("zfs_exporter"))
	if !o.disableExporterMetrics && !o.once {
		w.base.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return w, nil
}

// buildCollectors wires the runner, the ZFS client, the samplers and the
// collectors.
func (w *wiring) buildCollectors() error {
	o, logger := w.o, w.logger
	var (
		run    runner.Runner
		stream collector.StreamFunc
		kstats fs.FS // nil for the demo: zfs-fuse has none
	)
	// A replay's steps move on every --zpool.replay-step, looping, and its
	// streams repeat their capture every --zpool.iostat-interval, as zpool
	// iostat would.
	replayOptions := runner.ReplayOptions{StepEvery: o.replayStep, Loop: true, StreamEvery: o.iostatInterval, Logger: logger}
	switch {
	case o.demo:
		replay, err := runner.NewReplayFS(demo.Replay(), demo.Dir, replayOptions)
		if err != nil {
			return err
		}
		run, stream = replay, replay.StartStream
		logger.Info("demo: serving captured zpool outputs instead of running zpool: "+demo.Story,
			"steps", replay.NumSteps(), "step_every", o.replayStep)
	case o.replayDir != "":
		replay, err := runner.NewReplayWithOptions(o.replayDir, replayOptions)
		if err != nil {
			return err
		}
		run, stream = replay, replay.StartStream
		// A replay's kstats are its own, and may move with its steps.
		if dir, ok := replay.Dir("kstat"); ok {
			kstats = dir
		}
		logger.Info("serving captured zpool outputs instead of running zpool", "dir", o.replayDir)
	default:
		commands := runner.NewExec(runner.ExecOptions{})
		run, stream = commands, commands.StartStream
		kstats = hostKstats(o.kstatPath)
	}
	var (
		zpoolIostat *collector.IostatSampler
		diskIostat  *collector.OSIostatSampler
	)
	if o.iostatInterval > 0 && !o.once {
		zpoolIostat = collector.NewIostatSampler(o.zpool, o.iostatInterval, stream, run, logger.With("sampler", "zpool iostat"))
		w.samplers = append(w.samplers, namedSampler{"the zpool iostat stream", zpoolIostat})
	}
	if o.diskIostatInterval > 0 && !o.once && !o.demo && collector.UsesOSIostat(runtime.GOOS) {
		diskIostat = collector.NewOSIostatSampler(runtime.GOOS, o.diskIostatInterval, stream, run, logger.With("sampler", "iostat"))
		w.samplers = append(w.samplers, namedSampler{"the iostat stream", diskIostat})
	}
	zfsConfig := zfs.Config{Runner: run, Zpool: o.zpool, Zfs: o.zfs, Kstat: kstats}
	if o.demo {
		// zfs-fuse has no kstats: none are read, on any system.
		zfsConfig.KstatOS = "linux"
	}
	w.client = zfs.New(zfsConfig, logger)
	if o.snapshotInterval > 0 {
		w.snapshots = collector.NewSnapshotLister(w.client, o.snapshotInterval, o.perSnapshot, logger.With("sampler", "zfs list -t snapshot"))
		if !o.once {
			w.samplers = append(w.samplers, namedSampler{"the snapshot listing", w.snapshots})
		}
	}
	enabled := o.enabledCollectors()
	if enabled["events"] && !o.once {
		w.events = collector.NewEventFollower(o.zpool, stream, run, logger.With("sampler", "zpool events"))
		w.samplers = append(w.samplers, namedSampler{"the zpool events stream", w.events})
	}
	cfg := collector.Config{ZFS: w.client, Runner: run, Sampler: zpoolIostat, DiskSampler: diskIostat, DiskAll: o.diskAll,
		DatasetInclude: o.datasetInclude, DatasetExclude: o.datasetExclude, DatasetDepth: o.datasetDepth, DatasetMax: o.datasetMax,
		Snapshots: w.snapshots, Events: w.events, Latency: o.latency, NotInstalled: w.missing.tell}
	if o.replayDir != "" {
		// A replay's disks, if it has any, are laid out like the host's.
		cfg.ProcRoot = filepath.Join(o.replayDir, "proc")
		cfg.SysRoot = filepath.Join(o.replayDir, "sys")
		cfg.DevRoot = filepath.Join(o.replayDir, "dev")
	}
	if o.demo {
		// The demo's pool is not on this host: the host's disks and CPU
		// would mix its figures into the story.
		enabled["disk"], enabled["cpu"] = false, false
	}
	var err error
	w.exporter, err = collector.New(cfg, logger, enabled)
	return err
}

// hostKstats is the kstat directory, or nil when it does not exist.
func hostKstats(dir string) fs.FS {
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil
	}
	return os.DirFS(dir)
}
