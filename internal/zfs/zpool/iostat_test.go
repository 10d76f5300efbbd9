package zpool

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// checkGolden compares v, as indented JSON, with the golden file, or
// rewrites the file with -update.
func checkGolden(t *testing.T, golden string, v any) {
	t.Helper()
	sample.GoldenJSON(t, golden, v, *update)
}

func parseIostatSample(t *testing.T, path string) []IostatReport {
	t.Helper()
	reports, err := ParseIostat(bytes.NewReader(sample.MustRead(t, path).Body))
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return reports
}

// rowNamed returns the only row of report named name.
func rowNamed(t *testing.T, report IostatReport, name string) IostatRow {
	t.Helper()
	var found []IostatRow
	for _, r := range report.Rows {
		if r.Name == name {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one row %q, found %d", name, len(found))
	}
	return found[0]
}

func TestParseIostatZfsFuse(t *testing.T) {
	paths, err := filepath.Glob("testdata/zfs-fuse/*iostat*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no zfs-fuse iostat captures: %v", err)
	}
	parsed := map[string][]IostatReport{}
	for _, p := range paths {
		reports := parseIostatSample(t, p)
		checkGolden(t, strings.TrimSuffix(p, ".txt")+".golden.json", reports)
		parsed[filepath.Base(p)] = reports
	}

	interval := parsed["interval__iostat-v-1-3.txt"]
	if len(interval) != 3 {
		t.Fatalf("iostat -v 1 3: want 3 reports, got %d", len(interval))
	}
	for i, r := range interval {
		if len(r.Rows) != 4 || !r.Time.IsZero() {
			t.Errorf("report %d: want 4 rows and no time, got %d rows, time %v", i, len(r.Rows), r.Time)
		}
	}
	// The first report is the average since import, the next the interval.
	if got := interval[1].Rows[0].WriteOps; got != 649 {
		t.Errorf("second report: pool write ops = %v, want 649", got)
	}

	stamped := parsed["interval__iostat-v-Tu-1-2.txt"]
	if len(stamped) != 2 {
		t.Fatalf("iostat -T u -v 1 2: want 2 reports, got %d", len(stamped))
	}
	for i, want := range []int64{1796026334, 1796026335} {
		if got := stamped[i].Time; !got.Equal(time.Unix(want, 0)) {
			t.Errorf("report %d: time %v, want %v", i, got, time.Unix(want, 0).UTC())
		}
	}

	inuse := parsed["raidz1-spare-inuse__iostat-v.txt"][0]
	spare := rowNamed(t, inuse, "spare")
	if spare.Depth != 2 || spare.Alloc != nil || spare.ReadBytes != 5.15*(1<<20) {
		t.Errorf("spare row = %+v, want depth 2, no alloc, 5.15M read", spare)
	}
	z4 := rowNamed(t, inuse, "/var/tmp/zfs-fuse-capture/z4")
	if z4.Depth != 3 || z4.WriteBytes != 6.05*(1<<20) {
		t.Errorf("z4 row = %+v, want depth 3 and 6.05M written", z4)
	}

	two := parsed["two-pools__iostat-v.txt"]
	if len(two) != 1 || len(two[0].Rows) != 6 {
		t.Fatalf("two pools: want one report of 6 rows, got %+v", two)
	}
	t1 := rowNamed(t, two[0], "/var/tmp/zfs-fuse-capture/t1")
	if t1.Pool != "ctwo" || t1.Depth != 1 || t1.Alloc == nil || *t1.Alloc != 444*1024 {
		t.Errorf("t1 row = %+v, want pool ctwo, depth 1, 444K allocated", t1)
	}
}

// openZFS23 returns the directory of the OpenZFS 2.3.2 captures.
func openZFS23(t testing.TB) string {
	return sample.Dir(t, "captures/openzfs-2.3")
}

