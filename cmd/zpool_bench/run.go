package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/cliflag"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchrun"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchsource"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/grafana"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

// runCommand is `zpool_bench run`.
type runCommand struct {
	env env

	name, pool         string
	exporterURL        string
	prometheusURL      string
	prometheusMatchers string
	grafanaURL         string
	grafanaTokenFile   string
	grafanaDashboard   string
	runsDir            string
	format             string
	tool               string
	zpool, zfs, zdb    string
	configFrom         string
	sampleInterval     time.Duration
	sampleTimeout      time.Duration
	settle             time.Duration
	settleTimeout      time.Duration
	killAfter          time.Duration
	command            []string
}

func (c *runCommand) register(app *kingpin.Application) {
	cmd := app.Command("run", "Run a benchmark inside a window: mark its start and end in zpool_exporter (and Grafana), pass its output through, then print and save its report. Ctrl-C stops the workload and still ends the window and reports; the workload's exit status is passed on.")
	cmd.Flag("name", "What this run measures, shown on graphs and in comparisons, e.g. \"raid10 ashift=12 lz4\".").
		Required().StringVar(&c.name)
	cmd.Flag("pool", "The pool the benchmark runs on; may be left out when there is only one.").
		StringVar(&c.pool)
	cmd.Flag("exporter.url", "zpool_exporter's URL, started with --web.enable-benchmark-api. User and password in the URL are sent as basic authentication.").
		Default("http://localhost:9134").StringVar(&c.exporterURL)
	cmd.Flag("exporter.sample-interval", "How often the exporter's /metrics is scraped for the report's figures, from just before the window opens to the end of --settle. Not with --prometheus.url, whose samples are Prometheus's.").
		Default("1s").DurationVar(&c.sampleInterval)
	cmd.Flag("exporter.sample-timeout", "Longest a scrape of the exporter's /metrics may take: the exporter is told, as Prometheus tells it, and answers in time with what its collectors have. A scrape that fails leaves a gap in the samples, and the report says how many did.").
		Default("10s").DurationVar(&c.sampleTimeout)
	cmd.Flag("prometheus.url", "Read the run's samples from this Prometheus (which scrapes the exporter) instead of scraping the exporter during the run.").
		PlaceHolder("URL").StringVar(&c.prometheusURL)
	cmd.Flag("prometheus.matchers", "Label matchers that pick this host's exporter among Prometheus's targets, e.g. 'instance=\"nas:9134\"'; needed when Prometheus scrapes several.").
		PlaceHolder("MATCHERS").StringVar(&c.prometheusMatchers)
	cmd.Flag("grafana.url", "Also mark the run as a region annotation in this Grafana, tagged zpool-bench and pool:POOL.").
		PlaceHolder("URL").StringVar(&c.grafanaURL)
	cmd.Flag("grafana.token-file", "File holding the Grafana service account token (annotations:create). The GRAFANA_TOKEN environment variable works too.").
		PlaceHolder("FILE").StringVar(&c.grafanaTokenFile)
	cmd.Flag("grafana.dashboard-uid", "Put the annotation on this dashboard only, instead of on every dashboard that shows the zpool-bench tag.").
		PlaceHolder("UID").StringVar(&c.grafanaDashboard)
	cmd.Flag("runs.dir", "Where each run's report is saved as JSON and SVG, for `report` and `compare`.").
		Default("zpool-bench-runs").StringVar(&c.runsDir)
	cmd.Flag("format", "How the report is printed after the run: table, markdown, csv or json.").
		Default("table").EnumVar(&c.format, formats...)
	var tools []string
	for _, t := range workload.Tools {
		tools = append(tools, string(t))
	}
	cmd.Flag("tool", "The benchmark tool whose summary to read from the workload's output ("+strings.Join(tools, ", ")+"), when the command does not name it (a wrapper script); otherwise it is guessed from the command and its output.").
		EnumVar(&c.tool, tools...)
	cmd.Flag("pool.config-from", "Where the pool's layout, ashift, compression and recordsize are read: zpool, with zfs (and zdb -C for the ashift before OpenZFS 2.2), on this machine; the exporter's /metrics, for a run on a client machine (SMB, NFS, iSCSI); or auto, zpool where it is installed, else the exporter.").
		Default(configAuto).EnumVar(&c.configFrom, configSources...)
	cmd.Flag("zpool.command", "The zpool command that reads the pool's configuration on this machine.").
		Default("zpool").StringVar(&c.zpool)
	cmd.Flag("zfs.command", "The zfs command that reads the pool's compression and recordsize on this machine.").
		Default("zfs").StringVar(&c.zfs)
	cmd.Flag("zdb.command", "The zdb command that reads the vdevs' ashift (zdb -C POOL) on this machine where zpool has no vdev properties (before OpenZFS 2.2).").
		Default("zdb").StringVar(&c.zdb)
	cmd.Flag("settle", "After the workload ends, how long the pool's I/O still counts: writes still in flight land within a transaction group or two. The report waits until the exporter's I/O source (a zpool iostat report, a read of vdev properties) has answered that long after the end.").
		Default("3s").DurationVar(&c.settle)
	cmd.Flag("settle-timeout", "Longest wait for that answer: the exporter's --zpool.iostat-interval, plus --exporter.sample-interval, or Prometheus's scrape interval with --prometheus.url.").
		Default("1m").DurationVar(&c.settleTimeout)
	cmd.Flag("kill-after", "After Ctrl-C or SIGTERM, how long the workload may take to stop before it is killed. A second Ctrl-C kills it at once.").
		Default("10s").DurationVar(&c.killAfter)
	cmd.Arg("command", "The benchmark and its arguments, after --.").Required().StringsVar(&c.command)
}

