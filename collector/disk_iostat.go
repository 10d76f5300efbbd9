package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/collector/internal/geom"
	"github.com/zpool-exporter/zpool_exporter/collector/internal/iostat"
	"github.com/zpool-exporter/zpool_exporter/collector/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/collector/internal/zpool"
)

// SourceOSIostatStream names the operating system's iostat stream in the
// source freshness metrics.
const SourceOSIostatStream = "os_iostat_stream"

// UsesOSIostat tells the systems whose disk figures come from a
// long-running `iostat -x` rather than /proc/diskstats.
func UsesOSIostat(os string) bool {
	switch os {
	case "illumos", "solaris", "freebsd":
		return true
	}
	return false
}

// osIostatForms are the iostat arguments tried on each system, best first,
// before the interval. illumos and Solaris: extended statistics (-x) with
// descriptive cXtYdZ names (-n), which zpool prints too, and the CPU block
// (-c). Kilobytes, not -M: iostat prints one decimal, so Mr/s rounds to
// 0.1 MB/s, and a disk writing 40 kB/s would count nothing. FreeBSD:
// extended devstat figures; its CPU time is better read from kern.cp_time.
var osIostatForms = map[string][][]string{
	"illumos": {{"-xnc"}, {"-xn"}},
	"solaris": {{"-xnc"}, {"-xn"}},
	"freebsd": {{"-x"}},
}

// osIostatArgs returns the arguments of the stream: the form, then the
// interval, which FreeBSD takes after -w.
func osIostatArgs(os string, form []string, interval time.Duration) []string {
	args := slices.Clone(form)
	secs := strconv.Itoa(int(interval / time.Second))
	if os == "freebsd" {
		return append(args, "-w", secs)
	}
	return append(args, secs)
}

// OSIostatSampler turns the operating system's long-running `iostat -x
// INTERVAL` into per-disk counters and gauges on illumos, Solaris and
// FreeBSD, which have no /proc/diskstats.
//
// Each report after the first gives rates over one interval: rate times
// interval, summed, is the counter. Reports that average since boot are
// skipped: the first of each stream, and on illumos and Solaris one after
// a "<<disk added: ...>>" notice, since iostat then computes from boot
// again. A device's first report in a stream is skipped too, and on
// FreeBSD any report whose device list changed, as devstat then pairs old
// and new devices by position. Counters survive restarts of the stream
// (the intervals in between are lost) and start at 0 when the exporter
// starts. Gauges (queues, service times, busy ratios) are the last
// interval's. iostat's CPU block is integrated into CPU seconds by mode,
// for CPUSeconds.
//
// iostat ends no report: the parser sees one complete when the next
// begins, so figures arrive one interval late.
type OSIostatSampler struct {
	os       string
	command  string
	interval time.Duration // whole seconds, as iostat takes it
	stream   StreamFunc
	runner   Runner
	logger   *slog.Logger
	now      func() time.Time
	// cpus turns iostat's CPU shares, which are of all online CPUs, into
	// CPU seconds. runtime.NumCPU counts the online CPUs, except in an
	// illumos zone with a CPU cap, where it is the cap rounded up.
	cpus int

	mu         sync.Mutex
	args       []string // the stream's arguments, once detected
	disks      map[string]*iostatDisk
	cpuSeconds map[string]float64
	lastReport time.Time
	running    bool
	lastErr    error // why the stream last ended, until a report arrives

	needed   chan struct{} // closed by Need
	needOnce sync.Once
}

// iostatDisk is what the sampler knows of one disk.
type iostatDisk struct {
	readOps, writeOps     float64 // operations since the exporter started
	readBytes, writeBytes float64
	busySeconds           float64 // %b times the interval, summed
	// queueSeconds is (wait + actv) times the interval, summed: time I/Os
	// spent queued or active, weighted by how many were (illumos, Solaris).
	queueSeconds float64
	hasQueue     bool
	// last is the last interval integrated; nil before the first.
	last *iostat.Device
}

