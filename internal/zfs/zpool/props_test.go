package zpool

import (
	"bytes"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The columns `zpool list -H` prints without -o on OpenZFS 0.8+ and
// FreeBSD 11.2+.
var defaultListColumns = []string{
	"name", "size", "allocated", "free", "checkpoint", "expandsize",
	"fragmentation", "capacity", "dedupratio", "health", "altroot",
}

var listColumnsFlag = regexp.MustCompile(`-o ([a-z,]+)`)

// listColumns returns the -o columns of a sample's command line.
func listColumns(command string) []string {
	if m := listColumnsFlag.FindStringSubmatch(command); m != nil {
		return strings.Split(m[1], ",")
	}
	return defaultListColumns
}

var firstWord = regexp.MustCompile(`^(\S+)\s`)

// firstFields returns the distinct first words of the lines that are not
// indented, in order, skipping the header row of a table.
func firstFields(body []byte) []string {
	var names []string
	seen := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		m := firstWord.FindStringSubmatch(line)
		if m == nil || m[1] == "NAME" || seen[m[1]] {
			continue
		}
		seen[m[1]] = true
		names = append(names, m[1])
	}
	return names
}

func propertyNames(props []Property) []string {
	var names []string
	seen := map[string]bool{}
	for _, p := range props {
		if !seen[p.Name] {
			seen[p.Name] = true
			names = append(names, p.Name)
		}
	}
	return names
}

func rowNames(rows []map[string]string) []string {
	var names []string
	for _, r := range rows {
		names = append(names, r["name"])
	}
	return names
}

func TestParseGetCaptures(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	var files []sample.File
	files = append(files, sample.Glob(t, dir, "*zpool-get-Hp-all*.txt")...)
	files = append(files, sample.Glob(t, dir, "*zpool-get-all-*-all-vdevs.txt")...)
	for _, f := range files {
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			props, err := ParseGet(bytes.NewReader(f.Body))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := propertyNames(props), firstFields(f.Body); len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("names %v, want %v", got, want)
			}
			rows := len(strings.Split(strings.TrimSpace(string(f.Body)), "\n"))
			if bytes.HasPrefix(f.Body, []byte("NAME ")) {
				rows--
			}
			if len(props) != rows {
				t.Errorf("%d properties from %d rows", len(props), rows)
			}
			for _, p := range props {
				if p.Property == "" || p.Value == "" || p.Source == "" {
					t.Fatalf("incomplete property %+v", p)
				}
			}
		})
	}
}

// The scripted and the table form of the same vdev properties list the
// same vdevs and properties, and the same values where -p changes nothing.
func TestParseGetTableMatchesScripted(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	for _, f := range sample.Glob(t, dir, "09-errors-repaired__zpool-get-all-*-all-vdevs.txt") {
		scripted := strings.Replace(f.Path, "zpool-get-all-", "zpool-get-Hp-all-", 1)
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			s := sample.MustRead(t, scripted)
			table, err := ParseGet(bytes.NewReader(f.Body))
			if err != nil {
				t.Fatal(err)
			}
			hp, err := ParseGet(bytes.NewReader(s.Body))
			if err != nil {
				t.Fatal(err)
			}
			if len(table) != len(hp) {
				t.Fatalf("%d properties in the table, %d with -Hp", len(table), len(hp))
			}
			for i := range table {
				a, b := table[i], hp[i]
				if a.Name != b.Name || a.Property != b.Property || a.Source != b.Source {
					t.Errorf("row %d: %+v, with -Hp %+v", i, a, b)
				}
				if (a.Property == "path" || a.Property == "children" || a.Property == "guid") && a.Value != b.Value {
					t.Errorf("row %d: %s %q, with -Hp %q", i, a.Property, a.Value, b.Value)
				}
			}
		})
	}
}

