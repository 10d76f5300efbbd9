// Command zpool_exporter exports ZFS pool and vdev health, scrub and
// resilver progress and per-vdev I/O to Prometheus.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/benchmetrics"
	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/cliflag"
	"github.com/zpool-exporter/zpool_exporter/internal/demo"
	"github.com/zpool-exporter/zpool_exporter/internal/gzipresponse"
	"github.com/zpool-exporter/zpool_exporter/internal/history"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/statuspage"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

const defaultListenAddress = ":9134"

type options struct {
	metricsPath            string
	zpool                  string
	zpoolSet               bool // --zpool.command was given
	zfsSet                 bool // --zfs.command was given
	kstatPathSet           bool // --kstat.path was given
	demo                   bool
	replayDir              string
	replayStep             time.Duration
	replayStepSet          bool
	kstatPath              string
	diskAll                bool
	zfs                    string
	datasetInclude         *regexp.Regexp
	datasetExclude         *regexp.Regexp
	datasetMax             int
	datasetDepth           int
	snapshotInterval       time.Duration
	perSnapshot            bool
	latency                collector.LatencyDetail
	scrapeTimeout          time.Duration
	timeoutOffset          time.Duration
	iostatInterval         time.Duration
	iostatIntervalSet      bool
	diskIostatInterval     time.Duration
	once                   bool
	output                 string
	disableExporterMetrics bool
	benchmarkAPI           bool
	benchmarkRetention     model.Duration
	benchmarkMaxWindow     model.Duration
	historyInterval        time.Duration
	historyRetention       time.Duration
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	app := kingpin.New("zpool_exporter", "Prometheus exporter for ZFS: pool and vdev health, error counters, scrub and resilver progress, and per-vdev I/O counters, read from the zpool command.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	var o options
	webConfig := kingpinflag.AddFlags(app, defaultListenAddress)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").
		Default("/metrics").StringVar(&o.metricsPath)
	app.Flag("web.disable-exporter-metrics", "Leave out the exporter's own Go runtime and process metrics (go_*, process_*).").
		BoolVar(&o.disableExporterMetrics)
	app.Flag("web.enable-benchmark-api", "Serve the benchmark window API at "+benchwindow.Path+": a benchmark runner POSTs when a run (bonnie++, fio, dd...) starts and ends, and each window is exported as zfs_benchmark_window_* metrics for dashboard annotations and listed on the status page. Whoever reaches the exporter can then write windows: the API sits behind --web.config.file's TLS and basic authentication, like every other path. Not with --once.").
		BoolVar(&o.benchmarkAPI)
	app.Flag("benchmark.retention", "How long ended benchmark windows stay in the metrics and the API (running ones stay until they end or expire, see --benchmark.max-window-duration; at most 1000 are kept). A week lets Prometheus scrape every window's end many times and keeps a campaign of runs over a weekend listed for its report, at three series per window.").
		Default("7d").SetValue(&o.benchmarkRetention)
	app.Flag("benchmark.max-window-duration", "End a benchmark window that has run this long, marked expired: its runner died without ending it (killed, or the client machine that ran a benchmark over SMB or iSCSI went down), and dashboards and the history would otherwise treat the pool as under benchmark for ever. 0 keeps running windows until they end.").
		Default("1d").SetValue(&o.benchmarkMaxWindow)
	app.Flag("benchmark.history-interval", "With --web.enable-benchmark-api, how often the exporter samples the metrics a benchmark report reads (vdev bytes and operations, pool and vdev state, host and ZFS CPU, ARC hits) for "+history.Path+", so that a report needs no Prometheus server. It samples only while a benchmark window runs and for a minute after the last one ended, and at once when one starts or ends; otherwise it costs nothing.").
		Default("1s").DurationVar(&o.historyInterval)
	app.Flag("benchmark.history-retention", fmt.Sprintf("With --web.enable-benchmark-api, how long the samples of --benchmark.history-interval are kept in memory, within %d samples (about %d MiB, the oldest going first) and %d series; the README tells how long that lasts for a given pool.", history.DefaultMaxSamples, history.DefaultMaxSamples*history.BytesPerSample>>20, history.DefaultMaxSeries)).
		Default("1h").DurationVar(&o.historyRetention)
	app.Flag("zpool.command", "The zpool command to run: a name looked up in PATH, or a path.").
		Default("zpool").IsSetByUser(&o.zpoolSet).StringVar(&o.zpool)
	app.Flag("demo", "Serve the demo built into the binary instead of running zpool, to see the exporter without ZFS: a raidz1 loses a disk and resilvers (see the README).").
		BoolVar(&o.demo)
	app.Flag("zpool.replay-dir", "Serve captured zpool outputs from this directory instead of running zpool (for demos, tests and offline analysis; the format is in the README).").
		PlaceHolder("DIR").StringVar(&o.replayDir)
	app.Flag("zpool.replay-step", "With --zpool.replay-dir holding numbered steps (000/, 001/, ...), or --demo, move to the next step this often, looping at the end; 0 stays at the first step.").
		Default("0s").IsSetByUser(&o.replayStepSet).DurationVar(&o.replayStep)
	app.Flag("kstat.path", "Directory of the kernel's ZFS kstats (Linux). With --zpool.replay-dir, its kstat/ subdirectory is used instead.").
		Default("/proc/spl/kstat/zfs").IsSetByUser(&o.kstatPathSet).StringVar(&o.kstatPath)
	app.Flag("collector.disk.all", "Export every physical disk, not only those that back a pool (their pool and vdev labels are empty).").
		BoolVar(&o.diskAll)
	app.Flag("zfs.command", "The zfs command the dataset collector runs: a name looked up in PATH, or a path.").
		Default("zfs").IsSetByUser(&o.zfsSet).StringVar(&o.zfs)
	app.Flag("collector.dataset.include", "Export only the datasets whose name matches this regular expression (unanchored).").
		PlaceHolder("REGEX").RegexpVar(&o.datasetInclude)
	app.Flag("collector.dataset.exclude", "Leave out the datasets whose name matches this regular expression (unanchored).").
		PlaceHolder("REGEX").RegexpVar(&o.datasetExclude)
	app.Flag("collector.dataset.max", "Export at most this many datasets, the first in zfs's order after the patterns, and count the rest in zfs_exporter_datasets_left_out; 0 exports all.").
		Default("2000").IntVar(&o.datasetMax)
	app.Flag("collector.dataset.depth", "Export only the datasets at most this many levels below their pool's root dataset (1: the root and its children); 0 exports every depth.").
		Default("0").IntVar(&o.datasetDepth)
	app.Flag("collector.dataset.snapshot-interval", "How often the dataset collector lists snapshots, in the background (scrapes read the last listing); 0 lists none.").
		Default("5m").DurationVar(&o.snapshotInterval)
	app.Flag("collector.dataset.per-snapshot", "Also export each snapshot's space and creation time: a series per snapshot of the exported datasets.").
		BoolVar(&o.perSnapshot)
	app.Flag("collector.vdev_latency.full-resolution", "Keep all of zpool's histogram buckets (37 for latency, 16 for request sizes) instead of every second one: 25 more series per latency histogram, 8 per request-size one.").
		BoolVar(&o.latency.FullResolution)
	app.Flag("collector.vdev_latency.queue-wait", "Also export the wait in ZFS's queue of each I/O class (zfs_vdev_queue_wait_seconds) of every vdev, and the total wait of leaves: 98 more series per vdev, 126 per leaf.").
		BoolVar(&o.latency.QueueWait)
	app.Flag("collector.vdev_latency.request-sizes", "Also export the sizes of the I/Os ZFS issued (zfs_vdev_request_size_bytes), from one more zpool iostat -r per scrape: 140 more series per vdev.").
		BoolVar(&o.latency.RequestSizes)
	app.Flag("collector.vdev_latency.queue-lengths", "Also export the lengths of ZFS's queues (zfs_vdev_queue_pending and _active), from one more zpool iostat -q per scrape: 14 more series per vdev.").
		BoolVar(&o.latency.QueueLengths)
	app.Flag("collector.vdev_latency.interior-vdevs", "Also export the histograms of the spare-N and replacing-N vdevs that stand between a top-level vdev and its leaves during a resilver.").
		BoolVar(&o.latency.InteriorVdevs)
	app.Flag("collector.vdev_latency.max-vdevs", "Export the histograms and queue lengths of at most this many vdevs (pools, top-level vdevs and leaves), the first in zpool's order, and count the rest in zfs_exporter_vdev_latency_left_out; 0 exports all.").
		Default("500").IntVar(&o.latency.MaxVdevs)
	app.Flag("scrape.timeout", "Longest a scrape may take. zpool commands still running then are killed, and their metrics are missing from that scrape; a shorter scrape timeout sent by Prometheus wins.").
		Default("10s").DurationVar(&o.scrapeTimeout)
	app.Flag("scrape.timeout-offset", "Time taken off Prometheus's scrape timeout, so that the answer arrives before Prometheus gives up; at least the default.").
		Default(budget.TimeoutOffset.String()).DurationVar(&o.timeoutOffset)
	app.Flag("zpool.iostat-interval", "Interval of the long-running `zpool iostat -v` that gives per-vdev I/O counters where vdev properties are missing (OpenZFS before 2.2, FreeBSD, illumos, Solaris, zfs-fuse). 0 turns it off.").
		Default("10s").IsSetByUser(&o.iostatIntervalSet).DurationVar(&o.iostatInterval)
	app.Flag("disk.iostat-interval", "Interval, in whole seconds, of the long-running `iostat -x` that gives the disk collector its per-disk counters, queues and service times on illumos and Solaris (`iostat -xnc`, whose CPU block is also the host CPU there) and FreeBSD (`iostat -x -w`); it runs only while the disk collector, or on illumos and Solaris the cpu collector, is enabled. Figures arrive one interval late, as iostat marks no end of a report. 0 turns it off.").
		Default("10s").DurationVar(&o.diskIostatInterval)
	app.Flag("once", "Print one exposition to standard output (or to --output) and exit, for cron jobs and node_exporter's textfile collector.").
		BoolVar(&o.once)
	app.Flag("output", "With --once, write the exposition to this file instead, atomically (a temporary file renamed over it).").
		PlaceHolder("FILE").StringVar(&o.output)
	logConfig := &promslog.Config{Writer: stderr}
	flag.AddFlags(app, logConfig)
	collector.AddFlags(app)
	app.Version(version.Print("zpool_exporter"))
	app.HelpFlag.Short('h')
	if _, err := cliflag.Parse(app, args); err != nil {
		fmt.Fprintf(stderr, "zpool_exporter: %v; try --help\n", err)
		return 2
	}
	logger := promslog.New(logConfig)
	if err := o.check(webConfig); err != nil {
		fmt.Fprintf(stderr, "zpool_exporter: %v; try --help\n", err)
		return 2
	}
	if o.demo {
		if err := o.forDemo(); err != nil {
			fmt.Fprintf(stderr, "zpool_exporter: %v; try --help\n", err)
			return 2
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	missing := &notInstalled{logger: logger, zpool: o.zpool, zfs: o.zfs}
	exporter, client, snapshots, samplers, err := buildExporter(o, missing, logger)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}
	base := prometheus.NewRegistry()
	base.MustRegister(versioncollector.NewCollector("zfs_exporter"))
	if !o.disableExporterMetrics && !o.once {
		base.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}

	if o.once {
		return runOnce(ctx, o, exporter, snapshots, base, missing, stdout, logger)
	}
	// Everything that may run a command runs under work and is tracked, so
	// that shutdown can end its commands and wait for them.
	work, quit := context.WithCancel(ctx)
	defer quit()
	var running tasks
	// /metrics, the status page and the benchmark history read the
	// collectors through one shared gather: a collector refuses to run
	// twice at once. A gather outlives the reader that started it (others
	// may join it), so shutdown, not its readers, ends it.
	shared := collector.NewShared(func(ctx context.Context) collector.Reading {
		defer running.track("a scrape")()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(work, cancel)()
		return exporter.Gather(ctx)
	})
	var (
		windows  *benchwindow.Store
		recorder *history.Recorder
	)
	if o.benchmarkAPI {
		windows = benchwindow.NewStore(benchwindow.Options{Retention: time.Duration(o.benchmarkRetention),
			MaxDuration: time.Duration(o.benchmarkMaxWindow)})
		recorder = history.NewRecorder(history.Options{
			Gather:    shared.Metrics,
			Metrics:   benchmetrics.Families,
			Select:    benchmetrics.TopLevelLatency,
			Activity:  windows.Activity,
			Interval:  o.historyInterval,
			Retention: o.historyRetention,
			Timeout:   o.scrapeTimeout,
			Logger:    logger,
		})
		// The history reads at once when a window starts or ends.
		windows.OnChange(recorder.Wake)
		base.MustRegister(benchwindow.NewCollector(windows))
		running.Go("the benchmark history", func() { recorder.Run(work) })
	}

	logger.Info("starting zpool_exporter", "version", version.Info(), "build_context", version.BuildContext(),
		"collectors", exporter.Enabled())
	detectCapabilities(work, client, o.scrapeTimeout, missing, logger)
	for _, s := range samplers {
		running.Go(s.name, func() { s.Run(work) })
	}

	mux := http.NewServeMux()
	mux.Handle(o.metricsPath, gzipresponse.New(&metricsHandler{shared: shared, base: base, timeout: o.scrapeTimeout, offset: o.timeoutOffset, logger: logger}, 2))
	// For service managers and load balancers: answers without running zpool.
	mux.HandleFunc(healthPath, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "Healthy\n")
	})
	if windows != nil {
		mux.Handle(benchmarkAPIPath, benchwindow.Handler(windows, logger))
		mux.Handle(history.Path, history.Handler(recorder))
		logger.Info("benchmark window API on", "path", benchwindow.Path, "retention", o.benchmarkRetention,
			"history", history.Path, "history_interval", o.historyInterval, "history_retention", o.historyRetention)
	} else {
		mux.Handle(benchmarkAPIPath, benchwindow.NotEnabled("the benchmark window API is off; start zpool_exporter with --web.enable-benchmark-api to turn it on"))
	}
	if o.metricsPath != "/" {
		host, _ := os.Hostname()
		shown := version.Version
		if shown == "" {
			shown = "(built without a version; see --version)"
		}
		opts := statuspage.Options{
			Name:        host,
			Version:     shown,
			MetricsPath: o.metricsPath,
			Refresh:     time.Second,
			Timeout:     o.scrapeTimeout,
			MinAge:      500 * time.Millisecond,
			Logger:      logger,
		}
		if windows != nil {
			opts.Windows = windows.List
		}
		mux.Handle("/", statuspage.New(pageReading(shared, missing), opts))
	}
	// Requests run under work too: at shutdown the scrapes in flight end
	// with their commands rather than at their deadline.
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return work }}
	served := make(chan error, 1)
	go func() { served <- web.ListenAndServe(server, webConfig, logger) }()
	code := 0
	select {
	case <-work.Done():
		logger.Info("shutting down", "reason", context.Cause(ctx))
	case err := <-served:
		logger.Error("web server failed", "err", err)
		code = 1
	}
	quit()
	shutdown(server, &running, shutdownWait, logger)
	return code
}

