// Command zpool_exporter exports ZFS pool and vdev health, scrub and
// resilver progress and per-vdev I/O to Prometheus.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/common/promslog"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the exporter from its arguments to its exit status: 2 for a flag
// it cannot run with, 1 when it cannot start or its server fails.
func run(args []string, stdout, stderr io.Writer) int {
	app, o := newApp(stdout, stderr)
	if err := o.parse(app, args); err != nil {
		fmt.Fprintf(stderr, "zpool_exporter: %v; try --help\n", err)
		return 2
	}
	logger := promslog.New(o.log)
	for _, f := range o.removed {
		if f.given {
			logger.Warn(f.Warning())
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	w, err := build(*o, logger)
	if err != nil {
		logger.Error("cannot start", "err", err)
		return 1
	}
	if o.once {
		return w.once(ctx, stdout)
	}
	return w.serve(ctx)
}