// check refuses, before the run starts, a flag value it could not run
// with: the error names the flag.
func (c *runCommand) check() error {
	for _, u := range []struct{ flag, value string }{
		{"exporter.url", c.exporterURL}, {"prometheus.url", c.prometheusURL}, {"grafana.url", c.grafanaURL},
	} {
		if u.value == "" && u.flag != "exporter.url" {
			continue
		}
		if p, err := url.Parse(u.value); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return cliflag.Invalid(u.flag, u.value, "must be an http(s) URL such as http://localhost:9134")
		}
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{{"settle", c.settle}, {"kill-after", c.killAfter}} {
		if d.value < 0 {
			return cliflag.Invalid(d.flag, d.value.String(), "must not be negative")
		}
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{{"exporter.sample-interval", c.sampleInterval}, {"exporter.sample-timeout", c.sampleTimeout}} {
		if d.value < 100*time.Millisecond {
			return cliflag.Invalid(d.flag, d.value.String(), "must be at least 100ms")
		}
	}
	if c.settleTimeout <= 0 {
		return cliflag.Invalid("settle-timeout", c.settleTimeout.String(), "must be more than 0")
	}
	for _, n := range []struct{ flag, value string }{
		{"name", c.name}, {"runs.dir", c.runsDir}, {"zpool.command", c.zpool}, {"zfs.command", c.zfs}, {"zdb.command", c.zdb},
	} {
		if strings.TrimSpace(n.value) == "" {
			return cliflag.Invalid(n.flag, n.value, "must not be empty")
		}
	}
	return nil
}

func (c *runCommand) run(ctx context.Context) int {
	stderr := c.env.stderr
	if err := c.check(); err != nil {
		warnf(stderr, "%v; try --help", err)
		return exitUsage
	}
	token, err := c.token()
	if err != nil {
		warnf(stderr, "%v", err)
		return exitUsage
	}
	setup, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// A Ctrl-C before the workload starts stops the setup, and the
	// workload never runs.
	setupDone, watched := make(chan struct{}), make(chan os.Signal, 1)
	go func() {
		defer close(watched)
		select {
		case sig := <-c.env.signals:
			watched <- sig
			cancel()
		case <-setupDone:
		}
	}()
	// interrupted tells, once the watcher is done, whether it saw a
	// signal, and the exit status that reports it.
	stopWatching := sync.OnceFunc(func() { close(setupDone) })
	interrupted := func() (int, bool) {
		stopWatching()
		sig, ok := <-watched
		if !ok {
			return 0, false
		}
		warnf(stderr, "%v before the workload started; it did not run", sig)
		if s, isSyscall := sig.(syscall.Signal); isSyscall {
			return 128 + int(s), true
		}
		return exitFailure, true
	}
	client := &http.Client{Timeout: max(30*time.Second, c.sampleTimeout)}
	exporter := benchsource.NewExporter(c.exporterURL, client)
	configs := poolConfigReader{from: c.configFrom, zpool: c.zpool, zfs: c.zfs, zdb: c.zdb, exporter: exporter,
		warn: func(format string, args ...any) { warnf(stderr, format, args...) }}
	cfg, err := configs.read(setup, c.pool)
	if err != nil {
		if status, ok := interrupted(); ok {
			return status
		}
		warnf(stderr, "%v", err)
		return exitFailure
	}
	c.pool = cfg.Pool
	for _, m := range cfg.Missing {
		warnf(stderr, "pool %s: %s", cfg.Pool, m)
	}

	sampledFrom := time.Now()
	source, sampler, stopSampling := c.startSource(exporter, client)
	defer stopSampling()
	windows := &benchwindow.Client{BaseURL: c.exporterURL, HTTP: client}
	commandLine := strings.Join(c.command, " ")
	window, err := windows.Start(setup, benchwindow.StartRequest{Name: c.name, Pool: c.pool, Command: commandLine})
	if err != nil {
		if status, ok := interrupted(); ok {
			return status
		}
		warnf(stderr, "cannot start a benchmark window at %s: %v", redact(c.exporterURL), err)
		return exitFailure
	}
	warnf(stderr, "window %s %q started on pool %s (%s)", window.ID, c.name, c.pool, cfg.Layout)

	// Wait for the first scrape of the pool's counters: the baseline every
	// figure of the report starts from. Prometheus has older samples.
	if sampler != nil {
		if err := waitFor(setup, source, source.LatestSample, "sample", sampledFrom, nil); err != nil {
			c.endWindow(windows, window.ID)
			if status, ok := interrupted(); ok {
				return status
			}
			warnf(stderr, "%v", err)
			return exitFailure
		}
	}
	if status, ok := interrupted(); ok {
		c.endWindow(windows, window.ID)
		return status
	}
	cancel()

	result, runErr := benchrun.Run(c.command, benchrun.Options{
		Stdin:     c.workloadStdin(),
		Stdout:    c.env.stdout,
		Stderr:    c.env.stderr,
		Signals:   c.env.signals,
		KillAfter: c.killAfter,
	})
	if runErr != nil {
		// It never ran: nothing to report.
		c.endWindow(windows, window.ID)
		warnf(stderr, "%v", runErr)
		return exitFailure
	}
	ended := c.endWindow(windows, window.ID)
	if result.Interrupted {
		warnf(stderr, "workload interrupted; exit status %d", result.ExitStatus)
	} else if result.ExitStatus != 0 {
		warnf(stderr, "workload failed with exit status %d", result.ExitStatus)
	}
	status := result.ExitStatus
	if !ended && status == 0 {
		status = exitFailure
	}

	if c.grafanaURL != "" {
		g := &grafana.Client{URL: c.grafanaURL, Token: token}
		text := fmt.Sprintf("%s\n%s", c.name, commandLine)
		if _, err := g.Create(context.Background(), grafana.Annotation{Time: result.Start, TimeEnd: result.End,
			Tags: []string{"zpool-bench", "pool:" + c.pool}, Text: text, DashboardUID: c.grafanaDashboard}); err != nil {
			warnf(stderr, "cannot write the Grafana annotation: %v", err)
		}
	}

	runInfo := benchreport.Run{ID: window.ID, Name: c.name, Pool: c.pool, Command: c.command, Host: hostname(),
		Start: result.Start.UTC(), End: result.End.UTC(), ExitStatus: result.ExitStatus, Interrupted: result.Interrupted,
		Config: &cfg, Source: source.String()}
	runInfo.Workload, runInfo.WorkloadError = parseWorkload(c.chooseTool(), c.command, result)

	report, err := c.collect(runInfo, source)
	stopSampling()
	if err != nil {
		warnf(stderr, "no report: %v", err)
		if status == 0 {
			status = exitFailure
		}
		return status
	}
	if sampler != nil {
		if failed, scrapes, last := sampler.Failures(); failed > 0 {
			note := fmt.Sprintf("%d of %d scrapes of the exporter's /metrics failed, each leaving a gap in the samples; the last: %v", failed, scrapes, last)
			warnf(stderr, "%s", note)
			report.Missing = append(report.Missing, note)
		}
	}
	if err := reportWriters[c.format](c.env.stdout, report); err != nil {
		warnf(stderr, "printing the report: %v", err)
	}
	paths, err := saveRun(c.runsDir, report)
	if err != nil {
		warnf(stderr, "cannot save the run: %v", err)
		if status == 0 {
			status = exitFailure
		}
		return status
	}
	warnf(stderr, "saved %s", strings.Join(paths, " and "))
	return status
}

// baselineLookback is how far before the start samples are fetched: more
// than a scrape may take.
const baselineLookback = time.Minute

// collect waits until the pool's I/O source has answered past the end of
// the run and the settling time, fetches the samples and computes the
// report. A Ctrl-C while it waits cuts the wait short.
func (c *runCommand) collect(run benchreport.Run, source benchsource.Source) (benchreport.Report, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.settleTimeout+c.settle)
	defer cancel()
	until := run.End.Add(c.settle)
	if err := waitFor(ctx, source, source.LatestReport, "an I/O report", until, c.env.signals); err != nil {
		warnf(c.env.stderr, "%v; the report covers the samples there are", err)
	}
	fetch, cancelFetch := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelFetch()
	// From earlier than the start: a reading taken just before the start
	// may be timed by its I/O source after it (a slow zpool get), and the
	// report then looks further back for its baseline.
	series, err := source.Fetch(fetch, benchsource.Query{Pool: run.Pool, Start: run.Start.Add(-baselineLookback), End: time.Now()})
	if err != nil {
		return benchreport.Report{}, err
	}
	return benchreport.Compute(run, series)
}

