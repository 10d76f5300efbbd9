package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

const installZFS = "install ZFS (package zfsutils-linux on Debian and Ubuntu, zfs on RHEL and Fedora, in the base system on FreeBSD)"

// notInstalled logs once that a command the collectors run is not
// installed, and what to do about it. Without zpool every ZFS collector
// fails the same way at every scrape: the metrics say so at every scrape
// (zfs_exporter_collector_success, zfs_exporter_source_up), the log once.
type notInstalled struct {
	logger     *slog.Logger
	zpool, zfs string // as --zpool.command and --zfs.command give them

	mu   sync.Mutex
	told map[string]bool // by program, zpool and zfs being ZFS
}

// tell logs err, a failure of a command that is not installed, unless the
// same program's was told already.
func (m *notInstalled) tell(err error) {
	program, advice := m.advice(commandLine(err))
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.told[program] {
		return
	}
	if m.told == nil {
		m.told = map[string]bool{}
	}
	m.told[program] = true
	m.logger.Error(advice+". Logged once: until then the collectors that run it fail at every scrape.", "err", err)
}

// explain gives err, a failure of a command that is not installed, the
// advice the log gives, for a reader such as the status page.
func (m *notInstalled) explain(err error) error {
	_, advice := m.advice(commandLine(err))
	return fmt.Errorf("%s (%w)", advice, err)
}

// commandLine is the command line of a failed run, "" when err is not a
// run's.
func commandLine(err error) string {
	if e, ok := errors.AsType[*runner.Error](err); ok {
		return e.Command
	}
	return ""
}

// advice says what to do about the command of line, and which program it
// is: one hint covers zpool and zfs, which ZFS installs together.
func (m *notInstalled) advice(line string) (program, advice string) {
	switch {
	case strings.HasPrefix(line, m.zpool+" "):
		return "ZFS", fmt.Sprintf("%s not found: %s, point --zpool.command at zpool, or run zpool_exporter --demo to see the exporter without ZFS", m.zpool, installZFS)
	case strings.HasPrefix(line, m.zfs+" "):
		return "ZFS", fmt.Sprintf("%s not found: %s or point --zfs.command at zfs, or turn off the dataset collector that runs it (--no-collector.dataset)", m.zfs, installZFS)
	}
	program, _, _ = strings.Cut(line, " ")
	return program, fmt.Sprintf("%s not found: install it", program)
}
