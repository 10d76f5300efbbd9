package collector

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// SourceConfig says where the zpool command is and how to sample it.
type SourceConfig struct {
	Runner runner.Runner
	Zpool  string // the zpool command, "zpool" unless told otherwise
	// Location is the time zone zpool prints dates in (the host's).
	Location *time.Location
	// Sampler integrates a long-running `zpool iostat -v INTERVAL` into
	// counters where vdev properties are not available. Nil disables it.
	Sampler *IostatSampler
	// Kstat is the kernel's ZFS kstat directory (/proc/spl/kstat/zfs on
	// Linux); nil where there is none.
	Kstat fs.FS
	// KstatOS chooses how kstats are read: "linux" (Kstat), "freebsd"
	// (sysctl), "illumos" or "solaris" (kstat -p). The host's OS unless
	// set.
	KstatOS string
	// ProcRoot, SysRoot and DevRoot are where procfs, sysfs and /dev are
	// mounted ("/proc", "/sys", "/dev" unless set): the disk collector reads
	// diskstats and resolves vdev paths under them.
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
	// Now is the clock, for tests.
	Now func() time.Time
}

// Capabilities is what this zpool can print, detected by trying the best
// form first and logged once.
type Capabilities struct {
	StatusFormat string   // "json", "exact" (status -p) or "text"
	StatusArgs   []string // the `zpool status` arguments of that format
	GetArgs      []string // the `zpool get ... all` arguments that work here; nil: `get all POOL...`
	// VdevProperties is true when `zpool get ... all-vdevs` works (OpenZFS
	// 2.2+); it can only be tried once a pool exists.
	VdevProperties      bool
	VdevPropertiesKnown bool
}

// Status formats.
const (
	StatusJSON  = "json"
	StatusExact = "exact"
	StatusText  = "text"
)

// Forms of `zpool get` for pool properties, best first: exact and
// scripted, then scripted. When neither works (zfs-fuse, old Solaris), the
// table of `zpool get all POOL...` is read, with the pools from status.
var getForms = [][]string{{"get", "-Hp", "all"}, {"get", "-H", "all"}}

// Source runs the zpool commands for the collectors and keeps what must
// outlive a scrape: capabilities and when each source last worked.
type Source struct {
	cfg    SourceConfig
	logger *slog.Logger

	detectMu sync.Mutex // held while detecting, which may take a whole scrape

	mu   sync.Mutex // guards what follows
	caps *Capabilities
	// The last detection that did not conclude, and how many did not: a
	// caller that waited for one that failed takes its error rather than
	// wait out a second one in the same scrape.
	detectErr    error
	detectFailed int
	freshness    map[string]sourceState
}

type sourceState struct {
	lastSuccess time.Time
	up          bool
}

// Source names, as the source label of the freshness metrics.
const (
	SourceStatus         = "zpool_status"
	SourceProperties     = "zpool_get"
	SourceVdevProperties = "zpool_vdev_properties"
	SourceIostatStream   = "zpool_iostat_stream"
	SourceKstatState     = "kstat_pool_state"
	SourceOSIostatStream = "os_iostat_stream" // the operating system's iostat -x
)

// zpool runs the zpool command with a deadline a little before ctx's, so
// that when it hangs (a suspended pool can hang zpool in the kernel) the
// kstat fallback still has time to answer within the deadline.
func (s *Source) zpool(ctx context.Context, args ...string) ([]byte, error) {
	if deadline, ok := ctx.Deadline(); ok {
		reserve := budget.FallbackReserve(time.Until(deadline))
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-reserve))
		defer cancel()
	}
	return s.cfg.Runner.Run(ctx, s.cfg.Zpool, args...)
}