// waitFor waits until latest tells a time at or after t.
func waitFor(ctx context.Context, source benchsource.Source, latest func(context.Context) (time.Time, error), what string, t time.Time, signals <-chan os.Signal) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		at, err := latest(ctx)
		if err == nil && !at.Before(t) {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("no %s from %s after %s: %w", what, source, t.Format(time.RFC3339), last)
			}
			return fmt.Errorf("no %s from %s after %s yet", what, source, t.Format(time.RFC3339))
		case <-signals:
			return fmt.Errorf("stopped waiting for %s from %s", what, source)
		case <-tick.C:
		}
	}
}

// startSource picks where the report's samples come from: Prometheus with
// --prometheus.url, or else the exporter's /metrics, which sampler scrapes
// from now, just before the window opens, until stop is called, once the
// report has its samples. stop may be called more than once.
func (c *runCommand) startSource(exporter *benchsource.Exporter, client *http.Client) (source benchsource.Source, sampler *benchsource.Sampler, stop func()) {
	if c.prometheusURL != "" {
		return benchsource.Prometheus(c.prometheusURL, c.prometheusMatchers, client), nil, func() {}
	}
	sampler = benchsource.NewSampler(exporter, c.pool, c.sampleInterval, c.sampleTimeout)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sampler.Run(ctx)
	}()
	return sampler, sampler, sync.OnceFunc(func() {
		cancel()
		<-done
	})
}

