package kstat

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// linuxKind names the parser of a /proc/spl/kstat/zfs file from its path,
// as the collector will know it.
func linuxKind(procPath string) string {
	switch base := path.Base(procPath); {
	case base == "state":
		return "state"
	case base == "guid":
		return "guid"
	case base == "io":
		return "io"
	case base == "txgs", strings.HasPrefix(base, "txgs-"):
		return "txgs"
	case base == "reads", base == "multihost", base == "import_progress", base == "dbgmsg", strings.HasSuffix(base, "_bench"):
		return "table"
	case base == "dbufs", base == "simd":
		return "" // not supported: dbufs has two header lines split by "|", simd is no kstat table
	}
	return "named"
}

// procPath returns the file a sample's command reads: the first word after
// "cat " ("cat /proc/spl/kstat/zfs/pool1/objset-0x36 (fixture renamed...)").
func procPath(f sample.File) string {
	cmd := strings.TrimPrefix(f.Header["command"], "cat ")
	p, _, _ := strings.Cut(cmd, " ")
	return p
}

var (
	namedRowRE   = regexp.MustCompile(`^.+\s+\d{1,2}\s+.*$`)
	hitsRE       = regexp.MustCompile(`(?m)^hits\s+4\s+(\d+)$`)
	datasetRE    = regexp.MustCompile(`(?m)^dataset_name\s+7\s+(.*)$`)
	firstFieldRE = regexp.MustCompile(`^\s*(\S+)`)
)

