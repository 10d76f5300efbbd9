package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/zpool-exporter/zpool_exporter"

// The exporter links the names of the families a benchmark report reads,
// for its history, but neither the report nor the workload parsers, which
// only zpool_bench needs.
func TestExporterLinksNoBenchmarkReport(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, exit.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	// A listing without the packages the exporter does link would prove
	// nothing about those it must not.
	for _, pkg := range []string{module + "/collector", module + "/internal/benchmetrics"} {
		if !slices.Contains(deps, pkg) {
			t.Fatalf("go list -deps . does not list %s:\n%s", pkg, out)
		}
	}
	for _, pkg := range []string{module + "/internal/benchreport", module + "/internal/workload"} {
		if slices.Contains(deps, pkg) {
			t.Errorf("zpool_exporter links %s", pkg)
		}
	}
}