// NewSource returns a Source; capabilities are detected on first use.
func NewSource(cfg SourceConfig, logger *slog.Logger) *Source {
	if cfg.Zpool == "" {
		cfg.Zpool = "zpool"
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.KstatOS == "" {
		cfg.KstatOS = runtime.GOOS
	}
	if cfg.DiskOS == "" {
		cfg.DiskOS = runtime.GOOS
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
	return &Source{cfg: cfg, logger: logger, freshness: map[string]sourceState{}}
}

// Capabilities detects what zpool can do, once. A detection that timed out
// is not remembered, so a zpool that hung at start is asked again later.
func (s *Source) Capabilities(ctx context.Context) (Capabilities, error) {
	caps, ok, failed, _ := s.detected()
	if ok {
		return caps, nil
	}
	s.detectMu.Lock()
	defer s.detectMu.Unlock()
	caps, ok, failedNow, lastErr := s.detected()
	if ok {
		return caps, nil
	}
	if failedNow != failed {
		return Capabilities{}, lastErr // one failed while this caller waited
	}
	detected, err := s.detect(ctx)
	if err != nil {
		s.mu.Lock()
		s.detectErr = err
		s.detectFailed++
		s.mu.Unlock()
		return Capabilities{}, err
	}
	// The source keeps its own copy, which learnVdevProperties updates
	// under mu; detected is this caller's.
	stored := detected
	s.mu.Lock()
	s.caps = &stored
	s.mu.Unlock()
	s.logger.Info("detected zpool capabilities", "status", strings.Join(detected.StatusArgs, " "),
		"properties", getDescription(detected.GetArgs))
	return detected, nil
}

// detected returns a copy of the capabilities once known (ok), and how
// many detections failed so far with the last one's error. It copies
// under mu, since learnVdevProperties updates the capabilities in place.
func (s *Source) detected() (caps Capabilities, ok bool, failed int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caps == nil {
		return Capabilities{}, false, s.detectFailed, s.detectErr
	}
	return *s.caps, true, s.detectFailed, s.detectErr
}

func (s *Source) detect(ctx context.Context) (Capabilities, error) {
	var caps Capabilities
	// The best status form whose output this exporter can also parse.
	probes := []struct {
		format string
		args   []string
		parse  func([]byte) error
	}{
		{StatusJSON, []string{"status", "-j", "--json-int"}, func(b []byte) error {
			_, err := zpool.ParseStatusJSON(bytes.NewReader(b))
			return err
		}},
		// -s adds the slow I/O column (OpenZFS 0.8+).
		{StatusExact, []string{"status", "-s", "-p"}, nil},
		{StatusExact, []string{"status", "-p"}, nil},
	}
	caps.StatusFormat, caps.StatusArgs = StatusText, []string{"status"}
	for _, p := range probes {
		out, err := s.zpool(ctx, p.args...)
		if runner.Inconclusive(ctx, err) {
			return caps, fmt.Errorf("detecting zpool capabilities: %w", err)
		}
		if err == nil && p.parse != nil {
			err = p.parse(out)
		}
		if err == nil {
			caps.StatusFormat, caps.StatusArgs = p.format, p.args
			break
		}
		s.logger.Debug("zpool status form not available", "args", strings.Join(p.args, " "), "err", err)
	}
	for _, args := range getForms {
		_, err := s.zpool(ctx, args...)
		if runner.Inconclusive(ctx, err) {
			return caps, fmt.Errorf("detecting zpool capabilities: %w", err)
		}
		if err == nil {
			caps.GetArgs = args
			break
		}
		s.logger.Debug("zpool get form not available", "args", strings.Join(args, " "), "err", err)
	}
	return caps, nil
}

// vdevProperties says whether vdev properties work here: known is false
// until a pool has been asked.
func (s *Source) vdevProperties() (available, known bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caps == nil {
		return false, false
	}
	return s.caps.VdevProperties, s.caps.VdevPropertiesKnown
}

// learnVdevProperties remembers, and logs once, whether vdev properties
// work here.
func (s *Source) learnVdevProperties(available bool, why error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.caps == nil || s.caps.VdevPropertiesKnown {
		return
	}
	s.caps.VdevPropertiesKnown, s.caps.VdevProperties = true, available
	if available {
		s.logger.Info("per-vdev I/O counters come from vdev properties")
	} else {
		s.logger.Info("vdev properties not available; per-vdev I/O counters come from a zpool iostat stream", "err", why)
	}
}

// kstatReader returns how this host's kstats are read, or nil.
func (s *Source) kstatReader() kstatReader {
	switch s.cfg.KstatOS {
	case "linux":
		if s.cfg.Kstat != nil {
			return procfsKstats{s.cfg.Kstat}
		}
	case "freebsd":
		return sysctlKstats{s.cfg.Runner}
	case "illumos", "solaris":
		return kstatPKstats{s.cfg.Runner}
	}
	return nil
}

// record notes the outcome of reading a source.
func (s *Source) record(source string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.freshness[source]
	st.up = err == nil
	if err == nil {
		st.lastSuccess = s.cfg.Now()
	}
	s.freshness[source] = st
}

var (
	sourceLastSuccessDesc = desc("exporter", "source_last_success_timestamp_seconds",
		"When a source last gave a usable answer (Unix time). A source that stops moving is stale: its metrics are missing or come from a fallback.", "source")
	sourceUpDesc = desc("exporter", "source_up",
		"1 when the last read of a source worked, 0 when it failed or timed out.", "source")
	capabilitiesDesc = desc("exporter", "capabilities_info",
		"What the zpool command of this host can print, as detected at start: status format (json, exact, text) and the source of per-vdev I/O counters.", "status_format", "vdev_io")
)

// sampledStream is a stream sampler as the freshness metrics see it.
type sampledStream interface {
	LastReport() (time.Time, bool)
	Healthy() bool
}

// streams returns the samplers that run, by their source name.
func (s *Source) streams() map[string]sampledStream {
	streams := map[string]sampledStream{}
	if s.cfg.Sampler != nil {
		streams[SourceIostatStream] = s.cfg.Sampler
	}
	if s.cfg.DiskSampler != nil {
		streams[SourceOSIostatStream] = s.cfg.DiskSampler
	}
	return streams
}

func (s *Source) collectSourceMetrics(ch chan<- prometheus.Metric) {
	for name, stream := range s.streams() {
		if t, ok := stream.LastReport(); ok {
			up := stream.Healthy()
			s.mu.Lock()
			s.freshness[name] = sourceState{lastSuccess: t, up: up}
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.freshness))
	for name := range s.freshness {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		st := s.freshness[name]
		up := 0.0
		if st.up {
			up = 1
		}
		gauge(ch, sourceUpDesc, up, name)
		if !st.lastSuccess.IsZero() {
			gauge(ch, sourceLastSuccessDesc, float64(st.lastSuccess.UnixNano())/1e9, name)
		}
	}
	if s.caps != nil {
		vdevIO := "none"
		switch {
		case s.caps.VdevPropertiesKnown && s.caps.VdevProperties:
			vdevIO = "vdev_properties"
		case s.cfg.Sampler != nil:
			vdevIO = "iostat_stream"
		}
		gauge(ch, capabilitiesDesc, 1, s.caps.StatusFormat, vdevIO)
	}
}

// Scrape memoizes the sources read during one scrape, so that collectors
// running side by side share one `zpool status`.
type Scrape struct {
	source *Source

	statusOnce sync.Once
	status     *zpool.Status
	statusErr  error

	propsOnce sync.Once
	props     []zpool.Property
	propsErr  error
}

// NewScrape starts a scrape.
func (s *Source) NewScrape() *Scrape { return &Scrape{source: s} }

// Status returns the parsed `zpool status` in the best form this zpool has.
func (sc *Scrape) Status(ctx context.Context) (*zpool.Status, error) {
	sc.statusOnce.Do(func() {
		sc.status, sc.statusErr = sc.source.readStatus(ctx)
		sc.source.record(SourceStatus, sc.statusErr)
	})
	return sc.status, sc.statusErr
}

func (s *Source) readStatus(ctx context.Context) (*zpool.Status, error) {
	caps, err := s.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	args := caps.StatusArgs
	out, err := s.zpool(ctx, args...)
	if err != nil {
		return nil, err
	}
	cmd := s.cfg.Zpool + " " + strings.Join(args, " ")
	var st *zpool.Status
	if caps.StatusFormat == StatusJSON {
		st, err = zpool.ParseStatusJSON(bytes.NewReader(out))
		if err == nil {
			// JSON carries raw scan figures only; zpool's text derives the
			// rate and time left from them and the clock, and so do we.
			now := s.cfg.Now()
			for _, p := range st.Pools {
				for i := range p.Scans {
					p.Scans[i].Estimate(now)
				}
			}
			s.fillMissingStates(ctx, st)
		}
	} else {
		st, err = zpool.ParseStatus(bytes.NewReader(out), s.cfg.Location)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing output of `%s`: %w", cmd, err)
	}
	for _, p := range st.Pools {
		for _, w := range p.Warnings {
			s.logger.Warn("skipped a line of zpool status that could not be read; the rest of the pool is reported", "command", cmd, "pool", p.Name, "problem", w)
		}
	}
	if st.Pools == nil && !bytes.Contains(out, []byte("no pools available")) && len(bytes.TrimSpace(out)) > 0 && caps.StatusFormat != StatusJSON {
		return nil, fmt.Errorf("`%s` printed no pool that could be read", cmd)
	}
	return st, nil
}

// fillMissingStates takes the states that JSON status lacks from the text
// status: OpenZFS 2.3.2 prints no state (nor type or GUID) for a dRAID
// vdev in JSON, and a vdev without a state would escape the health alerts.
func (s *Source) fillMissingStates(ctx context.Context, st *zpool.Status) {
	missing := false
	for _, p := range st.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) { missing = missing || v.State == "" })
		}
	}
	if !missing {
		return
	}
	out, err := s.zpool(ctx, "status", "-p")
	var text *zpool.Status
	if err == nil {
		text, err = zpool.ParseStatus(bytes.NewReader(out), s.cfg.Location)
	}
	if err != nil {
		s.logger.Debug("cannot read the text status for the vdev states JSON lacks", "err", err)
		return
	}
	states := map[[2]string]string{}
	for _, p := range text.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) { states[[2]string{p.Name, v.Name}] = v.State })
		}
	}
	for _, p := range st.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) {
				if v.State == "" {
					v.State = states[[2]string{p.Name, v.Name}]
				}
			})
		}
	}
}

