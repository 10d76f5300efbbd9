package collector

import (
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// The stream samplers, by the name the freshness metrics give them in
// their source label beside the client's sources (zfs.SourceStatus...).
const (
	SourceIostatStream   = "zpool_iostat_stream"
	SourceOSIostatStream = "os_iostat_stream" // the operating system's iostat -x
)

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
func (e *Exporter) streams() map[string]sampledStream {
	streams := map[string]sampledStream{}
	if e.cfg.Sampler != nil {
		streams[SourceIostatStream] = e.cfg.Sampler
	}
	if e.cfg.DiskSampler != nil {
		streams[SourceOSIostatStream] = e.cfg.DiskSampler
	}
	return streams
}

// collectSourceMetrics sends the freshness of every source, the client's
// and the samplers' (once they reported), and the capabilities once
// detected.
func (e *Exporter) collectSourceMetrics(ch chan<- prometheus.Metric) {
	sources := e.cfg.ZFS.Freshness()
	for name, stream := range e.streams() {
		if t, ok := stream.LastReport(); ok {
			sources[name] = zfs.SourceState{Up: stream.Healthy(), LastSuccess: t}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(sources)) {
		st := sources[name]
		up := 0.0
		if st.Up {
			up = 1
		}
		gauge(ch, sourceUpDesc, up, name)
		if !st.LastSuccess.IsZero() {
			gauge(ch, sourceLastSuccessDesc, float64(st.LastSuccess.UnixNano())/1e9, name)
		}
	}
	if caps, ok := e.cfg.ZFS.Detected(); ok {
		vdevIO := "none"
		switch {
		case caps.VdevPropertiesKnown && caps.VdevProperties:
			vdevIO = "vdev_properties"
		case e.cfg.Sampler != nil:
			vdevIO = "iostat_stream"
		}
		gauge(ch, capabilitiesDesc, 1, caps.StatusFormat, vdevIO)
	}
}

var (
	commandRunsDesc = desc("exporter", "command_runs_total",
		"Processes started, by kind of command: program, subcommand and the option that picks the output form (zpool status -j, zpool get all-vdevs). The command lines of one kind, one per pool for example, count together.", "command")
	commandFailuresDesc = desc("exporter", "command_failures_total",
		"Runs of a kind of command that failed, by reason: error (failed or could not start), timeout (killed at the scrape deadline), refused (not started: an earlier process of the same command line had not exited). A series appears at its first failure; a form that an older zpool refuses at start is no failure. The log says which command failed and why.", "command", "reason")
	commandHungDesc = desc("exporter", "command_hung",
		"1 while a process of a kind of command was killed but has not exited (zpool stuck in the kernel, for example on a suspended pool).", "command")
)

// commandCounts is what the metrics say of one kind of command.
type commandCounts struct {
	runs, errors, timeouts, refused uint64
	hung                            bool
}

// collectCommandMetrics reports the runner's counts by kind of command,
// when the runner keeps them. Kinds keep the series few and their labels
// short on a host of many pools, whose command lines name each pool.
func (e *Exporter) collectCommandMetrics(ch chan<- prometheus.Metric) {
	r, ok := e.cfg.Runner.(runner.StatsReporter)
	if !ok {
		return
	}
	kinds := map[string]*commandCounts{}
	for _, st := range r.Stats() {
		c := kinds[st.Kind]
		if c == nil {
			c = &commandCounts{}
			kinds[st.Kind] = c
		}
		c.runs += st.Runs
		c.errors += st.Failures - st.Timeouts
		c.timeouts += st.Timeouts
		c.refused += st.Refused
		c.hung = c.hung || st.StillRunning
	}
	for kind, c := range kinds {
		counter(ch, commandRunsDesc, float64(c.runs), kind)
		for _, f := range []struct {
			reason string
			n      uint64
		}{{"error", c.errors}, {"timeout", c.timeouts}, {"refused", c.refused}} {
			if f.n > 0 {
				counter(ch, commandFailuresDesc, float64(f.n), kind, f.reason)
			}
		}
		hung := 0.0
		if c.hung {
			hung = 1
		}
		gauge(ch, commandHungDesc, hung, kind)
	}
}
