package zpool

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// histogramSeeds are the package's histogram fixtures and the guests'
// -w and -r captures, which every checkout has, and the shared -w and -r
// samples when they are there.
func histogramSeeds(t testing.TB) [][]byte {
	seeds := sample.Bodies(
		sample.Glob(t, "testdata/histogram", "*.txt"),
		sample.Glob(t, "testdata/openzfs-2.1-guest", "*__zpool_iostat_-v*_-[wr].txt"),
		sample.Glob(t, "testdata/openzfs-2.3-guest", "*__zpool_iostat_-v*_-[wr].txt"),
		sample.Glob(t, "testdata/openzfs-2.4-guest", "*__zpool_iostat_-v*_-[wr].txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*__zpool-iostat-*w.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*__zpool-iostat-*r.txt"),
	)
	for _, f := range sample.Seeds(t, "corpus/zpool-iostat", "*.txt") {
		if isHistogramCommand(f.Header["command"]) {
			seeds = append(seeds, f.Body)
		}
	}
	return seeds
}

// FuzzParseHistograms reads any input as both kinds: it must never
// panic, and must return either an error naming its line, or tables that
// hold all their buckets, in order, with a count per column.
func FuzzParseHistograms(f *testing.F) {
	addSeeds(f, histogramSeeds)
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, kind := range []HistogramKind{LatencyHistogram, SizeHistogram} {
			tables, err := ParseHistograms(bytes.NewReader(in), kind)
			if err != nil {
				if tables != nil {
					t.Errorf("%s: %d tables returned with the error %v", kind.describe(), len(tables), err)
				}
				if !strings.HasPrefix(err.Error(), "line ") {
					t.Errorf("%s: error %q does not name its line", kind.describe(), err)
				}
				parsetest.Check(t, err)
				continue
			}
			checkHistograms(t, kind, tables)
		}
	})
}

func TestParseHistogramsFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{
		"FuzzParseHistograms": histogramSeeds,
	})
}
