package zpool

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

func parseStatusJSONFile(t *testing.T, path string) (*Status, sample.File) {
	t.Helper()
	f := sample.MustRead(t, path)
	st, err := ParseStatusJSON(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return st, f
}

func TestParseStatusJSONGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/json-*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no testdata/json-*.txt fixtures: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			st, _ := parseStatusJSONFile(t, path)
			checkGolden(t, strings.TrimSuffix(path, ".txt")+".golden.json", st)
		})
	}
}

var (
	textPoolLine  = regexp.MustCompile(`(?m)^\s*pool: (\S+)$`)
	textStateLine = regexp.MustCompile(`(?m)^\s*state: (\S+)$`)
)

// textPoolStates reads the pool: and state: lines of a `zpool status`
// text output, as "name=state" strings.
func textPoolStates(body []byte) []string {
	names := textPoolLine.FindAllSubmatch(body, -1)
	states := textStateLine.FindAllSubmatch(body, -1)
	var out []string
	for i := range names {
		state := "?"
		if i < len(states) {
			state = strings.ToLower(string(states[i][1]))
		}
		out = append(out, string(names[i][1])+"="+state)
	}
	return out
}

func poolStates(st *Status) []string {
	var out []string
	for _, p := range st.Pools {
		out = append(out, p.Name+"="+p.State)
	}
	return out
}

func TestParseStatusJSONCaptures(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	files := sample.Glob(t, dir, "*zpool-status-j*.txt")
	for _, f := range files {
		name := filepath.Base(f.Path)
		t.Run(name, func(t *testing.T) {
			st, err := ParseStatusJSON(bytes.NewReader(f.Body))
			if err != nil {
				t.Fatal(err)
			}
			scenario, _, _ := strings.Cut(name, "__")
			text := sample.MustRead(t, filepath.Join(dir, scenario+"__zpool-status.txt"))
			want := textPoolStates(text.Body)
			if got := poolStates(st); len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("pools = %v, text output says %v", got, want)
			}
			for _, p := range st.Pools {
				if p.Root == nil || p.Root.Name != p.Name || p.Root.Type != "root" || len(p.Root.Children) == 0 {
					t.Errorf("pool %s: bad root %+v", p.Name, p.Root)
				}
				if p.GUID == "" || len(p.Scans) == 0 || p.DataErrors == nil {
					t.Errorf("pool %s: guid %q, %d scans, data errors %v", p.Name, p.GUID, len(p.Scans), p.DataErrors)
				}
			}
		})
	}
}

// The same state printed nested and flat (--json-flat-vdevs) gives the
// same tree, and so do exact strings (-p) and numbers (--json-int).
func TestParseStatusJSONFormsAgree(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	for _, f := range sample.Glob(t, dir, "*__zpool-status-j-json-int.txt") {
		scenario, _, _ := strings.Cut(filepath.Base(f.Path), "__")
		t.Run(scenario, func(t *testing.T) {
			nested, _ := parseStatusJSONFile(t, f.Path)
			for _, other := range []string{"zpool-status-j-json-int-flat", "zpool-status-j-p"} {
				got, _ := parseStatusJSONFile(t, filepath.Join(dir, scenario+"__"+other+".txt"))
				if !reflect.DeepEqual(got, nested) {
					g, _ := json.MarshalIndent(got, "", " ")
					w, _ := json.MarshalIndent(nested, "", " ")
					t.Errorf("%s differs from the nested --json-int form:\n%s\nwant:\n%s", other, g, w)
				}
			}
		})
	}
}

// Human-readable numbers ("6.12K") agree with the exact ones within their
// rounding, and dates with epochs.
func TestParseStatusJSONHumanNumbersAgree(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	for _, f := range sample.Glob(t, dir, "*__zpool-status-j.txt") {
		scenario, _, _ := strings.Cut(filepath.Base(f.Path), "__")
		t.Run(scenario, func(t *testing.T) {
			human, _ := parseStatusJSONFile(t, f.Path)
			exact, _ := parseStatusJSONFile(t, filepath.Join(dir, scenario+"__zpool-status-j-json-int.txt"))
			if len(human.Pools) != len(exact.Pools) {
				t.Fatalf("%d pools, want %d", len(human.Pools), len(exact.Pools))
			}
			for i, p := range human.Pools {
				q := exact.Pools[i]
				if p.Name != q.Name || p.State != q.State || p.GUID != q.GUID || p.Status != q.Status {
					t.Errorf("pool %s/%s: header differs", p.Name, q.Name)
				}
				if len(p.Scans) != len(q.Scans) {
					t.Fatalf("pool %s: %d scans, want %d", p.Name, len(p.Scans), len(q.Scans))
				}
				for j := range p.Scans {
					compareScans(t, p.Name, p.Scans[j], q.Scans[j])
				}
				compareVdevs(t, p.Name, p.Root, q.Root)
			}
		})
	}
}