func TestParseGetVdevState(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	f := sample.MustRead(t, filepath.Join(dir, "09-errors-repaired__zpool-get-Hp-all-r10-all-vdevs.txt"))
	props, err := ParseGet(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, p := range props {
		if p.Property == "state" {
			states[p.Name] = ParseHealth(p.Value)
		}
	}
	// The same state as `zpool status` prints.
	want := map[string]string{
		"root-0": "degraded", "mirror-0": "degraded", "virtio-zd03": "faulted", "virtio-zs02": "online",
		"mirror-1": "online", "virtio-zd05": "online", "virtio-zd06": "online",
	}
	if !reflect.DeepEqual(states, want) {
		t.Errorf("vdev states %v, want %v", states, want)
	}
}

func TestParseListCaptures(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	for _, f := range sample.Glob(t, dir, "*zpool-list*-Hp.txt") {
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			rows, err := ParseList(bytes.NewReader(f.Body), defaultListColumns)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, line := range strings.Split(string(f.Body), "\n") {
				if name, _, ok := strings.Cut(line, "\t"); ok && name != "" {
					want = append(want, name)
				}
			}
			if got := rowNames(rows); len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("pools %v, want %v", got, want)
			}
			for _, r := range rows {
				if _, ok, err := ParseSize(r["size"]); !ok || err != nil {
					t.Errorf("%s: size %q", r["name"], r["size"])
				}
				if _, ok, err := ParseRatio(r["dedupratio"]); !ok || err != nil {
					t.Errorf("%s: dedupratio %q", r["name"], r["dedupratio"])
				}
				if _, ok, err := ParsePercent(r["capacity"]); !ok || err != nil {
					t.Errorf("%s: capacity %q", r["name"], r["capacity"])
				}
			}
		})
	}
}

func TestParseListCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-list")
	for _, f := range sample.Glob(t, dir, "*.txt") {
		name := filepath.Base(f.Path)
		t.Run(name, func(t *testing.T) {
			var got []string
			switch {
			case strings.Contains(name, "get-"):
				props, err := ParseGet(bytes.NewReader(f.Body))
				if err != nil {
					t.Fatal(err)
				}
				got = propertyNames(props)
			case strings.HasPrefix(name, "list-Hp"):
				rows, err := ParseList(bytes.NewReader(f.Body), listColumns(f.Header["command"]))
				if err != nil {
					t.Fatal(err)
				}
				got = rowNames(rows)
			default:
				rows, err := ParseListTable(bytes.NewReader(f.Body))
				if err != nil {
					t.Fatal(err)
				}
				got = rowNames(rows)
			}
			if want := poolRowNames(f.Body); len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("names %v, want %v", got, want)
			}
		})
	}
}

var dashesOnly = regexp.MustCompile(`^\S+(\s+-)+\s*$`)

// poolRowNames are the first words of the rows that name a pool (or a
// vdev, for vdev properties): not indented, not the header, not a class
// row of `list -v` ("logs  -  -  -").
func poolRowNames(body []byte) []string {
	var keep []string
	for _, line := range strings.Split(string(body), "\n") {
		if !dashesOnly.MatchString(line) {
			keep = append(keep, line)
		}
	}
	return firstFields([]byte(strings.Join(keep, "\n")))
}

