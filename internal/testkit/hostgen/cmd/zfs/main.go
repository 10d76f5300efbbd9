// Command zfs stands in for zfs on a host written by hostgen with
// datasets (Spec.Datasets), answering zfs list and zfs get from the
// host's files as zfs 2.3.2 or 2.4.4 would (hostgen.AnswerZFS). It reads
// its settings from standin.conf beside its executable (copy the binary,
// a symbolic link is resolved away), the file the stand-in zpool reads:
//
//	host=/tmp/host         the host's directory (required)
//	delay=150ms            how long each answer takes, as a slow zfs would
//	snapshot_delay=60s     how long instead when it walks the snapshots
//	log=/tmp/runs.log      a line is appended here for every run
//
// The stand-in reads the host's datasets (and snapshots, if the command
// walks them), sleeps what is left of the delay, then prints the answer
// as it makes it (some 0.1 s for 10,000 datasets, more for 100,000
// snapshots): zfs too prints only once it has walked the datasets. A command zfs refuses (an unknown
// property, a dataset that does not exist) is refused as zfs does, with
// its message and exit status, and logged as "exit N: zfs ...". A command
// line the stand-in cannot answer (another subcommand, a host without
// datasets) fails with exit status 2 and is logged as "unanswered: zfs
// ...", as the stand-in zpool logs it.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
)

func main() {
	start := time.Now()
	s, err := hostgen.ReadOwnStandIn()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zfs stand-in:", err)
		os.Exit(1)
	}
	q, err := hostgen.ReadZFS(s.Host, os.Args[1:])
	delay, status := s.Delay, 0
	if err == nil {
		if q.Snapshots() && s.SnapshotDelay > 0 {
			delay = s.SnapshotDelay
		}
		status = q.Status()
	}
	// Logged before the wait, which the exporter may cut short.
	logRun(s.Log, os.Args[1:], status, err)
	time.Sleep(delay - time.Since(start))
	if err != nil {
		fmt.Fprintln(os.Stderr, "zfs stand-in:", err)
		os.Exit(2)
	}
	stderr, status, err := q.Answer(os.Stdout)
	os.Stderr.Write(stderr)
	if err != nil {
		os.Exit(1)
	}
	os.Exit(status)
}

// logRun logs the command line, marked when it failed or went
// unanswered.
func logRun(path string, args []string, status int, err error) {
	line := "zfs " + strings.Join(args, " ")
	switch {
	case err != nil:
		line = "unanswered: " + line
	case status != 0:
		line = fmt.Sprintf("exit %d: %s", status, line)
	}
	hostgen.LogRun(path, line)
}
