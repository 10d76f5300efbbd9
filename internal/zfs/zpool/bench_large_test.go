package zpool_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// largeLeaves is the pool the exporter's scale benchmark starts from: at
// 1,000 leaves, `zpool get -Hp all POOL all-vdevs` is 75,000 rows.
const largeLeaves = 1000

// largeOutput returns what a generated host of one pool of largeLeaves
// prints for the zpool command line.
func largeOutput(b *testing.B, line string) []byte {
	b.Helper()
	dir := filepath.Join(b.TempDir(), "host")
	if err := hostgen.Write(dir, hostgen.Spec{Pools: 1, Leaves: largeLeaves, Version: "2.3"}); err != nil {
		b.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(dir, runner.CaptureFileName(line)))
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// The status the exporter reads, and the same without each leaf's TRIM
// and initialization (-t -i), which it asked before.
func BenchmarkParseStatusLarge(b *testing.B) {
	for _, c := range []struct {
		name, line string
		json       bool
	}{
		{"text", "zpool status -s -p", false},
		{"text-t-i", "zpool status -s -p -t -i", false},
		{"json", "zpool status -j --json-int", true},
		{"json-t-i", "zpool status -j --json-int -t -i", true},
	} {
		b.Run(c.name, func(b *testing.B) {
			in := largeOutput(b, c.line)
			b.SetBytes(int64(len(in)))
			b.ReportAllocs()
			for b.Loop() {
				var (
					st  *zpool.Status
					err error
				)
				if c.json {
					st, err = zpool.ParseStatusJSON(bytes.NewReader(in))
				} else {
					st, err = zpool.ParseStatus(bytes.NewReader(in), time.UTC)
				}
				if err != nil || len(st.Pools) != 1 || len(st.Pools[0].Root.Children) != largeLeaves/2 {
					b.Fatalf("%+v, %v", st, err)
				}
			}
		})
	}
}

// The vdev properties of every vdev of the pool: 1,501 vdevs of about 50
// properties each.
func BenchmarkParseGetLarge(b *testing.B) {
	in := largeOutput(b, "zpool get -Hp all tank0 all-vdevs")
	rows := bytes.Count(in, []byte("\n"))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		props, err := zpool.ParseGet(bytes.NewReader(in))
		if err != nil || len(props) != rows {
			b.Fatalf("%d properties of %d rows, %v", len(props), rows, err)
		}
	}
}
