package runner

import (
	"path"
	"strings"
)

// Command is one run of a program and how to run and count it.
type Command struct {
	Path string // a name looked up in PATH, or a path
	Args []string
	// Program is what the run counts as in the exporter's metrics
	// (zpool, zfs), whatever Path is: --zpool.command=/opt/bin/zpool-sudo
	// counts as zpool. Empty: Path's base name.
	Program string
	// Probe marks a capability probe: a probe that exits non-zero (or
	// finds no capture in a replay) is the command answering no, counted
	// as a run but not as a failure. Timeouts and the rest still count,
	// as they say nothing of what it can do.
	Probe bool
	// MaxOutput raises the runner's limit on stdout for this run, when
	// larger: a caller that knows its command prints much (the status of
	// a pool of many thousands of vdevs) raises it for those runs alone.
	// A run shared by several callers takes the limit of the one that
	// started it.
	MaxOutput int
	// SizeHint is about how many bytes the command printed last time: the
	// buffer that takes stdout is made that large at once, rather than
	// grown and copied, as a listing of 10,000 datasets (20 MB of JSON)
	// would be two dozen times.
	SizeHint int
}

// Cmd is the Command that runs path with args.
func Cmd(path string, args ...string) Command { return Command{Path: path, Args: args} }

// Line is how the command is named in errors, stats and replay captures
// (see CommandLine).
func (c Command) Line() string { return CommandLine(c.Path, c.Args...) }

// CommandLine is how a command is named in errors, stats and replay
// captures: name and arguments joined by single spaces.
func CommandLine(name string, args ...string) string {
	return strings.Join(append([]string{name}, args...), " ")
}

// counted is how the stats count the command, named line.
func (c Command) counted(line string) run {
	program := c.Program
	if program == "" {
		program = path.Base(c.Path)
	}
	return run{line: line, kind: CommandKind(program, c.Args), probe: c.Probe}
}

// outputLimit is the command's limit on stdout, at least def.
func (c Command) outputLimit(def int) int { return max(c.MaxOutput, def) }

// outputSizeHint is the expected size of stdout, at most limit.
func (c Command) outputSizeHint(limit int) int { return max(0, min(c.SizeHint, limit)) }