func TestParseIostatOpenZFS23(t *testing.T) {
	dir := openZFS23(t)
	for _, slug := range []string{"zpool-iostat-v", "zpool-iostat-vHp", "zpool-iostat-vHp-1-3", "zpool-iostat-vHp-l-q"} {
		for _, f := range sample.Glob(t, dir, "*__"+slug+".txt") {
			name := filepath.Base(f.Path)
			reports, err := ParseIostat(bytes.NewReader(f.Body))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			golden := filepath.Join("testdata", "iostat-openzfs23-"+strings.TrimSuffix(name, ".txt")+".golden.json")
			checkGolden(t, golden, reports)

			wantReports := 1
			if strings.HasSuffix(slug, "-1-3") {
				wantReports = 3
			}
			if len(reports) != wantReports {
				t.Fatalf("%s: want %d reports, got %d", name, wantReports, len(reports))
			}
			for i, r := range reports {
				// r10 7 rows, rz1 5 + log + cache, scratch 2, tank 4.
				if len(r.Rows) != 20 {
					t.Errorf("%s report %d: want 20 rows, got %d", name, i, len(r.Rows))
				}
			}
		}
	}

	// Values checked by eye against the text.
	text := parseIostatSample(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-iostat-v.txt"))[0]
	zd10 := rowNamed(t, text, "virtio-zd10")
	if zd10.Pool != "rz1" || zd10.Class != ClassLog || zd10.Depth != 1 || *zd10.Alloc != 128*1024 || zd10.ReadBytes != 12.0*1024 {
		t.Errorf("rz1 log vdev = %+v", zd10)
	}
	zd11 := rowNamed(t, text, "virtio-zd11")
	if zd11.Class != ClassCache || *zd11.Free != 114*(1<<20) || zd11.WriteBytes != 413*1024 {
		t.Errorf("rz1 cache vdev = %+v", zd11)
	}

	scripted := parseIostatSample(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-iostat-vHp.txt"))[0]
	if r := scripted.Rows[0]; r.Name != "r10" || r.Pool != "r10" || r.Depth != 0 || *r.Alloc != 211701760 || r.WriteBytes != 1390717 {
		t.Errorf("first -Hp row = %+v", r)
	}
	zd10 = rowNamed(t, scripted, "virtio-zd10")
	if !zd10.Break || zd10.Depth != -1 || zd10.Pool != "" || *zd10.Free != 251527168 || zd10.ReadBytes != 12278 {
		t.Errorf("-Hp log vdev = %+v", zd10)
	}
	if vdb := rowNamed(t, scripted, "vdb"); vdb.Alloc != nil || vdb.Free != nil || vdb.Break {
		t.Errorf("-Hp leaf: want no capacity (printed 0 0) and no break, got %+v", vdb)
	}
	// -H text and -Hp must describe the same rows, rounded.
	if len(text.Rows) != len(scripted.Rows) {
		t.Fatalf("-v has %d rows, -vHp %d", len(text.Rows), len(scripted.Rows))
	}
	for i, tr := range text.Rows {
		sr := scripted.Rows[i]
		if tr.Name != sr.Name || !roughly(tr.ReadBytes, sr.ReadBytes) || !roughly(tr.WriteOps, sr.WriteOps) {
			t.Errorf("row %d: -v %+v and -vHp %+v disagree", i, tr, sr)
		}
	}

	lq := parseIostatSample(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-iostat-vHp-l-q.txt"))[0]
	for _, r := range lq.Rows {
		if len(r.Extra) != 25 {
			t.Fatalf("-l -q row %q: want 25 extra columns (11 latencies, 14 queues), got %d", r.Name, len(r.Extra))
		}
	}
	if got := rowNamed(t, lq, "rz1").Extra[0]; got != "864079008" {
		t.Errorf("rz1 total_wait read = %q, want 864079008", got)
	}

	stream := parseIostatSample(t, filepath.Join(dir, "04-scrubbed-healthy__zpool-iostat-vHp-1-3.txt"))
	for _, r := range stream[1].Rows {
		if r.ReadOps != 0 || r.WriteOps != 0 || r.ReadBytes != 0 || r.WriteBytes != 0 {
			t.Errorf("idle interval: row %+v has I/O", r)
		}
	}
}

// roughly compares a human-readable figure (3 significant digits) with
// an exact one taken a moment apart.
func roughly(human, exact float64) bool {
	return math.Abs(human-exact) <= 0.05*math.Max(exact, 10)
}

func TestParseIostatHistogram(t *testing.T) {
	var inputs []sample.File
	dir := openZFS23(t)
	for _, slug := range []string{"zpool-iostat-w", "zpool-iostat-r", "zpool-iostat-vHp-w", "zpool-iostat-vHp-r"} {
		inputs = append(inputs, sample.Glob(t, dir, "*__"+slug+".txt")...)
	}
	for _, f := range sample.Glob(t, sample.Dir(t, "corpus/zpool-iostat"), "*.txt") {
		if isHistogramCommand(f.Header["command"]) {
			inputs = append(inputs, f)
		}
	}
	if len(inputs) < 16 {
		t.Fatalf("want at least 16 histogram samples, found %d", len(inputs))
	}
	for _, f := range inputs {
		reports, err := ParseIostat(bytes.NewReader(f.Body))
		if !errors.Is(err, ErrIostatHistogram) || reports != nil {
			t.Errorf("%s: want the histogram error, got %v (%d reports)", filepath.Base(f.Path), err, len(reports))
		} else if !strings.HasPrefix(err.Error(), "line ") {
			t.Errorf("%s: error %q does not name the line", filepath.Base(f.Path), err)
		}
	}
}

// isHistogramCommand tells from a sample's command line whether it asked
// for -w or -r.
func isHistogramCommand(command string) bool {
	for _, arg := range strings.Fields(command) {
		if strings.HasPrefix(arg, "-") && !strings.HasPrefix(arg, "--") && strings.ContainsAny(arg, "wr") {
			return true
		}
	}
	return false
}

func TestParseIostatFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/iostat-*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no iostat fixtures: %v", err)
	}
	parsed := map[string][]IostatReport{}
	for _, p := range paths {
		reports := parseIostatSample(t, p)
		checkGolden(t, strings.TrimSuffix(p, ".txt")+".golden.json", reports)
		parsed[filepath.Base(p)] = reports
	}

	// -y skips the first interval, whose timestamp is still printed.
	y := parsed["iostat-vHp-y-Tu-1-2.txt"]
	if len(y) != 2 || !y[0].Time.Equal(time.Unix(1796026401, 0)) || !y[1].Time.Equal(time.Unix(1796026402, 0)) {
		t.Fatalf("-y -T u -Hp: want 2 reports at 1796026401 and 1796026402, got %+v", y)
	}
	for _, r := range y {
		var breaks []string
		for _, row := range r.Rows {
			if row.Break {
				breaks = append(breaks, row.Name)
			}
		}
		if len(r.Rows) != 7 || fmt.Sprint(breaks) != "[virtio-zd10 virtio-zd11]" {
			t.Errorf("-y report: want 7 rows with breaks before the log and cache, got %d rows, breaks %v", len(r.Rows), breaks)
		}
	}

	d := parsed["iostat-v-Td-1-2.txt"]
	wantTimes := []time.Time{
		time.Date(2026, time.November, 30, 23, 59, 59, 0, time.UTC),
		time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC),
	}
	if len(d) != 2 || !d[0].Time.Equal(wantTimes[0]) || !d[1].Time.Equal(wantTimes[1]) {
		t.Errorf("-T d: want reports at %v, got %+v", wantTimes, d)
	}

	classes := parsed["iostat-v-special-dedup.txt"]
	var got []string
	for _, r := range classes[0].Rows {
		got = append(got, fmt.Sprintf("%s:%s:%d", r.Name, r.Class, r.Depth))
	}
	want := "[fast:normal:0 mirror-0:normal:1 sda:normal:2 sdb:normal:2 mirror-1:dedup:1 nvme0n1p1:dedup:2 nvme1n1p1:dedup:2 " +
		"mirror-2:special:1 nvme0n1p2:special:2 nvme1n1p2:special:2]"
	if fmt.Sprint(got) != want {
		t.Errorf("special/dedup sections:\n got %v\nwant %s", got, want)
	}

	pools := parsed["iostat-Hp-1-2.txt"]
	if len(pools) != 2 || len(pools[0].Rows) != 2 || pools[1].Rows[0].Name != "r10" {
		t.Errorf("-Hp 1 2 with two pools: want 2 reports of 2 rows, got %+v", pools)
	}
	plain := parsed["iostat-1-3.txt"]
	if len(plain) != 3 {
		t.Fatalf("iostat 1 3 with two pools: want 3 reports, got %d", len(plain))
	}
	for _, r := range plain {
		if len(r.Rows) != 2 || r.Rows[0].Pool != "r10" || r.Rows[1].Pool != "rz1" {
			t.Errorf("plain report: want rows r10 and rz1, got %+v", r.Rows)
		}
	}
}

