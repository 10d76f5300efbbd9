package zpool

import (
	"bytes"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The text and JSON status of the same four pools (OpenZFS 2.3.2, after
// errors were repaired), parsed side by side: their ratio is the cost of
// each path.
func BenchmarkParseStatus(b *testing.B) {
	dir := sample.Dir(b, "captures/openzfs-2.3")
	text, err := sample.Read(dir + "/09-errors-repaired__zpool-status-v-p.txt")
	if err != nil {
		b.Fatal(err)
	}
	json, err := sample.Read(dir + "/09-errors-repaired__zpool-status-j-json-int.txt")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("text", func(b *testing.B) {
		b.SetBytes(int64(len(text.Body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseStatus(bytes.NewReader(text.Body), time.UTC); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.SetBytes(int64(len(json.Body)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ParseStatusJSON(bytes.NewReader(json.Body)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
