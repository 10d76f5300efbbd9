package zfs

import (
	"context"
	"io/fs"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// Config says how a Client reaches ZFS.
type Config struct {
	// Runner runs zpool, and sysctl or kstat where the kernel's
	// statistics come from a command; required.
	Runner runner.Runner
	// Zpool is the zpool command, "zpool" unless set.
	Zpool string
	// Zfs is the zfs command, "zfs" unless set.
	Zfs string
	// Location is the time zone zpool prints dates in (the host's, unless
	// set).
	Location *time.Location
	// Kstat is the kernel's ZFS kstat directory (/proc/spl/kstat/zfs on
	// Linux); nil where there is none.
	Kstat fs.FS
	// KstatOS chooses how kstats are read: "linux" (Kstat), "freebsd"
	// (sysctl), "illumos" or "solaris" (kstat -p). The host's OS unless
	// set.
	KstatOS string
	// Now is the clock, for tests.
	Now func() time.Time
}

// Client reads ZFS for the exporter and keeps what must outlive a scrape:
// what this zpool can print, and when each source last worked. It is safe
// for concurrent use.
type Client struct {
	cfg    Config
	logger *slog.Logger

	detectMu sync.Mutex // held while detecting, which may take a whole scrape

	mu   sync.Mutex // guards what follows
	caps *Capabilities
	// The last detection that did not conclude, and how many did not: a
	// caller that waited for one that failed takes its error rather than
	// wait out a second one in the same scrape.
	detectErr    error
	detectFailed int
	freshness    map[string]SourceState
	lackedStates bool // the last JSON status lacked a vdev's state
	noHistograms bool // zpool iostat refused -w, -r or -q
	noVersion    bool // zpool refused the version command
	// The forms learned by asking that have answered once (learning).
	answered map[string]bool
	// The first form of `zpool list -v` this zpool has not refused (an
	// index in vdevListForms; past its end, none is left).
	vdevListForm int
	// Vdev properties this zpool does not know, as learned from its
	// refusals.
	refusedVdevProperties map[string]bool
	// How zfs lists filesystems and volumes, and snapshots, once learned.
	datasets, snapshots listing

	limits outputLimits
}

// New returns a Client; capabilities are detected on first use.
func New(cfg Config, logger *slog.Logger) *Client {
	if cfg.Zpool == "" {
		cfg.Zpool = "zpool"
	}
	if cfg.Zfs == "" {
		cfg.Zfs = "zfs"
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
	return &Client{cfg: cfg, logger: logger, freshness: map[string]SourceState{},
		datasets:  listing{types: "filesystem,volume", properties: DatasetProperties},
		snapshots: listing{types: "snapshot", properties: SnapshotProperties}}
}

// zpool runs the zpool command under ctx.
func (c *Client) zpool(ctx context.Context, args ...string) ([]byte, error) {
	return c.run(ctx, c.command("zpool", args, false))
}

// probe runs zpool as a capability probe (runner.Command's Probe): a form
// an older zpool refuses is an answer, not a failure of its commands.
func (c *Client) probe(ctx context.Context, args ...string) ([]byte, error) {
	return c.run(ctx, c.command("zpool", args, true))
}

// learn runs tool (zpool or zfs) as a probe until what, a command whose
// refusal the client learns from, has answered once: its "invalid option"
// on an older zpool is then an answer, not a failure in the exporter's
// command metrics. Once it answered, a failure counts.
func (c *Client) learn(ctx context.Context, what, tool string, args ...string) ([]byte, error) {
	c.mu.Lock()
	answered := c.answered[what]
	c.mu.Unlock()
	return c.run(ctx, c.command(tool, args, !answered))
}

// HasZfs reports whether the runner can answer zfs at all: false only
// for a replay that holds no capture of it.
func (c *Client) HasZfs() bool {
	if r, ok := c.cfg.Runner.(interface{ Holds(program string) bool }); ok {
		return r.Holds(c.cfg.Zfs)
	}
	return true
}

// command is the Command that runs tool, zpool or zfs, counted as that
// tool whatever the path or wrapper it runs as.
func (c *Client) command(tool string, args []string, probe bool) runner.Command {
	path := c.cfg.Zpool
	if tool == "zfs" {
		path = c.cfg.Zfs
	}
	return runner.Command{Path: path, Args: args, Program: tool, Probe: probe}
}

// run runs one of ZFS's commands under ctx, with an output limit for each
// of its subcommands. In a scrape, ctx ends before the scrape's deadline,
// as its Scrape plans.
func (c *Client) run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	var subcommand string
	if len(cmd.Args) > 0 {
		subcommand = cmd.Args[0]
	}
	if cmd.Program != "zpool" {
		subcommand = cmd.Program + " " + subcommand // the limits of zpool's keep their keys
	}
	cmd.MaxOutput, cmd.SizeHint = c.limits.of(subcommand)
	out, err := c.cfg.Runner.Run(ctx, cmd)
	if n, raised := c.limits.learn(subcommand, out, err); raised {
		c.logger.Warn(cmd.Program+"'s output passed the limit; the next run may print more", "subcommand", subcommand, "err", err, "limit_bytes", n)
	}
	return out, err
}

// learned notes that what answered, when err is nil.
func (c *Client) learned(what string, err error) {
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answered == nil {
		c.answered = map[string]bool{}
	}
	c.answered[what] = true
}
