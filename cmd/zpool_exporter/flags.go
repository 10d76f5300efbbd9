package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/model"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/cliflag"
	"github.com/zpool-exporter/zpool_exporter/internal/demo"
)

// The exporter's other pages: the health check answers service managers
// and load balancers; the benchmark API's subtree holds the windows, or
// says that the API is off.
const (
	healthPath       = "/-/healthy"
	benchmarkAPIPath = "/api/v1/benchmark/"
)

type options struct {
	web                    *web.FlagConfig
	log                    *promslog.Config
	collectors             map[string]*bool // --[no-]collector.NAME
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
	removed                []removedFlag // given, and ignored
}

// removedFlag is a flag the exporter had and has no longer. It is still
// accepted, so that an exporter started with it still starts after an
// upgrade, and logged at start, so that it gets taken out.
type removedFlag struct {
	name  string
	why   string // what does its work now
	given bool
}

// Warning says that the flag is ignored, and why.
func (f removedFlag) Warning() string {
	return fmt.Sprintf("--%s no longer does anything: %s; remove the flag", f.name, f.why)
}

const defaultListenAddress = ":9134"

// newApp registers every flag of the exporter, into the options it
// returns: the one place a flag is added.
func newApp(stdout, stderr io.Writer) (*kingpin.Application, *options) {
	app := kingpin.New("zpool_exporter", "Prometheus exporter for ZFS: pool and vdev health, error counters, scrub and resilver progress, and per-vdev I/O counters, read from the zpool command.")
	app.UsageWriter(stdout)
	app.ErrorWriter(stderr)
	o := &options{collectors: map[string]*bool{}}
	o.web = kingpinflag.AddFlags(app, defaultListenAddress)
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").
		Default("/metrics").StringVar(&o.metricsPath)
	app.Flag("web.disable-exporter-metrics", "Leave out the exporter's own Go runtime and process metrics (go_*, process_*).").
		BoolVar(&o.disableExporterMetrics)
	app.Flag("web.enable-benchmark-api", "Serve the benchmark window API at "+benchwindow.Path+": a benchmark runner POSTs when a run (bonnie++, fio, dd...) starts and ends, and each window is exported as zfs_benchmark_window_* metrics for dashboard annotations and listed on the status page. Whoever reaches the exporter can then write windows: the API sits behind --web.config.file's TLS and basic authentication, like every other path. Not with --once.").
		BoolVar(&o.benchmarkAPI)
	app.Flag("benchmark.retention", "How long ended benchmark windows stay in the metrics and the API (running ones stay until they end or expire, see --benchmark.max-window-duration; at most 1000 are kept). A week lets Prometheus scrape every window's end many times and keeps a campaign of runs over a weekend listed for its report, at three series per window.").
		Default("7d").SetValue(&o.benchmarkRetention)
	app.Flag("benchmark.max-window-duration", "End a benchmark window that has run this long, marked expired: its runner died without ending it (killed, or the client machine that ran a benchmark over SMB or iSCSI went down), and dashboards would otherwise treat the pool as under benchmark for ever. 0 keeps running windows until they end.").
		Default("1d").SetValue(&o.benchmarkMaxWindow)
	o.removed = []removedFlag{
		{name: "benchmark.history-interval", why: "zpool_bench samples /metrics itself"},
		{name: "benchmark.history-retention", why: "zpool_bench samples /metrics itself"},
	}
	for i := range o.removed {
		app.Flag(o.removed[i].name, "Removed: "+o.removed[i].Warning()+".").Hidden().IsSetByUser(&o.removed[i].given).String()
	}
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
	o.log = &promslog.Config{Writer: stderr}
	flag.AddFlags(app, o.log)
	for _, c := range collector.Available() {
		def := "disabled"
		if c.Default {
			def = "enabled"
		}
		o.collectors[c.Name] = app.Flag("collector."+c.Name, fmt.Sprintf("%s (default: %s).", c.Help, def)).
			Default(fmt.Sprint(c.Default)).Bool()
	}
	app.Version(version.Print("zpool_exporter"))
	app.HelpFlag.Short('h')
	return app, o
}

// enabledCollectors is what the --[no-]collector.NAME flags turn on.
func (o *options) enabledCollectors() map[string]bool {
	enabled := map[string]bool{}
	for name, on := range o.collectors {
		enabled[name] = *on
	}
	return enabled
}

// parse reads args into o, checks them, and sets what --demo implies.
func (o *options) parse(app *kingpin.Application, args []string) error {
	if _, err := cliflag.Parse(app, args); err != nil {
		return err
	}
	if err := o.check(); err != nil {
		return err
	}
	if o.demo {
		return o.forDemo()
	}
	return nil
}