// NewOSIostatSampler returns a sampler of iostat on os ("illumos",
// "solaris" or "freebsd"); Run starts it. The interval is rounded to whole
// seconds, at least one, as illumos iostat takes no fractions.
func NewOSIostatSampler(os string, interval time.Duration, stream StreamFunc, runner Runner, logger *slog.Logger) *OSIostatSampler {
	whole := max(interval.Round(time.Second), time.Second)
	if whole != interval {
		logger.Info("iostat takes whole seconds; rounding the interval", "interval", interval, "rounded", whole)
	}
	return &OSIostatSampler{
		os:         os,
		command:    "iostat",
		interval:   whole,
		stream:     stream,
		runner:     runner,
		logger:     logger,
		now:        time.Now,
		cpus:       runtime.NumCPU(),
		disks:      map[string]*iostatDisk{},
		cpuSeconds: map[string]float64{},
		needed:     make(chan struct{}),
	}
}

// Need starts the stream, if it has not started: iostat runs only when a
// collector reads it.
func (s *OSIostatSampler) Need() { s.needOnce.Do(func() { close(s.needed) }) }

// Run samples, from the first call of Need until ctx ends, restarting the
// stream with back-off when iostat exits or prints something unreadable.
// It returns once the stream's process has been killed and reaped, or
// given up on after the runner's kill grace, so that a caller that waits
// for Run leaves no iostat behind.
func (s *OSIostatSampler) Run(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-s.needed:
	}
	_ = runner.Supervise(ctx, runner.Backoff{
		OnExit: func(err error, delay time.Duration) {
			s.setErr(err)
			s.logger.Warn("iostat stream ended; restarting", "err", err, "in", delay)
		},
	}, s.runOnce)
}

func (s *OSIostatSampler) runOnce(ctx context.Context) error {
	args, err := s.streamArgs(ctx)
	if err != nil {
		return err
	}
	return s.runStream(ctx, args)
}

// streamArgs detects, once, the best form of iostat this system takes: a
// form it refuses exits at once with its usage, and one whose output
// cannot be read is no better. A probe that timed out decides nothing.
func (s *OSIostatSampler) streamArgs(ctx context.Context) ([]string, error) {
	s.mu.Lock()
	args := s.args
	s.mu.Unlock()
	if args != nil {
		return args, nil
	}
	forms := osIostatForms[s.os]
	if forms == nil {
		return nil, fmt.Errorf("no iostat form known for %q", s.os)
	}
	var refused error
	for _, form := range forms {
		err := s.probe(ctx, form)
		if err == nil {
			args = osIostatArgs(s.os, form, s.interval)
			s.logger.Info("sampling per-disk I/O from an iostat stream", "command", s.command+" "+strings.Join(args, " "))
			s.mu.Lock()
			s.args = args
			s.mu.Unlock()
			return args, nil
		}
		if errors.Is(err, errProbeInconclusive) {
			return nil, err
		}
		s.logger.Debug("iostat form not available", "args", strings.Join(form, " "), "err", err)
		refused = err
	}
	return nil, fmt.Errorf("no form of %s -x works here: %w", s.command, refused)
}

var errProbeInconclusive = errors.New("iostat did not answer")

// probe runs one report of a form: without an interval, iostat prints the
// report since boot and exits.
func (s *OSIostatSampler) probe(ctx context.Context, form []string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := s.runner.Run(ctx, s.command, form...)
	if inconclusive(ctx, err) {
		return fmt.Errorf("%w: %w", errProbeInconclusive, err)
	}
	if err != nil {
		return err
	}
	reports, err := iostat.ParseIostat(bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("cannot read the output of `%s %s`: %w", s.command, strings.Join(form, " "), err)
	}
	if len(reports) == 0 {
		return fmt.Errorf("`%s %s` printed no report", s.command, strings.Join(form, " "))
	}
	return nil
}

