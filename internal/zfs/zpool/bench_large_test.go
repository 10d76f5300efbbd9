package zpool_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchhost"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
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
	if err := benchhost.Write(dir, benchhost.Spec{Pools: 1, Leaves: largeLeaves, Version: "2.3"}); err != nil {
		b.Fatal(err)
	}
	out, err := os.ReadFile(filepath.Join(dir, runner.CaptureFileName(line)))
	if err != nil {
		b.Fatal(err)
	}
	return out
}

func BenchmarkParseStatusLarge(b *testing.B) {
	b.Run("text", func(b *testing.B) {
		in := largeOutput(b, "zpool status -s -p")
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			st, err := zpool.ParseStatus(bytes.NewReader(in), time.UTC)
			if err != nil || len(st.Pools) != 1 || len(st.Pools[0].Root.Children) != largeLeaves/2 {
				b.Fatalf("%+v, %v", st, err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		in := largeOutput(b, "zpool status -j --json-int")
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			st, err := zpool.ParseStatusJSON(bytes.NewReader(in))
			if err != nil || len(st.Pools) != 1 || len(st.Pools[0].Root.Children) != largeLeaves/2 {
				b.Fatalf("%+v, %v", st, err)
			}
		}
	})
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
