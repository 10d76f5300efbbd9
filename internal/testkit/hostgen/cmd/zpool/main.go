// Command zpool stands in for zpool on a host written by hostgen, so
// that an exporter that runs zpool reads the same host as one that
// replays it. It reads its settings from standin.conf beside its
// executable (copy the binary, a symbolic link is resolved away), since
// zpool_exporter passes its commands hardly any of its environment:
//
//	host=/tmp/host      the host's directory (required)
//	delay=150ms         how long each answer takes, as a slow zpool would
//	log=/tmp/runs.log   a line is appended here for every run
//
// A command line the host holds no output of fails with exit status 2,
// as zpool does on a command it does not know, and is logged as such.
package main

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
)

func main() {
	s, err := hostgen.ReadOwnStandIn()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zpool stand-in:", err)
		os.Exit(1)
	}
	out, err := hostgen.Answer(s.Host, os.Args[1:])
	logRun(s.Log, os.Args[1:], err)
	time.Sleep(s.Delay)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zpool stand-in:", err)
		os.Exit(2)
	}
	os.Stdout.Write(out)
	if hostgen.Follows(os.Args[1:]) {
		// `zpool events -f` goes on waiting for events until it is
		// killed.
		time.Sleep(math.MaxInt64)
	}
}

// logRun logs the command line, marked when it went unanswered.
func logRun(path string, args []string, err error) {
	line := "zpool " + strings.Join(args, " ")
	if err != nil {
		line = "unanswered: " + line
	}
	hostgen.LogRun(path, line)
}