func (s *OSIostatSampler) runStream(ctx context.Context, args []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, err := s.stream(ctx, s.command, args...)
	if err != nil {
		return err
	}
	defer func() {
		if err := out.Close(); err != nil {
			s.logger.Warn("iostat was killed but has not exited (stuck in the kernel?); no stream starts again until it does", "err", err)
		}
	}()
	s.setRunning(true)
	defer s.setRunning(false)
	if err := s.consume(out); err != nil {
		return err
	}
	return io.EOF
}

// consume integrates the reports of one stream until it ends.
func (s *OSIostatSampler) consume(out io.Reader) error {
	var st iostatStream
	sc := iostat.NewScanner(out)
	for sc.Scan() {
		s.add(sc.Report(), &st)
	}
	return sc.Err()
}

// iostatStream is what the sampler remembers of the current stream.
type iostatStream struct {
	reports int
	names   []string        // devices of the last report, in order
	seen    map[string]bool // the same, as a set
}

// trusts tells whether a report gives rates over the last interval.
func (st *iostatStream) trusts(r iostat.Report, names []string, pairsByPosition bool) bool {
	switch {
	case st.reports == 0, len(r.StateChanges) > 0:
		return false
	case pairsByPosition && !slices.Equal(names, st.names):
		return false
	}
	return true
}

func (st *iostatStream) next(names []string) {
	st.reports++
	st.names = names
	st.seen = make(map[string]bool, len(names))
	for _, n := range names {
		st.seen[n] = true
	}
}

func deviceNames(r iostat.Report) []string {
	names := make([]string, len(r.Devices))
	for i, d := range r.Devices {
		names[i] = d.Name
	}
	return names
}

// add integrates one report.
func (s *OSIostatSampler) add(r iostat.Report, st *iostatStream) {
	names := deviceNames(r)
	trusted := st.trusts(r, names, s.os == "freebsd")
	secs := s.interval.Seconds()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastReport, s.lastErr = s.now(), nil
	if st.reports == 0 {
		// Gauges from before the stream ended describe no recent interval.
		for _, disk := range s.disks {
			disk.last = nil
		}
	}
	present := make(map[string]bool, len(r.Devices))
	for i := range r.Devices {
		d := r.Devices[i]
		if present[d.Name] {
			continue
		}
		present[d.Name] = true
		disk, ok := s.disks[d.Name]
		if !ok {
			disk = &iostatDisk{}
			s.disks[d.Name] = disk
		}
		if trusted && st.seen[d.Name] {
			disk.integrate(d, secs)
		}
	}
	for name := range s.disks {
		if !present[name] {
			delete(s.disks, name) // detached: its counters end
		}
	}
	if trusted && r.CPU != nil {
		s.addCPU(cpuShares(r.CPU), secs)
	}
	st.next(names)
}

// addCPU integrates one interval's CPU shares; a negative one is garbage.
// Called with s.mu held.
func (s *OSIostatSampler) addCPU(shares map[string]float64, secs float64) {
	for _, share := range shares {
		if share < 0 {
			return
		}
	}
	for mode, share := range shares {
		s.cpuSeconds[mode] += share * secs * float64(s.cpus)
	}
}

// integrate adds one interval. A negative figure is garbage, not an
// interval: counters never go down.
func (d *iostatDisk) integrate(dev iostat.Device, secs float64) {
	if min(dev.ReadOps, dev.WriteOps, dev.ReadBytes, dev.WriteBytes, gaugeOr0(dev.BusyRatio), gaugeOr0(dev.Wait), gaugeOr0(dev.Actv)) < 0 {
		return
	}
	d.readOps += dev.ReadOps * secs
	d.writeOps += dev.WriteOps * secs
	d.readBytes += dev.ReadBytes * secs
	d.writeBytes += dev.WriteBytes * secs
	if dev.BusyRatio != nil {
		d.busySeconds += *dev.BusyRatio * secs
	}
	if dev.Wait != nil && dev.Actv != nil {
		d.queueSeconds += (*dev.Wait + *dev.Actv) * secs
		d.hasQueue = true
	}
	d.last = &dev
}

