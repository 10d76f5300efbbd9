//go:build openzfsguest

package walk

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var story = flag.Bool("story", false, "record the pictures' story (TestStory) into -capture instead of skipping it")

// storyRounds is how many rounds of use the story records, one scenario
// (story-01 ...) each.
const storyRounds = 8

// TestStory records, when asked, the story that the datasets and ARC
// boards' pictures are drawn from (tests/prometheus3): a home server's
// pool tank, a raidz1 with a cache disk, and a backup mirror; a household's
// datasets (two homes under quotas, a database, media, a VM's volume)
// written and read in rounds, snapshotted every round and sent to the
// backup pool now and then. The ARC is held to 192 MiB, so that the media,
// read whole every round, miss and feed the L2ARC while the homes hit.
// After each round it captures what the exporter reads: zpool's outputs,
// the dataset and snapshot listings and the kstats.
func TestStory(t *testing.T) {
	if !*story {
		t.Skip("-story not given: the pictures' story is recorded only when asked (make story)")
	}
	if *captureDir == "" {
		t.Fatal("-story needs -capture, the directory to write the story's captures into")
	}
	if err := os.MkdirAll(*captureDir, 0o755); err != nil {
		t.Fatal(err)
	}
	setTunable(t, "zfs_arc_max", fmt.Sprint(192<<20))
	setTunable(t, "l2arc_noprefetch", "0") // the media are read sequentially
	setTunable(t, "l2arc_write_max", fmt.Sprint(32<<20))
	setTunable(t, "l2arc_write_boost", fmt.Sprint(64<<20))

	const mnt = "/mnt/story"
	zpool(t, "create", "-f", "-o", "ashift=12", "-m", mnt+"/tank", "tank",
		"raidz1", disk(1), disk(2), disk(3), "cache", disk(4))
	zpool(t, "create", "-f", "-o", "ashift=12", "-m", mnt+"/backup", "backup", "mirror", disk(5), disk(6))
	zfsCmd := func(args ...string) { t.Helper(); run(t, "zfs", args...) }
	zfsCmd("create", "-o", "compression=lz4", "-o", "quota=1G", "tank/home")
	zfsCmd("create", "tank/home/alice")
	zfsCmd("create", "-o", "refquota=300M", "tank/home/bob")
	zfsCmd("create", "-o", "recordsize=16K", "-o", "compression=zstd", "-o", "logbias=throughput", "tank/db")
	zfsCmd("create", "-o", "compression=off", "-o", "recordsize=1M", "tank/media")
	zfsCmd("create", "-V", "256M", "-o", "volblocksize=16K", "tank/vm")
	zfsCmd("create", "-o", "compression=gzip", "-o", "canmount=off", "backup/tank")

	path := func(rel string) string { return filepath.Join(mnt, "tank", rel) }
	for i := 1; i <= 3; i++ {
		writeRandom(t, path(fmt.Sprintf("media/film-%d.mkv", i)), 80)
	}
	writeText(t, path("home/alice/notes-0.txt"), 24)
	writeRandom(t, path("home/bob/photos-0.tar"), 30)
	writeRandom(t, path("db/table.ibd"), 64)
	writeVolume(t, "/dev/zvol/tank/vm", 64)

	for round := 1; round <= storyRounds; round++ {
		began := time.Now()
		writeText(t, path(fmt.Sprintf("home/alice/notes-%d.txt", round)), 12)
		writeRandom(t, path(fmt.Sprintf("home/bob/photos-%d.tar", round)), 30)
		// The database rewrites a part of its table in place: the
		// snapshots keep the blocks it replaced.
		run(t, "dd", "if=/dev/urandom", "of="+path("db/table.ibd"), "bs=1M", "count=12",
			fmt.Sprint("seek=", (round*12)%64), "conv=notrunc,fsync", "status=none")
		readAll(t, path("media"))
		readAll(t, path("home/alice"))
		if round == 3 {
			// Deleted, but held by the snapshots.
			if err := os.Remove(path("home/bob/photos-0.tar")); err != nil {
				t.Fatal(err)
			}
		}
		snap := fmt.Sprintf("round-%02d", round)
		zfsCmd("snapshot", "-r", "tank/home@"+snap)
		zfsCmd("snapshot", "tank/db@"+snap)
		switch round {
		case 2:
			run(t, "sh", "-c", "zfs send -R tank/home@round-02 | zfs recv -u backup/tank/home")
		case 5, 8:
			run(t, "sh", "-c", fmt.Sprintf("zfs send -R -I @round-02 tank/home@%s | zfs recv -u -F backup/tank/home", snap))
		}
		run(t, "sync")
		scenario := fmt.Sprintf("story-%02d", round)
		capture(t, scenario)
		captureDatasets(t, scenario)
		captureKstats(t, scenario)
		t.Logf("%s recorded in %s", scenario, time.Since(began).Round(time.Second))
	}
}

// writeText writes mib MiB of text that compresses as a person's notes
// do, and syncs it.
func writeText(t *testing.T, path string, mib int) {
	t.Helper()
	var b strings.Builder
	for i := 0; b.Len() < mib<<20; i++ {
		fmt.Fprintf(&b, "%08d the pool resilvered overnight; scrub on sunday, %d errors, check disk %d\n", i, i%7, i%5)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, "sync", path)
}

// writeVolume writes mib MiB of random data to a volume, once udev has
// made its device.
func writeVolume(t *testing.T, dev string, mib int) {
	t.Helper()
	for i := 0; ; i++ {
		if _, err := os.Stat(dev); err == nil {
			break
		}
		if i == 100 {
			t.Fatalf("%s did not appear", dev)
		}
		time.Sleep(100 * time.Millisecond)
	}
	run(t, "dd", "if=/dev/urandom", "of="+dev, "bs=1M", fmt.Sprint("count=", mib), "oflag=direct", "status=none")
}

// readAll reads every file under dir, as a player or an editor would.
func readAll(t *testing.T, dir string) {
	t.Helper()
	run(t, "sh", "-c", "cat "+dir+"/* >/dev/null")
}