// check refuses, before anything starts, a flag value the exporter could
// not run with: the error names the flag and what it takes.
func (o *options) check() error {
	if err := checkTelemetryPath(o.metricsPath); err != nil {
		return cliflag.Invalid("web.telemetry-path", o.metricsPath, err.Error())
	}
	for _, addr := range *o.web.WebListenAddresses {
		if err := checkListenAddress(addr); err != nil {
			return cliflag.Invalid("web.listen-address", addr, err.Error())
		}
	}
	if f := *o.web.WebConfigFile; f != "" {
		if err := web.Validate(f); err != nil {
			return cliflag.Invalid("web.config.file", f, err.Error())
		}
	}
	for _, c := range []struct{ flag, value string }{
		{"zpool.command", o.zpool}, {"zfs.command", o.zfs}, {"kstat.path", o.kstatPath},
	} {
		if strings.TrimSpace(c.value) == "" {
			return cliflag.Invalid(c.flag, c.value, "must not be empty")
		}
	}
	if o.replayDir != "" {
		if fi, err := os.Stat(o.replayDir); err != nil {
			return cliflag.Invalid("zpool.replay-dir", o.replayDir, err.Error())
		} else if !fi.IsDir() {
			return cliflag.Invalid("zpool.replay-dir", o.replayDir, "not a directory")
		}
	}
	for _, c := range []struct {
		flag  string
		value int
	}{
		{"collector.dataset.max", o.datasetMax},
		{"collector.dataset.depth", o.datasetDepth},
		{"collector.vdev_latency.max-vdevs", o.latency.MaxVdevs},
	} {
		if c.value < 0 {
			return cliflag.Invalid(c.flag, fmt.Sprint(c.value), "must be 0 (no limit) or more")
		}
	}
	for _, c := range []struct {
		flag  string
		value time.Duration
		min   time.Duration // when not 0
		off   bool          // 0 turns it off
	}{
		{"scrape.timeout", o.scrapeTimeout, 100 * time.Millisecond, false},
		{"zpool.replay-step", o.replayStep, 100 * time.Millisecond, true},
		{"collector.dataset.snapshot-interval", o.snapshotInterval, time.Second, true},
		{"zpool.iostat-interval", o.iostatInterval, 100 * time.Millisecond, true},
		{"disk.iostat-interval", o.diskIostatInterval, time.Second, true},
	} {
		if err := checkDuration(c.value, c.min, c.off); err != nil {
			return cliflag.Invalid(c.flag, c.value.String(), err.Error())
		}
	}
	if o.timeoutOffset < budget.TimeoutOffset {
		// The scrape's graces past its deadline fit in this much (package
		// budget): with less, the answer would come after Prometheus gave up.
		return cliflag.Invalid("scrape.timeout-offset", o.timeoutOffset.String(), fmt.Sprintf("must be at least %v, the time the exporter needs to gather what its collectors have and write the answer", budget.TimeoutOffset))
	}
	if o.diskIostatInterval%time.Second != 0 {
		return cliflag.Invalid("disk.iostat-interval", o.diskIostatInterval.String(), "must be whole seconds, as iostat takes them")
	}
	if o.benchmarkRetention <= 0 {
		return cliflag.Invalid("benchmark.retention", o.benchmarkRetention.String(), "must be more than 0")
	}
	if o.output != "" && !o.once {
		return cliflag.Invalid("output", o.output, "takes effect only with --once; a server writes no file")
	}
	return nil
}

// checkDuration tells what is wrong with d for a flag whose least value
// is min, and which 0 may turn off.
func checkDuration(d, min time.Duration, off bool) error {
	switch {
	case d == 0 && off:
		return nil
	case d < 0:
		return errors.New("must not be negative")
	case d < min && off:
		return fmt.Errorf("must be 0 (off) or at least %v", min)
	case d < min:
		return fmt.Errorf("must be at least %v", min)
	}
	return nil
}

// checkTelemetryPath accepts a plain absolute path that no other page of
// the exporter serves: the mux would take anything else as a pattern of
// its own, or refuse it at start.
func checkTelemetryPath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return errors.New("must be a path beginning with /, such as /metrics")
	case strings.ContainsAny(p, " \t\r\n{}?#"):
		return errors.New("must be a plain path, without spaces, braces, ? or #")
	case p != "/" && path.Clean(p) != strings.TrimSuffix(p, "/"):
		return fmt.Errorf("must be a clean path, such as %s", path.Clean(p))
	case p == healthPath:
		return errors.New("is the health check's path")
	case p+"/" == benchmarkAPIPath || strings.HasPrefix(p, benchmarkAPIPath):
		return fmt.Errorf("is the benchmark API's (%s)", benchmarkAPIPath)
	}
	return nil
}

// checkListenAddress accepts host:port, and vsock:// addresses, which
// exporter-toolkit reads itself.
func checkListenAddress(addr string) error {
	if strings.HasPrefix(addr, "vsock://") {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return errors.New("must be host:port or :port, such as :9134 or [::1]:9134")
	}
	if _, err := net.LookupPort("tcp", port); err != nil {
		return fmt.Errorf("no such port %q", port)
	}
	// A host name is resolved once, when the server listens.
	return nil
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
