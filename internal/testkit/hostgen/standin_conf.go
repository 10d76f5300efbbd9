package hostgen

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StandInConf is the file beside the stand-in zpool's executable
// (cmd/zpool) that holds its settings: zpool_exporter passes its commands
// hardly any of its environment.
const StandInConf = "standin.conf"

// StandIn is what the stand-in zpool (or zfs) answers from, and how.
type StandIn struct {
	Host  string        // the host's directory, written by Write
	Delay time.Duration // how long each answer takes, as a slow zpool would
	Log   string        // a line is appended here for every run; "" for none
	// SnapshotDelay is how long the stand-in zfs takes instead of Delay
	// to answer a command that lists or gets snapshots (ZFSAnswer's
	// Snapshots); zero for Delay. Only cmd/zfs reads it.
	SnapshotDelay time.Duration
}

// WriteStandIn writes s into dir, where a copy of the stand-in is (not a
// link: the stand-in finds its settings beside its resolved executable).
func WriteStandIn(dir string, s StandIn) error {
	conf := fmt.Sprintf("host=%s\ndelay=%v\nlog=%s\n", s.Host, s.Delay, s.Log)
	if s.SnapshotDelay != 0 {
		conf += fmt.Sprintf("snapshot_delay=%v\n", s.SnapshotDelay)
	}
	return os.WriteFile(filepath.Join(dir, StandInConf), []byte(conf), 0o644)
}

// ReadStandIn reads the settings in dir.
func ReadStandIn(dir string) (StandIn, error) {
	path := filepath.Join(dir, StandInConf)
	f, err := os.Open(path)
	if err != nil {
		return StandIn{}, err
	}
	defer f.Close()
	var s StandIn
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, _ := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		switch key {
		case "host":
			s.Host = value
		case "log":
			s.Log = value
		case "delay":
			if s.Delay, err = time.ParseDuration(value); err != nil {
				return StandIn{}, fmt.Errorf("%s: delay: %w", path, err)
			}
		case "snapshot_delay":
			if s.SnapshotDelay, err = time.ParseDuration(value); err != nil {
				return StandIn{}, fmt.Errorf("%s: snapshot_delay: %w", path, err)
			}
		}
	}
	if s.Host == "" {
		return StandIn{}, fmt.Errorf("%s: no host=DIR", path)
	}
	return s, sc.Err()
}

// ReadOwnStandIn reads the settings beside the running executable, as a
// stand-in does.
func ReadOwnStandIn() (StandIn, error) {
	exe, err := os.Executable()
	if err != nil {
		return StandIn{}, err
	}
	return ReadStandIn(filepath.Dir(exe))
}

// LogRun appends a line for a run to the log at path, if any. One write
// of a short line with O_APPEND keeps concurrent runs' lines whole.
func LogRun(path, line string) {
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	f.WriteString(line + "\n")
	f.Close()
}