// Properties returns every pool's properties from `zpool get all`.
func (sc *Scrape) Properties(ctx context.Context) ([]zpool.Property, error) {
	sc.propsOnce.Do(func() {
		sc.props, sc.propsErr = sc.readProperties(ctx)
		sc.source.record(SourceProperties, sc.propsErr)
	})
	return sc.props, sc.propsErr
}

func (sc *Scrape) readProperties(ctx context.Context) ([]zpool.Property, error) {
	s := sc.source
	caps, err := s.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	args := caps.GetArgs
	if args == nil {
		st, err := sc.Status(ctx)
		if err != nil {
			return nil, err
		}
		if len(st.Pools) == 0 {
			return nil, nil
		}
		// No "--" here: the zpools that take no -H (zfs-fuse, old
		// Solaris) read get's arguments by position, without getopt, and
		// take "--" for a pool's name.
		args = []string{"get", "all"}
		for _, p := range st.Pools {
			args = append(args, p.Name)
		}
	}
	out, err := s.zpool(ctx, args...)
	if err != nil {
		return nil, err
	}
	props, err := zpool.ParseGet(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("parsing output of `%s %s`: %w", s.cfg.Zpool, strings.Join(args, " "), err)
	}
	return props, nil
}

// VdevProperties returns the properties of every vdev of a pool, among
// them cumulative I/O counters, or ok=false when this zpool has none. The
// first pool asked decides whether it has them.
func (sc *Scrape) VdevProperties(ctx context.Context, pool string) (props []zpool.Property, ok bool, err error) {
	s := sc.source
	available, known := s.vdevProperties()
	if known && !available {
		return nil, false, nil
	}
	// The pool's name comes from zpool's output: "--" keeps it from being
	// read as an option. It goes before the first operand, as getopt
	// without glibc's reordering (FreeBSD, illumos) stops there.
	out, err := s.zpool(ctx, "get", "-Hp", "--", "all", pool, "all-vdevs")
	if !known {
		if runner.Inconclusive(ctx, err) {
			return nil, false, err
		}
		s.learnVdevProperties(err == nil, err)
		if err != nil {
			return nil, false, nil
		}
	}
	if err == nil {
		props, err = zpool.ParseGet(bytes.NewReader(out))
		if err != nil {
			err = fmt.Errorf("parsing vdev properties of pool %s: %w", pool, err)
		}
	}
	s.record(SourceVdevProperties, err)
	return props, true, err
}