func gaugeOr0(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// cpuShares names iostat's CPU columns by mode. illumos's dt is the time
// spent in DTrace probes: mode "dtrace". Solaris's wt (iowait) has been 0
// since Solaris 10.
func cpuShares(c *iostat.CPU) map[string]float64 {
	shares := map[string]float64{"user": c.User, "system": c.System, "idle": c.Idle}
	for mode, v := range map[string]*float64{
		"iowait": c.IOWait, "dtrace": c.DTrace, "nice": c.Nice, "irq": c.Interrupt, "steal": c.Steal,
	} {
		if v != nil {
			shares[mode] = *v
		}
	}
	return shares
}

// CPUSeconds returns the CPU time spent in each mode since the exporter
// started, from iostat's CPU block (illumos, Solaris): each interval's
// share of a mode times the interval times the number of CPUs, summed.
// Modes: user, system, idle, and where iostat prints them iowait (wt),
// dtrace (illumos dt: time in DTrace probes), nice and irq (FreeBSD
// -C). It returns false until an interval with a CPU block was integrated.
func (s *OSIostatSampler) CPUSeconds() (map[string]float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.cpuSeconds) == 0 {
		return nil, false
	}
	return maps.Clone(s.cpuSeconds), true
}

// snapshot returns a copy of every disk's state, nil before the first
// report; whether the last report is recent enough for its gauges; and why
// the stream last ended, if no report came since.
func (s *OSIostatSampler) snapshot() (disks map[string]iostatDisk, fresh bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastReport.IsZero() {
		return nil, false, s.lastErr
	}
	disks = make(map[string]iostatDisk, len(s.disks))
	for name, d := range s.disks {
		disks[name] = *d
	}
	return disks, s.now().Sub(s.lastReport) < 3*s.interval, s.lastErr
}

func (s *OSIostatSampler) setRunning(on bool) {
	s.mu.Lock()
	s.running = on
	s.mu.Unlock()
}

func (s *OSIostatSampler) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}

// LastReport is when the stream last delivered a report.
func (s *OSIostatSampler) LastReport() (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastReport, !s.lastReport.IsZero()
}

// Healthy reports whether the stream runs and reported within three
// intervals.
func (s *OSIostatSampler) Healthy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running && s.now().Sub(s.lastReport) < 3*s.interval
}