func TestParseZfsFuse(t *testing.T) {
	for _, path := range []string{"testdata/zfs-fuse/mirror__list-H.txt", "testdata/zfs-fuse/two-pools__list-H.txt"} {
		f, err := sample.Read(path)
		if err != nil {
			t.Skip(err)
		}
		rows, err := ParseList(bytes.NewReader(f.Body), listColumns(f.Header["command"]))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(rows) == 0 || rows[0]["name"] != "cmirror" || rows[0]["health"] != "ONLINE" {
			t.Fatalf("%s: %v", path, rows)
		}
		for _, r := range rows {
			size, ok, err := ParseSize(r["size"])
			if !ok || err != nil || size != 123*(1<<20) {
				t.Errorf("%s: size %q = %v", path, r["size"], size)
			}
			if dedup, ok, _ := ParseRatio(r["dedupratio"]); !ok || dedup != 1 {
				t.Errorf("%s: dedupratio %q", path, r["dedupratio"])
			}
			if len(r["guid"]) < 18 {
				t.Errorf("%s: guid %q", path, r["guid"])
			}
		}
	}

	f, err := sample.Read("testdata/zfs-fuse/mirror__get-all.txt")
	if err != nil {
		t.Skip(err)
	}
	props, err := ParseGet(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Property{}
	for _, p := range props {
		if p.Name != "cmirror" {
			t.Errorf("property of %q", p.Name)
		}
		byName[p.Property] = p
	}
	// guid is wider than its column and pushes the source right.
	want := map[string]Property{
		"guid":       {"cmirror", "guid", "2059451792509270502", "default"},
		"size":       {"cmirror", "size", "123M", "-"},
		"dedupratio": {"cmirror", "dedupratio", "1.00x", "-"},
		"version":    {"cmirror", "version", "23", "default"},
	}
	for k, w := range want {
		if byName[k] != w {
			t.Errorf("%s = %+v, want %+v", k, byName[k], w)
		}
	}
}

func TestParseGetForms(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []Property
	}{
		{"scripted", "tank\tsize\t1006632960\t-\ntank\tcomment\tmy pool\tlocal\n", []Property{
			{"tank", "size", "1006632960", "-"}, {"tank", "comment", "my pool", "local"}}},
		{"scripted without source", "tank\thealth\tONLINE\n", []Property{{"tank", "health", "ONLINE", ""}}},
		{"scripted pasted with spaces", "tank  size  123M  -\n", []Property{{"tank", "size", "123M", "-"}}},
		{"table", "NAME  PROPERTY  VALUE  SOURCE\ntank  size      123M   -\ntank  comment   my pool  local\n", []Property{
			{"tank", "size", "123M", "-"}, {"tank", "comment", "my pool", "local"}}},
		{"table without source", "NAME  PROPERTY  VALUE\ntank  size      123M\n", []Property{{"tank", "size", "123M", ""}}},
		{"empty", "", nil},
	} {
		got, err := ParseGet(strings.NewReader(tc.in))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

// ParseGetFunc keeps the rows ParseGet returns whose property is wanted,
// in order, and rejects what ParseGet rejects, kept or not.
func TestParseGetFunc(t *testing.T) {
	counters := func(property string) bool { return property == "size" || strings.HasSuffix(property, "_bytes") }
	for _, path := range []string{"testdata/vdevprops-raidz-special.txt", "testdata/zfs-fuse/mirror__get-all.txt"} {
		f := sample.MustRead(t, path)
		all, err := ParseGet(bytes.NewReader(f.Body))
		if err != nil {
			t.Fatal(err)
		}
		var want []Property
		for _, p := range all {
			if counters(p.Property) {
				want = append(want, p)
			}
		}
		got, err := ParseGetFunc(bytes.NewReader(f.Body), counters)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %+v, %v; want %+v", path, got, err, want)
		}
		if all, err := ParseGetFunc(bytes.NewReader(f.Body), nil); err != nil || len(all) == 0 {
			t.Errorf("%s: without keep: %d properties, %v", path, len(all), err)
		}
	}
	if props, err := ParseGetFunc(strings.NewReader("tank\tread_bytes\t1\t-\ntank size\n"), counters); err == nil || props != nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Errorf("a bad row left out: %+v, %v; want a line 2 error", props, err)
	}
	// A table header is one only before the first row, kept or not.
	if props, err := ParseGetFunc(strings.NewReader("tank health ONLINE -\nNAME PROPERTY VALUE\n"), counters); err != nil || props != nil {
		t.Errorf("a header after a row: %+v, %v; want no property and no error", props, err)
	}
}

func TestParseErrorsNameTheLine(t *testing.T) {
	_, err := ParseGet(strings.NewReader("tank\tsize\t1G\t-\ntank size\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Errorf("ParseGet: %v, want a line 2 error", err)
	}
	parsetest.CheckAt(t, err, "line 2:")
	in := "tank\t1G\t1M\t1G\t-\t-\t0\t0\t1.00\tONLINE\t-\nr10\t1G\t1M\n"
	_, err = ParseList(strings.NewReader(in), defaultListColumns)
	if err == nil || err.Error() != "line 2: 3 fields, want 11 (name,size,allocated,free,checkpoint,expandsize,fragmentation,capacity,dedupratio,health,altroot)" {
		t.Errorf("ParseList: %v", err)
	}
	parsetest.CheckAt(t, err, "line 2:")
	if _, err := ParseListTable(strings.NewReader("NAME SIZE HEALTH\ntank 1G\n")); err == nil || !strings.HasPrefix(err.Error(), "line 2: 2 fields, want 3") {
		t.Errorf("ParseListTable: %v", err)
	}
	if _, err := ParseListTable(strings.NewReader("tank 1G ONLINE\n")); err == nil || !strings.HasPrefix(err.Error(), "line 1: ") {
		t.Errorf("ParseListTable without a header: %v", err)
	}
}

func TestParseListTableColumns(t *testing.T) {
	in := "NAME    SIZE  ALLOC   FREE  CKPOINT  EXPANDSZ   FRAG    CAP  DEDUP  HEALTH  ALTROOT\n" +
		"data    928G  17.2G   911G        -         -     1%     1%  1.00x  ONLINE  -\n"
	rows, err := ParseListTable(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []map[string]string{{
		"name": "data", "size": "928G", "allocated": "17.2G", "free": "911G", "checkpoint": "-", "expandsize": "-",
		"fragmentation": "1%", "capacity": "1%", "dedupratio": "1.00x", "health": "ONLINE", "altroot": "-",
	}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got %v, want %v", rows, want)
	}
}

func TestParseRatio(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"1.00x", 1, true},
		{"1.83x", 1.83, true},
		{"1.00", 1, true},
		{"12%", 0.12, true},
		{"0.00%", 0, true},
		{"1,19x", 1.19, true},
		{"-", 0, false},
		{"", 0, false},
	} {
		got, ok, err := ParseRatio(tc.in)
		if err != nil || ok != tc.ok || got != tc.want {
			t.Errorf("ParseRatio(%q) = %v, %v, %v; want %v, %v", tc.in, got, ok, err, tc.want, tc.ok)
		}
	}
	for _, bad := range []string{"x", "1.0.0x", "abc", "NaN", "%"} {
		if _, _, err := ParseRatio(bad); err == nil {
			t.Errorf("ParseRatio(%q): want an error", bad)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"21", 0.21, true},
		{"21%", 0.21, true},
		{"0%", 0, true},
		{"-", 0, false},
	} {
		got, ok, err := ParsePercent(tc.in)
		if err != nil || ok != tc.ok || got != tc.want {
			t.Errorf("ParsePercent(%q) = %v, %v, %v; want %v, %v", tc.in, got, ok, err, tc.want, tc.ok)
		}
	}
	if _, _, err := ParsePercent("1.00x"); err == nil {
		t.Error("ParsePercent(1.00x): want an error")
	}
}