// detectCapabilities asks zpool what it can do, so that the log says so
// at start, or that zpool is not installed and what to do about it; a
// zpool that hangs now is asked again at the first scrape.
func detectCapabilities(ctx context.Context, client *zfs.Client, timeout time.Duration, missing *notInstalled, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := client.Capabilities(ctx)
	switch {
	case errors.Is(err, runner.ErrNotFound):
		missing.tell(err)
	case err != nil:
		logger.Warn("cannot detect zpool capabilities yet; will retry at the next scrape", "err", err)
	}
}

// shutdownWait bounds how long shutdown waits for requests to end and for
// the commands in flight to be killed and reaped: a zpool stuck in the
// kernel cannot be reaped, and must not hold the exporter.
const shutdownWait = 5 * time.Second

// shutdown stops the web server and waits, at most wait in all, for the
// tracked tasks, whose context is done, to end their commands, so that no
// child of the exporter outlives it: outside a service manager that kills
// the whole cgroup, a stream such as zpool iostat -v 10 would run on under
// init for ever.
func shutdown(server *http.Server, running *tasks, wait time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := server.Shutdown(ctx); err != nil {
		logger.Warn("requests still open at shutdown", "err", err)
	}
	if left := running.Wait(ctx); len(left) > 0 {
		logger.Warn("exiting before these ended the commands they run, which may outlive the exporter (a zpool stuck in the kernel?)",
			"running", strings.Join(left, ", "), "waited", wait)
	}
}

