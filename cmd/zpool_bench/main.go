// Command zpool_bench runs a benchmark (dd, fio, bonnie++, dbench,
// filebench, a file copy...) inside a benchmark window of zpool_exporter,
// and reports what the pool did during it: bytes moved, average and peak
// bandwidth of the pool and of each vdev, latency percentiles, CPU, ARC hit
// ratio and pool state, beside the tool's own figures. Runs are saved, and compare puts them side
// by side.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/version"

	"github.com/zpool-exporter/zpool_exporter/internal/cliflag"
)

func main() {
	signals := make(chan os.Signal, 4)
	// From the start, so that a Ctrl-C while the window opens still ends
	// it; the workload gets the signals once it runs.
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	os.Exit(run(context.Background(), os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, signals: signals}))
}

// env is what a command talks to: standard streams and the signals sent
// to the process.
type env struct {
	stdin          *os.File
	stdout, stderr io.Writer
	signals        <-chan os.Signal
}

// Exit statuses of zpool_bench's own failures; a run passes on the
// workload's status.
const (
	exitFailure = 1
	exitUsage   = 2
)

func run(ctx context.Context, args []string, e env) int {
	app := kingpin.New("zpool_bench", "Runs a benchmark inside a benchmark window of zpool_exporter and reports what the pool did during it; compares runs.\n\n"+
		"  zpool_bench run --name \"raidz1 ashift=12 lz4\" --pool tank -- fio --name=seq --rw=write --size=4G --directory=/tank\n"+
		"  zpool_bench compare runs/mirror.json runs/raidz1.json\n\n"+
		"zpool_exporter must run with --web.enable-benchmark-api (and, where vdev I/O comes from zpool iostat, --zpool.iostat-interval=1s for second-by-second figures; "+
		"its vdev_latency collector, on by default, gives the latency of the pool and its top-level vdevs).")
	app.UsageWriter(e.stdout)
	app.ErrorWriter(e.stderr)
	app.Version(version.Print("zpool_bench"))
	app.HelpFlag.Short('h')

	r := &runCommand{env: e}
	r.register(app)
	rep := &reportCommand{env: e}
	rep.register(app)
	cmp := &compareCommand{env: e}
	cmp.register(app)
	list := &listCommand{env: e}
	list.register(app)

	chosen, err := cliflag.Parse(app, args)
	if err != nil {
		fmt.Fprintf(e.stderr, "zpool_bench: %v; try --help\n", err)
		return exitUsage
	}
	switch chosen {
	case "run":
		return r.run(ctx)
	case "report":
		return rep.run()
	case "compare":
		return cmp.run()
	case "list":
		return list.run()
	}
	return exitUsage
}

// warnf prints a message of zpool_bench's own, set apart from the
// workload's output.
func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "zpool_bench: "+format+"\n", args...)
}