func compareScans(t *testing.T, pool string, h, e Scan) {
	t.Helper()
	if h.Function != e.Function || h.State != e.State || h.Vdev != e.Vdev ||
		!h.Start.Equal(e.Start) || !h.End.Equal(e.End) {
		t.Errorf("pool %s: scan %+v, want %+v", pool, h, e)
	}
	for _, c := range []struct {
		name string
		h, e *float64
	}{
		{"examined", h.Examined, e.Examined},
		{"issued", h.Issued, e.Issued},
		{"total", h.Total, e.Total},
		{"processed", h.Processed, e.Processed},
		{"errors", h.Errors, e.Errors},
		{"duration", h.Duration, e.Duration},
	} {
		if !roughlyEqual(c.h, c.e) {
			t.Errorf("pool %s scan %s: %s %v, want about %v", pool, h.Function, c.name, deref(c.h), deref(c.e))
		}
	}
}

func compareVdevs(t *testing.T, pool string, h, e *Vdev) {
	t.Helper()
	if h.Name != e.Name || h.Type != e.Type || h.Class != e.Class || h.State != e.State ||
		h.Path != e.Path || h.GUID != e.GUID || h.Note != e.Note || len(h.Children) != len(e.Children) {
		t.Errorf("pool %s vdev %s: %+v, want %+v", pool, h.Name, h, e)
		return
	}
	counts := []struct {
		name string
		h, e *float64
	}{
		{"read", &h.ReadErrors, &e.ReadErrors},
		{"write", &h.WriteErrors, &e.WriteErrors},
		{"checksum", &h.ChecksumErrors, &e.ChecksumErrors},
		{"slow", h.SlowIOs, e.SlowIOs},
		{"resilvered", h.ResilveredBytes, e.ResilveredBytes},
		{"repaired", h.RepairedBytes, e.RepairedBytes},
	}
	for _, c := range counts {
		if !roughlyEqual(c.h, c.e) {
			t.Errorf("pool %s vdev %s: %s %v, want about %v", pool, h.Name, c.name, deref(c.h), deref(c.e))
		}
	}
	for i := range h.Children {
		compareVdevs(t, pool, h.Children[i], e.Children[i])
	}
}

