package dataset

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/sample"
)

// The seeds: this package's captures of zfs-fuse and OpenZFS 2.4.4, which
// every checkout has, and the shared OpenZFS 2.3.2 captures of `zfs list`
// when they are there.
func seeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata/zfs-fuse", "*__*.txt"),
		sample.Glob(t, "testdata/openzfs-2.4-guest", "*__zfs_[gl]*-Hp.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*zfs-list-Hp.txt"),
	)
}

func TestFuzzSeeds(t *testing.T) {
	if n := len(seeds(t)); n < 3 {
		t.Fatalf("%d seeds", n)
	}
}

// Whatever zfs prints, the parsers return an ErrParse or datasets that
// each have a name and a value for every property.
func FuzzParse(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	properties := []string{"name", "type", "used", "available", "referenced", "quota", "compressratio", "origin", "mountpoint"}
	f.Fuzz(func(t *testing.T, in []byte) {
		for parser, parse := range map[string]func() (*List, error){
			"list": func() (*List, error) { return ParseList(bytes.NewReader(in), properties) },
			"get":  func() (*List, error) { return ParseGet(bytes.NewReader(in), properties[1:]) },
		} {
			l, err := parse()
			if err != nil {
				if !errors.Is(err, ErrParse) {
					t.Fatalf("%s: error %v is not ErrParse", parser, err)
				}
				continue
			}
			for _, d := range l.Datasets {
				if d.Name == "" || strings.ContainsAny(d.Name, "\t\n") || len(d.Values) != len(l.Properties) {
					t.Fatalf("%s: dataset %q with %d values of %d properties", parser, d.Name, len(d.Values), len(l.Properties))
				}
				for i := range l.Properties {
					if v := d.Value(i); strings.Contains(v, "\n") {
						t.Fatalf("%s: %s has a value over two lines: %q", parser, d.Name, v)
					}
				}
			}
		}
	})
}