// corpusReports is how many reports each parseable corpus sample holds.
var corpusReports = map[string]int{
	"fbsd-handbook-iostat-plain.txt":                         1,
	"fbsd-handbook-iostat-v-unnamed-mirror.txt":              1,
	"freebsd-openzfs2-v-interval-repeated-headers-cache.txt": 2,
	"man-iostat-vc-size.txt":                                 1,
	"o3x-macos-iostat-three-pools.txt":                       1,
	"o3x-macos-iostat-v-three-pools.txt":                     1,
	"opensolaris-2008-iostat-used-avail-columns.txt":         1,
	"openzfs2-pH-interval-scripted.txt":                      5,
	"openzfs20-lq-interval.txt":                              2,
	"openzfs215-interval-trailing-space-header.txt":          2,
	"smartos-headnode-iostat-v-unnamed-raidz1.txt":           1,
	"solaris10-iostat-rpool-tank.txt":                        1,
	"solaris112-iostat-doc-leading-space-lost.txt":           1,
	"solaris114-iostat-v-stripe-wwn-names.txt":               1,
	"solaris114-iostat-v-two-mirrors.txt":                    1,
	"zol06-iostat-interval-1-3.txt":                          3,
	"zol06-iostat-plain-since-boot.txt":                      1,
	"zol063-v-mirror-logs-row.txt":                           1,
	"zol07-y-L-lv-latency-raidz2.txt":                        1,
	"zol07-y-q-interval-5-reports.txt":                       5,
	"zol07dev-lv-latency-logs-cache.txt":                     1,
	"zol07rc-v-cache-row-missing-newline-bug.txt":            1,
	"zol08-q-l-comma-decimal-locale.txt":                     2,
	"zol082-q-interval-separators.txt":                       3,
}

