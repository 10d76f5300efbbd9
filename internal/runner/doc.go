// Package runner is the only code in the exporter that runs commands.
//
// Exec runs them: each child leads its own process group, runs with
// LC_ALL=C, has its stdout bounded and its stderr captured into the error,
// and is killed with its whole group at the context's deadline. What a
// child leaves running when it exits is killed too: the rest of its group,
// and (on Linux) processes outside the group that hold its output pipes.
// Identical concurrent runs share one process, and a command line never has
// more than one: a zpool stuck in the kernel on a suspended pool, be it the
// child or a process a wrapper or sudo started, makes later runs fail fast
// with ErrStillRunning until it exits, instead of piling up.
//
// Replay serves captured outputs from a directory instead (see REPLAY.md),
// for tests, demos and offline analysis. Both implement Runner, Streamer and
// StatsReporter, so the ZFS client and the collectors do not know which
// one they use.
//
// The ZFS client runs a command under its scrape's deadline and parses the
// output:
//
//	out, err := r.Run(ctx, runner.Cmd("zpool", "status", "-p"))
//	switch {
//	case errors.Is(err, runner.ErrTimeout), errors.Is(err, runner.ErrStillRunning):
//		return err // the pool may be suspended; say so in metrics
//	case err != nil:
//		return err // "zpool status -p: exit status 2: invalid option 'p'"
//	}
//	status, err := zpool.ParseStatus(bytes.NewReader(out), time.Local)
//
// A sampler reads a long-running command, restarted with back-off when it
// dies:
//
//	go runner.Supervise(ctx, runner.Backoff{}, func(ctx context.Context) error {
//		rc, err := r.StartStream(ctx, runner.Cmd("zpool", "iostat", "-vHp", "10"))
//		if err != nil {
//			return err
//		}
//		defer rc.Close()
//		sc := zpool.NewIostatScanner(rc)
//		for sc.Scan() {
//			integrate(sc.Report())
//		}
//		return sc.Err() // the stream ended: restart it
//	})
//
// Stats gives per command line counts of runs, failures, timeouts and
// refusals, and whether something of a finished run is still there (and
// what), each line with its kind (CommandKind), which the exporter's
// zfs_exporter_command_* metrics count by.
package runner
