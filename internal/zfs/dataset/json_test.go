package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// columns are the properties a captured `zfs list` command asked for:
// those after its -o, or the columns zfs list prints unless told.
func columns(command string) []string {
	fields := strings.Fields(command)
	if i := slices.Index(fields, "-o"); i >= 0 && i+1 < len(fields) {
		return strings.Split(fields[i+1], ",")
	}
	return listColumns
}

func names(l *List) []string {
	var n []string
	for _, d := range l.Datasets {
		n = append(n, d.Name)
	}
	return n
}

// On OpenZFS 2.4.4, `zfs list -j --json-int` reads as the very List that
// `zfs list -Hp` of the same moment does.
func TestParseJSONMatchesListOnOpenZFS(t *testing.T) {
	dir := "testdata/openzfs-2.4-guest"
	list := sample.MustRead(t, filepath.Join(dir, "12-datasets__zfs_list_-Hp.txt"))
	js := sample.MustRead(t, filepath.Join(dir, "12-datasets__zfs_list_-j.txt"))
	properties := columns(list.Header["command"])
	if got := columns(js.Header["command"]); !reflect.DeepEqual(got, properties) || !strings.Contains(js.Header["command"], "--json-int") {
		t.Fatalf("the captures differ: %q and %q", list.Header["command"], js.Header["command"])
	}
	want, err := ParseList(bytes.NewReader(list.Body), properties)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseJSON(bytes.NewReader(js.Body), properties)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Datasets) < 10 || len(want.Properties) < 29 {
		t.Fatalf("%d datasets of %d properties", len(want.Datasets), len(want.Properties))
	}
	if !reflect.DeepEqual(got, want) {
		for i := range max(len(got.Datasets), len(want.Datasets)) {
			var g, w Dataset
			if i < len(got.Datasets) {
				g = got.Datasets[i]
			}
			if i < len(want.Datasets) {
				w = want.Datasets[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("dataset %d:\nJSON %q\nlist %q", i, g, w)
			}
		}
		t.Fatalf("properties: JSON %q, list %q", got.Properties, want.Properties)
	}
}

// So does the listing of 10,000 datasets the benchmarks read.
func TestParseJSONMatchesListLarge(t *testing.T) {
	hp, js, properties := largeOpenZFS(t)
	want, err := ParseList(bytes.NewReader(hp), properties)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseJSON(bytes.NewReader(js), properties)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d datasets of %d properties: %d bytes of zfs list -Hp, %d of zfs list -j", len(got.Datasets), len(properties), len(hp), len(js))
	if len(got.Datasets) != 10000 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d datasets from JSON, %d listed; equal: %v", len(got.Datasets), len(want.Datasets), reflect.DeepEqual(got, want))
	}
}

// The OpenZFS 2.3.2 captures of `zfs list -j` are without --json-int:
// their sizes are human ("221M"). They name the datasets of `zfs list -Hp`
// in its order, snapshots among them; the words are the same, and the
// sizes are the exact ones rounded.
func TestParseJSONCaptures(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	for _, js := range sample.Glob(t, dir, "*__zfs-list-j.txt") {
		t.Run(filepath.Base(js.Path), func(t *testing.T) {
			list := sample.MustRead(t, strings.Replace(js.Path, "zfs-list-j", "zfs-list-Hp", 1))
			properties := columns(list.Header["command"])
			want, err := ParseList(bytes.NewReader(list.Body), properties)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseJSON(bytes.NewReader(js.Body), columns(js.Header["command"]))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Properties, want.Properties) || !slices.Equal(names(got), names(want)) || len(got.Datasets) < 5 {
				t.Fatalf("JSON %q of %q\nlist %q of %q", names(got), got.Properties, names(want), want.Properties)
			}
			if strings.Contains(js.Header["command"], "--json-int") {
				if !reflect.DeepEqual(got, want) {
					t.Errorf("JSON %q\nlist %q", got.Datasets, want.Datasets)
				}
				return
			}
			for i, d := range want.Datasets {
				for c, p := range want.Properties {
					exact, human := d.Values[c], got.Datasets[i].Values[c]
					v, isNumber := Number(exact)
					if !isNumber {
						if human != exact {
							t.Errorf("%s %s: list %q, JSON %q", d.Name, p, exact, human)
						}
						continue
					}
					rounded, ok, err := zpool.ParseSize(human)
					if err != nil || !ok || math.Abs(v-rounded) > 0.01*v+1 {
						t.Errorf("%s %s: list %q, JSON %q", d.Name, p, exact, human)
					}
				}
			}
		})
	}
}

// listJSON writes the output of `zfs list -j` around the members of its
// datasets.
func listJSON(datasets ...string) string {
	return `{"output_version":{"command":"zfs list","vers_major":0,"vers_minor":1},"datasets":{` + strings.Join(datasets, ",") + "}}\n"
}

