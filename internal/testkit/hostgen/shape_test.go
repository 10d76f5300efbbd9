package hostgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// The guest's captures that a host's outputs are written after.
const (
	zpoolCaptures = "../../zfs/zpool/testdata/openzfs-%s-guest"
	kstatCaptures = "../../../collector/testdata/openzfs-2.4-guest"
	// The zpool outputs: this scenario has every form the exporter may
	// ask for, -t -i included; r10 is as it was created.
	modelScenario = "18-trim-initialize"
	modelPool     = "r10"
	kstatScenario = "01-created"
)

// otherPools are the scenario's pools besides modelPool, whose own
// captures (zpool status -t -i opr) the host does not answer.
var otherPools = []string{"dr", "mir", "rz1", "opr"}

// asModel renames a generated pool of 4 leaves after r10 of the captures,
// whose leaves are virtio-zd03 to zd06.
var asModel = strings.NewReplacer("tank0", modelPool,
	"virtio-zd01", "virtio-zd03", "virtio-zd02", "virtio-zd04", "virtio-zd03", "virtio-zd05", "virtio-zd04", "virtio-zd06")

// captured returns the output of a command in the guest's model
// scenario.
func captured(t *testing.T, dir, line string) []byte {
	t.Helper()
	return capturedIn(t, dir, modelScenario, line)
}

// capturedIn returns the output of a command in a scenario of the guest.
func capturedIn(t *testing.T, dir, scenario, line string) []byte {
	t.Helper()
	data := readFile(t, dir, scenario+"__"+runner.CaptureFileName(line))
	command, body, err := splitCapture(data)
	if err != nil || command != line {
		t.Fatalf("capture of %s: command %q, %v", line, command, err)
	}
	return body
}

// A generated pool of two mirrors is r10 of the captures: the same
// commands, rows, columns, JSON keys and kstats, with values that differ
// only where names, GUIDs and the figures that add up across vdevs do.
func TestGeneratedPoolIsLikeCapture(t *testing.T) {
	for _, version := range Versions {
		t.Run(version, func(t *testing.T) {
			dir := writeHost(t, Spec{Pools: 1, Leaves: 4, Version: version})
			model := fmt.Sprintf(zpoolCaptures, version)
			checkCommands(t, dir, model)
			checkVdevProperties(t, dir, model)
			checkPoolProperties(t, dir, model)
			checkStatusJSON(t, dir, model, "zpool status -j --json-int")
			checkStatusJSON(t, dir, model, "zpool status -j --json-int -t -i")
			for _, line := range []string{"zpool status", "zpool status -p", "zpool status -s -p", "zpool status -s -p -t -i"} {
				checkStatusText(t, dir, model, line)
			}
			checkIostatTables(t, dir, model)
			checkVersion(t, dir, model)
			if version == "2.4" {
				checkKstatRows(t, filepath.Join(dir, "kstat"))
			}
		})
	}
}

// checkCommands checks that the host answers what the captures hold of
// r10, and nothing else. zpool iostat -v and -v -w, and the table of
// zpool list -v, are left out: the exporter reads the first only where
// vdev properties are missing, never the second, and the table only where
// zpool list refuses -H.
func checkCommands(t *testing.T, dir, model string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(model, modelScenario+"__zpool*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range paths {
		command, _, err := splitCapture(readFile(t, p))
		if err != nil {
			t.Fatal(err)
		}
		fields := strings.Fields(command)
		if command == "zpool iostat -v" || command == "zpool iostat -v -w" || command == "zpool list -v" || strings.Contains(command, "all-vdevs") && !strings.Contains(command, " "+modelPool+" ") ||
			slices.Contains(otherPools, fields[len(fields)-1]) {
			continue
		}
		command = strings.Replace(command, " "+modelPool+" ", " tank0 ", 1)
		want = append(want, runner.CaptureFileName(command))
	}
	// The events queue, whose captures live with the events parser's,
	// is held to them by TestGeneratedEventsAreLikeTheGuests.
	want = append(want, runner.CaptureFileName(eventsLine))
	got, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		got[i] = filepath.Base(got[i])
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("outputs %v, the captures have %v", got, want)
	}
}

// Properties whose values are the vdev's or pool's own, or add up its
// children's.
var (
	ownVdevProperties = []string{"guid", "path", "children", "free", "allocated", "write_ops", "write_bytes"}
	ownPoolProperties = []string{"guid", "load_guid", "free", "allocated", "fragmentation"}
)

func checkVdevProperties(t *testing.T, dir, model string) {
	t.Helper()
	got := asModel.Replace(string(readCapture(t, dir, "zpool get -Hp all tank0 all-vdevs")))
	want := string(captured(t, model, "zpool get -Hp all "+modelPool+" all-vdevs"))
	compareRows(t, "vdev properties", got, want, ownVdevProperties)
}