// The counters keep the names and labels of the Linux ones; the gauges are
// what only iostat gives.
var (
	iostatReadOpsDesc        = desc("disk", "read_operations_total", "Reads the disk completed: iostat -x r/s times the interval, summed over intervals since the exporter started. One series per vdev the disk backs, each with the whole disk's figures.", diskLabels...)
	iostatWriteOpsDesc       = desc("disk", "write_operations_total", "Writes the disk completed: iostat -x w/s times the interval, summed.", diskLabels...)
	iostatReadBytesDesc      = desc("disk", "read_bytes_total", "Bytes read from the disk: iostat -x kr/s times the interval, summed.", diskLabels...)
	iostatWriteBytesDesc     = desc("disk", "write_bytes_total", "Bytes written to the disk: iostat -x kw/s times the interval, summed.", diskLabels...)
	iostatIOTimeDesc         = desc("disk", "io_time_seconds_total", "Time the disk had I/O in progress: iostat -x %b times the interval, summed. Its rate is the busy ratio.", diskLabels...)
	iostatIOTimeWeightedDesc = desc("disk", "io_time_weighted_seconds_total", "Time I/Os spent waiting and being serviced, weighted by how many were: iostat -x wait plus actv times the interval, summed (illumos, Solaris). Its rate is the average queue length.", diskLabels...)

	diskWaitQueueDesc         = desc("disk", "wait_queue_length", "Average number of I/Os waiting in the host's queue, not yet sent to the disk, over the last iostat interval (iostat -x wait; illumos, Solaris).", diskLabels...)
	diskActiveQueueDesc       = desc("disk", "active_queue_length", "I/Os sent to the disk and not yet completed: the average over the last iostat interval on illumos and Solaris (iostat -x actv), the number at its end on FreeBSD (iostat -x qlen).", diskLabels...)
	diskWaitServiceTimeDesc   = desc("disk", "wait_service_time_seconds", "Average time an I/O waited in the host's queue over the last iostat interval (iostat -xn wsvc_t; illumos, Solaris).", diskLabels...)
	diskActiveServiceTimeDesc = desc("disk", "active_service_time_seconds", "Average time the disk took to service an I/O over the last iostat interval (iostat -xn asvc_t; illumos, Solaris).", diskLabels...)
	diskServiceTimeDesc       = desc("disk", "service_time_seconds", "Average time of an I/O from issue to completion over the last iostat interval (iostat -x ms/t on FreeBSD, printed in whole milliseconds).", diskLabels...)
	diskReadServiceTimeDesc   = desc("disk", "read_service_time_seconds", "Average time of a read over the last iostat interval (iostat -x ms/r on FreeBSD, printed in whole milliseconds).", diskLabels...)
	diskWriteServiceTimeDesc  = desc("disk", "write_service_time_seconds", "Average time of a write over the last iostat interval (iostat -x ms/w on FreeBSD, printed in whole milliseconds).", diskLabels...)
	diskWaitBusyRatioDesc     = desc("disk", "wait_busy_ratio", "Share of the last iostat interval during which I/Os were waiting in the host's queue (iostat -x %w; illumos, Solaris).", diskLabels...)
	diskBusyRatioDesc         = desc("disk", "busy_ratio", "Share of the last iostat interval during which the disk had I/O in progress (iostat -x %b).", diskLabels...)
)

// iostatDiskCollector is the disk collector of illumos, Solaris and
// FreeBSD: the sampler's disks, joined to the leaf vdevs they back.
type iostatDiskCollector struct {
	sampler  *OSIostatSampler
	all      bool
	resolver iostatDiskResolver
	joins    lastJoins
	runner   Runner // runs glabel on FreeBSD
	logger   *slog.Logger
}

func newIostatDiskCollector(src *Source, logger *slog.Logger) *iostatDiskCollector {
	cfg := src.cfg
	if cfg.DiskSampler != nil {
		cfg.DiskSampler.Need()
	} else {
		logger.Info("per-disk I/O on this system comes from a long-running iostat, which does not run here (--once, or --disk.iostat-interval=0)", "os", cfg.DiskOS)
	}
	return &iostatDiskCollector{
		sampler:  cfg.DiskSampler,
		all:      cfg.DiskAll,
		resolver: iostatDiskResolver{os: cfg.DiskOS},
		runner:   cfg.Runner,
		logger:   logger,
	}
}

// glabelProviders returns, for one scrape, the GEOM provider under each
// label (gpt/..., gptid/..., diskid/...), from `glabel status -s`, run
// the first time a leaf needs it.
func (c *iostatDiskCollector) glabelProviders(ctx context.Context) func(name string) (string, error) {
	var (
		labels map[string]string
		err    error
		ran    bool
	)
	return func(name string) (string, error) {
		if !ran {
			ran = true
			var out []byte
			if out, err = c.runner.Run(ctx, "glabel", "status", "-s"); err == nil {
				labels, err = geom.ParseGlabelStatus(bytes.NewReader(out))
				if err != nil {
					err = fmt.Errorf("parsing output of `glabel status -s`: %w", err)
				}
			}
		}
		if err != nil {
			return "", err
		}
		provider, ok := labels[name]
		if !ok {
			return "", fmt.Errorf("%w: GEOM has no label %s", errNoDevice, name)
		}
		return provider, nil
	}
}

