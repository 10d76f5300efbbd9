package workload

import (
	"bytes"
	"io"
	"math"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// seeds are every fixture and every benchmark sample of the shared corpus
// when it is there.
func seeds(t testing.TB) [][]byte {
	return sample.Bodies(sample.Glob(t, "testdata", "*.txt"), sample.Seeds(t, "corpus/bench", "*.txt"))
}

func addSeeds(f *testing.F) {
	for _, in := range seeds(f) {
		f.Add(in)
	}
}

func TestFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{"workload": seeds})
}

// fuzzParser checks what every parser promises on any input: no panic;
// an error that names its line or says there is no summary, and no
// results with it; or results with a headline, runs numbered from 1 and
// figures that are finite and not negative.
func fuzzParser(f *testing.F, tool Tool, parse func(io.Reader) (Summary, error)) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parse(bytes.NewReader(data))
		if err != nil {
			if s.Results != nil || s.Tool != "" {
				t.Fatalf("summary %+v returned with error %v", s, err)
			}
			if !wellFormedError(err) {
				t.Fatalf("error names no line: %v", err)
			}
			return
		}
		if s.Tool != tool || len(s.Results) == 0 || s.Headline == "" {
			t.Fatalf("tool %q, %d results, headline %q", s.Tool, len(s.Results), s.Headline)
		}
		run := 1
		for _, r := range s.Results {
			if r.Name == "" || r.Run < run || r.Run > run+1 {
				t.Fatalf("result %+v after run %d", r, run)
			}
			run = r.Run
			for k, v := range figures(r) {
				if v != nil && (math.IsNaN(*v) || math.IsInf(*v, 0) || *v < 0) {
					t.Fatalf("%s: %s = %v", r.Name, k, *v)
				}
			}
			if l := r.Latency; l != nil {
				if len(l.Percentiles) == 0 {
					t.Fatalf("%s: a latency distribution without percentiles", r.Name)
				}
				for i, p := range l.Percentiles {
					if p.Percent < 0 || p.Percent > 100 || p.Seconds < 0 || math.IsInf(p.Seconds, 0) || i > 0 && p.Percent <= l.Percentiles[i-1].Percent {
						t.Fatalf("%s: percentiles %v", r.Name, l.Percentiles)
					}
				}
			}
		}
	})
}

func FuzzParseDD(f *testing.F)        { fuzzParser(f, DD, ParseDD) }
func FuzzParseFio(f *testing.F)       { fuzzParser(f, Fio, ParseFio) }
func FuzzParseBonnie(f *testing.F)    { fuzzParser(f, Bonnie, ParseBonnie) }
func FuzzParseDbench(f *testing.F)    { fuzzParser(f, Dbench, ParseDbench) }
func FuzzParseFilebench(f *testing.F) { fuzzParser(f, Filebench, ParseFilebench) }

// Detect either names a tool whose parser is then used, or says it knows
// none.
func FuzzParseDetected(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tool, err := Detect(bytes.NewReader(data))
		s, perr := Parse("", bytes.NewReader(data))
		if err != nil {
			if perr == nil {
				t.Fatalf("Parse detected %q where Detect failed: %v", s.Tool, err)
			}
			return
		}
		if perr == nil && s.Tool != tool {
			t.Fatalf("Parse used %q, Detect says %q", s.Tool, tool)
		}
	})
}