// roughlyEqual allows the rounding of three significant digits.
func roughlyEqual(a, b *float64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return math.Abs(*a-*b) <= 0.01*math.Max(math.Abs(*b), 1)
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

func findVdev(v *Vdev, name string) *Vdev {
	if v == nil {
		return nil
	}
	if v.Name == name {
		return v
	}
	for _, c := range v.Children {
		if found := findVdev(c, name); found != nil {
			return found
		}
	}
	return nil
}

func poolNamed(t *testing.T, st *Status, name string) *Pool {
	t.Helper()
	for _, p := range st.Pools {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pool %s", name)
	return nil
}

func TestParseStatusJSONErrorsRepaired(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	st, _ := parseStatusJSONFile(t, filepath.Join(dir, "09-errors-repaired__zpool-status-j-json-int.txt"))

	r10 := poolNamed(t, st, "r10")
	if r10.State != "degraded" || !strings.HasPrefix(r10.Status, "One or more devices are faulted in response to persistent errors. Sufficient") {
		t.Errorf("r10: state %q, status %q", r10.State, r10.Status)
	}
	if len(r10.Scans) != 2 {
		t.Fatalf("r10 scans: %+v", r10.Scans)
	}
	scrub, rebuild := r10.Scans[0], r10.Scans[1]
	if scrub.Function != ScanScrub || scrub.State != ScanFinished || deref(scrub.Duration) != 99.0 ||
		deref(scrub.Processed) != 106446848.0 || scrub.End != time.Date(2026, 11, 30, 7, 9, 14, 0, time.UTC) {
		t.Errorf("r10 scrub: %+v", scrub)
	}
	// "scan: resilvered (mirror-0) 101M in 00:02:15 with 0 errors"
	if rebuild.Function != ScanRebuild || rebuild.Vdev != "mirror-0" || rebuild.State != ScanFinished ||
		deref(rebuild.Duration) != 135.0 || deref(rebuild.Processed) != 106139648.0 || rebuild.ScanRate != nil {
		t.Errorf("r10 rebuild: %+v", rebuild)
	}
	zd03 := findVdev(r10.Root, "virtio-zd03")
	if zd03 == nil || zd03.State != "faulted" || zd03.ReadErrors != 246 || zd03.Note != "too many errors" ||
		deref(zd03.RepairedBytes) != 3948544.0 || zd03.ResilveredBytes != nil || zd03.Path != "/dev/disk/by-id/virtio-zd03-part1" {
		t.Errorf("virtio-zd03: %+v", zd03)
	}
	if zd05 := findVdev(r10.Root, "virtio-zd05"); zd05 == nil || zd05.ChecksumErrors != 6262 || deref(zd05.SlowIOs) != 0.0 {
		t.Errorf("virtio-zd05: %+v", zd05)
	}

	rz1 := poolNamed(t, st, "rz1")
	var got []string
	for _, c := range rz1.Root.Children {
		got = append(got, c.Name+"/"+c.Type+"/"+c.Class+"/"+c.State)
	}
	want := []string{
		"raidz1-0/raidz1/normal/online",
		"virtio-zd10/disk/log/online",
		"virtio-zd11/disk/cache/online",
		"virtio-zd12/disk/spare/avail",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rz1 top-level vdevs = %v, want %v", got, want)
	}

	tank := poolNamed(t, st, "tank")
	if vdo := findVdev(tank.Root, "vdo"); vdo == nil || deref(vdo.ResilveredBytes) != 270393344.0 || vdo.RepairedBytes != nil {
		t.Errorf("tank vdo: %+v", vdo)
	}
	if s := tank.Scans[0]; s.Function != ScanResilver || s.Progress != nil || deref(s.Duration) != 260.0 {
		t.Errorf("tank scan: %+v", s)
	}
}

// Complete corpus samples parse with the pools that encoding/json finds;
// partial ones fail cleanly.
func TestParseStatusJSONCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-json")
	for _, f := range sample.Glob(t, dir, "*.txt") {
		if !strings.Contains(f.Header["command"], "status") {
			continue
		}
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			var doc struct {
				Pools map[string]struct{ State string }
			}
			complete := json.Unmarshal(f.Body, &doc) == nil
			st, err := ParseStatusJSON(bytes.NewReader(f.Body))
			if !complete {
				if err == nil || st != nil || !strings.HasPrefix(err.Error(), "line ") {
					t.Errorf("partial sample: got %v, %v; want a nil result and a line-numbered error", st, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Pools) != len(doc.Pools) {
				t.Fatalf("%d pools, want %d", len(st.Pools), len(doc.Pools))
			}
			for _, p := range st.Pools {
				if want, ok := doc.Pools[p.Name]; !ok || strings.ToLower(want.State) != p.State {
					t.Errorf("pool %s state %s, sample says %+v", p.Name, p.State, want)
				}
			}
		})
	}
}

func TestParseStatusJSONManPageClasses(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-json")
	st, _ := parseStatusJSONFile(t, filepath.Join(dir, "man-status-j-c-dedup-special.txt"))
	var got []string
	for _, c := range st.Pools[0].Root.Children {
		got = append(got, c.Name+"/"+c.Type+"/"+c.Class+"/"+c.State)
	}
	want := []string{
		"raidz1-0/raidz1/normal/online",
		"mirror-2/mirror/dedup/online",
		"25d418f8-92bd-4327-b59f-7ef5d5f50d81/disk/special/online",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("top-level vdevs = %v, want %v", got, want)
	}
	if leaf := st.Pools[0].Root.Children[1].Children[0]; leaf.Class != ClassDedup {
		t.Errorf("dedup leaf class %q", leaf.Class)
	}
}

func TestScanEstimate(t *testing.T) {
	st, _ := parseStatusJSONFile(t, "testdata/json-scrub-in-progress.txt")
	s := st.Pools[0].Scans[0]
	if s.State != ScanScanning || s.PassStart.IsZero() || s.IssueRate != nil {
		t.Fatalf("scan before Estimate: %+v", s)
	}
	s.Estimate(s.PassStart.Add(time.Hour + 500*time.Millisecond))
	issued, total := 987842478080.0, 1992864825344.0
	if want := issued / 3600; deref(s.IssueRate) != want {
		t.Errorf("issue rate %v, want %v", deref(s.IssueRate), want)
	}
	if want := 1209462790144.0 / 3600; deref(s.ScanRate) != want {
		t.Errorf("scan rate %v, want %v", deref(s.ScanRate), want)
	}
	if want := (total - issued) / (issued / 3600); deref(s.Remaining) != want {
		t.Errorf("remaining %v, want %v", deref(s.Remaining), want)
	}

	// Below 10 MiB/s zpool gives no completion time.
	slow := st.Pools[0].Scans[0]
	slow.Estimate(slow.PassStart.Add(1000 * time.Hour))
	if slow.IssueRate == nil || slow.Remaining != nil {
		t.Errorf("slow scan: rate %v, remaining %v", deref(slow.IssueRate), deref(slow.Remaining))
	}
	// A clock behind the pass start counts one second, as zpool does.
	early := st.Pools[0].Scans[0]
	early.Estimate(early.PassStart.Add(-time.Minute))
	if deref(early.IssueRate) != issued {
		t.Errorf("early rate %v, want %v", deref(early.IssueRate), issued)
	}

	paused, _ := parseStatusJSONFile(t, "testdata/json-scrub-paused.txt")
	p := paused.Pools[0].Scans[0]
	p.Estimate(p.PassStart.Add(time.Hour))
	if p.State != ScanPaused || p.IssueRate != nil || p.Remaining != nil || deref(p.PausedSeconds) != 600.0 {
		t.Errorf("paused scan: %+v", p)
	}
}

func TestParseJSONTime(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"Mon Nov 30 07:07:35 UTC 2026", time.Date(2026, 11, 30, 7, 7, 35, 0, time.UTC)},
		{"Wed Jan  7 02:35:05 AM PST 2026", time.Date(2026, 1, 7, 2, 35, 5, 0, time.Local)},
		{"Wed Jan  7 03:42:23 PM PST 2026", time.Date(2026, 1, 7, 15, 42, 23, 0, time.Local)},
		{"Mon Nov 30 07:09:14 2026", time.Date(2026, 11, 30, 7, 9, 14, 0, time.Local)},
		{"1796022455", time.Date(2026, 11, 30, 7, 7, 35, 0, time.UTC)},
		{"0", time.Time{}},
		{"-", time.Time{}},
		{"Thu Jan  1 00:00:00 1970", time.Time{}},
	} {
		got, err := parseJSONTime(tc.in)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseJSONTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	if _, err := parseJSONTime("30.11.2026 07:09"); err == nil {
		t.Error("want an error for an unknown date format")
	}
}

func TestParseStatusJSONErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"not JSON", "no pools available\n", "line 1:"},
		{"truncated", "{\n\"pools\": {\n\"tank\": {\n", "line 3: unexpected end of JSON input"},
		{"not an object", "[1, 2]", "line 1: JSON output is not an object"},
		{"trailing data", "{\"pools\": {}}\n{}\n", "line 2: unexpected data"},
		{"bad count", "{\"pools\": {\"t\": {\n\"name\": \"t\",\n\"vdevs\": {\"t\": {\"vdev_type\": \"root\",\n\"read_errors\": \"x1\"}}}}}",
			`line 4: cannot parse read_errors "x1" as a number`},
		{"bad time", "{\"pools\": {\"t\": {\"scan_stats\": {\"function\": \"SCRUB\",\n\"start_time\": \"yesterday\"}}}}",
			`line 2: cannot parse start_time "yesterday" as a time`},
		{"pool not an object", "{\"pools\": {\"t\": 1}}", `line 1: pool "t" is not an object`},
		{"unnamed pool", "{\"pools\": {\"\": {}}}", "line 1: pool without a name"},
		{"flat loop", `{"pools": {"t": {"vdevs": {
			"a": {"name": "a", "vdev_type": "mirror", "parent": "b"},
			"b": {"name": "b", "vdev_type": "mirror", "parent": "a"},
			"t": {"name": "t", "vdev_type": "root"}}}}}`, `vdev "b" is its own ancestor`},
	} {
		st, err := ParseStatusJSON(strings.NewReader(tc.in))
		if err == nil || st != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, %v; want an error containing %q", tc.name, st, err, tc.want)
		}
		parsetest.Check(t, err)
		parsetest.CheckAt(t, err, tc.want)
	}
}