// poolRowPattern matches the second field of a pool row: a number, never
// a header word or the "-" of a section row.
var poolRowPattern = regexp.MustCompile(`^[0-9]+([.,][0-9]+)?[KMGTPE]?$`)

// printedPoolNames reads the pool rows of a sample without the parser:
// unindented lines whose second field is a number.
func printedPoolNames(body []byte) []string {
	var names []string
	for _, line := range strings.Split(string(body), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 7 && line[0] != ' ' && poolRowPattern.MatchString(fields[1]) {
			names = append(names, fields[0])
		}
	}
	return names
}

func TestParseIostatCorpus(t *testing.T) {
	files := sample.Glob(t, sample.Dir(t, "corpus/zpool-iostat"), "*.txt")
	if len(files) != 29 {
		t.Errorf("want the 29 iostat samples of the corpus, found %d", len(files))
	}
	var complete, histograms, incomplete, incompleteParsed int
	for _, f := range files {
		name := filepath.Base(f.Path)
		reports, err := ParseIostat(bytes.NewReader(f.Body))
		partial := f.Truncated() || strings.Contains(f.Header["notes"], "MANGLED")
		switch {
		case isHistogramCommand(f.Header["command"]):
			histograms++
			if !errors.Is(err, ErrIostatHistogram) {
				t.Errorf("%s: want the histogram error, got %v", name, err)
			}
			continue
		case partial:
			incomplete++
			if err != nil {
				t.Logf("%s (incomplete sample): %v", name, err)
				continue
			}
			incompleteParsed++
		case err != nil:
			t.Errorf("%s: %v", name, err)
			continue
		default:
			complete++
		}
		var pools []string
		for _, r := range reports {
			for _, row := range r.Rows {
				if row.Depth == 0 {
					pools = append(pools, row.Name)
				}
			}
		}
		if want := printedPoolNames(f.Body); fmt.Sprint(pools) != fmt.Sprint(want) {
			t.Errorf("%s: pool rows %v, want %v", name, pools, want)
		}
		if want, ok := corpusReports[name]; !ok || len(reports) != want {
			t.Errorf("%s: %d reports, want %d", name, len(reports), want)
		}
		checkGolden(t, filepath.Join("testdata", "iostat-corpus-"+strings.TrimSuffix(name, ".txt")+".golden.json"), reports)
	}
	t.Logf("iostat corpus: %d complete samples parse with the printed pool rows; %d histograms give the histogram error; "+
		"%d of %d truncated/fragment/mangled samples parse, none panics",
		complete, histograms, incompleteParsed, incomplete)
}

