package iostat

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/sample"
)

// seeds adds every fixture and every readable corpus and capture sample.
func seeds(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, p := range paths {
		if s, err := sample.Read(p); err == nil {
			f.Add(s.Body)
		}
	}
	// The shared samples sit beside the checkout; without them the
	// targets still run on the fixtures.
	for _, sub := range []string{"corpus/iostat", "captures/openzfs-2.3"} {
		paths, _ := filepath.Glob(filepath.Join("..", "..", "..", "..", "shared", sub, "*.txt"))
		for _, p := range paths {
			if s, err := sample.Read(p); err == nil {
				f.Add(s.Body)
			}
		}
	}
}

func FuzzParseIostat(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		reports, err := ParseIostat(bytes.NewReader(data))
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
	seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		summary, err := ParseErrorSummary(bytes.NewReader(data))
		if err != nil && summary != nil {
			t.Fatalf("summary %+v returned with error %v", summary, err)
		}
		for _, s := range summary {
			if s.Device == "" {
				t.Fatalf("summary without a device: %+v", s)
			}
		}
	})
}