// datasetJSON writes a dataset of properties, given as name and value.
func datasetJSON(name string, properties ...string) string {
	var b strings.Builder
	b.WriteString(`"` + name + `":{"name":"` + name + `","type":"FILESYSTEM","pool":"tank","createtxg":1,"properties":{`)
	for i := 0; i+1 < len(properties); i += 2 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"` + properties[i] + `":{"value":` + properties[i+1] + `,"source":{"type":"NONE","data":"-"}}`)
	}
	b.WriteString("}}")
	return b.String()
}

func TestParseJSON(t *testing.T) {
	properties := []string{"name", "used", "compressratio", "mountpoint"}
	for _, tc := range []struct {
		name string
		in   string
		want []Dataset
	}{{
		// zfs puts a dataset's snapshots, by age, before its children:
		// not the order of the names.
		name: "zfs's order",
		in: listJSON(
			datasetJSON("tank", "used", "1024", "compressratio", `"1.00"`, "mountpoint", `"/tank"`),
			datasetJSON("tank@daily-9", "used", "0", "compressratio", `"1.00"`, "mountpoint", `"-"`),
			datasetJSON("tank@daily-10", "used", "0", "compressratio", `"1.00"`, "mountpoint", `"-"`),
			datasetJSON("tank/a", "used", "512", "compressratio", `"1.50"`, "mountpoint", `"/tank/a"`),
		),
		want: []Dataset{
			{Name: "tank", Values: []string{"1024", "1.00", "/tank"}},
			{Name: "tank@daily-9", Values: []string{"0", "1.00", "-"}},
			{Name: "tank@daily-10", Values: []string{"0", "1.00", "-"}},
			{Name: "tank/a", Values: []string{"512", "1.50", "/tank/a"}},
		},
	}, {
		name: "a property zfs did not print, or printed null",
		in: listJSON(
			datasetJSON("tank", "used", "1024", "mountpoint", `"/tank"`),
			datasetJSON("tank/b", "used", "null", "compressratio", `"1.00"`),
		),
		want: []Dataset{
			{Name: "tank", Values: []string{"1024", "", "/tank"}},
			{Name: "tank/b", Values: []string{"", "1.00", ""}},
		},
	}, {
		name: "numbers as printed, past 2^53",
		in:   listJSON(datasetJSON("tank", "used", "18446744073709551615", "compressratio", "1.5e3", "mountpoint", "-0")),
		want: []Dataset{{Name: "tank", Values: []string{"18446744073709551615", "1.5e3", "-0"}}},
	}, {
		name: "escapes",
		in:   listJSON(datasetJSON(`tank/caf\u00e9`, "used", `"-"`, "compressratio", `"none"`, "mountpoint", `"/mnt/with\ttab \"q\" \\ \u00e9 \ud83d\ude00"`)),
		want: []Dataset{{Name: "tank/café", Values: []string{"-", "none", "/mnt/with\ttab \"q\" \\ é 😀"}}},
	}, {
		name: "properties in another order, one not asked for",
		in:   listJSON(datasetJSON("tank", "mountpoint", `"/tank"`, "quota", "0", "used", "1")),
		want: []Dataset{{Name: "tank", Values: []string{"1", "", "/tank"}}},
	}, {
		name: "members nobody asked for",
		in: `{"output_version":{"vers_major":9,"command":"zfs list","extra":[1,{"a":[]},null,true,false,"x"]},"future":{"a":[[]]},` +
			`"datasets":{"tank":{"properties":{"used":{"source":{"type":"LOCAL"},"value":7,"received":[1]}},"guid":12345678901234567890}}}`,
		want: []Dataset{{Name: "tank", Values: []string{"7", "", ""}}},
	}, {
		// As Python's json.dumps writes: the fast path's literal matches
		// up to the colon, then a space.
		name: "a space after each colon",
		in: `{"output_version": {"command": "zfs list"}, "datasets": {"tank": {"name": "tank", "properties": ` +
			`{"used": {"value": 7, "source": {"type": "NONE", "data": "-"}}, "mountpoint": {"value": "/tank"}}}}}`,
		want: []Dataset{{Name: "tank", Values: []string{"7", "", "/tank"}}},
	}, {
		name: "no datasets",
		in:   listJSON(),
	}, {
		name: "null datasets",
		in:   `{"output_version":{"command":"zfs list"},"datasets":null}`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var indented bytes.Buffer
			if err := json.Indent(&indented, []byte(tc.in), "", "\t"); err != nil {
				t.Fatalf("the test's JSON: %v", err)
			}
			for _, in := range []string{tc.in, indented.String()} {
				l, err := ParseJSON(strings.NewReader(in), properties)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(l.Properties, properties[1:]) || !reflect.DeepEqual(l.Datasets, tc.want) {
					t.Errorf("got %q %q\nwant %q", l.Properties, l.Datasets, tc.want)
				}
			}
		})
	}
}

// Asked for names only, the datasets have no values, as ParseList's.
func TestParseJSONNamesOnly(t *testing.T) {
	got, err := ParseJSON(strings.NewReader(listJSON(datasetJSON("tank", "used", "1"), datasetJSON("tank/a"))), []string{"name"})
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseList(strings.NewReader("tank\ntank/a\n"), []string{"name"})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("JSON %#v\nlist %#v, %v", got, want, err)
	}
}

// Output that is not that of `zfs list -j`, or not whole, is refused with
// where it went wrong.
func TestParseJSONRefuses(t *testing.T) {
	properties := []string{"name", "used", "mountpoint"}
	for _, tc := range []struct {
		name, in, says string
	}{
		{"zpool status", `{"output_version":{"command":"zpool status","vers_major":0,"vers_minor":1},"pools":{}}`, `"zpool status"`},
		{"zfs get", strings.Replace(listJSON(datasetJSON("tank", "used", "1")), "zfs list", "zfs get", 1), `"zfs get"`},
		{"no output_version", `{"datasets":{}}`, "no output_version"},
		{"command not a string", `{"output_version":{"command":1},"datasets":{}}`, "not a string"},
		{"value an object", listJSON(datasetJSON("tank/a", "used", `{"bytes":1}`)), `dataset "tank/a", property "used"`},
		{"value an array", listJSON(datasetJSON("tank/a", "mountpoint", `["/a"]`)), `property "mountpoint"`},
		{"value true", listJSON(datasetJSON("tank/a", "used", "true")), `property "used"`},
		{"value false", listJSON(datasetJSON("tank/a", "used", "false")), `property "used"`},
		{"a number with a leading zero", listJSON(datasetJSON("tank", "used", "01")), `property "used"`},
		{"a number without digits after its point", listJSON(datasetJSON("tank", "used", "1.")), `property "used"`},
		{"a bare word", listJSON(datasetJSON("tank", "used", "none")), `property "used"`},
		{"a control character", listJSON(datasetJSON("tank", "mountpoint", "\"/a\tb\"")), "control character"},
		{"a bad escape", listJSON(datasetJSON("tank", "mountpoint", `"/a\x"`)), `property "mountpoint"`},
		{"two names", strings.Replace(listJSON(datasetJSON("tank/a", "used", "1")), `"name":"tank/a"`, `"name":"tank/b"`, 1), `"tank/b"`},
		{"no name", listJSON(datasetJSON("", "used", "1")), "no dataset name"},
		{"a dataset not an object", listJSON(`"tank":[]`), "want an object"},
		{"after the document", listJSON() + "{}", "after the JSON document"},
		{"two documents", listJSON() + listJSON(), "after the JSON document"},
		{"a trailing comma", strings.Replace(listJSON(datasetJSON("tank", "used", "1")), "}}}", "},}}", 1), "member name"},
		{"nested too deep", `{"output_version":{"command":"zfs list"},"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, "nested"},
		{"empty", "", "the end of the output"},
		{"not JSON", "tank\t1\t/tank\n", "want an object"},
		{"the first property not name", "", "first property"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props := properties
			if tc.name == "the first property not name" {
				props = properties[1:]
			}
			_, err := ParseJSON(strings.NewReader(tc.in), props)
			if err == nil || errors.Is(err, parse.ErrUnexpected) == (tc.name == "the first property not name") || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %v, want a parse error that says %s, or for the first property the caller's error", err, tc.says)
			}
		})
	}
}