func checkPoolProperties(t *testing.T, dir, model string) {
	t.Helper()
	got := asModel.Replace(string(readCapture(t, dir, "zpool get -Hp all")))
	var want strings.Builder
	for line := range strings.Lines(string(captured(t, model, "zpool get -Hp all"))) {
		if strings.HasPrefix(line, modelPool+"\t") {
			want.WriteString(line)
		}
	}
	compareRows(t, "pool properties", got, want.String(), ownPoolProperties)
}

// compareRows compares tab-separated rows field by field, but for the
// values of the properties in own.
func compareRows(t *testing.T, what, got, want string, own []string) {
	t.Helper()
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	if len(g) != len(w) {
		t.Errorf("%s: %d rows, the capture has %d", what, len(g), len(w))
	}
	for i := range min(len(g), len(w)) {
		gf, wf := strings.Split(g[i], "\t"), strings.Split(w[i], "\t")
		if len(gf) == 4 && len(wf) == 4 && slices.Contains(own, wf[1]) {
			gf[2], wf[2] = "", ""
		}
		if !slices.Equal(gf, wf) {
			t.Errorf("%s, row %d: %q, the capture has %q", what, i+1, g[i], w[i])
		}
	}
}

func checkStatusJSON(t *testing.T, dir, model, line string) {
	t.Helper()
	type status struct {
		OutputVersion json.RawMessage            `json:"output_version"`
		Pools         map[string]json.RawMessage `json:"pools"`
	}
	var got, want status
	for _, s := range []struct {
		data []byte
		into *status
	}{
		{readCapture(t, dir, line), &got},
		{captured(t, model, line), &want},
	} {
		if err := json.Unmarshal(s.data, s.into); err != nil {
			t.Fatal(err)
		}
	}
	if string(got.OutputVersion) != string(want.OutputVersion) {
		t.Errorf("output_version %s, the capture has %s", got.OutputVersion, want.OutputVersion)
	}
	g, w := jsonShape(t, got.Pools["tank0"]), jsonShape(t, want.Pools[modelPool])
	for i := range max(len(g), len(w)) {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			t.Errorf("%s: JSON of the pool differs from the capture's at key %d: %q, the capture has %q", line, i+1, at(g, i), at(w, i))
			break
		}
	}
}

// jsonShape lists an object's keys in order, and the values of those that
// are not a vdev's or pool's own, with the names of pools and vdevs (keys
// of "vdevs") as "*".
func jsonShape(t *testing.T, data []byte) []string {
	t.Helper()
	own := []string{"name", "guid", "pool_guid", "path", "alloc_space"}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var shape []string
	var value func(path, key string)
	value = func(path, key string) {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		if tok != json.Delim('{') {
			if slices.Contains(own, key) {
				tok = "~"
			}
			shape = append(shape, fmt.Sprintf("%s = %v", path, tok))
			return
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				t.Fatal(err)
			}
			name := k.(string)
			if key == "vdevs" {
				name = "*"
			}
			shape = append(shape, path+"."+name)
			value(path+"."+name, k.(string))
		}
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
	}
	value("", "")
	return shape
}

func at(list []string, i int) string {
	if i < len(list) {
		return list[i]
	}
	return "(end)"
}

// checkStatusText checks that the text status has r10's lines, field for
// field, with the columns where the capture has them.
func checkStatusText(t *testing.T, dir, model, line string) {
	t.Helper()
	got := strings.Split(string(readCapture(t, dir, line)), "\n")
	var want []string
	in := false
	for l := range strings.Lines(string(captured(t, model, line))) {
		if strings.HasPrefix(l, "  pool: ") {
			in = l == "  pool: "+modelPool+"\n"
		}
		if in {
			want = append(want, strings.TrimSuffix(l, "\n"))
		}
	}
	if want[len(want)-1] == "" { // the blank line before the next pool
		want = want[:len(want)-1]
	}
	want = append(want, "")
	if len(got) != len(want) {
		t.Fatalf("%s: %d lines, the capture has %d:\n%s", line, len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range got {
		g := asModel.Replace(got[i])
		if !slices.Equal(strings.Fields(g), strings.Fields(want[i])) || strings.Index(got[i], "ONLINE") != strings.Index(want[i], "ONLINE") ||
			strings.HasPrefix(g, "\tNAME") && g != want[i] {
			t.Errorf("%s, line %d: %q, the capture has %q", line, i+1, got[i], want[i])
		}
	}
}

// checkKstatRows checks that each kstat has the statistics of its
// capture, in order, with their types.
func checkKstatRows(t *testing.T, dir string) {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(kstatCaptures, kstatScenario+"__kstat-zfs-*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range paths {
		command, body, err := splitCapture(readFile(t, p))
		if err != nil {
			t.Fatal(err)
		}
		name, _ := strings.CutPrefix(command, "cat /proc/spl/kstat/zfs/")
		if pool, file, ok := strings.Cut(name, "/"); ok {
			if pool != modelPool {
				continue
			}
			name = "tank0/" + file
		}
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			continue // a kstat the exporter does not read
		}
		n++
		if g, w := kstatShape(string(got)), kstatShape(strings.ReplaceAll(string(body), modelPool, "tank0")); !slices.Equal(g, w) {
			t.Errorf("kstat %s: %v, the capture has %v", name, g, w)
		}
	}
	if n != len(kstatFiles(layout(Spec{Pools: 1, Leaves: 2, Version: "2.4"}))) {
		t.Errorf("%d kstats compared with their captures", n)
	}
}

// kstatShape is the header's figures but for the kstat's ID and times,
// then each row's first two fields (a named kstat's statistic and type;
// a txg's number and birth).
func kstatShape(text string) []string {
	var shape []string
	for i, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		switch {
		case i == 0 && len(f) == 7:
			shape = append(shape, strings.Join(f[1:5], " "))
		case len(f) >= 2:
			shape = append(shape, f[0]+" "+f[1])
		case len(f) == 1:
			shape = append(shape, f[0])
		}
	}
	return shape
}