// tasks tracks the goroutines that may run commands, by what they do.
type tasks struct {
	mu      sync.Mutex
	running map[string]int
	ended   chan struct{} // closed, and replaced, whenever a task ends
}

// Go runs f in a goroutine, tracked as name.
func (t *tasks) Go(name string, f func()) {
	done := t.track(name)
	go func() {
		defer done()
		f()
	}()
}

// track counts a task as running until the returned function is called.
func (t *tasks) track(name string) func() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.running == nil {
		t.running = map[string]int{}
		t.ended = make(chan struct{})
	}
	t.running[name]++
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.running[name]--; t.running[name] == 0 {
			delete(t.running, name)
		}
		close(t.ended)
		t.ended = make(chan struct{})
	}
}

// Wait waits until no task runs or ctx ends, and returns what still runs.
func (t *tasks) Wait(ctx context.Context) []string {
	for {
		t.mu.Lock()
		var left []string
		for name, n := range t.running {
			if n > 1 {
				name = fmt.Sprintf("%s (%d)", name, n)
			}
			left = append(left, name)
		}
		ended := t.ended
		t.mu.Unlock()
		if len(left) == 0 {
			return nil
		}
		select {
		case <-ended:
		case <-ctx.Done():
			slices.Sort(left)
			return left
		}
	}
}

