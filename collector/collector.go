// Package collector turns what ZFS reports into Prometheus metrics. Each
// collector has a name, a --[no-]collector.NAME flag and its own success
// and duration metrics; all of them read ZFS through one zfs.Client, which
// runs (or replays) the zpool commands and remembers what this zpool can
// do, and share its reads of one scrape through a zfs.Scrape.
//
// A collector may make its Descs with prometheus.NewDesc and its metrics
// with the client library's constructors, as node_exporter's do: they are
// served like the rest. Made with desc and constMetric instead, they skip
// a registry's checks and sort, which at a thousand vdevs were a third of
// a scrape (see gatherFamilies).
package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// Collector is one group of metrics read from one or a few sources.
type Collector interface {
	// Update sends the collector's metrics for one scrape. It returns an
	// error when its source failed; metrics it could still read may have
	// been sent already.
	Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error
}

// ErrNoData tells that a collector had nothing to report on this host (for
// example no pools), which is not a failure. A collector that can have
// nothing to read at all, as the dataset collector over a replay without
// zfs outputs, returns it when built, and is left out.
var ErrNoData = errors.New("collector returned no data")

type factory struct {
	defaultEnabled bool
	help           string
	new            func(Config, *slog.Logger) (Collector, error)
}

var factories = map[string]factory{}

// register adds a collector to the table. Called from init functions, so
// that each collector lives in its own file.
func register(name string, defaultEnabled bool, help string, new func(Config, *slog.Logger) (Collector, error)) {
	factories[name] = factory{defaultEnabled: defaultEnabled, help: help, new: new}
}

// Info is what the exporter's --[no-]collector.NAME flag of a collector
// says: its name, whether it runs unless told otherwise, and what it
// exports.
type Info struct {
	Name    string
	Default bool
	Help    string
}

// Available lists every collector, sorted by name.
func Available() []Info {
	infos := make([]Info, 0, len(factories))
	for name, f := range factories {
		infos = append(infos, Info{Name: name, Default: f.defaultEnabled, Help: f.help})
	}
	sort.Slice(infos, func(i, j int) bool { return infos[i].Name < infos[j].Name })
	return infos
}

// Defaults tells, for every collector, whether it runs unless told
// otherwise.
func Defaults() map[string]bool {
	enabled := map[string]bool{}
	for name, f := range factories {
		enabled[name] = f.defaultEnabled
	}
	return enabled
}

var (
	scrapeDurationDesc = desc("exporter", "collector_duration_seconds",
		"Time a collector took in the last scrape.", "collector")
	scrapeSuccessDesc = desc("exporter", "collector_success",
		"1 when the collector's last scrape succeeded, 0 when it failed.", "collector")
)

// Exporter runs the enabled collectors. It lives as long as the process;
// Scraper binds it to the context of one scrape.
type Exporter struct {
	cfg        Config
	logger     *slog.Logger
	collectors map[string]Collector

	mu          sync.Mutex
	running     map[string]time.Time // collectors still at work, since when
	drops       map[dropKey]float64
	loggedDrops map[string]struct{}
}