func TestParseStatusJSONEmpty(t *testing.T) {
	st, err := ParseStatusJSON(strings.NewReader(`{"output_version":{"command":"zpool status","vers_major":0,"vers_minor":1},"pools":{}}`))
	if err != nil || st == nil || len(st.Pools) != 0 {
		t.Errorf("got %+v, %v; want no pools", st, err)
	}
}

func FuzzParseStatusJSON(f *testing.F) {
	addSeeds(f, statusJSONSeeds)
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := ParseStatusJSON(bytes.NewReader(data))
		if (err == nil) == (st == nil) {
			t.Fatalf("got %v and error %v: want exactly one", st, err)
		}
		if err != nil {
			parsetest.Check(t, err)
			return
		}
		for _, p := range st.Pools {
			if p.Name == "" || p.Root == nil {
				t.Fatalf("pool %+v: want a name and a root", p)
			}
			seen := map[*Vdev]bool{}
			var walk func(v *Vdev)
			walk = func(v *Vdev) {
				if seen[v] {
					t.Fatalf("pool %s: vdev %s reached twice", p.Name, v.Name)
				}
				seen[v] = true
				for _, c := range v.Children {
					walk(c)
				}
			}
			walk(p.Root)
			for _, s := range p.Scans {
				s.Estimate(time.Unix(1796030000, 0))
			}
		}
	})
}

func TestParseStatusJSONErrorScrub(t *testing.T) {
	in := `{"pools": {"tank": {"name": "tank", "state": "ONLINE",
	"scan_stats": {"function": "SCRUB", "state": "FINISHED", "start_time": 1796022455, "end_time": 1796022554,
		"to_examine": 1000, "examined": 1000, "issued": 1000, "processed": 0, "errors": 0,
		"err_scrub_func": "ERRORSCRUB", "err_scrub_state": "ERRORSCRUBBING",
		"err_scrub_start_time": 1796023000, "err_scrub_end_time": 0,
		"err_scrub_examined": 3, "err_scrub_to_examine": 12, "err_scrub_pause": "1.67G"}}}}`
	st, err := ParseStatusJSON(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	scans := st.Pools[0].Scans
	if len(scans) != 2 {
		t.Fatalf("scans: %+v", scans)
	}
	es := scans[1]
	if es.Function != ScanErrorScrub || es.State != ScanPaused || deref(es.Progress) != 0.25 ||
		!es.Start.Equal(time.Unix(1796023000, 0)) || !es.End.IsZero() {
		t.Errorf("error scrub: %+v", es)
	}
	if scans[0].Function != ScanScrub || scans[0].State != ScanFinished || deref(scans[0].Duration) != 99.0 {
		t.Errorf("scrub: %+v", scans[0])
	}
}

// JSON prints the kernel's vdev state names; the metrics use the names of
// the text output, so that both paths give the same series.
func TestVdevStateJSONNamesAsText(t *testing.T) {
	for _, c := range []struct{ state, aux, want string }{
		{"ONLINE", "", "online"},
		{"HEALTHY", "", "online"},
		{"DEGRADED", "", "degraded"},
		{"CANT_OPEN", "", "unavail"},            // a pulled disk
		{"CANT_OPEN", "NO_REPLICAS", "unavail"}, // the root vdev above it
		{"CANT_OPEN", "OPEN_FAILED", "unavail"},
		{"CANT_OPEN", "CORRUPT_DATA", "faulted"},
		{"CANT_OPEN", "VDEV_AUX_BAD_LOG", "faulted"},
		{"CANT_OPEN", "SPLIT_POOL", "split"},
		{"CLOSED", "", "offline"},
		{"OFFLINE", "", "offline"},
		{"REMOVED", "", "removed"},
		{"FAULTED", "ERR_EXCEEDED", "faulted"},
		{"INUSE", "", "inuse"},
	} {
		if got := vdevStateJSON(c.state, c.aux); got != c.want {
			t.Errorf("vdevStateJSON(%q, %q) = %q, want %q", c.state, c.aux, got, c.want)
		}
	}
}