// sampler is a long-running stream reader. Run returns when ctx ends, once
// the stream's process has been killed and reaped.
type sampler interface{ Run(ctx context.Context) }

// namedSampler is a sampler with what shutdown calls it in the log.
type namedSampler struct {
	name string
	sampler
}

// forDemo checks that nothing asks the demo for a ZFS of its own, and sets
// the pace its captures are made for where not given.
func (o *options) forDemo() error {
	switch {
	case o.replayDir != "":
		return fmt.Errorf("--demo serves the replay built into the binary and --zpool.replay-dir=%s another: give one or the other", o.replayDir)
	case o.zpoolSet:
		return fmt.Errorf("--demo runs no zpool: give --demo or --zpool.command=%s, not both", o.zpool)
	case o.zfsSet:
		return fmt.Errorf("--demo runs no zfs: give --demo or --zfs.command=%s, not both", o.zfs)
	case o.kstatPathSet:
		return fmt.Errorf("--demo reads no kstats of this host: give --demo or --kstat.path=%s, not both", o.kstatPath)
	}
	if !o.replayStepSet {
		o.replayStep = demo.StepEvery
	}
	if !o.iostatIntervalSet {
		o.iostatInterval = demo.IostatInterval
	}
	return nil
}

// buildExporter wires the runner (real or replay), the ZFS client and the
// collectors, and returns the snapshot lister, if snapshots are listed,
// and the samplers to run: none with --once (which lists snapshots once,
// itself) or when turned off. A sampler waits until a collector needs it.
// missing hears of the commands found not installed.
func buildExporter(o options, missing *notInstalled, logger *slog.Logger) (*collector.Exporter, *zfs.Client, *collector.SnapshotLister, []namedSampler, error) {
	var (
		run    runner.Runner
		stream collector.StreamFunc
	)
	// A replay's steps move on every --zpool.replay-step, looping, and its
	// streams repeat their capture every --zpool.iostat-interval, as zpool
	// iostat would.
	replayOptions := runner.ReplayOptions{StepEvery: o.replayStep, Loop: true, StreamEvery: o.iostatInterval, Logger: logger}
	switch {
	case o.demo:
		replay, err := runner.NewReplayFS(demo.Replay(), demo.Dir, replayOptions)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		run, stream = replay, replay.StartStream
		logger.Info("demo: serving captured zpool outputs instead of running zpool: "+demo.Story,
			"steps", replay.NumSteps(), "step_every", o.replayStep)
	case o.replayDir != "":
		replay, err := runner.NewReplayWithOptions(o.replayDir, replayOptions)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		run, stream = replay, replay.StartStream
		logger.Info("serving captured zpool outputs instead of running zpool", "dir", o.replayDir)
	default:
		commands := runner.NewExec(runner.ExecOptions{})
		run, stream = commands, commands.StartStream
	}
	var (
		samplers    []namedSampler
		zpoolIostat *collector.IostatSampler
		diskIostat  *collector.OSIostatSampler
	)
	if o.iostatInterval > 0 && !o.once {
		zpoolIostat = collector.NewIostatSampler(o.zpool, o.iostatInterval, stream, run, logger.With("sampler", "zpool iostat"))
		samplers = append(samplers, namedSampler{"the zpool iostat stream", zpoolIostat})
	}
	if o.diskIostatInterval > 0 && !o.once && !o.demo && collector.UsesOSIostat(runtime.GOOS) {
		diskIostat = collector.NewOSIostatSampler(runtime.GOOS, o.diskIostatInterval, stream, run, logger.With("sampler", "iostat"))
		samplers = append(samplers, namedSampler{"the iostat stream", diskIostat})
	}
	zfsConfig := zfs.Config{Runner: run, Zpool: o.zpool, Zfs: o.zfs, Kstat: kstatFS(o)}
	if o.demo {
		// zfs-fuse has no kstats: none are read, on any system.
		zfsConfig.KstatOS = "linux"
	}
	client := zfs.New(zfsConfig, logger)
	var snapshots *collector.SnapshotLister
	if o.snapshotInterval > 0 {
		snapshots = collector.NewSnapshotLister(client, o.snapshotInterval, o.perSnapshot, logger.With("sampler", "zfs list -t snapshot"))
		if !o.once {
			samplers = append(samplers, namedSampler{"the snapshot listing", snapshots})
		}
	}
	cfg := collector.Config{ZFS: client, Runner: run, Sampler: zpoolIostat, DiskSampler: diskIostat, DiskAll: o.diskAll,
		DatasetInclude: o.datasetInclude, DatasetExclude: o.datasetExclude, DatasetDepth: o.datasetDepth, DatasetMax: o.datasetMax,
		Snapshots: snapshots, Latency: o.latency, NotInstalled: missing.tell}
	if o.replayDir != "" {
		// A replay's disks, if it has any, are laid out like the host's.
		cfg.ProcRoot = filepath.Join(o.replayDir, "proc")
		cfg.SysRoot = filepath.Join(o.replayDir, "sys")
		cfg.DevRoot = filepath.Join(o.replayDir, "dev")
	}
	var enabled map[string]bool // nil: as the flags say
	if o.demo {
		// The demo's pool is not on this host: the host's disks and CPU
		// would mix its figures into the story.
		enabled = collector.FlagsEnabled()
		enabled["disk"], enabled["cpu"] = false, false
	}
	exporter, err := collector.New(cfg, logger, enabled)
	return exporter, client, snapshots, samplers, err
}

