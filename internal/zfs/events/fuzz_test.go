package events

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The seeds: this package's captures of the OpenZFS guests' events, and
// the shared OpenZFS 2.3.2 captures of `zpool events` when they are there,
// each cut to its first events: the fuzzer mutates small inputs faster.
func seeds(t testing.TB) [][]byte {
	bodies := sample.Bodies(
		sample.Glob(t, "testdata", "*/*__zpool_events*.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*__zpool-events.txt"),
	)
	for i, b := range bodies {
		bodies[i] = firstEvents(b, 8)
	}
	return bodies
}

// firstEvents is out up to the end of its nth blank line or nth line,
// whichever comes first.
func firstEvents(out []byte, n int) []byte {
	blank, lines := 0, 0
	for i, c := range out {
		if c != '\n' {
			continue
		}
		lines++
		if i > 0 && out[i-1] == '\n' {
			blank++
		}
		if blank == n || lines == 40*n {
			return out[:i+1]
		}
	}
	return out
}

// Whatever zpool prints, the reader ends: with io.EOF after the events it
// read, or with a parse error naming a line; each event has a class, and
// an event's fields are those its own lines gave.
func FuzzReader(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out []byte) {
		r := NewReader(bytes.NewReader(out))
		for n := 0; ; n++ {
			ev, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if !errors.Is(err, parse.ErrUnexpected) {
					t.Fatalf("error %v is no parse error", err)
				}
				if _, again := r.Next(); again == nil {
					t.Fatal("an event after the error")
				}
				break
			}
			if ev.Class == "" {
				t.Fatalf("event %d has no class", n)
			}
			if n > len(out) {
				t.Fatal("more events than bytes")
			}
		}
	})
}