// endWindow ends the window, even after an interrupt, and says whether it
// did.
func (c *runCommand) endWindow(windows *benchwindow.Client, id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if _, err = windows.End(ctx, id); err == nil || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			break
		}
		time.Sleep(time.Second)
	}
	if err != nil {
		warnf(c.env.stderr, "cannot end benchmark window %s: %v", id, err)
		return false
	}
	return true
}

// redact drops a URL's password, for messages.
func redact(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}

func (c *runCommand) token() (string, error) {
	if c.grafanaTokenFile != "" {
		data, err := os.ReadFile(c.grafanaTokenFile)
		if err != nil {
			return "", fmt.Errorf("reading --grafana.token-file: %w", err)
		}
		return strings.TrimSpace(string(data)), nil
	}
	token := os.Getenv("GRAFANA_TOKEN")
	if c.grafanaURL != "" && token == "" {
		return "", errors.New("--grafana.url needs a token: --grafana.token-file or the GRAFANA_TOKEN environment variable")
	}
	return token, nil
}

// chooseTool is --tool, or the tool the command names; empty when neither
// says, and the output will tell.
func (c *runCommand) chooseTool() workload.Tool {
	if c.tool != "" {
		return workload.Tool(c.tool)
	}
	tool, _ := workload.ToolFor(c.command[0])
	return tool
}

// workloadStdin is the runner's standard input unless it is a terminal:
// the workload runs in a process group of its own and would stop reading
// one.
func (c *runCommand) workloadStdin() *os.File {
	if c.env.stdin == nil {
		return nil
	}
	if info, err := c.env.stdin.Stat(); err != nil || info.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return c.env.stdin
}

// parseWorkload reads the tool's summary from what the workload printed.
func parseWorkload(tool workload.Tool, command []string, result benchrun.Result) (*workload.Summary, string) {
	out := append(append(bytes.Clone(result.Stdout), '\n'), result.Stderr...)
	if tool == "" {
		detected, err := workload.Detect(bytes.NewReader(out))
		if err != nil {
			return nil, ""
		}
		tool = detected
	}
	summary, err := workload.Parse(tool, bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Sprintf("%s summary not read: %v", tool, err)
	}
	if tool == workload.DD {
		summary.Results = directDD(summary.Results, command)
	}
	return &summary, ""
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// directDD gives dd's results the direction its operands tell: dd's
// summary does not say whether it read or wrote the pool.
func directDD(results []workload.Result, command []string) []workload.Result {
	dir := workload.DDDirection(command[1:])
	for i := range results {
		if results[i].Direction == "" {
			results[i].Direction = dir
		}
	}
	return results
}
