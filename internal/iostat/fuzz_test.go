package iostat

import (
	"bytes"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// seeds are every fixture and every corpus and capture sample when the
// shared samples are there.
func seeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata", "*.txt"),
		sample.Seeds(t, "corpus/iostat", "*.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*.txt"),
	)
}

func addSeeds(f *testing.F) {
	for _, in := range seeds(f) {
		f.Add(in)
	}
}

func TestFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{"iostat": seeds})
}

func FuzzParseIostat(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		reports, err := ParseIostat(bytes.NewReader(data))
		parsetest.Check(t, err)
		if err != nil {
			if reports != nil {
				t.Fatalf("reports %+v returned with error %v", reports, err)
			}
			return
		}
		for _, r := range reports {
			for _, d := range r.Devices {
				if d.Name == "" {
					t.Fatalf("device without a name in %+v", r)
				}
			}
		}
	})
}

func FuzzParseErrorSummary(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		summary, err := ParseErrorSummary(bytes.NewReader(data))
		if err != nil && summary != nil {
			t.Fatalf("summary %+v returned with error %v", summary, err)
		}
		parsetest.Check(t, err)
		for _, s := range summary {
			if s.Device == "" {
				t.Fatalf("summary without a device: %+v", s)
			}
		}
	})
}
