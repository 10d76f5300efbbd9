package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/prometheus/common/expfmt"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// once writes one exposition to stdout, or to --output, and returns the
// exit status.
func (w *wiring) once(ctx context.Context, stdout io.Writer) int {
	o, logger := w.o, w.logger
	// The scrape detects the capabilities itself rather than wait for a
	// detection first: zpool version runs beside the probes, and the
	// status and properties are what the probes printed.
	if w.snapshots != nil && slices.Contains(w.exporter.Enabled(), "dataset") {
		// Before the scrape, under a deadline of its own: a listing of
		// many snapshots can take all of one.
		listCtx, cancel := context.WithTimeout(ctx, o.scrapeTimeout)
		switch err := w.snapshots.List(listCtx); {
		case errors.Is(err, runner.ErrNotFound):
			w.missing.tell(err)
		case err != nil:
			logger.Warn("listing snapshots failed; no snapshot series", "err", err)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(ctx, o.scrapeTimeout)
	defer cancel()
	own, err := w.base.Gather()
	if err != nil {
		logger.Error("gathering metrics", "err", err)
		return 1
	}
	reading := w.exporter.GatherOnce(ctx)
	if reading.Err != nil {
		logger.Error("gathering metrics", "err", reading.Err)
		return 1
	}
	write := func(out io.Writer) error {
		return collector.WriteText(out, expfmt.NewFormat(expfmt.TypeTextPlain), own, reading)
	}
	if o.output == "" {
		if err := write(stdout); err != nil {
			logger.Error("writing metrics", "err", err)
			return 1
		}
		return 0
	}
	if err := writeFileAtomically(o.output, write); err != nil {
		logger.Error("writing metrics", "file", o.output, "err", err)
		return 1
	}
	return 0
}

// writeFileAtomically writes to a temporary file in the same directory and
// renames it over path, so that node_exporter never reads half a file.
func writeFileAtomically(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
