// Command zpool stands in for zpool on a host written by benchhost, so
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
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchhost"
)

func main() {
	s, err := readSettings()
	if err != nil {
		fmt.Fprintln(os.Stderr, "zpool stand-in:", err)
		os.Exit(1)
	}
	out, err := benchhost.Answer(s.Host, os.Args[1:])
	logRun(s.Log, os.Args[1:], err)
	time.Sleep(s.Delay)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zpool stand-in:", err)
		os.Exit(2)
	}
	os.Stdout.Write(out)
}

func readSettings() (benchhost.StandIn, error) {
	exe, err := os.Executable()
	if err != nil {
		return benchhost.StandIn{}, err
	}
	return benchhost.ReadStandIn(filepath.Dir(exe))
}

// logRun appends the command line, marked when it went unanswered. One
// write of a short line with O_APPEND keeps concurrent runs' lines whole.
func logRun(path string, args []string, err error) {
	if path == "" {
		return
	}
	line := "zpool " + strings.Join(args, " ")
	if err != nil {
		line = "unanswered: " + line
	}
	f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if ferr != nil {
		return
	}
	f.WriteString(line + "\n")
	f.Close()
}
