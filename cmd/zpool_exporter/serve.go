package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/gzipresponse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/statuspage"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// serve runs the exporter as a server until ctx ends, and returns its exit status.
func (w *wiring) serve(ctx context.Context) int {
	o, logger, base := w.o, w.logger, w.base
	// Everything that may run a command runs under work and is tracked, so
	// that shutdown can end its commands and wait for them.
	work, quit := context.WithCancel(ctx)
	defer quit()
	var running tasks
	// /metrics and the status page read the collectors through one shared
	// gather: a collector refuses to run twice at once. A gather outlives the reader that started it (others
	// may join it), so shutdown, not its readers, ends it.
	shared := collector.NewShared(func(ctx context.Context) collector.Reading {
		defer running.track("a scrape")()
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(work, cancel)()
		return w.exporter.Gather(ctx)
	})
	var windows *benchwindow.Store
	if o.benchmarkAPI {
		windows = benchwindow.NewStore(benchwindow.Options{Retention: time.Duration(o.benchmarkRetention),
			MaxDuration: time.Duration(o.benchmarkMaxWindow)})
		base.MustRegister(benchwindow.NewCollector(windows))
	}

	logger.Info("starting zpool_exporter", "version", version.Info(), "build_context", version.BuildContext(),
		"collectors", w.exporter.Enabled())
	detectCapabilities(work, w.client, o.scrapeTimeout, w.missing, logger)
	for _, s := range w.samplers {
		running.Go(s.name, func() { s.Run(work) })
	}

	mux := w.routes(shared, windows)
	// Requests run under work too: at shutdown the scrapes in flight end
	// with their commands rather than at their deadline.
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return work }}
	served := make(chan error, 1)
	go func() { served <- web.ListenAndServe(server, o.web, logger) }()
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

// routes are the exporter's pages: /metrics (or --web.telemetry-path), the
// health check, the benchmark API (or a word that it is off) and the
// status page. windows is nil without the benchmark API.
func (w *wiring) routes(shared *collector.Shared, windows *benchwindow.Store) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(w.o.metricsPath, gzipresponse.New(&metricsHandler{shared: shared, base: w.base, timeout: w.o.scrapeTimeout, offset: w.o.timeoutOffset, logger: w.logger}, 2))
	// For service managers and load balancers: answers without running zpool.
	mux.HandleFunc(healthPath, func(rw http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(rw, "Healthy\n")
	})
	if windows != nil {
		mux.Handle(benchmarkAPIPath, benchwindow.Handler(windows, w.logger))
		w.logger.Info("benchmark window API on", "path", benchwindow.Path, "retention", w.o.benchmarkRetention)
	} else {
		mux.Handle(benchmarkAPIPath, benchwindow.NotEnabled("the benchmark window API is off; start zpool_exporter with --web.enable-benchmark-api to turn it on"))
	}
	if w.o.metricsPath != "/" {
		host, _ := os.Hostname()
		shown := version.Version
		if shown == "" {
			shown = "(built without a version; see --version)"
		}
		opts := statuspage.Options{
			Name:        host,
			Version:     shown,
			MetricsPath: w.o.metricsPath,
			Refresh:     time.Second,
			Timeout:     w.o.scrapeTimeout,
			MinAge:      500 * time.Millisecond,
			Logger:      w.logger,
		}
		if windows != nil {
			opts.Windows = windows.List
		}
		mux.Handle("/", statuspage.New(pageReading(shared, w.missing, w.events), opts))
	}
	return mux
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
// metrics, the `zpool status` its collectors read, and the pools' last
// events where they are followed.
func pageReading(shared *collector.Shared, missing *notInstalled, events *collector.EventFollower) statuspage.ReadFunc {
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
		return statuspage.Reading{Time: r.Time, Families: r.Families(), Status: st, StatusErr: err, Events: events.Recent()}
	}
}
