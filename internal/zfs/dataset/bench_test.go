package dataset

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/sample"
)

// largeGet is the zfs-fuse capture of zfs get -Hp repeated for 10,000
// datasets: the host of many datasets the listing must not choke on.
func largeGet(b *testing.B) (out []byte, properties []string) {
	f := sample.MustRead(b, "testdata/zfs-fuse/datasets__get-Hp.txt")
	properties = strings.Split(strings.Fields(f.Header["command"])[5], ",")
	var buf bytes.Buffer
	perCopy := bytes.Count(f.Body, []byte("\tused\t"))
	for i := 0; i*perCopy < 10000; i++ {
		buf.Write(bytes.ReplaceAll(f.Body, []byte("cds"), []byte(fmt.Sprintf("p%d", i))))
	}
	return buf.Bytes(), properties
}

func BenchmarkParseGet(b *testing.B) {
	out, properties := largeGet(b)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseGet(bytes.NewReader(out), properties); err != nil {
			b.Fatal(err)
		}
	}
}