// New builds the enabled collectors, those of Defaults when enabled is
// nil.
func New(cfg Config, logger *slog.Logger, enabled map[string]bool) (*Exporter, error) {
	cfg = cfg.withDefaults()
	e := &Exporter{
		cfg: cfg, logger: logger, collectors: map[string]Collector{}, running: map[string]time.Time{},
		drops: map[dropKey]float64{}, loggedDrops: map[string]struct{}{},
	}
	if enabled == nil {
		enabled = Defaults()
	}
	for name, f := range factories {
		if !enabled[name] {
			continue
		}
		c, err := f.new(cfg, logger.With("collector", name))
		if errors.Is(err, ErrNoData) {
			logger.Info("collector left out: nothing to read", "collector", name, "reason", err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("collector %s: %w", name, err)
		}
		e.collectors[name] = c
	}
	return e, nil
}

// Enabled lists the names of the collectors that run, sorted.
func (e *Exporter) Enabled() []string {
	names := make([]string, 0, len(e.collectors))
	for name := range e.collectors {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// Scraper returns a prometheus.Collector whose Collect runs every enabled
// collector once under ctx, whose deadline is the scrape's.
func (e *Exporter) Scraper(ctx context.Context) prometheus.Collector {
	return &scraper{e: e, ctx: ctx}
}

// scraperFor is Scraper reading through the caller's scrape, so that the
// caller can then take the same `zpool status` the collectors read.
func (e *Exporter) scraperFor(ctx context.Context, scrape *zfs.Scrape) *scraper {
	return &scraper{e: e, ctx: ctx, scrape: scrape}
}

type scraper struct {
	e      *Exporter
	ctx    context.Context
	scrape *zfs.Scrape // nil: a new one per Collect
}

// Describe sends nothing: which metrics exist depends on the host's zpool
// and its pools, so the scraper is an unchecked collector.
func (s *scraper) Describe(chan<- *prometheus.Desc) {}

// result is what one collector produced in a scrape.
type result struct {
	name     string
	metrics  []prometheus.Metric
	duration time.Duration
	err      error
}

func (s *scraper) Collect(ch chan<- prometheus.Metric) {
	s.collect(func(m prometheus.Metric) { ch <- m })
}

// collect is Collect handing each metric to sink, from the calling
// goroutine alone.
func (s *scraper) collect(sink func(prometheus.Metric)) { s.collectTo(sink, nil) }

// collectTo is collect telling reserve, when not nil, how many metrics of
// each Desc a collector is about to hand sink (see admission.sendBatch).
func (s *scraper) collectTo(sink func(prometheus.Metric), reserve func(*prometheus.Desc, int)) {
	out := s.e.newAdmission(sink, reserve)
	scrape := s.scrape
	if scrape == nil {
		scrape = s.e.cfg.ZFS.NewScrape()
	}
	plan := scrape.Plan(s.ctx) // made before any collector reads
	results := make(chan result, len(s.e.collectors))
	pending := map[string]time.Time{}
	for name, c := range s.e.collectors {
		began := time.Now()
		if since, busy := s.e.start(name, began); busy {
			err := fmt.Errorf("still running since an earlier scrape %s ago (blocked in the kernel?); not starting another", time.Since(since).Round(time.Millisecond))
			s.e.report(out, result{name: name, err: err})
			continue
		}
		pending[name] = began
		go func() {
			metrics, err := collectOnce(s.ctx, scrape, c)
			s.e.finish(name)
			results <- result{name, metrics, time.Since(began), err}
		}()
	}
	// zpool commands end before the deadline; a collector still at work
	// at the plan's LeaveBehind is blocked where no context reaches (a
	// read of a kstat of a pool hung in the kernel) and is left behind.
	var late <-chan time.Time
	if at := plan.LeaveBehind(); !at.IsZero() {
		timer := time.NewTimer(time.Until(at))
		defer timer.Stop()
		late = timer.C
	}
	for len(pending) > 0 {
		select {
		case r := <-results:
			delete(pending, r.name)
			out.sendBatch(r.name, r.metrics)
			s.e.report(out, r)
		case <-late:
			for name, began := range pending {
				err := errors.New("still running at the scrape's deadline; left behind, its metrics are missing")
				s.e.report(out, result{name: name, duration: time.Since(began), err: err})
			}
			pending = nil
		}
	}
	out.sendAll(exporterMetrics, s.e.collectSourceMetrics)
	out.sendAll(exporterMetrics, s.e.collectCommandMetrics)
	out.sendAll(exporterMetrics, s.e.collectDrops)
}

// collectOnce runs one collector and keeps what it sends, so that a collector
// left behind at the deadline cannot write into a finished scrape. A panic
// in the collector fails it for this scrape instead of the process.
func collectOnce(ctx context.Context, scrape *zfs.Scrape, c Collector) (metrics []prometheus.Metric, err error) {
	ch := make(chan prometheus.Metric, 1024)
	collected := make(chan []prometheus.Metric)
	go func() {
		var metrics []prometheus.Metric
		for m := range ch {
			metrics = append(metrics, m)
		}
		collected <- metrics
	}()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", errPanic, p, debug.Stack())
		}
		close(ch)
		metrics = <-collected
	}()
	return nil, c.Update(ctx, scrape, ch)
}

// errPanic marks a collector that panicked: it fails for that scrape, with
// what it sent before the panic, and the other collectors are served.
var errPanic = errors.New("collector panicked")

// start marks a collector as running, unless it still runs from an
// earlier scrape: one blocked in the kernel is not started again, so that
// blocked goroutines cannot pile up.
func (e *Exporter) start(name string, now time.Time) (since time.Time, busy bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if since, busy := e.running[name]; busy {
		return since, true
	}
	e.running[name] = now
	return time.Time{}, false
}

func (e *Exporter) finish(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.running, name)
}

// report sends a collector's success and duration, and logs its failure.
func (e *Exporter) report(out *admission, r result) {
	success := 1.0
	switch {
	case r.err == nil:
		e.logger.Debug("collector succeeded", "collector", r.name, "duration_seconds", r.duration.Seconds())
	case errors.Is(r.err, ErrNoData):
		e.logger.Debug("collector returned no data", "collector", r.name, "duration_seconds", r.duration.Seconds())
	case errors.Is(r.err, runner.ErrNotFound) && e.cfg.NotInstalled != nil:
		success = 0
		e.logger.Debug("collector failed", "collector", r.name, "duration_seconds", r.duration.Seconds(), "err", r.err)
		e.cfg.NotInstalled(r.err)
	default:
		success = 0
		e.logger.Error("collector failed", "collector", r.name, "duration_seconds", r.duration.Seconds(), "err", r.err)
	}
	out.send(r.name, constMetric(scrapeDurationDesc, prometheus.GaugeValue, r.duration.Seconds(), []string{r.name}))
	out.send(r.name, constMetric(scrapeSuccessDesc, prometheus.GaugeValue, success, []string{r.name}))
}
