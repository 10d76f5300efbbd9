package dataset

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
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

// largeOpenZFS is the OpenZFS 2.4.4 capture of 10 datasets and 30
// properties repeated for 10,000 datasets, each copy's names prefixed
// with its number: as `zfs list -Hp` and as `zfs list -j --json-int` of
// the same datasets.
func largeOpenZFS(tb testing.TB) (hp, js []byte, properties []string) {
	dir := "testdata/openzfs-2.4-guest"
	list := sample.MustRead(tb, filepath.Join(dir, "12-datasets__zfs_list_-Hp.txt"))
	j := sample.MustRead(tb, filepath.Join(dir, "12-datasets__zfs_list_-j.txt"))
	properties = columns(list.Header["command"])
	const head = `"datasets":{`
	start := bytes.Index(j.Body, []byte(head)) + len(head)
	end := bytes.LastIndex(j.Body, []byte("}}"))
	datasets := j.Body[start:end]
	// Each dataset's key and name, marked where the prefix goes.
	const mark = "\x00"
	datasets = regexp.MustCompile(`"([^"]+)":\{"name":"`).ReplaceAll(datasets, []byte(`"`+mark+`$1":{"name":"`+mark))
	perCopy := bytes.Count(datasets, []byte(`"properties":`))
	var hpBuf, jsBuf bytes.Buffer
	jsBuf.Write(j.Body[:start])
	for i := 0; i*perCopy < 10000; i++ {
		prefix := fmt.Sprintf("c%d-", i)
		for line := range bytes.Lines(list.Body) {
			hpBuf.WriteString(prefix)
			hpBuf.Write(line)
		}
		if i > 0 {
			jsBuf.WriteByte(',')
		}
		jsBuf.Write(bytes.ReplaceAll(datasets, []byte(mark), []byte(prefix)))
	}
	jsBuf.Write(j.Body[end:])
	return hpBuf.Bytes(), jsBuf.Bytes(), properties
}

func BenchmarkParseList(b *testing.B) {
	out, _, properties := largeOpenZFS(b)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseList(bytes.NewReader(out), properties); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseJSON(b *testing.B) {
	_, out, properties := largeOpenZFS(b)
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseJSON(bytes.NewReader(out), properties); err != nil {
			b.Fatal(err)
		}
	}
}
