package zpool

import (
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The seeds of each fuzz target: the package's fixtures, which every
// checkout has, and the shared samples of the same command when they are
// there.

func getSeeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata/zfs-fuse", "*get*.txt"),
		sample.Glob(t, "testdata", "vdevprops-*.txt"),
		sample.Glob(t, "testdata/openzfs-2.3-guest", "*__zpool_get_*.txt"),
		sample.Seeds(t, "corpus/zpool-list", "*get*.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "09-*zpool-get-*all*.txt"),
	)
}

func listSeeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata/zfs-fuse", "*list*.txt"),
		sample.Seeds(t, "corpus/zpool-list", "list-Hp-*.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*zpool-list*-Hp.txt"),
	)
}

func iostatSeeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata", "iostat-*.txt"),
		sample.Glob(t, "testdata/zfs-fuse", "*iostat*.txt"),
		sample.Glob(t, "testdata/openzfs-2.3-guest", "*__zpool_iostat_*.txt"),
		sample.Seeds(t, "corpus/zpool-iostat", "*.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*zpool-iostat*.txt"),
	)
}

// statusSeeds are text outputs only: JSON has its own target.
func statusSeeds(t testing.TB) [][]byte {
	in := sample.Bodies(
		sample.Glob(t, "testdata", "status-*.txt"),
		sample.Glob(t, "testdata/public", "*.txt"),
		sample.Glob(t, "testdata/zfs-fuse", "*__status*.txt"),
		sample.Glob(t, "testdata/openzfs-2.3-guest", "*__zpool_status.txt"),
		sample.Glob(t, "testdata/openzfs-2.3-guest", "*__zpool_status_*-p.txt"),
		sample.Seeds(t, "corpus/zpool-status", "*.txt"),
	)
	for _, s := range sample.Seeds(t, "captures/openzfs-2.3", "*zpool-status*.txt") {
		if !strings.Contains(s.Header["command"], " -j") {
			in = append(in, s.Body)
		}
	}
	return in
}

func statusJSONSeeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata", "json-*.txt"),
		sample.Glob(t, "testdata/openzfs-2.3-guest", "*__zpool_status_-j_*.txt"),
		sample.Seeds(t, "corpus/zpool-json", "*.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*zpool-status-j*.txt"),
	)
}

func addSeeds(f *testing.F, seeds func(testing.TB) [][]byte) {
	for _, in := range seeds(f) {
		f.Add(in)
	}
}

func TestFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{
		"FuzzParseGet":         getSeeds,
		"FuzzParseList":        listSeeds,
		"FuzzParseListVerbose": listVerboseSeeds,
		"FuzzParseIostat":      iostatSeeds,
		"FuzzParseStatus":      statusSeeds,
		"FuzzParseStatusJSON":  statusJSONSeeds,
	})
}

func listVerboseSeeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata", "list-*.txt"),
		sample.Glob(t, "testdata/zfs-fuse", "*list*.txt"),
		sample.Seeds(t, "corpus/zpool-list", "*list*.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*zpool-list*.txt"),
	)
}
