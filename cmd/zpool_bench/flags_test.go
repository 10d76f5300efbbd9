package main

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// Every flag of zpool_bench run is tried with values it cannot take: each
// is refused before the run starts (no zpool, no window, no workload),
// with exit status 2 and one line that names the flag. A flag of
// `run --help` with neither a case here nor a reason it takes any value
// fails the test.
func TestRunRefusesBadFlagValues(t *testing.T) {
	cases := map[string][]string{
		"name":                     {"", " "},
		"exporter.url":             {"foo", "", "ftp://nas:9134", "http://"},
		"exporter.sample-interval": {"1", "0s", "-1s", "10ms"},
		"exporter.sample-timeout":  {"10", "0s", "-1s", "1ns"},
		"prometheus.url":           {"prometheus:9090", "http://"},
		"grafana.url":              {"grafana", "file:///etc/passwd"},
		"grafana.token-file":       {"/nonexistent/token"},
		"runs.dir":                 {""},
		"format":                   {"xml"},
		"tool":                     {"iozone"},
		"pool.config-from":         {"nas"},
		"zpool.command":            {""},
		"zfs.command":              {""},
		"zdb.command":              {""},
		"settle":                   {"3", "-1s"},
		"settle-timeout":           {"1m0", "0s", "-1s"},
		"kill-after":               {"10", "-1s"},
	}
	anyValue := map[string]string{
		"pool":                  "any name; an unknown pool is refused by what reads the configuration, naming the pools there are",
		"prometheus.matchers":   "label matchers Prometheus itself reads; a bad one fails at the first query, in Prometheus's words",
		"grafana.dashboard-uid": "any UID; Grafana answers an unknown one",
		"help":                  "kingpin's", "help-long": "kingpin's", "help-man": "kingpin's", "version": "kingpin's",
	}
	help, err := exec.Command(benchBin, "run", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("run --help: %v\n%s", err, help)
	}
	flags := regexp.MustCompile(`(?m)^ {2,6}(?:-\w, )?--(?:\[no-\])?([\w.-]+)`).FindAllStringSubmatch(string(help), -1)
	if len(flags) < 15 {
		t.Fatalf("found %d flags in run --help:\n%s", len(flags), help)
	}
	for _, f := range flags {
		if len(cases[f[1]]) == 0 && anyValue[f[1]] == "" {
			t.Errorf("--%s has no bad value tried here, and no reason it takes any", f[1])
		}
	}
	t.Setenv("GRAFANA_TOKEN", "")
	for flag, values := range cases {
		for _, v := range values {
			arg := "--" + flag + "=" + v
			t.Run(arg, func(t *testing.T) {
				var out, errs bytes.Buffer
				args := []string{"run"}
				for f, good := range map[string]string{"name": "bad flag", "runs.dir": t.TempDir(), "zpool.command": "/nonexistent/zpool"} {
					if f != flag {
						args = append(args, "--"+f+"="+good)
					}
				}
				args = append(args, arg, "--", "/nonexistent/workload")
				rc := run(t.Context(), args, env{stdout: &out, stderr: &errs})
				if rc != exitUsage {
					t.Errorf("exit status %d, want %d; stderr:\n%s", rc, exitUsage, errs.String())
				}
				if msg := strings.TrimRight(errs.String(), "\n"); strings.Contains(msg, "\n") || !strings.Contains(msg, "--"+flag) {
					t.Errorf("want one line naming --%s; stderr:\n%s", flag, errs.String())
				}
			})
		}
	}
}