// Output cut short, as by a killed zfs, is refused, and said to end:
// never read as the datasets before the cut. It is cut at every byte of
// the first dataset, and at every 101st after.
func TestParseJSONTruncated(t *testing.T) {
	js := sample.MustRead(t, "testdata/openzfs-2.4-guest/12-datasets__zfs_list_-j.txt")
	properties := columns(js.Header["command"])
	whole := bytes.TrimRight(js.Body, "\n")
	if _, err := ParseJSON(bytes.NewReader(whole), properties); err != nil {
		t.Fatal(err)
	}
	first := bytes.Index(whole, []byte(`}}},"`))
	for n := 0; n < len(whole); n++ {
		if n > first {
			n += 100
		}
		_, err := ParseJSON(bytes.NewReader(whole[:min(n, len(whole)-1)]), properties)
		if !errors.Is(err, parse.ErrUnexpected) || !strings.Contains(err.Error(), "end of the output") {
			t.Fatalf("cut after %d bytes of %d: error %v", n, len(whole), err)
		}
	}
}

// A failing read gives the reader's error, which is no parse error, and
// no datasets.
func TestParseJSONReadError(t *testing.T) {
	r := errReader{data: listJSON(datasetJSON("tank", "used", "1"))}
	if l, err := ParseJSON(&r, []string{"name", "used"}); !errors.Is(err, errBrokenPipe) || errors.Is(err, parse.ErrUnexpected) || l != nil {
		t.Errorf("got %v, %v; want the reader's error", l, err)
	}
}

var errBrokenPipe = errors.New("broken pipe")

type errReader struct{ data string }

func (r *errReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, errBrokenPipe
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}
