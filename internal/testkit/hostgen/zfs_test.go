package hostgen

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/dataset"
)

// The guest's captures of zfs that the datasets are written after.
const (
	datasetCaptures = "../../zfs/dataset/testdata/openzfs-2.4-guest"
	datasetScenario = "12-datasets"
)

// snapshotProperties are what the exporter asks of snapshots.
var snapshotProperties = []string{"name", "creation", "used", "referenced"}

// smallDatasets is a host of a few datasets of every kind: volumes,
// quotas, reservations, an encrypted one, inherited compression.
var smallDatasets = Spec{Pools: 2, Leaves: 2, Version: "2.4", Datasets: 120, Snapshots: 600}

// zfsRun answers a command line that must succeed.
func zfsAnswer(t *testing.T, dir string, line string) []byte {
	t.Helper()
	a, err := AnswerZFS(dir, strings.Fields(line))
	if err != nil || a.Status != 0 || len(a.Stderr) > 0 {
		t.Fatalf("%s: status %d, %v\n%s", line, a.Status, err, a.Stderr)
	}
	return a.Stdout
}

// The exporter's commands and pdf/zfs_exporter's are answered in full,
// and the project's parsers read the answers.
func TestZFSParsersReadGeneratedHost(t *testing.T) {
	for _, version := range Versions {
		t.Run(version, func(t *testing.T) {
			s := smallDatasets
			s.Version = version
			dir := writeHost(t, s)
			props := zfs.DatasetProperties
			list := "zfs list -Hp -t filesystem,volume -o " + strings.Join(props, ",")
			l, err := dataset.ParseList(bytes.NewReader(zfsAnswer(t, dir, list[4:])), props)
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Datasets) != s.Datasets {
				t.Errorf("%s: %d datasets, want %d", list, len(l.Datasets), s.Datasets)
			}
			checkNumbers(t, l, "used", "available", "referenced", "quota", "compressratio", "recordsize")
			perPool := map[string]int{}
			for _, d := range l.Datasets {
				perPool[d.Pool()]++
			}

			snaps, err := dataset.ParseList(bytes.NewReader(zfsAnswer(t, dir, "list -Hp -t snapshot -o "+strings.Join(snapshotProperties, ","))), snapshotProperties)
			if err != nil {
				t.Fatal(err)
			}
			if len(snaps.Datasets) != s.Snapshots {
				t.Errorf("%d snapshots, want %d", len(snaps.Datasets), s.Snapshots)
			}
			checkNumbers(t, snaps, "creation", "used", "referenced")

			// The exporter's fallback, without -t: every kind.
			get, err := dataset.ParseGet(bytes.NewReader(zfsAnswer(t, dir, "get -Hp -o name,property,value "+strings.Join(props[1:], ","))), props[1:])
			if err != nil {
				t.Fatal(err)
			}
			if len(get.Datasets) != s.Datasets+s.Snapshots {
				t.Errorf("zfs get: %d datasets and snapshots, want %d", len(get.Datasets), s.Datasets+s.Snapshots)
			}
			for i, d := range l.Datasets {
				if j := slices.IndexFunc(get.Datasets, func(g dataset.Dataset) bool { return g.Name == d.Name }); j < 0 || !slices.Equal(get.Datasets[j].Values, d.Values) {
					t.Errorf("dataset %d, %s: zfs get and zfs list differ", i, d.Name)
					break
				}
			}

			// pdf/zfs_exporter's, per pool and kind.
			for pool, n := range perPool {
				got := 0
				for _, kind := range []string{"filesystem", "volume"} {
					line := "get -Hprt " + kind + " -o name,property,value available,logicalused,quota,referenced,used,usedbydataset,written " + pool
					g, err := dataset.ParseGet(bytes.NewReader(zfsAnswer(t, dir, line)), strings.Split("available,logicalused,quota,referenced,used,usedbydataset,written", ","))
					if err != nil {
						t.Fatal(err)
					}
					got += len(g.Datasets)
				}
				if got != n {
					t.Errorf("pool %s: pdf/zfs_exporter's commands give %d datasets, want %d", pool, got, n)
				}
			}

			for _, types := range []string{"filesystem,volume", "snapshot"} {
				fields := props
				if types == "snapshot" {
					fields = snapshotProperties
				}
				want := s.Datasets
				if types == "snapshot" {
					want = s.Snapshots
				}
				js := zfsAnswer(t, dir, "list -j --json-int -t "+types+" -o "+strings.Join(fields, ","))
				if n := checkJSON(t, js, fields); n != want {
					t.Errorf("zfs list -j -t %s: %d datasets, want %d", types, n, want)
				}
				// The project's parser reads the JSON as the text: the
				// same datasets, in the same order, with the same values.
				fromJSON, err := dataset.ParseJSON(bytes.NewReader(js), fields)
				if err != nil {
					t.Fatal(err)
				}
				fromText, err := dataset.ParseList(bytes.NewReader(zfsAnswer(t, dir, "list -Hp -t "+types+" -o "+strings.Join(fields, ","))), fields)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.EqualFunc(fromJSON.Datasets, fromText.Datasets, func(a, b dataset.Dataset) bool {
					return a.Name == b.Name && slices.Equal(a.Values, b.Values)
				}) {
					t.Errorf("zfs list -j -t %s and zfs list -Hp differ", types)
				}
			}
		})
	}
}

