package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Every flag is tried with values it cannot take: each is refused before
// anything starts, with exit status 2 and one line that names the flag,
// never a panic. A flag of --help without a case here fails the test.
func TestEveryFlagRefusesBadValues(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	badWebConfig := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(badWebConfig, []byte("tls_server_config: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"web.telemetry-path":                  {"metrics", "", "/-/healthy", "/api/v1/benchmark/", "/api/v1/benchmark/windows", "/a b", "/metrics/{x}", "/a/../metrics", "GET /metrics"},
		"web.listen-address":                  {"", "foo", "9134", ":nosuchport", "host:"},
		"web.config.file":                     {"/nonexistent/web.yml", badWebConfig},
		"log.level":                           {"loud", ""},
		"log.format":                          {"xml"},
		"benchmark.retention":                 {"abc", "0s", "-1d"},
		"benchmark.max-window-duration":       {"abc", "-1d"},
		"zpool.command":                       {"", " "},
		"zfs.command":                         {""},
		"kstat.path":                          {""},
		"zpool.replay-dir":                    {"/nonexistent/replay", notDir},
		"zpool.replay-step":                   {"5", "-1s", "1ns"},
		"collector.dataset.include":           {"(", "[a-"},
		"collector.dataset.exclude":           {"("},
		"collector.dataset.max":               {"abc", "-1", "1.5e400"},
		"collector.dataset.depth":             {"-3", "x"},
		"collector.dataset.snapshot-interval": {"5", "-1s", "1ms"},
		"collector.vdev_latency.max-vdevs":    {"-1", "many"},
		"scrape.timeout":                      {"10", "0s", "-1s", "1ns"},
		"scrape.timeout-offset":               {"1", "100ms", "-1s"},
		"zpool.iostat-interval":               {"10", "-1s", "1ns"},
		"disk.iostat-interval":                {"10", "-2s", "1500ms"},
		"output":                              {"/tmp/out.prom"}, // without --once
	}
	flags := helpFlags(t)
	for _, f := range flags {
		if f.isSwitch && !kingpinOwn[f.name] {
			cases[f.name] = append(cases[f.name], "maybe", "1")
		}
	}
	for _, f := range flags {
		if len(cases[f.name]) == 0 && !kingpinOwn[f.name] {
			t.Errorf("--%s has no bad value tried here", f.name)
		}
	}
	for flag, values := range cases {
		for _, v := range values {
			arg := "--" + flag + "=" + v
			t.Run(arg, func(t *testing.T) {
				stderr, code := runRefused(t, arg)
				if code != 2 {
					t.Errorf("exit status %d, want 2; stderr:\n%s", code, stderr)
				}
				if strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
					t.Errorf("want one line, no stack; stderr:\n%s", stderr)
				}
				if !strings.Contains(stderr, "--"+flag) {
					t.Errorf("the error does not name --%s: %s", flag, stderr)
				}
			})
		}
	}
	// The switches as they are meant, and values they take, start.
	if _, code := runRefused(t, "--once", "--output="+filepath.Join(t.TempDir(), "out.prom"), "--zpool.replay-dir="+replayDir, "--scrape.timeout-offset=2s", "--zpool.iostat-interval=0", "--disk.iostat-interval=0"); code != 0 {
		t.Errorf("good values refused: exit %d", code)
	}
}

// kingpinOwn are kingpin's flags, which print and exit before any value is
// looked at.
var kingpinOwn = map[string]bool{"help": true, "help-long": true, "help-man": true, "version": true}

// helpFlagLine is a flag's line in --help: flag lines start within six
// columns, wrapped help lines further in. It gives "[no-]" for a switch,
// and the name.
var helpFlagLine = regexp.MustCompile(`(?m)^ {2,6}(?:-\w, )?--(\[no-\])?([\w.-]+)`)

// helpFlag is a flag as --help lists it.
type helpFlag struct {
	name     string
	isSwitch bool // --[no-]name
}

func helpFlags(t *testing.T) []helpFlag {
	t.Helper()
	out, _, code := runBinary(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	var flags []helpFlag
	for _, m := range helpFlagLine.FindAllStringSubmatch(out, -1) {
		flags = append(flags, helpFlag{name: m[2], isSwitch: m[1] != ""})
	}
	if len(flags) < 40 {
		t.Fatalf("found %d flags in --help:\n%s", len(flags), out)
	}
	return flags
}

// runRefused runs the exporter, which should stop at once: a run that
// goes on is killed after ten seconds and reported.
func runRefused(t *testing.T, args ...string) (stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exporterBin, append([]string{"--web.listen-address=127.0.0.1:0"}, args...)...)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v was not refused: the exporter started and ran until killed", args)
	}
	if exit, ok := err.(*exec.ExitError); ok {
		return errOut.String(), exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return errOut.String(), 0
}

// The flags of the benchmark history, which the exporter no longer has,
// are still accepted, whatever their value, and each is logged once as
// doing nothing; --help does not list them.
func TestRemovedFlagsAreIgnored(t *testing.T) {
	stderr, code := runRefused(t, "--once", "--output="+filepath.Join(t.TempDir(), "out.prom"), "--zpool.replay-dir="+replayDir,
		"--benchmark.history-interval=5s", "--benchmark.history-retention=any")
	if code != 0 {
		t.Fatalf("exit status %d, want 0; stderr:\n%s", code, stderr)
	}
	for _, flag := range []string{"benchmark.history-interval", "benchmark.history-retention"} {
		want := "--" + flag + " no longer does anything: zpool_bench samples /metrics itself; remove the flag"
		if n := strings.Count(stderr, want); n != 1 {
			t.Errorf("stderr says %d times %q, want once:\n%s", n, want, stderr)
		}
	}
	for _, f := range helpFlags(t) {
		if strings.HasPrefix(f.name, "benchmark.history") {
			t.Errorf("--help lists --%s", f.name)
		}
	}
}
