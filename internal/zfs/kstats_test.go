package zfs

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// A kstat that cannot be read is an error that names it; the others are
// still read.
func TestKstatUnreadableMiscKeepsTheRest(t *testing.T) {
	fsys := sample.KstatCaptures(t, "09-errors-repaired")
	fsys["zil"] = &fstest.MapFile{Data: []byte("name                            type data\nzil_commit_count                4    x1\n")}
	fsys["tank/io"] = &fstest.MapFile{Data: []byte("nread    nwritten\n1 2 3\n")}
	snap, err := procfsKstats{fsys}.snapshot(context.Background())
	if err == nil || !strings.Contains(err.Error(), `zil: line 2: cannot parse unsigned value "x1"`) || !strings.Contains(err.Error(), "tank/io: line 2: ") {
		t.Errorf("error %v, want the zil and tank/io lines named", err)
	}
	if snap == nil || snap.ARC == nil {
		t.Fatal("no ARC")
	}
	if _, ok := snap.Misc["zil"]; ok {
		t.Error("zil read from a malformed file")
	}
	if _, ok := snap.PoolIO["tank"]; ok {
		t.Error("tank I/O read from a malformed file")
	}
	if len(snap.Misc) != 3 || len(snap.PoolIOStats) != 4 {
		t.Errorf("%d module-wide kstats and %d iostats, want dmu_tx, abdstats, zfetchstats and 4 pools", len(snap.Misc), len(snap.PoolIOStats))
	}
}