func (c *iostatDiskCollector) Update(ctx context.Context, s *Scrape, ch chan<- prometheus.Metric) error {
	if c.sampler == nil {
		return ErrNoData
	}
	disks, fresh, streamErr := c.sampler.snapshot()
	if disks == nil {
		if streamErr != nil {
			return fmt.Errorf("no iostat report yet: %w", streamErr)
		}
		return ErrNoData // iostat has not finished its first interval
	}
	st, statusErr := s.Status(ctx)
	if c.resolver.os == "freebsd" && c.runner != nil {
		c.resolver.provider = c.glabelProviders(ctx)
	}
	resolve := func(v *zpool.Vdev) (string, error) { return c.resolve(v, disks) }
	joinedPools, joined := c.joins.join(st, statusErr, c.logger, resolve)
	pools := map[string]bool{}
	used := map[string]bool{}
	for _, p := range joinedPools {
		pools[p.pool] = true
		for _, j := range p.joins {
			if d, ok := disks[j.device]; ok { // a remembered disk may be gone
				collectIostatDisk(ch, d, fresh, j.device, p.pool, j.vdev)
				used[j.device] = true
			}
		}
	}
	if c.all || !joined {
		for _, name := range slices.Sorted(maps.Keys(disks)) {
			if used[name] || isIostatPseudoDevice(name, pools) {
				continue
			}
			// Without any join the pools are unknown, and illumos lists
			// them among the devices: only rows named as disks are taken.
			if disk, ok := iostatDiskOf(c.resolver.os, name); !joined && (!ok || disk != name) {
				continue
			}
			used[name] = true
			collectIostatDisk(ch, disks[name], fresh, name, "", "")
		}
	}
	if !fresh && streamErr != nil {
		return fmt.Errorf("iostat stream is stale: %w", streamErr)
	}
	if len(used) == 0 {
		return ErrNoData
	}
	return nil
}

// resolve tries the leaf's name, then its path (JSON status).
func (c *iostatDiskCollector) resolve(v *zpool.Vdev, disks map[string]iostatDisk) (string, error) {
	var errs []error
	for _, name := range []string{v.Name, v.Path} {
		if name == "" {
			continue
		}
		device, err := c.resolver.resolve(name)
		if err == nil {
			if _, ok := disks[device]; ok {
				return device, nil
			}
			err = fmt.Errorf("%w: iostat reports no disk %s", errNoDevice, device)
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

func collectIostatDisk(ch chan<- prometheus.Metric, d iostatDisk, fresh bool, labels ...string) {
	counter(ch, iostatReadOpsDesc, d.readOps, labels...)
	counter(ch, iostatWriteOpsDesc, d.writeOps, labels...)
	counter(ch, iostatReadBytesDesc, d.readBytes, labels...)
	counter(ch, iostatWriteBytesDesc, d.writeBytes, labels...)
	counter(ch, iostatIOTimeDesc, d.busySeconds, labels...)
	if d.hasQueue {
		counter(ch, iostatIOTimeWeightedDesc, d.queueSeconds, labels...)
	}
	// A stream that stopped leaves its last gauges behind: leave them out.
	if !fresh || d.last == nil {
		return
	}
	l := d.last
	active := l.Actv
	if active == nil {
		active = l.QueueLength // FreeBSD qlen
	}
	optGauge(ch, diskWaitQueueDesc, l.Wait, labels...)
	optGauge(ch, diskActiveQueueDesc, active, labels...)
	optGauge(ch, diskWaitServiceTimeDesc, l.WaitSvcSeconds, labels...)
	optGauge(ch, diskActiveServiceTimeDesc, l.ActvSvcSeconds, labels...)
	optGauge(ch, diskServiceTimeDesc, l.AwaitSeconds, labels...)
	optGauge(ch, diskReadServiceTimeDesc, l.ReadAwaitSeconds, labels...)
	optGauge(ch, diskWriteServiceTimeDesc, l.WriteAwaitSeconds, labels...)
	optGauge(ch, diskWaitBusyRatioDesc, l.WaitRatio, labels...)
	optGauge(ch, diskBusyRatioDesc, l.BusyRatio, labels...)
}