var (
	commandRunsDesc = desc("exporter", "command_runs_total",
		"Processes started per command line.", "command")
	commandFailuresDesc = desc("exporter", "command_failures_total",
		"Runs of a command line that failed, timeouts included.", "command")
	commandTimeoutsDesc = desc("exporter", "command_timeouts_total",
		"Runs of a command line killed at the scrape deadline.", "command")
	commandRefusedDesc = desc("exporter", "command_refused_total",
		"Runs not started because an earlier process of the same command line had not exited.", "command")
	commandHungDesc = desc("exporter", "command_hung",
		"1 while a process of the command line was killed but has not exited (zpool stuck in the kernel, for example on a suspended pool).", "command")
)

// collectCommandMetrics reports the runner's per-command counts, when the
// runner keeps them.
func (s *Source) collectCommandMetrics(ch chan<- prometheus.Metric) {
	r, ok := s.cfg.Runner.(runner.StatsReporter)
	if !ok {
		return
	}
	for line, st := range r.Stats() {
		counter(ch, commandRunsDesc, float64(st.Runs), line)
		counter(ch, commandFailuresDesc, float64(st.Failures), line)
		counter(ch, commandTimeoutsDesc, float64(st.Timeouts), line)
		counter(ch, commandRefusedDesc, float64(st.Refused), line)
		hung := 0.0
		if st.StillRunning {
			hung = 1
		}
		gauge(ch, commandHungDesc, hung, line)
	}
}

func getDescription(args []string) string {
	if args == nil {
		return "get all POOL..."
	}
	return strings.Join(args, " ")
}
