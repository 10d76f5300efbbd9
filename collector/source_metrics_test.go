package collector

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// statsOnly is a runner that has run what its stats say.
type statsOnly struct {
	runner.Runner
	stats map[string]runner.CommandStats
}

func (s statsOnly) Stats() map[string]runner.CommandStats { return s.stats }

// collectFunc is a collector of what f sends.
type collectFunc func(chan<- prometheus.Metric)

func (f collectFunc) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(f, ch) }
func (f collectFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

func TestCommandMetricsByKind(t *testing.T) {
	vdevGet := func(pool string) string {
		return "zpool get -Hp -- read_bytes,write_bytes,read_ops,write_ops,ashift " + pool + " all-vdevs"
	}
	const (
		runsHelp = "# HELP zfs_exporter_command_runs_total Processes started, by kind of command: program, subcommand and the option that picks the output form (zpool status -j, zpool get all-vdevs). The command lines of one kind, one per pool for example, count together.\n# TYPE zfs_exporter_command_runs_total counter\n"
		failHelp = "# HELP zfs_exporter_command_failures_total Runs of a kind of command that failed, by reason: error (failed or could not start), timeout (killed at the scrape deadline), refused (not started: an earlier process of the same command line had not exited). A series appears at its first failure; a form that an older zpool refuses at start is no failure. The log says which command failed and why.\n# TYPE zfs_exporter_command_failures_total counter\n"
		hungHelp = "# HELP zfs_exporter_command_hung 1 while a process of a kind of command was killed but has not exited (zpool stuck in the kernel, for example on a suspended pool).\n# TYPE zfs_exporter_command_hung gauge\n"
	)
	for _, tc := range []struct {
		name  string
		stats map[string]runner.CommandStats
		want  string
	}{{
		name: "the pools of one kind count together",
		stats: map[string]runner.CommandStats{
			vdevGet("r10"):  {Kind: "zpool get all-vdevs", Runs: 3},
			vdevGet("mir"):  {Kind: "zpool get all-vdevs", Runs: 3},
			vdevGet("tank"): {Kind: "zpool get all-vdevs", Runs: 2},
			"zpool version": {Kind: "zpool version", Runs: 1},
		},
		want: runsHelp + `zfs_exporter_command_runs_total{command="zpool get all-vdevs"} 8
zfs_exporter_command_runs_total{command="zpool version"} 1
` + hungHelp + `zfs_exporter_command_hung{command="zpool get all-vdevs"} 0
zfs_exporter_command_hung{command="zpool version"} 0
`,
	}, {
		name: "failures by reason, and a hung process",
		stats: map[string]runner.CommandStats{
			"zpool status -j --json-int -t -i": {Kind: "zpool status -j", Runs: 5, Failures: 3, Timeouts: 2, Refused: 4, StillRunning: true},
			"zpool status -j --json-int":       {Kind: "zpool status -j", Runs: 1},
			"zpool iostat -vHp -w":             {Kind: "zpool iostat -w", Runs: 2, Failures: 1},
		},
		want: runsHelp + `zfs_exporter_command_runs_total{command="zpool iostat -w"} 2
zfs_exporter_command_runs_total{command="zpool status -j"} 6
` + failHelp + `zfs_exporter_command_failures_total{command="zpool iostat -w",reason="error"} 1
zfs_exporter_command_failures_total{command="zpool status -j",reason="error"} 1
zfs_exporter_command_failures_total{command="zpool status -j",reason="refused"} 4
zfs_exporter_command_failures_total{command="zpool status -j",reason="timeout"} 2
` + hungHelp + `zfs_exporter_command_hung{command="zpool iostat -w"} 0
zfs_exporter_command_hung{command="zpool status -j"} 1
`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Exporter{cfg: Config{Runner: statsOnly{stats: tc.stats}}}
			c := collectFunc(e.collectCommandMetrics)
			if err := testutil.CollectAndCompare(c, strings.NewReader(tc.want)); err != nil {
				t.Error(err)
			}
			if problems, err := testutil.CollectAndLint(c); err != nil || len(problems) > 0 {
				t.Errorf("lint: %v %v", problems, err)
			}
		})
	}
}