func TestParseIostatErrors(t *testing.T) {
	header := "              capacity     operations     bandwidth\n" +
		"pool        alloc   free   read  write   read  write\n" +
		"----------  -----  -----  -----  -----  -----  -----\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"bad ops", header + "tank         100G  20.0G     x1      0      0      0\n",
			`line 4: cannot parse read operations "x1"`},
		{"dash ops", header + "tank         100G  20.0G      -      0      0      0\n",
			`line 4: no read operations value ("-") for "tank"`},
		{"short row", header + "tank         100G  20.0G      1      0\n",
			`line 4: expected a name and 6 values, found 5 fields`},
		{"vdev first", header + "  mirror-0   100G  20.0G      1      0      0      0\n",
			`line 4: vdev "mirror-0" outside a pool`},
		{"section first", header + "logs            -      -      -      -      -      -\n",
			`line 4: log section outside a pool`},
		{"stray word", header + "tank         100G  20.0G      1      0      0      0\nwhat\n",
			`line 5: unexpected line "what"`},
		{"not finite", "tank\tNaN\t0\t1\t2\t3\t4\n", `line 1: cannot parse alloc "NaN"`},
		{"histogram", "\nr10          total_wait     disk_wait\n", "line 2: " + ErrIostatHistogram.Error()},
		{"scripted histogram", "\nr10\n1\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\t0\n", "line 2: " + ErrIostatHistogram.Error()},
		{"too long", "tank " + strings.Repeat("1", maxIostatLine), "line 1: bufio.Scanner: token too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reports, err := ParseIostat(strings.NewReader(tc.in))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || reports != nil {
				t.Errorf("got %d reports, error %v; want error %q", len(reports), err, tc.want)
			}
			parsetest.CheckAt(t, err, tc.want)
		})
	}
}