// kstatFS is the kstat directory, or nil when it does not exist or the
// demo runs.
func kstatFS(o options) fs.FS {
	if o.demo {
		return nil
	}
	dir := o.kstatPath
	if o.replayDir != "" {
		dir = filepath.Join(o.replayDir, "kstat")
	}
	if info, err := os.Stat(dir); err != nil || !info.IsDir() {
		return nil
	}
	return os.DirFS(dir)
}

// metricsHandler gathers a fresh scrape per request, under a deadline taken
// from Prometheus's scrape timeout header and --scrape.timeout; a request
// that comes while another reader's gather runs shares it.
type metricsHandler struct {
	shared  *collector.Shared
	base    prometheus.Gatherer
	timeout time.Duration
	offset  time.Duration
	logger  *slog.Logger
}

func (h *metricsHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	began := time.Now()
	timeout := h.timeout
	if v := r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil {
			if t := time.Duration(secs*float64(time.Second)) - h.offset; t > 0 && t < timeout {
				timeout = t
			}
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	h.shared.ServeMetrics(ctx, w, r, h.base, h.logger)
	h.logger.Debug("scrape served", "timeout", timeout, "duration_seconds", time.Since(began).Seconds())
}

// pageReading is the status page's reading of the shared gather: its
// metrics, and the `zpool status` its collectors read.
func pageReading(shared *collector.Shared, missing *notInstalled) statuspage.ReadFunc {
	return func(ctx context.Context) statuspage.Reading {
		r, err := shared.Gather(ctx)
		if err != nil {
			// The reading's deadline came before the gather's end.
			return statuspage.Reading{Time: time.Now(), StatusErr: fmt.Errorf("reading the collectors: %w", err)}
		}
		st, err := r.Status(ctx)
		if errors.Is(err, runner.ErrNotFound) {
			err = missing.explain(err)
		}
		return statuspage.Reading{Time: r.Time, Families: r.Families(), Status: st, StatusErr: err}
	}
}

func runOnce(ctx context.Context, o options, exporter *collector.Exporter, snapshots *collector.SnapshotLister, base prometheus.Gatherer,
	missing *notInstalled, stdout io.Writer, logger *slog.Logger) int {
	// The scrape detects the capabilities itself rather than wait for a
	// detection first: zpool version runs beside the probes, and the
	// status and properties are what the probes printed.
	if snapshots != nil && slices.Contains(exporter.Enabled(), "dataset") {
		// Before the scrape, under a deadline of its own: a listing of
		// many snapshots can take all of one.
		listCtx, cancel := context.WithTimeout(ctx, o.scrapeTimeout)
		switch err := snapshots.List(listCtx); {
		case errors.Is(err, runner.ErrNotFound):
			missing.tell(err)
		case err != nil:
			logger.Warn("listing snapshots failed; no snapshot series", "err", err)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(ctx, o.scrapeTimeout)
	defer cancel()
	own, err := base.Gather()
	if err != nil {
		logger.Error("gathering metrics", "err", err)
		return 1
	}
	reading := exporter.GatherOnce(ctx)
	if reading.Err != nil {
		logger.Error("gathering metrics", "err", reading.Err)
		return 1
	}
	write := func(w io.Writer) error {
		return collector.WriteText(w, expfmt.NewFormat(expfmt.TypeTextPlain), own, reading)
	}
	if o.output == "" {
		if err := write(stdout); err != nil {
			logger.Error("writing metrics", "err", err)
			return 1
		}
		return 0
	}
	if err := writeFileAtomically(o.output, write); err != nil {
		logger.Error("writing metrics", "file", o.output, "err", err)
		return 1
	}
	return 0
}

// writeFileAtomically writes to a temporary file in the same directory and
// renames it over path, so that node_exporter never reads half a file.
func writeFileAtomically(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
