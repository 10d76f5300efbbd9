package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The seeds: this package's captures of zfs-fuse and OpenZFS 2.4.4, which
// every checkout has, and the shared OpenZFS 2.3.2 captures of `zfs list`
// when they are there.
func seeds(t testing.TB) [][]byte {
	return sample.Bodies(
		sample.Glob(t, "testdata/zfs-fuse", "*__*.txt"),
		sample.Glob(t, "testdata/openzfs-2.4-guest", "*__zfs_[gl]*-Hp.txt"),
		sample.Glob(t, "testdata/openzfs-2.1-guest", "*__zfs_[gl]*-Hp.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*zfs-list-Hp.txt"),
	)
}

// The seeds of the JSON form: this package's capture of `zfs list -j
// --json-int` on OpenZFS 2.4.4, and the shared OpenZFS 2.3.2 captures of
// `zfs list -j` when they are there, each cut to its first dataset.
func jsonSeeds(t testing.TB) [][]byte {
	bodies := sample.Bodies(
		sample.Glob(t, "testdata/openzfs-2.4-guest", "*__zfs_list_-j.txt"),
		sample.Seeds(t, "captures/openzfs-2.3", "*zfs-list-j.txt"),
	)
	for i, b := range bodies {
		bodies[i] = firstDatasets(b, 1)
	}
	return bodies
}

// firstDatasets cuts the output of `zfs list -j` after its first n
// datasets. The fuzzer minimizes each input that finds new coverage by
// taking out every run of its bytes in turn: on a whole capture (20 KB),
// or three datasets of one, that took all of a 30 s run.
func firstDatasets(out []byte, n int) []byte {
	dec := json.NewDecoder(bytes.NewReader(out))
	depth := 0 // 1 in the document, 2 in "datasets" (or "output_version")
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			if depth--; depth == 2 {
				if n--; n == 0 {
					end := dec.InputOffset()
					return append(out[:end:end], "}}\n"...)
				}
			}
		}
	}
}

func TestFuzzSeeds(t *testing.T) {
	if n := len(seeds(t)); n < 3 {
		t.Fatalf("%d seeds", n)
	}
	for _, s := range jsonSeeds(t) {
		if l, err := ParseJSON(bytes.NewReader(s), []string{"name", "used"}); err != nil || len(l.Datasets) != 1 {
			t.Errorf("JSON seed of %d bytes: %v", len(s), err)
		}
	}
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{"FuzzParse": seeds, "FuzzParseJSON": jsonSeeds})
}

// Whatever zfs prints, the parsers return a parse error or datasets that
// each have a name and a value for every property.
func FuzzParse(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	properties := []string{"name", "type", "used", "available", "referenced", "quota", "compressratio", "origin", "mountpoint"}
	f.Fuzz(func(t *testing.T, in []byte) {
		for parser, read := range map[string]func() (*List, error){
			"list": func() (*List, error) { return ParseList(bytes.NewReader(in), properties) },
			"get":  func() (*List, error) { return ParseGet(bytes.NewReader(in), properties[1:]) },
		} {
			l, err := read()
			if err != nil {
				if !errors.Is(err, parse.ErrUnexpected) {
					t.Fatalf("%s: error %v is not a parse error", parser, err)
				}
				continue
			}
			for _, d := range l.Datasets {
				if d.Name == "" || strings.ContainsAny(d.Name, "\t\n") || len(d.Values) != len(l.Properties) {
					t.Fatalf("%s: dataset %q with %d values of %d properties", parser, d.Name, len(d.Values), len(l.Properties))
				}
				for i := range l.Properties {
					if v := d.Value(i); strings.Contains(v, "\n") && l.Properties[i] != "mountpoint" {
						t.Fatalf("%s: %s has a value over two lines: %q", parser, d.Name, v)
					}
				}
			}
		}
	})
}

// Whatever zfs prints as JSON, ParseJSON returns a parse error, or datasets
// that each have a name and a value for every property, of a document
// encoding/json finds valid, and the same datasets when the document is
// indented otherwise.
func FuzzParseJSON(f *testing.F) {
	for _, s := range jsonSeeds(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"output_version":{"command":"zfs list"},"datasets":{"t\u00e9":{"name":"t\u00e9","properties":{"used":{"value":null},"mountpoint":{"value":"/a\tb\"c"},"x":[1.5e-3,true,{}]}}}}`))
	properties := []string{"name", "type", "used", "available", "referenced", "quota", "compressratio", "origin", "mountpoint"}
	f.Fuzz(func(t *testing.T, in []byte) {
		l, err := ParseJSON(bytes.NewReader(in), properties)
		if err != nil {
			if !errors.Is(err, parse.ErrUnexpected) {
				t.Fatalf("error %v is not a parse error", err)
			}
			return
		}
		if !json.Valid(in) {
			t.Fatalf("read %d datasets of JSON that is not valid", len(l.Datasets))
		}
		for _, d := range l.Datasets {
			if d.Name == "" || len(d.Values) != len(l.Properties) {
				t.Fatalf("dataset %q with %d values of %d properties", d.Name, len(d.Values), len(l.Properties))
			}
		}
		var indented bytes.Buffer
		if err := json.Indent(&indented, in, "", "  "); err != nil {
			t.Fatal(err)
		}
		again, err := ParseJSON(&indented, properties)
		if err != nil || !reflect.DeepEqual(again, l) {
			t.Fatalf("indented: %v, %v; was %v", again, err, l)
		}
	})
}
