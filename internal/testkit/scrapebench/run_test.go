package scrapebench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A short run over the guest's captures, a generated host and one with
// datasets and snapshots, with the binaries built from this checkout:
// every exporter answers, its zpool and zfs runs are counted, no
// collector fails and nothing goes unanswered.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the exporter and the stand-in")
	}
	work := t.TempDir()
	bin := Binaries{Ours: filepath.Join(work, "zpool_exporter"), StandIn: filepath.Join(work, "zpool"), ZFS: filepath.Join(work, "zfs"),
		Peer: "../../../../shared/peers/pdf_zfs_exporter"}
	for pkg, out := range map[string]string{"../../../cmd/zpool_exporter": bin.Ours, "../hostgen/cmd/zpool": bin.StandIn, "../hostgen/cmd/zfs": bin.ZFS} {
		if out, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	o := Options{Bin: bin, Work: work, MaxLeaves: 10, CheapLeaves: 10, Slow: 10 * time.Millisecond,
		CaptureDirs: []string{"../../zfs/zpool/testdata/openzfs-2.3-guest", "../../../collector/testdata/openzfs-2.4-guest"},
		Plan:        Plan{Warmup: 1, Rounds: 1, Scrapes: 2}, Progress: testWriter{t},
		Datasets:    Launch{SnapshotDelay: time.Second, SnapshotInterval: 2 * time.Second},
		DatasetPlan: Plan{Warmup: 1, Rounds: 1, Scrapes: 3, Every: time.Second}}
	if _, err := os.Stat(bin.Peer); err != nil {
		o.PeerMissing, o.Bin.Peer = "not here", ""
	}
	var err error
	if o.Hosts, err = ParseHosts("small 1x4 2x8 1x4:20d:100s", "2.3"); err != nil {
		t.Fatal(err)
	}
	rows, err := Run(o)
	if err != nil {
		t.Fatal(err)
	}
	skipped := 0
	for _, r := range rows {
		switch {
		case r.Skipped != "":
			skipped++
		case r.Series == 0 || r.Runs <= 0 || r.P50 <= 0 || r.RSS == 0:
			t.Errorf("%s, %s by %s: %+v", r.Host, r.Exporter, r.Via, r)
		case len(r.Notes) > 0:
			t.Errorf("%s, %s by %s: %v", r.Host, r.Exporter, r.Via, r.Notes)
		}
	}
	if want := 1 + map[bool]int{true: 2, false: 0}[o.PeerMissing != ""]; skipped != want {
		t.Errorf("%d rows skipped, want %d (2x8 has more leaves than %d)", skipped, want, o.MaxLeaves)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
