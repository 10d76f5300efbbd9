//go:build unix

package collector

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

// argvStandIn writes an executable stand-in called name that appends its
// arguments to DIR/argv, one invocation a line, each argument ended by
// \x1f, and then runs script. It returns the stand-in's path. The line is
// written at once: the collectors run zpool side by side, and a line
// written in two parts could take another's in between.
func argvStandIn(t *testing.T, dir, name, script string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	body := "#!/bin/sh\nD=\"$(dirname \"$0\")\"\nL=$(printf '%s\\037' " + name + " \"$@\")\nprintf '%s\\n' \"$L\" >>\"$D/argv\"\n" + script + "\n"
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordedArgv reads the invocations the stand-ins in dir recorded.
func recordedArgv(t *testing.T, dir string) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "argv"))
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	for line := range strings.Lines(string(data)) {
		args := strings.Split(strings.TrimSuffix(line, "\n"), "\x1f")
		calls = append(calls, args[:len(args)-1])
	}
	return calls
}

// checkNamesAfterOptionsEnd fails t for each call that passes name
// without a "--" ahead of it, or with an operand between the subcommand
// and the "--": getopt without glibc's reordering (FreeBSD, illumos) stops
// at the first operand and would take a later "--" for a name. It returns
// how many calls passed name.
func checkNamesAfterOptionsEnd(t *testing.T, calls [][]string, name string) (checked int) {
	t.Helper()
	for _, call := range calls {
		at := slices.Index(call, name)
		if at < 0 {
			continue
		}
		checked++
		end := slices.Index(call, "--")
		if end < 0 || end > at {
			t.Errorf("%q: the name %s is not preceded by --", call, name)
			continue
		}
		opts := call[1:end]
		if len(opts) > 0 && !strings.HasPrefix(opts[0], "-") {
			opts = opts[1:] // the subcommand: zpool get, zfs get
		}
		for _, a := range opts {
			if !strings.HasPrefix(a, "-") {
				t.Errorf("%q: the operand %s comes before --", call, a)
			}
		}
	}
	return checked
}

// A pool's name comes from zpool's own output and may start with "-":
// passed as an argument, it must not be read as an option.
func TestPoolNamesNeverReadAsOptions(t *testing.T) {
	dir := t.TempDir()
	status := "  pool: -o\n state: ONLINE\nconfig:\n\n\tNAME        STATE     READ WRITE CKSUM\n\t-o          ONLINE       0     0     0\n\t  sda       ONLINE       0     0     0\n\nerrors: No known data errors\n"
	if err := os.WriteFile(filepath.Join(dir, "status.txt"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	zpoolCmd := argvStandIn(t, dir, "zpool", `case "$1 $2" in
"status -j") echo "invalid option 'j'" >&2; exit 2 ;;
"status "*) cat "$D/status.txt" ;;
"get -Hp") [ "$3" = all ] && [ $# -eq 3 ] && printf -- '-o\tsize\t100\t-\n' && exit 0; exit 2 ;;
*) exit 2 ;;
esac`)
	run := runner.NewExec(runner.ExecOptions{})
	logger := slog.New(slog.DiscardHandler)
	cfg := testConfig(zfs.Config{Runner: run, Zpool: zpoolCmd, Location: time.UTC, Now: func() time.Time { return testNow }}, Config{}, logger)
	e, err := New(cfg, logger, allCollectors)
	if err != nil {
		t.Fatal(err)
	}
	fams := gather(t, e)
	if v, ok := value(fams, "zfs_pool_state", map[string]string{"pool": "-o", "state": "online"}); !ok || v != 1 {
		t.Fatalf("the stand-in's pool -o was not read: %v %v", v, ok)
	}
	calls := recordedArgv(t, dir)
	if checkNamesAfterOptionsEnd(t, calls, "-o") == 0 {
		t.Errorf("no command passed the pool's name; calls: %q", calls)
	}
}
