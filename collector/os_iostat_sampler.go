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
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/iostat"
	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

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
	streamSampler // its interval is whole seconds, as iostat takes it

	os      string
	command string
	stream  StreamFunc
	runner  runner.Runner
	logger  *slog.Logger
	// cpus turns iostat's CPU shares, which are of all online CPUs, into
	// CPU seconds. runtime.NumCPU counts the online CPUs, except in an
	// illumos zone with a CPU cap, where it is the cap rounded up.
	cpus int

	// Guarded by mu.
	args       []string // the stream's arguments, once detected
	disks      map[string]*iostatDisk
	cpuSeconds map[string]float64
	lastErr    error // why the stream last ended, until a report arrives
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
func NewOSIostatSampler(os string, interval time.Duration, stream StreamFunc, run runner.Runner, logger *slog.Logger) *OSIostatSampler {
	whole := max(interval.Round(time.Second), time.Second)
	if whole != interval {
		logger.Info("iostat takes whole seconds; rounding the interval", "interval", interval, "rounded", whole)
	}
	return &OSIostatSampler{
		streamSampler: newStreamSampler(whole),
		os:            os,
		command:       "iostat",
		stream:        stream,
		runner:        run,
		logger:        logger,
		cpus:          runtime.NumCPU(),
		disks:         map[string]*iostatDisk{},
		cpuSeconds:    map[string]float64{},
	}
}

// Run samples, from the first call of Need until ctx ends, restarting the
// stream with back-off when iostat exits or prints something unreadable.
// It returns once the stream's process has been killed and reaped, or
// given up on after the runner's kill grace, so that a caller that waits
// for Run leaves no iostat behind.
func (s *OSIostatSampler) Run(ctx context.Context) {
	s.supervise(ctx, s.runOnce, func(err error, delay time.Duration) {
		s.setErr(err)
		s.logger.Warn("iostat stream ended; restarting", "err", err, "in", delay)
	})
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
	out, err := s.runner.Run(ctx, runner.Cmd(s.command, form...))
	if runner.Inconclusive(ctx, err) {
		return fmt.Errorf("%w: %w", errProbeInconclusive, err)
	}
	if err != nil {
		return err
	}
	reports, err := iostat.ParseIostat(bytes.NewReader(out))
	if err == nil && len(reports) == 0 {
		err = parse.Errorf(0, "printed no report")
	}
	return parse.WithSource(err, runner.CommandLine(s.command, form...))
}

func (s *OSIostatSampler) runStream(ctx context.Context, args []string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out, err := s.stream(ctx, runner.Cmd(s.command, args...))
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
	return disks, s.recent(), s.lastErr
}

func (s *OSIostatSampler) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}
