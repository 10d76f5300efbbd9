package iostat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
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

// checkParseError fails unless err, from a parser reading a bytes.Reader,
// is a parse error: the only other error such a read can give is a line
// too long for the reader.
func checkParseError(t testing.TB, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, parse.ErrUnexpected) && !errors.Is(err, bufio.ErrTooLong) {
		t.Fatalf("error %v is not a parse error", err)
	}
}

// checkParseErrorAt fails unless err is a parse error at the line that
// want, the message expected, names first ("line 2: ...").
func checkParseErrorAt(t testing.TB, err error, want string) {
	t.Helper()
	var line int
	if _, scanErr := fmt.Sscanf(want, "line %d:", &line); scanErr != nil {
		t.Fatalf("%q names no line", want)
	}
	var pe *parse.Error
	if !errors.Is(err, parse.ErrUnexpected) || !errors.As(err, &pe) || pe.Line != line {
		t.Errorf("error %v: want a parse error at line %d", err, line)
	}
}

func TestFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{"iostat": seeds})
}

func FuzzParseIostat(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		reports, err := ParseIostat(bytes.NewReader(data))
		checkParseError(t, err)
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
		checkParseError(t, err)
		for _, s := range summary {
			if s.Device == "" {
				t.Fatalf("summary without a device: %+v", s)
			}
		}
	})
}