// nonBlank returns the lines of body that are not blank.
func nonBlank(body []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(body), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// checkLinux parses one Linux kstat file with the parser its path calls
// for and checks the result against the text, read independently.
func checkLinux(procPath string, body []byte, complete bool) error {
	lines := nonBlank(body)
	switch linuxKind(procPath) {
	case "named":
		n, err := ParseNamed(bytes.NewReader(body))
		if err != nil {
			return err
		}
		rows := 0
		for _, l := range lines[columnLine(lines)+1:] {
			if namedRowRE.MatchString(l) {
				rows++
			}
		}
		if rows != len(n.Entries) {
			return fmt.Errorf("%d entries, the text has %d rows", len(n.Entries), rows)
		}
		if complete && n.Header != nil && n.Header.NData != int64(len(n.Entries)) {
			return fmt.Errorf("%d entries, the header says %d", len(n.Entries), n.Header.NData)
		}
		if m := hitsRE.FindSubmatch(body); m != nil {
			if e, _ := n.Lookup("hits"); strconv.FormatUint(e.Uint, 10) != string(m[1]) {
				return fmt.Errorf("hits = %d, the text says %s", e.Uint, m[1])
			}
		}
		if err := checkMiscText(path.Base(procPath), n, lines[columnLine(lines)+1:]); err != nil {
			return err
		}
		if m := datasetRE.FindSubmatch(body); m != nil {
			d, err := DatasetFromNamed(n)
			if err != nil || d.Name != string(m[1]) || d.Pool != strings.Split(string(m[1]), "/")[0] {
				return fmt.Errorf("dataset %+v, %v; the text says %q", d, err, m[1])
			}
		}
	case "state":
		s, err := ParsePoolState(bytes.NewReader(body))
		if err != nil {
			return err
		}
		if s != strings.ToLower(strings.TrimSpace(string(body))) {
			return fmt.Errorf("state %q", s)
		}
	case "guid":
		g, err := ParsePoolGUID(bytes.NewReader(body))
		if err != nil {
			return err
		}
		if strconv.FormatUint(g, 10) != strings.TrimSpace(string(body)) {
			return fmt.Errorf("guid %d", g)
		}
	case "io":
		c, err := ParseIO(bytes.NewReader(body))
		if err != nil {
			return err
		}
		first := firstFieldRE.FindStringSubmatch(lines[len(lines)-1])[1]
		if strconv.FormatUint(c.NRead, 10) != first {
			return fmt.Errorf("nread %d, the text says %s", c.NRead, first)
		}
	case "txgs":
		txgs, err := ParseTxgs(bytes.NewReader(body))
		if err != nil {
			return err
		}
		rows := len(lines) - 1
		if _, ok := parseHeader(lines[0]); ok {
			rows--
		}
		if len(txgs) != rows {
			return fmt.Errorf("%d txgs, the text has %d rows", len(txgs), rows)
		}
		if rows > 0 && strconv.FormatUint(txgs[0].TXG, 10) != firstFieldRE.FindStringSubmatch(lines[len(lines)-rows])[1] {
			return fmt.Errorf("first txg %d", txgs[0].TXG)
		}
	case "table":
		tbl, err := ParseTable(bytes.NewReader(body))
		if err != nil {
			return err
		}
		rows := len(lines) - 1
		if tbl.Header != nil {
			rows--
		}
		if len(tbl.Rows) != rows {
			return fmt.Errorf("%d rows, the text has %d", len(tbl.Rows), rows)
		}
	default:
		return errSkipped
	}
	return nil
}

var errSkipped = fmt.Errorf("not supported")

// checkMiscText checks the module-wide kstats (zil, dmu_tx, abdstats,
// zfetchstats) and the per-pool iostats against their rows: every row is a
// statistic, but for values that wrapped below zero.
func checkMiscText(base string, n *Named, rows []string) error {
	var stats map[string]float64
	switch {
	case slices.Contains(MiscKstats, base):
		stats = MiscFromNamed(base, n).Stats
	case base == "iostats":
		stats = PoolIOStatsFromNamed("pool", n).Stats
	default:
		return nil
	}
	want := 0
	for _, row := range rows {
		f := strings.Fields(row)
		if v, err := strconv.ParseUint(f[len(f)-1], 10, 64); err == nil && v < 1<<63 {
			want++
		}
	}
	if len(stats) != want {
		return fmt.Errorf("%s: %d statistics, the text has %d rows below 2^63", base, len(stats), want)
	}
	return nil
}

// columnLine returns the index of the "name type data" line.
func columnLine(lines []string) int {
	for i, l := range lines {
		if isNamedColumns(l) {
			return i
		}
	}
	return len(lines) - 1
}

// incomplete reports whether the corpus marks a sample as cut or edited:
// such samples need only not crash the parsers.
func incomplete(f sample.File) bool {
	return f.Truncated() || strings.Contains(f.Header["notes"], "EDITED")
}

func TestCorpusLinux(t *testing.T) {
	files := sample.Glob(t, sample.Dir(t, "corpus/kstat-linux"), "*.txt")
	passed, lenient := 0, 0
	for _, f := range files {
		err := checkLinux(procPath(f), f.Body, !incomplete(f))
		switch {
		case incomplete(f):
			lenient++
			t.Logf("%s (incomplete): %v", filepath.Base(f.Path), err)
		case err != nil:
			t.Errorf("%s: %v", filepath.Base(f.Path), err)
		default:
			passed++
		}
	}
	t.Logf("kstat-linux corpus: %d of %d complete samples parse and match; %d truncated or edited parsed without a crash", passed, len(files)-lenient, lenient)
}

func TestCaptures(t *testing.T) {
	files := sample.Glob(t, sample.Dir(t, "captures/openzfs-2.3"), "*__kstat-zfs-*.txt")
	passed, skipped := 0, map[string]bool{}
	kinds := map[string]int{}
	for _, f := range files {
		p := procPath(f)
		err := checkLinux(p, f.Body, true)
		switch {
		case err == errSkipped:
			skipped[path.Base(p)] = true
		case err != nil:
			t.Errorf("%s: %v", filepath.Base(f.Path), err)
		default:
			passed++
			kinds[linuxKind(p)]++
		}
	}
	if len(skipped) != 2 || !skipped["dbufs"] || !skipped["simd"] {
		t.Errorf("skipped %v, want only dbufs and simd", skipped)
	}
	t.Logf("OpenZFS 2.3.2 captures: %d of %d parse and match %v; skipped %v", passed, len(files), kinds, skipped)
}

// The captures of the healthy scenario, through the normalized views.
func TestCapturesNormalized(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	read := func(name string) *Named {
		t.Helper()
		n, err := ParseNamed(bytes.NewReader(sample.MustRead(t, filepath.Join(dir, "04-scrubbed-healthy__kstat-zfs-"+name+".txt")).Body))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	arc := ARCFromNamed(read("arcstats"))
	if hits, _ := arc.Get(ARCHits); hits != 32656 {
		t.Errorf("ARC hits = %v, want 32656", hits)
	}
	d, err := DatasetFromNamed(read("tank.objset-0x8b"))
	if err != nil || d.Name != "tank/data" || d.Pool != "tank" || d.Writes != 1920 || d.WriteBytes != 251658240 {
		t.Errorf("tank/data = %+v, %v", d, err)
	}
	io := PoolIOStatsFromNamed("tank", read("tank.iostats"))
	if io.Stats["arc_write_bytes"] != 251877480 || len(io.Stats) != 26 {
		t.Errorf("tank iostats = %+v", io)
	}
	state, err := ParsePoolState(bytes.NewReader(sample.MustRead(t, filepath.Join(dir, "09-errors-repaired__kstat-zfs-tank.state.txt")).Body))
	if err != nil || !strings.Contains("online degraded", state) {
		t.Errorf("tank state = %q, %v", state, err)
	}
}

var sysctlLineRE = regexp.MustCompile(`(?m)^([^\s:]+): (-?\d+)$`)

func TestCorpusFreeBSD(t *testing.T) {
	files := sample.Glob(t, sample.Dir(t, "corpus/kstat-freebsd"), "*.txt")
	passed := 0
	for _, f := range files {
		name := filepath.Base(f.Path)
		stats, err := ParseSysctl(bytes.NewReader(f.Body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		byName := map[string]SysctlStat{}
		for _, s := range stats {
			byName[s.Name] = s
		}
		matches := sysctlLineRE.FindAllStringSubmatch(string(f.Body), -1)
		if len(matches) != len(stats) || len(stats) != len(nonBlank(f.Body)) {
			t.Errorf("%s: %d sysctls, the text has %d numeric lines of %d", name, len(stats), len(matches), len(nonBlank(f.Body)))
			continue
		}
		ok := true
		for _, m := range matches {
			if s := byName[m[1]]; !s.Numeric || strconv.FormatFloat(s.Number, 'f', -1, 64) != m[2] {
				t.Errorf("%s: %s = %+v, the text says %s", name, m[1], s, m[2])
				ok = false
			}
		}
		if arc, found := ARCFromSysctl(stats); found != strings.Contains(name, "arcstats") || found && len(arc.Stats) != len(stats) {
			t.Errorf("%s: ARC found %v with %d statistics", name, found, len(arc.Stats))
			ok = false
		}
		for _, kstat := range MiscKstats {
			if m, found := MiscFromSysctl(stats, kstat); found != strings.Contains(name, "-"+kstat+"-") || found && len(m.Stats) != len(stats) {
				t.Errorf("%s: %s found %v with %d statistics", name, kstat, found, len(m.Stats))
				ok = false
			}
		}
		if ok {
			passed++
		}
	}
	t.Logf("kstat-freebsd corpus: %d of %d samples parse and match", passed, len(files))
}

var kstatPLineRE = regexp.MustCompile(`(?m)^(\w+):(\d+):(\w+):(\w+)\s+(\S+)$`)

func TestCorpusIllumos(t *testing.T) {
	files := sample.Glob(t, sample.Dir(t, "corpus/kstat-illumos"), "*.txt")
	passed := 0
	for _, f := range files {
		name := filepath.Base(f.Path)
		stats, err := ParseKstatP(bytes.NewReader(f.Body))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		matches := kstatPLineRE.FindAllStringSubmatch(string(f.Body), -1)
		if len(matches) != len(stats) {
			t.Errorf("%s: %d statistics, the text has %d lines", name, len(stats), len(matches))
			continue
		}
		kstats := Group(stats)
		ok := true
		for _, m := range matches {
			inst, _ := strconv.Atoi(m[2])
			k := Find(kstats, m[1], inst, m[3])
			if m[4] == "class" {
				if k == nil || k.Class != m[5] {
					t.Errorf("%s: class of %s = %+v, want %s", name, m[3], k, m[5])
					ok = false
				}
				continue
			}
			if s, found := k.Lookup(m[4]); !found || s.Value != m[5] {
				t.Errorf("%s: %s = %+v, the text says %s", name, m[4], s, m[5])
				ok = false
			}
		}
		arcLines := 0
		for _, m := range matches {
			if m[3] == "arcstats" && m[4] != "class" && m[4] != "crtime" && m[4] != "snaptime" {
				arcLines++
			}
		}
		if arc, _ := ARCFromKstatP(stats); len(arc.Stats) != arcLines {
			t.Errorf("%s: %d ARC statistics, the text has %d", name, len(arc.Stats), arcLines)
			ok = false
		}
		for _, kstat := range MiscKstats {
			if _, found := MiscFromKstatP(stats, kstat); found != strings.Contains(string(f.Body), ":"+kstat+":") {
				t.Errorf("%s: %s found %v", name, kstat, found)
				ok = false
			}
		}
		if ok {
			passed++
		}
	}
	t.Logf("kstat-illumos corpus: %d of %d samples parse and match", passed, len(files))
}