func TestParseIostatEdgeCases(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string // per report: rows as name/pool/depth/class
	}{
		{"empty", "", nil},
		{"white space", "\f\n \v \n", nil},
		{"pool named cache",
			"              capacity     operations     bandwidth\n" +
				"pool        alloc   free   read  write   read  write\n" +
				"----------  -----  -----  -----  -----  -----  -----\n" +
				"cache       6.05G  61.9G      0      0    786    107\n",
			[]string{"[cache/cache/0/normal]"}},
		{"class header alone",
			"pool        alloc   free   read  write   read  write\n" +
				"tank        6.05G  61.9G      0      0    786    107\n" +
				"  sda       6.05G  61.9G      0      0    786    107\n" +
				"cache\n" +
				"  sdb       1.00G  9.00G      0      0    786    107\n",
			[]string{"[tank/tank/0/normal sda/tank/1/normal sdb/tank/1/cache]"}},
		{"CRLF and odd indentation",
			"pool        alloc   free   read  write   read  write\r\n" +
				"tank        6.05G  61.9G      0      0    786    107\r\n" +
				"   sda      6.05G  61.9G      0      0    786    107\r\n",
			[]string{"[tank/tank/0/normal sda/tank/1/normal]"}},
		{"scripted with GUID names",
			"tank\t100\t200\t1\t2\t3\t4\n1234567890123456789\t0\t0\t1\t2\t3\t4\n",
			[]string{"[tank/tank/0/normal 1234567890123456789//-1/]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reports, err := ParseIostat(strings.NewReader(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range reports {
				var rows []string
				for _, row := range r.Rows {
					rows = append(rows, fmt.Sprintf("%s/%s/%d/%s", row.Name, row.Pool, row.Depth, row.Class))
				}
				got = append(got, fmt.Sprint(rows))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// streamFeeder writes chunks into a pipe read by an IostatScanner and
// tells whether a report came out in time.
type streamFeeder struct {
	t       *testing.T
	chunks  chan string
	reports chan IostatReport
	scanner *IostatScanner
}

func newStreamFeeder(t *testing.T) *streamFeeder {
	pr, pw := io.Pipe()
	f := &streamFeeder{t: t, chunks: make(chan string), reports: make(chan IostatReport), scanner: NewIostatScanner(pr)}
	go func() {
		for c := range f.chunks {
			if _, err := io.WriteString(pw, c); err != nil {
				return
			}
		}
		pw.Close()
	}()
	go func() {
		for f.scanner.Scan() {
			f.reports <- f.scanner.Report()
		}
		close(f.reports)
	}()
	t.Cleanup(func() { pr.Close() })
	return f
}

// feed writes chunk, then expects a report whose first row is firstRow,
// or no report at all when firstRow is "".
func (f *streamFeeder) feed(chunk, firstRow string) {
	f.t.Helper()
	f.chunks <- chunk
	wait := 2 * time.Second
	if firstRow == "" {
		wait = 50 * time.Millisecond
	}
	select {
	case r, ok := <-f.reports:
		switch {
		case !ok:
			f.t.Fatalf("stream ended early: %v", f.scanner.Err())
		case firstRow == "":
			f.t.Fatalf("report yielded too early: %+v", r)
		case r.Rows[0].Name != firstRow:
			f.t.Fatalf("report starts with %q, want %q", r.Rows[0].Name, firstRow)
		}
	case <-time.After(wait):
		if firstRow != "" {
			f.t.Fatalf("no report yielded after %q", chunk)
		}
	}
}

func (f *streamFeeder) end(wantReports int) {
	f.t.Helper()
	close(f.chunks)
	n := 0
	for range f.reports {
		n++
	}
	if n != wantReports || f.scanner.Err() != nil {
		f.t.Errorf("at the end: %d more reports, error %v; want %d, nil", n, f.scanner.Err(), wantReports)
	}
}

func TestIostatScannerStreaming(t *testing.T) {
	header := "                   capacity     operations     bandwidth \n" +
		"pool             alloc   free   read  write   read  write\n" +
		"---------------  -----  -----  -----  -----  -----  -----\n"
	sep := "---------------  -----  -----  -----  -----  -----  -----\n"
	tank := "tank              241M   239M     10     27  1.48M  1.56M\n" +
		"  mirror-0        241M   239M     10     27  1.48M  1.56M\n" +
		"    vdb              -      -      5     13   756K   799K\n" +
		"    vdc              -      -      5     13   756K   799K\n"
	scratch := "scratch          40.6M   199M      0      4   137K   161K\n" +
		"  vdn            40.6M   199M      0      4   137K   161K\n"

	t.Run("current -v", func(t *testing.T) {
		f := newStreamFeeder(t)
		// The first report's end is known when the next header comes...
		f.feed(header+scratch+sep+tank+sep, "")
		f.feed(header, "scratch")
		// ...the next ones at their last separator.
		f.feed(scratch+sep, "")
		f.feed(tank+sep, "scratch")
		f.feed(header+scratch+sep+tank+sep, "scratch")
		f.end(0)
	})
	t.Run("zfs-fuse -v", func(t *testing.T) {
		f := newStreamFeeder(t)
		f.feed(header+tank+sep, "")
		f.feed("\n", "tank")
		f.feed(header+tank+sep+"\n", "tank")
		f.end(0)
	})
	t.Run("plain, one pool", func(t *testing.T) {
		f := newStreamFeeder(t)
		f.feed(header+"tank  241M  239M  10  27  1.48M  1.56M\n", "")
		f.feed("tank  241M  239M  0  1  0  12K\n", "tank")
		f.feed("tank  241M  239M  0  2  0  24K\n", "tank")
		f.end(1)
	})
	t.Run("plain, two pools", func(t *testing.T) {
		f := newStreamFeeder(t)
		f.feed(header+"r10  202M  758M  23  72  1.28M  1.33M\n", "")
		f.feed("tank  241M  239M  10  27  1.48M  1.56M\n", "")
		f.feed(sep, "r10")
		f.feed("r10  202M  758M  0  1  0  0\n", "")
		f.feed("tank  241M  239M  0  0  0  0\n", "r10")
		f.feed(sep, "")
		f.end(0)
	})
	t.Run("-Hp", func(t *testing.T) {
		f := newStreamFeeder(t)
		f.feed("tank\t252628992\t250687488\t10\t26\t1546157\t1633754\nmirror-0\t252628992\t250687488\t10\t26\t1546156\t1633753\n", "")
		// With -H, a report is known complete only when the next begins.
		f.feed("tank\t252628992\t250687488\t0\t0\t0\t0\n", "tank")
		f.feed("mirror-0\t252628992\t250687488\t0\t0\t0\t0\n", "")
		f.end(1)
	})
	t.Run("-Hp -T u", func(t *testing.T) {
		f := newStreamFeeder(t)
		f.feed("1796026401\ntank\t252628992\t250687488\t10\t26\t1546157\t1633754\n", "")
		f.feed("1796026402\n", "tank")
		f.feed("tank\t252628992\t250687488\t0\t0\t0\t0\n", "")
		f.end(1)
	})
}

func TestIostatScannerKeepsReportsBeforeAnError(t *testing.T) {
	in := "tank\t1\t2\t3\t4\t5\t6\ntank\t1\t2\t3\t4\t5\t6\ntank\t1\t2\tbad\t4\t5\t6\n"
	s := NewIostatScanner(strings.NewReader(in))
	n := 0
	for s.Scan() {
		n++
	}
	if n != 1 || s.Err() == nil || !strings.HasPrefix(s.Err().Error(), "line 3: ") {
		t.Errorf("got %d reports and error %v; want 1 report, then the error of line 3", n, s.Err())
	}
}

func FuzzParseIostat(f *testing.F) {
	addSeeds(f, iostatSeeds)
	status := &Status{Pools: []*Pool{
		testPool("tank", normal(vd("mirror-0", "mirror", leaf("vdb"), leaf("vdc")))),
		testPool("rz1", normal(vd("raidz1-0", "raidz1", leaf("sda"), leaf("sdb"))), class(ClassLog, leaf("sdc"))),
	}}
	f.Fuzz(func(t *testing.T, data []byte) {
		reports, err := ParseIostat(bytes.NewReader(data))
		if err != nil {
			if reports != nil {
				t.Fatalf("error %v with %d reports", err, len(reports))
			}
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error %q does not name its line", err)
			}
			parsetest.Check(t, err)
			return
		}
		for _, r := range reports {
			if len(r.Rows) == 0 {
				t.Fatal("empty report")
			}
			if r.Rows[0].Depth != 0 {
				t.Fatalf("report does not start with a pool row: %+v", r.Rows[0])
			}
			for i, row := range r.Rows {
				known := row.Depth >= 0
				if row.Name == "" || row.Depth < -1 || known == (row.Pool == "") || row.Depth == 0 && row.Pool != row.Name {
					t.Fatalf("row %d: %+v", i, row)
				}
				for _, v := range []float64{row.ReadOps, row.WriteOps, row.ReadBytes, row.WriteBytes} {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("row %d: not a finite figure: %+v", i, row)
					}
				}
			}
			m, err := MatchIostatReport(status, r.Rows)
			if (err == nil) == (m == nil) {
				t.Fatalf("MatchIostatReport: %d pairs with error %v", len(m), err)
			}
		}
	})
}

// syntheticIostat prints a report of 20 raidz2 vdevs of 5 disks each, as
// zpool iostat -v 2.x does.
func syntheticIostat() string {
	var b strings.Builder
	sep := "---------------------  -----  -----  -----  -----  -----  -----\n"
	b.WriteString("                         capacity     operations     bandwidth \n")
	b.WriteString("pool                   alloc   free   read  write   read  write\n")
	b.WriteString(sep)
	b.WriteString("big                    1.21P   540T  12.1K  8.44K  1.52G   988M\n")
	for v := range 20 {
		fmt.Fprintf(&b, "  %-19s  61.9T  27.0T    604    422  77.8M  49.4M\n", fmt.Sprintf("raidz2-%d", v))
		for d := range 5 {
			fmt.Fprintf(&b, "    %-17s      -      -    121     84  15.5M  9.88M\n", fmt.Sprintf("wwn-0x5000c5%05x", v*5+d))
		}
	}
	b.WriteString(sep)
	return b.String()
}

func BenchmarkParseIostat(b *testing.B) {
	in := syntheticIostat()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		reports, err := ParseIostat(strings.NewReader(in))
		if err != nil || len(reports) != 1 || len(reports[0].Rows) != 121 {
			b.Fatalf("%d reports, %v", len(reports), err)
		}
	}
}
