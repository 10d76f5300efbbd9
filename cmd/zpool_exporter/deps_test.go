package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/zpool-exporter/zpool_exporter"

// goList runs go list with args from the module's root and returns its
// output's lines.
func goList(t *testing.T, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		if exit, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, exit.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return strings.Split(strings.TrimSpace(string(out)), "\n")
}

// The exporter links none of zpool_bench's packages (internal/zpoolbench)
// and none of the tests' and benchmarks' scaffolding (internal/testkit):
// what ships in the daemon is what the tree shows under internal/ beside
// them. Of benchmarks it links the windows' API alone: zpool_bench reads
// a run's samples from /metrics or from Prometheus.
func TestExporterLinksNeitherZpoolBenchNorTestkit(t *testing.T) {
	deps := goList(t, "-deps", "./cmd/zpool_exporter")
	// A listing without the packages the exporter does link would prove
	// nothing about those it must not.
	for _, pkg := range []string{module + "/collector", module + "/internal/benchwindow"} {
		if !slices.Contains(deps, pkg) {
			t.Fatalf("go list -deps does not list %s:\n%s", pkg, strings.Join(deps, "\n"))
		}
	}
	// The folders hold packages, or the test proves nothing.
	for _, folder := range []string{"internal/zpoolbench", "internal/testkit"} {
		pkgs := goList(t, "./"+folder+"/...")
		if len(pkgs) < 5 {
			t.Fatalf("%s holds %d packages: %v", folder, len(pkgs), pkgs)
		}
		for _, dep := range deps {
			if strings.HasPrefix(dep, module+"/"+folder+"/") {
				t.Errorf("zpool_exporter links %s", dep)
			}
		}
	}
}

// ZFS is read through the client, internal/zfs: the status page and
// poolconfig import it and not the collectors, which map what it reads to
// metrics; the collectors know nothing of the status page that reads their
// gather; and zpool_bench, which reads a pool's
// configuration, links no collector.
func TestReadersOfZFSImportTheClient(t *testing.T) {
	imports := map[string][]string{}
	for _, line := range goList(t, "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...") {
		fields := strings.Fields(line)
		imports[fields[0]] = fields[1:]
	}
	for _, pkg := range []string{"internal/zpoolbench/poolconfig", "internal/statuspage"} {
		got, ok := imports[module+"/"+pkg]
		if !ok {
			t.Fatalf("go list ./... does not list %s", pkg)
		}
		if !slices.Contains(got, module+"/internal/zfs") {
			t.Errorf("%s does not import the client internal/zfs: %v", pkg, got)
		}
		if slices.Contains(got, module+"/collector") {
			t.Errorf("%s imports collector", pkg)
		}
	}
	for pkg, got := range imports {
		if pkg != module+"/collector" && !strings.HasPrefix(pkg, module+"/collector/") {
			continue
		}
		if slices.Contains(got, module+"/internal/statuspage") {
			t.Errorf("%s imports internal/statuspage", pkg)
		}
	}
	if deps := goList(t, "-deps", "./collector/..."); slices.Contains(deps, module+"/internal/statuspage") {
		t.Error("collector depends on internal/statuspage")
	}
	bench := goList(t, "-deps", "./cmd/zpool_bench")
	if !slices.Contains(bench, module+"/internal/zfs") {
		t.Fatalf("go list -deps ./cmd/zpool_bench does not list internal/zfs:\n%s", strings.Join(bench, "\n"))
	}
	if slices.Contains(bench, module+"/collector") {
		t.Error("zpool_bench links collector")
	}
}