func TestParseHealth(t *testing.T) {
	for in, want := range map[string]string{
		"ONLINE": "online", "DEGRADED": "degraded", " UNAVAIL ": "unavail",
		"7": "online", "6": "degraded", "5": "faulted", "4": "unavail", "3": "removed", "2": "offline",
	} {
		if got := ParseHealth(in); got != want {
			t.Errorf("ParseHealth(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzParseGet(f *testing.F) {
	addSeeds(f, getSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := ParseGet(bytes.NewReader(data))
		if err != nil && props != nil {
			t.Fatalf("error %v with %d properties", err, len(props))
		}
		parsetest.Check(t, err)
		for _, p := range props {
			if p.Name == "" || p.Property == "" {
				t.Fatalf("property without a name: %+v", p)
			}
		}
	})
}

func FuzzParseList(f *testing.F) {
	addSeeds(f, listSeeds)
	columns := []string{"name", "size", "allocated", "free", "capacity", "dedupratio", "health", "guid"}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, cols := range [][]string{columns, defaultListColumns} {
			rows, err := ParseList(bytes.NewReader(data), cols)
			if err != nil && rows != nil {
				t.Fatalf("error %v with %d rows", err, len(rows))
			}
			parsetest.Check(t, err)
			for _, r := range rows {
				if len(r) != len(cols) {
					t.Fatalf("row %v: want the %d columns %v", r, len(cols), cols)
				}
			}
		}
		rows, err := ParseListTable(bytes.NewReader(data))
		if err != nil && rows != nil {
			t.Fatalf("table: error %v with %d rows", err, len(rows))
		}
		parsetest.Check(t, err)
	})
}

// Vdev properties name every vdev, the root as root-0, and give exact
// cumulative counters; state is a number.
func TestParseVdevPropertiesFixture(t *testing.T) {
	f := sample.MustRead(t, "testdata/vdevprops-raidz-special.txt")
	props, err := ParseGet(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "testdata/vdevprops-raidz-special.golden.json", props)
	got := map[string]map[string]string{}
	for _, p := range props {
		if got[p.Name] == nil {
			got[p.Name] = map[string]string{}
		}
		got[p.Name][p.Property] = p.Value
	}
	if len(got) != 8 {
		t.Errorf("%d vdevs, want 8", len(got))
	}
	if s := ParseHealth(got["sdb"]["state"]); s != "offline" {
		t.Errorf("sdb state %q, want offline", s)
	}
	if s := ParseHealth(got["raidz1-0"]["state"]); s != "degraded" {
		t.Errorf("raidz1-0 state %q, want degraded", s)
	}
	if got["root-0"]["write_bytes"] != "2147483648" || got["sda"]["slow_ios"] != "3" {
		t.Errorf("counters read wrong: root-0 write_bytes %q, sda slow_ios %q", got["root-0"]["write_bytes"], got["sda"]["slow_ios"])
	}
	if v, ok, _ := ParsePercent(got["mirror-1"]["fragmentation"]); !ok || v != 0.09 {
		t.Errorf("mirror-1 fragmentation = %v, %v", v, ok)
	}
}