func TestSplitCapture(t *testing.T) {
	command, body, err := splitCapture([]byte("# command: zpool status\n# scenario: x\n# ---\n  pool: a\n"))
	if err != nil || command != "zpool status" || string(body) != "  pool: a\n" {
		t.Errorf("splitCapture: %q %q %v", command, body, err)
	}
	for _, bad := range []string{"  pool: a\n", "# command: zpool status\n", "# scenario: x\n# ---\n", "# command: zpool status -x\n# exit: 1\n# ---\n"} {
		if _, _, err := splitCapture([]byte(bad)); err == nil {
			t.Errorf("splitCapture(%q) accepted", bad)
		}
	}
}

func TestWithoutStatistics(t *testing.T) {
	got := withoutStatistics(zilKstat, "zil_commit_crash_count")
	if strings.Contains(got, "zil_commit_crash_count") || !strings.HasPrefix(got, "23 1 0x01 20 5440 ") {
		t.Errorf("zil without its crash count:\n%s", got)
	}
}

// checkIostatTables checks that the tables of -w and -r hold r10's vdevs
// in the captures' order, with the same columns and buckets, and that the
// rows of -q have the same vdevs and columns.
func checkIostatTables(t *testing.T, dir, model string) {
	t.Helper()
	for _, c := range []struct {
		flag string
		kind zpool.HistogramKind
	}{{"-w", zpool.LatencyHistogram}, {"-r", zpool.SizeHistogram}} {
		line := "zpool iostat -vHp " + c.flag
		parse := func(data []byte) []zpool.Histograms {
			tables, err := zpool.ParseHistograms(bytes.NewReader(data), c.kind)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return tables
		}
		got := parse([]byte(asModel.Replace(string(readFile(t, dir, runner.CaptureFileName(line))))))
		all := parse(captured(t, model, line))
		start := slices.IndexFunc(all, func(h zpool.Histograms) bool { return h.Name == modelPool })
		if start < 0 || start+len(got) > len(all) {
			t.Fatalf("%s: %d tables, the captures have no r10 of as many", line, len(got))
		}
		want := all[start : start+len(got)]
		if len(got) != len(want) {
			t.Fatalf("%s: %d tables, r10 has %d", line, len(got), len(want))
		}
		for i := range got {
			if got[i].Name != want[i].Name || !slices.Equal(got[i].Columns, want[i].Columns) || !slices.Equal(got[i].Bounds, want[i].Bounds) {
				t.Errorf("%s: table %d is %s of %d columns and %d buckets; r10's is %s of %d and %d", line, i,
					got[i].Name, len(got[i].Columns), len(got[i].Bounds), want[i].Name, len(want[i].Columns), len(want[i].Bounds))
			}
		}
	}
	shape := func(data []byte) []string {
		var rows []string
		for line := range strings.Lines(string(data)) {
			if fields := strings.Split(strings.TrimRight(line, "\n"), "\t"); len(fields) > 1 {
				rows = append(rows, fmt.Sprintf("%s/%d", fields[0], len(fields)))
			}
		}
		return rows
	}
	got := shape([]byte(asModel.Replace(string(readFile(t, dir, runner.CaptureFileName("zpool iostat -vHp -q"))))))
	all := shape(captured(t, model, "zpool iostat -vHp -q"))
	start := slices.IndexFunc(all, func(row string) bool { return strings.HasPrefix(row, modelPool+"/") })
	if start < 0 || start+len(got) > len(all) {
		t.Fatalf("zpool iostat -vHp -q: %d rows, the captures have no r10 of as many", len(got))
	}
	want := all[start : start+len(got)]
	if !slices.Equal(got, want) {
		t.Errorf("zpool iostat -vHp -q: rows %v, r10's %v", got, want)
	}
}

// checkVersion checks the host's zpool version against the guest's.
func checkVersion(t *testing.T, dir, model string) {
	t.Helper()
	got, want := readCapture(t, dir, "zpool version"), captured(t, model, "zpool version")
	if !bytes.Equal(got, want) {
		t.Errorf("zpool version:\n%s\nthe guest's:\n%s", got, want)
	}
}
