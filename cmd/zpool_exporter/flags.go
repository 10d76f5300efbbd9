package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strings"
	"time"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/cliflag"
)

// The exporter's other pages: the health check answers service managers
// and load balancers; the benchmark API's subtree holds the windows and
// the history, or says that the API is off.
const (
	healthPath       = "/-/healthy"
	benchmarkAPIPath = "/api/v1/benchmark/"
)

// check refuses, before anything starts, a flag value the exporter could
// not run with: the error names the flag and what it takes.
func (o *options) check(webConfig *web.FlagConfig) error {
	if err := checkTelemetryPath(o.metricsPath); err != nil {
		return cliflag.Invalid("web.telemetry-path", o.metricsPath, err.Error())
	}
	for _, addr := range *webConfig.WebListenAddresses {
		if err := checkListenAddress(addr); err != nil {
			return cliflag.Invalid("web.listen-address", addr, err.Error())
		}
	}
	if f := *webConfig.WebConfigFile; f != "" {
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
		{"benchmark.history-interval", o.historyInterval, 100 * time.Millisecond, false},
		{"benchmark.history-retention", o.historyRetention, time.Second, false},
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