// checkNumbers checks that the properties are exact numbers, or "-" where
// zfs has none.
func checkNumbers(t *testing.T, l *dataset.List, properties ...string) {
	t.Helper()
	for _, d := range l.Datasets {
		for _, p := range properties {
			v := d.Value(l.Column(p))
			if _, ok := dataset.Number(v); !ok && v != "-" {
				t.Errorf("%s: %s is %q, not a number", d.Name, p, v)
				return
			}
		}
	}
}

// checkJSON reads zfs list -j --json-int with encoding/json, checks
// that every dataset has the properties asked for (but its name), and
// counts the datasets.
func checkJSON(t *testing.T, data []byte, properties []string) int {
	t.Helper()
	var out struct {
		OutputVersion struct {
			Command string `json:"command"`
		} `json:"output_version"`
		Datasets map[string]struct {
			Name       string                     `json:"name"`
			CreateTxg  *uint64                    `json:"createtxg"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"datasets"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if out.OutputVersion.Command != "zfs list" {
		t.Errorf("output_version: command %q", out.OutputVersion.Command)
	}
	for name, d := range out.Datasets {
		if d.Name != name || d.CreateTxg == nil || len(d.Properties) != len(properties)-1 {
			t.Fatalf("%s: name %q, createtxg %v, %d properties", name, d.Name, d.CreateTxg, len(d.Properties))
		}
	}
	return len(out.Datasets)
}

// A host of 10,000 datasets and 100,000 snapshots has them all, and
// writes and answers in seconds.
func TestZFSLargeHost(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 10,000 datasets and 100,000 snapshots")
	}
	s, err := ParseName("1x8:10000d:100000s", "2.4")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	dir := writeHost(t, s)
	written := time.Since(start)
	var size int64
	for _, f := range []string{datasetsFile, snapshotsFile} {
		fi, err := os.Stat(filepath.Join(dir, zfsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size()
	}
	t.Logf("written in %v, %.1f MB", written, float64(size)/1e6)
	for _, tc := range []struct {
		line string
		want int
	}{
		{"list -Hp -t filesystem,volume -o " + strings.Join(zfs.DatasetProperties, ","), 10000},
		{"list -Hp -t snapshot -o " + strings.Join(snapshotProperties, ","), 100000},
		{"list -H -o name -t all", 110000},
	} {
		start := time.Now()
		out := zfsAnswer(t, dir, tc.line)
		if n := bytes.Count(out, []byte("\n")); n != tc.want {
			t.Errorf("zfs %s: %d lines, want %d", tc.line, n, tc.want)
		}
		t.Logf("zfs %.40s...: %v", tc.line, time.Since(start))
	}
	for _, tc := range []struct {
		types      string
		properties []string
		want       int
	}{
		{"filesystem,volume", zfs.DatasetProperties, 10000},
		{"snapshot", snapshotProperties, 100000},
	} {
		start := time.Now()
		out := zfsAnswer(t, dir, "list -j --json-int -t "+tc.types+" -o "+strings.Join(tc.properties, ","))
		answered := time.Since(start)
		l, err := dataset.ParseJSON(bytes.NewReader(out), tc.properties)
		if err != nil || len(l.Datasets) != tc.want {
			t.Errorf("zfs list -j -t %s: %v, want %d datasets", tc.types, err, tc.want)
		} else {
			t.Logf("zfs list -j --json-int -t %s: %v, %.1f MB", tc.types, answered, float64(len(out))/1e6)
		}
	}
}

// shapeOf is what a value looks like, but for its figures: "-", "0", a
// number, a ratio, a human-readable size, a path, or the word itself.
func shapeOf(v string) string {
	switch {
	case v == "-" || v == "0":
		return v
	case regexp.MustCompile(`^[0-9]+$`).MatchString(v):
		return "N"
	case regexp.MustCompile(`^[0-9]+\.[0-9][0-9]x?$`).MatchString(v):
		return "R"
	case regexp.MustCompile(`^[0-9.]+[BKMGTPE]?$`).MatchString(v):
		return "H"
	case strings.HasPrefix(v, "/"):
		return "/"
	}
	return v
}

// shapes are the shapes of a property's values, by kind of dataset.
type shapes map[string]map[string]bool

func (s shapes) add(kind, property, shape string) {
	key := kind + " " + property
	if s[key] == nil {
		s[key] = map[string]bool{}
	}
	s[key][shape] = true
}

// within checks that every shape of got is one of want's, a figure of
// one that has figures, or a word of those allowed.
func (got shapes) within(t *testing.T, what string, want shapes, words map[string][]string) {
	t.Helper()
	for key, gs := range got {
		ws := want[key]
		if ws == nil {
			t.Errorf("%s: %s, which the capture does not have", what, key)
			continue
		}
		for g := range gs {
			ok := slices.Contains(words[strings.Fields(key)[1]], bare(g)) || slices.Contains(words[key], bare(g))
			for w := range ws {
				ok = ok || alike(g, w)
			}
			if !ok {
				t.Errorf("%s: %s is %q, the capture has %v", what, key, g, ws)
			}
		}
	}
	for key := range want {
		if got[key] == nil {
			t.Errorf("%s: no %s, which the capture has", what, key)
		}
	}
}

// alike tells whether two shapes are the same, taking a figure for 0
// where the capture has another (and the other way round), and a property
// set for one not (and the other way round). A JSON value's shape starts
// with "number " or "string ".
func alike(got, want string) bool {
	g, w := bare(got), bare(want)
	if len(got)-len(g) != len(want)-len(w) || got[:len(got)-len(g)] != want[:len(want)-len(w)] {
		return false
	}
	pairs := [][2]string{{"0", "N"}, {"DEFAULT", "LOCAL"}}
	return g == w || slices.ContainsFunc(pairs, func(p [2]string) bool {
		return (g == p[0] || g == p[1]) && (w == p[0] || w == p[1])
	})
}

// bare is a shape without its JSON kind.
func bare(shape string) string {
	if _, s, ok := strings.Cut(shape, " "); ok && (strings.HasPrefix(shape, "number ") || strings.HasPrefix(shape, "string ")) {
		return s
	}
	return shape
}

// The values a generated host has that the capture does not, by
// property or by kind and property: more compressions, and snapshots of
// an encrypted dataset and of volumes.
var moreWords = map[string][]string{
	"compression":                  {"on", "lz4", "zstd", "gzip", "off"},
	"snapshot encryption":          {"aes-256-gcm"},
	"snapshot keystatus":           {"available"},
	"snapshot volsize":             {"N"},
	"compression.source":           {"LOCAL", "INHERITED"},
	"root compression.source":      {"LOCAL"},
	"root mountpoint.source":       {"LOCAL"}, // pools mounted under /mnt as in 2.4's captures, not 2.3's
	"filesystem mountpoint.source": {"INHERITED"},
	// The source of compression, before it, inherited from the pool.
	"volume recordsize.source": {"INHERITED"},
}

// The datasets' outputs are the capture's, row for row: the same
// properties in the same order, each value of the same shape for the
// same kind of dataset ("-" for the volsize of a filesystem, 0 for a
// quota not set, 1.00 for a ratio), the same JSON keys, number or string,
// and sources.
func TestZFSOutputsAreLikeCapture(t *testing.T) {
	dir := writeHost(t, smallDatasets)
	kindOf := func(name, typ string) string {
		if !strings.Contains(name, "/") && !strings.Contains(name, "@") {
			return "root"
		}
		return typ
	}
	textShapes := func(data []byte, get bool, properties []string) shapes {
		s := shapes{}
		kinds := map[string]string{}
		for line := range strings.Lines(string(data)) {
			f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
			if get {
				if f[1] == "type" {
					kinds[f[0]] = kindOf(f[0], f[2])
				}
				s.add(kinds[f[0]], f[1], shapeOf(f[2]))
				continue
			}
			typ := "filesystem"
			if i := slices.Index(properties, "type"); i >= 0 {
				typ = f[i]
			} else if strings.Contains(f[0], "@") {
				typ = "snapshot"
			} else if f[len(f)-1] == "-" {
				typ = "volume"
			}
			for i, p := range properties[1:] {
				s.add(kindOf(f[0], typ), p, shapeOf(f[i+1]))
			}
		}
		return s
	}
	like := func(t *testing.T, paths []string, n int) {
		t.Helper()
		if len(paths) != n {
			t.Fatalf("captures of zfs: %v, want %d", paths, n)
		}
		for _, path := range paths {
			line, want, err := splitCapture(readFile(t, path))
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Fields(line)[1:]
			got := zfsAnswer(t, dir, strings.Join(args, " "))
			if slices.Contains(args, "-j") {
				jsonShapes(t, got, kindOf).within(t, line, jsonShapes(t, want, kindOf), moreWords)
				continue
			}
			get := args[0] == "get"
			properties := strings.Split("name,used,available,referenced,mountpoint", ",")
			if i := slices.Index(args, "-o"); i >= 0 && !get {
				properties = strings.Split(args[i+1], ",")
			}
			if get {
				properties = strings.Split(args[len(args)-1], ",")
				checkGetOrder(t, got, properties)
			}
			textShapes(got, get, properties).within(t, line, textShapes(want, get, properties), moreWords)
		}
	}
	paths, err := filepath.Glob(filepath.Join(datasetCaptures, datasetScenario+"__zfs_*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	like(t, paths, 3)
	// The 2.3 guest's captures sit beside the checkout: without them, the
	// 2.4 guest's alone are compared.
	t.Run("openzfs-2.3", func(t *testing.T) {
		paths, _ := filepath.Glob(filepath.Join(sample.Dir(t, "captures/openzfs-2.3"), "04-scrubbed-healthy__zfs-list-*.txt"))
		like(t, paths, 2)
	})
}

// checkGetOrder checks that zfs get prints each dataset's properties
// together, in the order asked.
func checkGetOrder(t *testing.T, out []byte, properties []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines)%len(properties) != 0 {
		t.Fatalf("zfs get: %d lines for %d properties", len(lines), len(properties))
	}
	for i, line := range lines {
		f := strings.Split(line, "\t")
		first := strings.Split(lines[i-i%len(properties)], "\t")
		if len(f) != 3 || f[1] != properties[i%len(properties)] || f[0] != first[0] {
			t.Fatalf("zfs get, line %d: %q", i+1, line)
		}
	}
}

// jsonShapes are the keys of each dataset of zfs list -j, in order, with
// the shapes of their values (and whether a number or a string), and of
// each property its value's and its source's.
func jsonShapes(t *testing.T, data []byte, kindOf func(name, typ string) string) shapes {
	t.Helper()
	var out struct {
		Datasets map[string]json.RawMessage `json:"datasets"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	s := shapes{}
	for name, raw := range out.Datasets {
		var d struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Value  json.RawMessage `json:"value"`
				Source struct{ Type, Data string }
			} `json:"properties"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		kind := kindOf(name, strings.ToLower(d.Type))
		keys, props := objectKeys(t, raw), []string{}
		if err := json.Unmarshal(raw, &struct {
			Properties *orderedKeys `json:"properties"`
		}{(*orderedKeys)(&props)}); err != nil {
			t.Fatal(err)
		}
		s.add(kind, "keys", strings.Join(keys, ","))
		s.add(kind, "properties", strings.Join(props, ","))
		for p, v := range d.Properties {
			shape := "string " + shapeOf(strings.Trim(string(v.Value), `"`))
			if !strings.HasPrefix(string(v.Value), `"`) {
				shape = "number " + shapeOf(string(v.Value))
			}
			s.add(kind, p, shape)
			s.add(kind, p+".source", v.Source.Type)
		}
	}
	return s
}

