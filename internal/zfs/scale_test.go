package zfs

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// One pool of 10,000 leaves, read through the stand-in zpool as a child
// process under the runner's default output limit: every vdev has its I/O
// counters. Asked for all their properties, the vdevs would print more
// than the limit, and were once taken for a zpool without vdev properties.
func TestTenThousandLeavesThroughAChild(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a host of 10,000 leaves and builds the stand-in zpool")
	}
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	spec := hostgen.Spec{Pools: 1, Leaves: 10000, Version: "2.3"}
	if err := hostgen.WriteZpool(host, spec); err != nil {
		t.Fatal(err)
	}
	all, err := os.Stat(filepath.Join(host, runner.CaptureFileName("zpool get -Hp all tank0 all-vdevs")))
	if err != nil {
		t.Fatal(err)
	}
	if all.Size() <= runner.DefaultMaxOutput {
		t.Fatalf("all the vdev properties of 10,000 leaves are %d bytes, within the output limit: the test would show nothing", all.Size())
	}
	standin := filepath.Join(dir, "bin", "zpool")
	build := exec.Command("go", "build", "-o", standin, "../testkit/hostgen/cmd/zpool")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in zpool: %v\n%s", err, out)
	}
	if err := hostgen.WriteStandIn(filepath.Join(dir, "bin"), hostgen.StandIn{Host: host}); err != nil {
		t.Fatal(err)
	}

	client := New(Config{Runner: runner.NewExec(runner.ExecOptions{}), Zpool: standin, Location: time.UTC}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := client.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vdevs := map[string]bool{}
	for _, p := range st.Pools {
		p.Root.Walk(func(v *zpool.Vdev, _ string) { vdevs[v.Name] = true })
	}
	if want := 1 + spec.Leaves/2 + spec.Leaves; len(vdevs) != want {
		t.Fatalf("status has %d vdevs, want %d", len(vdevs), want)
	}
	props, ok, err := client.VdevProperties(ctx, "tank0", "read_ops", "write_ops", "read_bytes", "write_bytes")
	if err != nil || !ok {
		t.Fatalf("vdev properties: ok %v, %v", ok, err)
	}
	counted := map[string]int{}
	for _, p := range props {
		counted[p.Name]++
	}
	for name := range vdevs {
		if name != "tank0" && counted[name] != 4 {
			t.Errorf("vdev %s has %d counters, want 4", name, counted[name])
			break
		}
	}
}
