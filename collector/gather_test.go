package collector

import (
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// One gather over real collectors gives their metrics and the `zpool
// status` they read, which a reader takes without running zpool again.
func TestGatherGivesTheStatusTheCollectorsRead(t *testing.T) {
	replay, err := runner.NewReplay("testdata/replay/zfs-fuse/001")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := replayExporter(t, replay, 0)
	r := e.Gather(t.Context())
	if r.Err != nil || r.Time.IsZero() {
		t.Fatalf("gather: time %v, error %v", r.Time, r.Err)
	}
	if v, _ := value(r.Families(), "zfs_pool_state", map[string]string{"pool": "backup", "state": "degraded"}); v != 1 {
		t.Errorf("backup not degraded in the gather's metrics")
	}
	runs := replay.Stats()["zpool status"].Runs
	st, err := r.Status(t.Context())
	if err != nil || len(st.Pools) != 2 {
		t.Fatalf("the gather's status: %v, %v", st, err)
	}
	if n := replay.Stats()["zpool status"].Runs; n != runs {
		t.Errorf("taking the gather's status ran zpool status again (%d runs, then %d)", runs, n)
	}
}