// orderedKeys reads an object's keys in order.
type orderedKeys []string

func (k *orderedKeys) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		*k = append(*k, key.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

func objectKeys(t *testing.T, data []byte) []string {
	t.Helper()
	var k orderedKeys
	if err := k.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return k
}

// zfs list and zfs get take their options and properties as zfs does,
// and refuse what zfs refuses.
func TestAnswerZFS(t *testing.T) {
	dir := writeHost(t, smallDatasets)
	lines := func(line string) []string {
		return strings.Split(strings.TrimSuffix(string(zfsAnswer(t, dir, line)), "\n"), "\n")
	}
	names := lines("list -H -o name")
	if names[0] != "tank0" || !slices.IsSorted(names) || len(names) != smallDatasets.Datasets {
		t.Errorf("zfs list: %d names from %q, not sorted", len(names), names[0])
	}
	// -d counts the levels below each dataset named; a snapshot is a
	// level below its dataset.
	for _, l := range lines("list -H -o name -t all -d 1 tank0") {
		if strings.Count(l, "/")+strings.Count(l, "@") > 1 {
			t.Errorf("zfs list -d 1 tank0: %s", l)
		}
	}
	// -t snapshot DATASET lists the dataset's snapshots, not its
	// children's.
	withSnaps, _, _ := strings.Cut(lines("list -H -o name -t snapshot")[0], "@")
	for _, l := range lines("list -H -o name -t snapshot " + withSnaps) {
		if !strings.HasPrefix(l, withSnaps+"@") {
			t.Errorf("zfs list -t snapshot %s: %s", withSnaps, l)
		}
	}
	all := lines("list -H -o name,type -t all -r tank1")
	for i, l := range all {
		name, typ, _ := strings.Cut(l, "\t")
		if ds, _, isSnap := strings.Cut(name, "@"); isSnap && (typ != "snapshot" || !slices.ContainsFunc(all[:i], func(p string) bool { return strings.HasPrefix(p, ds+"\t") })) {
			t.Errorf("zfs list -t all: %s before its dataset", l)
		}
	}
	used := lines("list -Hp -o used,name -S used")
	if !slices.IsSortedFunc(used, func(a, b string) int {
		var x, y int64
		fmt.Sscan(a, &x)
		fmt.Sscan(b, &y)
		return int(y - x)
	}) {
		t.Error("zfs list -S used is not sorted by used")
	}
	table := lines("list -o name,used,avail,type -t volume")
	if !regexp.MustCompile(`^NAME +USED +AVAIL +TYPE$`).MatchString(table[0]) || len(table) < 2 ||
		!regexp.MustCompile(`^tank[01]/\S+ +[0-9.]+[KMGT] +[0-9.]+[KMGT] +volume$`).MatchString(table[1]) {
		t.Errorf("zfs list as a table:\n%s", strings.Join(table, "\n"))
	}
	get := lines("get -o property,value,source compression,quota,volsize tank1")
	if want := []string{"PROPERTY     VALUE           SOURCE", "compression  lz4             local", "quota        none            default", "volsize      -               -"}; !slices.Equal(get, want) {
		t.Errorf("zfs get as a table:\n%s\nwant\n%s", strings.Join(get, "\n"), strings.Join(want, "\n"))
	}
	if got := lines("get -H -s local -o name,value compression -t filesystem"); !slices.Contains(got, "tank1\tlz4") || slices.ContainsFunc(got, func(l string) bool { return strings.HasPrefix(l, "tank1/") && strings.HasSuffix(l, "lz4") }) {
		t.Errorf("zfs get -s local: %q", got)
	}

	// zfs list's JSON gives a property that does not apply the source of
	// the one before: a volume's quota that of usedbyrefreservation.
	vol := lines("list -H -o name -t volume")[0]
	var js struct {
		Datasets map[string]struct {
			Properties map[string]struct {
				Value  any
				Source struct{ Type string }
			}
		}
	}
	if err := json.Unmarshal(zfsAnswer(t, dir, "list -j --json-int -o usedbyrefreservation,quota,volsize,refreservation,recordsize "+vol), &js); err != nil {
		t.Fatal(err)
	}
	p := js.Datasets[vol].Properties
	if p["quota"].Source.Type != "NONE" || p["quota"].Value != "-" || p["volsize"].Source.Type != "LOCAL" || p["recordsize"].Source.Type != p["refreservation"].Source.Type {
		t.Errorf("JSON of volume %s: %+v", vol, p)
	}

	for _, tc := range []struct {
		line, stderr string
		status       int
		snapshots    bool
	}{
		{"list -Hp -o name,bogus", "bad property list: invalid property 'bogus'", 2, false},
		{"get -Hp -o name,property,value used,bogus", "bad property list: invalid property 'bogus'", 2, false},
		{"list -Hpx", "invalid option 'x'", 2, false},
		{"list -t bogus", "invalid type 'bogus'", 2, false},
		{"list -s bogus", "invalid property 'bogus'", 2, false},
		{"get -o name,bogus used", "invalid column name 'bogus'", 2, false},
		{"get", "missing property argument", 2, false},
		{"list -o", "missing argument for 'o' option", 2, false},
		{"list --json-int", "'--json-int' only works with '-j' option", 2, false},
		{"list nope", "cannot open 'nope': dataset does not exist", 1, false},
		{"list -H -t snapshot " + vol, "", 0, true},
		{"get -Hp used tank0@nope", "cannot open 'tank0@nope': dataset does not exist", 1, false},
		{"list -H -o name,user:prop", "", 0, false},
		{"list -Hp -t snapshot -o name,creation,used,referenced", "", 0, true},
		{"get -Hp all tank0", "", 0, false},
		{"get -Hprt snapshot -o name,property,value used tank0", "", 0, true},
	} {
		a, err := AnswerZFS(dir, strings.Fields(tc.line))
		first, _, _ := strings.Cut(string(a.Stderr), "\n")
		if err != nil || a.Status != tc.status || first != tc.stderr || a.Snapshots != tc.snapshots {
			t.Errorf("zfs %s: status %d, snapshots %v, stderr %q, %v; want %d, %v, %q", tc.line, a.Status, a.Snapshots, first, err, tc.status, tc.snapshots, tc.stderr)
		}
	}
	for _, args := range [][]string{{"snapshot", "tank0@now"}, {"version"}, {}} {
		if _, err := AnswerZFS(dir, args); !errors.Is(err, ErrNoAnswer) {
			t.Errorf("zfs %s: %v, want ErrNoAnswer", strings.Join(args, " "), err)
		}
	}
	if _, err := AnswerZFS(writeHost(t, Spec{Pools: 1, Leaves: 2, Version: "2.3"}), []string{"list"}); !errors.Is(err, ErrNoDatasets) {
		t.Errorf("zfs list on a host without datasets: %v", err)
	}
}

// zfs prints sizes as zfs_nicenum does.
func TestNicenum(t *testing.T) {
	for _, tc := range []struct {
		n     uint64
		bytes bool
		want  string
	}{
		{0, true, "0B"}, {0, false, "0"}, {1023, true, "1023B"}, {98304, true, "96K"}, {10239, true, "10.0K"},
		{104333312, true, "99.5M"}, {231501824, true, "221M"}, {131072, false, "128K"}, {1 << 40, true, "1T"},
		{1<<64 - 1, false, "16.0E"},
	} {
		if got := nicenum(tc.n, tc.bytes); got != tc.want {
			t.Errorf("nicenum(%d, %v) = %q, want %q", tc.n, tc.bytes, got, tc.want)
		}
	}
}

func TestSpecNames(t *testing.T) {
	for name, want := range map[string]Spec{
		"1x8:10000d:100000s": {Pools: 1, Leaves: 8, Version: "2.4", Datasets: 10000, Snapshots: 100000},
		"2x4:500d":           {Pools: 2, Leaves: 4, Version: "2.4", Datasets: 500},
	} {
		s, err := ParseName(name, "2.4")
		if err != nil || s != want || s.Name() != name {
			t.Errorf("ParseName(%q) = %+v (%s), %v", name, s, s.Name(), err)
		}
	}
	if s, err := ParseName("1x8:100s:20d", "2.4"); err != nil || s.Name() != "1x8:20d:100s" {
		t.Errorf("snapshots before datasets: %+v, %v", s, err)
	}
	for _, bad := range []string{"1x8:", "1x8:10", "1x8:10x", "1x8:0d", "1x8:10d:10d", "1x8:100s", "4x2:3d", "1x8:-5d", "1x2:1d:200000s"} {
		if _, err := ParseName(bad, "2.4"); err == nil {
			t.Errorf("ParseName(%q) accepted", bad)
		}
	}
}

// The stand-in zfs answers from the host in its settings, takes the
// snapshot delay for snapshots, and refuses what zfs refuses.
func TestStandInZFS(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host")
	if err := Write(host, Spec{Pools: 1, Leaves: 2, Version: "2.4", Datasets: 20, Snapshots: 50}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "bin")
	standin := filepath.Join(bin, "zfs")
	if out, err := exec.Command("go", "build", "-o", standin, "./cmd/zfs").CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in zfs: %v\n%s", err, out)
	}
	log := filepath.Join(dir, "runs.log")
	if err := WriteStandIn(bin, StandIn{Host: host, Delay: 10 * time.Millisecond, SnapshotDelay: time.Second, Log: log}); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadStandIn(bin); err != nil || s.SnapshotDelay != time.Second {
		t.Fatalf("settings: %+v, %v", s, err)
	}
	run := func(args ...string) (stdout, stderr string, status int, took time.Duration) {
		var o, e bytes.Buffer
		cmd := exec.Command(standin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		start := time.Now()
		err := cmd.Run()
		took = time.Since(start)
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			status = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), status, took
	}
	out, _, status, took := run("list", "-Hp", "-t", "filesystem,volume", "-o", strings.Join(zfs.DatasetProperties, ","))
	if l, err := dataset.ParseList(strings.NewReader(out), zfs.DatasetProperties); status != 0 || err != nil || len(l.Datasets) != 20 || took >= time.Second {
		t.Errorf("zfs list: status %d, %v, took %v:\n%s", status, err, took, out)
	}
	out, _, status, took = run("get", "-Hprt", "snapshot", "-o", "name,property,value", "used,referenced", "tank0")
	if g, err := dataset.ParseGet(strings.NewReader(out), []string{"used", "referenced"}); status != 0 || err != nil || len(g.Datasets) != 50 || took < time.Second {
		t.Errorf("zfs get -t snapshot: status %d, %v, took %v:\n%s", status, err, took, out)
	}
	_, stderr, status, _ := run("list", "-Hp", "-o", "name,bogus")
	if status != 2 || !strings.HasPrefix(stderr, "bad property list: invalid property 'bogus'\n") {
		t.Errorf("zfs list -o bogus: status %d, stderr %q", status, stderr)
	}
	if _, stderr, status, _ = run("snapshot", "tank0@now"); status != 2 || !strings.Contains(stderr, "zfs stand-in") {
		t.Errorf("zfs snapshot: status %d, stderr %q", status, stderr)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	logged := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(logged) != 4 || !strings.HasPrefix(logged[0], "zfs list -Hp") || logged[2] != "exit 2: zfs list -Hp -o name,bogus" || logged[3] != "unanswered: zfs snapshot tank0@now" {
		t.Errorf("log:\n%s", data)
	}
}
