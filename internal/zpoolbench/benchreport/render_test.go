package benchreport

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ from the current output")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	sample.Golden(t, filepath.Join("testdata", name), got, *update)
}

func mirrorReport(t *testing.T) Report {
	t.Helper()
	r, err := Compute(mirrorRun(), mirrorSeries())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// secondReport is the same mirror at ashift 9, 1.5 times faster, with no
// CPU figures and an interrupted workload that printed no summary.
func secondReport(t *testing.T) Report {
	t.Helper()
	run := mirrorRun()
	cfg := *run.Config
	cfg.Ashift = 9
	run.Config = &cfg
	run.Name = "mirror ashift=9 lz4"
	run.ID = "5b21e0aa"
	run.Start = at(100)
	run.End = at(110)
	run.Interrupted = true
	run.ExitStatus = 130
	run.Workload = nil
	run.WorkloadError = "no benchmark summary: dd: no \"bytes ... copied\" summary"
	var ss []Series
	for _, s := range mirrorSeries() {
		if strings.HasPrefix(s.Metric, "zfs_host_cpu") || strings.HasPrefix(s.Metric, "zfs_engine") {
			continue
		}
		s.Samples = append([]Sample(nil), s.Samples...)
		for i := range s.Samples {
			s.Samples[i].Time = s.Samples[i].Time.Add(run.Start.Sub(t0))
			if s.Metric == "zfs_vdev_write_bytes_total" || s.Metric == "zfs_vdev_write_operations_total" {
				s.Samples[i].Value *= 1.5
			}
		}
		ss = append(ss, s)
	}
	r, err := Compute(run, ss)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func render(t *testing.T, f func(io.Writer) error) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReportGolden(t *testing.T) {
	r := mirrorReport(t)
	table := render(t, func(w io.Writer) error { return WriteTable(w, r) })
	golden(t, "mirror.txt", table)
	golden(t, "mirror.md", render(t, func(w io.Writer) error { return WriteMarkdown(w, r) }))
	golden(t, "mirror.csv", render(t, func(w io.Writer) error { return WriteCSV(w, r) }))
	golden(t, "mirror.svg", render(t, func(w io.Writer) error { return WriteSVG(w, r) }))

	// The figures a reader compares, as the table shows them.
	for _, want := range []string{
		"dd wrote: 209.7 MB in 1.90 s, 110.0 MB/s | pool: 1000 MB written, 100.0 MB/s avg, 150.0 MB/s peak",
		"host CPU busy: 40.0 % (of 2.00 CPUs)",
		"ZFS engine CPU: 15.0 % of the machine (z_wr_iss 10.0 %, txg_sync 5.0 %)",
		"ARC hit ratio: 96.0 % (96 hits, 4 misses)",
		"vdev not online: /dev/sdb (offline)",
		"state:       online at start; seen during the run: online → degraded",
		"recordsize:  128K",
		"command:     dd if=/dev/zero of=/tank/f bs=1M count=200",
	} {
		if !bytes.Contains(table, []byte(want)) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}

func TestTableFitsInHundredColumns(t *testing.T) {
	run := Run{Name: "long names", Pool: "tank", Start: t0, End: at(10)}
	long := "/dev/disk/by-id/ata-WDC_WD40EFRX-68N32N0_WD-WCC7K0XXXXXX-part1"
	ss := []Series{
		series("zfs_vdev_info", lbl("pool", "tank", "vdev", "tank", "vdev_type", "root", "class", "normal"), 1, 1, 1, 1, 1, 1, 1),
		series("zfs_vdev_info", lbl("pool", "tank", "vdev", "raidz2-0", "vdev_type", "raidz2", "class", "normal", "parent", "tank"), 1, 1, 1, 1, 1, 1, 1),
		series("zfs_vdev_info", lbl("pool", "tank", "vdev", long, "vdev_type", "disk", "class", "normal", "parent", "raidz2-0"), 1, 1, 1, 1, 1, 1, 1),
	}
	for _, v := range []string{"tank", "raidz2-0", long} {
		for _, m := range ioCounters {
			// Up to 6 TB and 6e9 operations in 10 s.
			ss = append(ss, vdevCounter(m, v, 0, 1e12, 2e12, 3e12, 4e12, 5e12, 6e12))
			if strings.Contains(m, "operations") {
				ss[len(ss)-1] = vdevCounter(m, v, 0, 1e9, 2e9, 3e9, 4e9, 5e9, 6e9)
			}
		}
	}
	r, err := Compute(run, ss)
	if err != nil {
		t.Fatal(err)
	}
	table := render(t, func(w io.Writer) error { return WriteTable(w, r) })
	for _, l := range strings.Split(string(table), "\n") {
		if strings.HasPrefix(l, "note") || strings.HasPrefix(l, "no ") {
			continue // free text
		}
		if n := utf8.RuneCountInString(l); n > textWidth {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	if !bytes.Contains(table, []byte("    …")) || !bytes.Contains(table, []byte("WCC7K0XXXXXX-part1  disk")) || bytes.Contains(table, []byte(long)) {
		t.Errorf("the long leaf name should be cut keeping its end:\n%s", table)
	}
}

func TestCSVColumns(t *testing.T) {
	r := mirrorReport(t)
	recs, err := csv.NewReader(bytes.NewReader(render(t, func(w io.Writer) error { return WriteCSV(w, r) }))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+1+3 {
		t.Fatalf("%d records, want a header, the pool and 3 vdevs", len(recs))
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	if !reflect.DeepEqual(recs[0], CSVColumns) {
		t.Errorf("header = %q", recs[0])
	}
	pool, sdb := recs[1], recs[4]
	for _, c := range []struct {
		row       []string
		col, want string
	}{
		{pool, "vdev", "tank"}, {pool, "write_bytes", "1e+09"}, {pool, "write_bytes_per_second", "1e+08"},
		{pool, "peak_write_bytes_per_second", "1.5e+08"}, {pool, "read_operations", "35"}, {pool, "arc_hit_ratio", "0.96"},
		{pool, "ashift", "12"}, {pool, "recordsize_bytes", "131072"}, {pool, "depth", "0"},
		{sdb, "vdev", "/dev/sdb"}, {sdb, "write_bytes", "3e+08"}, {sdb, "parent", "mirror-0"}, {sdb, "depth", "2"}, {sdb, "cpu_busy_ratio", ""},
	} {
		if got := c.row[col[c.col]]; got != c.want {
			t.Errorf("%s of %s = %q, want %q", c.col, c.row[col["vdev"]], got, c.want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	for _, r := range []Report{mirrorReport(t), secondReport(t)} {
		data := render(t, func(w io.Writer) error { return WriteJSON(w, r) })
		back, err := ReadJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("report differs after a JSON round trip:\n%s", data)
		}
		again := render(t, func(w io.Writer) error { return WriteJSON(w, back) })
		if !bytes.Equal(again, data) {
			t.Error("JSON of the read-back report differs")
		}
		// Units in JSON are base units.
		var raw struct {
			Pool struct {
				WriteBytes struct {
					Increase  float64 `json:"increase"`
					PerSecond float64 `json:"per_second"`
				} `json:"write_bytes"`
			} `json:"pool"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatal(err)
		}
		if raw.Pool.WriteBytes.Increase < 1e9 || raw.Pool.WriteBytes.PerSecond < 1e8 {
			t.Errorf("pool write figures in JSON = %+v, want bytes and bytes/s", raw.Pool.WriteBytes)
		}
	}
	if _, err := ReadJSON(strings.NewReader("{")); err == nil {
		t.Error("no error for truncated JSON")
	}
}

func TestCompare(t *testing.T) {
	a, b := mirrorReport(t), secondReport(t)
	c := Compare([]Report{a, b})
	row := func(key string) ComparedRow {
		t.Helper()
		for _, r := range c.Rows {
			if r.Key == key {
				return r
			}
		}
		t.Fatalf("no row %s", key)
		return ComparedRow{}
	}
	w := row("pool.write.bytes_per_second")
	if *w.Values[0] != 100e6 || *w.Values[1] != 150e6 || *w.Ratios[0] != 1 || *w.Ratios[1] != 1.5 {
		t.Errorf("write MB/s row = %v %v", deref(w.Values), deref(w.Ratios))
	}
	if r := row("pool.read.bytes"); *r.Ratios[1] != 1 {
		t.Errorf("read bytes ratio = %v, want 1", *r.Ratios[1])
	}
	if cpu := row("cpu.busy_ratio"); cpu.Values[1] != nil || cpu.Ratios[1] != nil || cpu.Values[0] == nil {
		t.Errorf("CPU row = %v %v, want the second run missing", deref(cpu.Values), deref(cpu.Ratios))
	}
	if dd := row("workload.dd wrote.bytes_per_second"); *dd.Values[0] != 110e6 || dd.Values[1] != nil {
		t.Errorf("dd row = %v", deref(dd.Values))
	}
	if ash := row("config.ashift"); !ash.Differs || ash.Text[0] != "12" || ash.Text[1] != "9" {
		t.Errorf("ashift row = %+v", ash)
	}
	if cmp := row("config.compression"); cmp.Differs {
		t.Errorf("compression row differs: %+v", cmp)
	}
	if ex := row("run.exit_status"); ex.Text[1] != "130, interrupted" {
		t.Errorf("exit row = %q", ex.Text)
	}

	table := render(t, func(w io.Writer) error { return WriteComparisonTable(w, c) })
	golden(t, "compare.txt", table)
	golden(t, "compare.md", render(t, func(w io.Writer) error { return WriteComparisonMarkdown(w, c) }))
	golden(t, "compare.csv", render(t, func(w io.Writer) error { return WriteComparisonCSV(w, c) }))
	golden(t, "compare.svg", render(t, func(w io.Writer) error { return WriteComparisonSVG(w, c) }))
	var ashLine, cmpLine, wLine string
	for _, l := range strings.Split(string(table), "\n") {
		if strings.HasPrefix(l, "note: ") {
			continue // free text
		}
		if n := utf8.RuneCountInString(l); n > textWidth {
			t.Errorf("comparison line of %d columns: %q", n, l)
		}
		switch {
		case strings.Contains(l, "ashift"):
			ashLine = l
		case strings.Contains(l, "compression"):
			cmpLine = l
		case strings.Contains(l, "pool write MB/s avg"):
			wLine = l
		}
	}
	if !strings.HasPrefix(ashLine, "* ") || strings.HasPrefix(cmpLine, "* ") {
		t.Errorf("only differing config rows are marked:\n%s\n%s", ashLine, cmpLine)
	}
	if !strings.Contains(wLine, "150.0 (1.50×)") {
		t.Errorf("write row = %q, want run 2 at 150.0 (1.50×)", wLine)
	}

	data := render(t, func(w io.Writer) error { return WriteComparisonJSON(w, c) })
	var back Comparison
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, c) {
		t.Error("comparison differs after a JSON round trip")
	}
}

func deref(vs []*float64) []any {
	var out []any
	for _, v := range vs {
		if v == nil {
			out = append(out, nil)
		} else {
			out = append(out, *v)
		}
	}
	return out
}

// checkXML decodes an SVG to its end and counts its elements by name.
func checkXML(t *testing.T, data []byte) map[string]int {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	counts := map[string]int{}
	root := ""
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, data)
		}
		if se, ok := tok.(xml.StartElement); ok {
			if root == "" {
				root = se.Name.Local
				if se.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace = %q", se.Name.Space)
				}
			}
			counts[se.Name.Local]++
			for _, a := range se.Attr {
				if a.Name.Local == "href" || strings.Contains(a.Value, "url(") {
					t.Errorf("external or linked asset: %v", a)
				}
			}
		}
	}
	if root != "svg" {
		t.Errorf("root element = %q, want svg", root)
	}
	return counts
}

func TestSVG(t *testing.T) {
	r := mirrorReport(t)
	r.Run.Name = `ashift<12> & "lz4"`
	data := render(t, func(w io.Writer) error { return WriteSVG(w, r) })
	counts := checkXML(t, data)
	if counts["polyline"] != 2 {
		t.Errorf("%d polylines, want read and write", counts["polyline"])
	}
	if !bytes.Contains(data, []byte(`ashift&lt;12&gt; &amp; &#34;lz4&#34;`)) {
		t.Error("the run name is not in the title, escaped")
	}
	for _, want := range []string{"mirror of 2, ashift=12, compression=lz4, recordsize=128K, OpenZFS 2.3.2", ">MB/s<", ">150<", ">seconds since the start<"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	c := Compare([]Report{mirrorReport(t), secondReport(t), secondReport(t)})
	counts = checkXML(t, render(t, func(w io.Writer) error { return WriteComparisonSVG(w, c) }))
	if counts["polyline"] != 6 {
		t.Errorf("%d polylines in the overlay, want read and write of 3 runs", counts["polyline"])
	}
}

func TestNiceStep(t *testing.T) {
	for _, c := range []struct{ span, want float64 }{{150, 50}, {10, 2}, {13, 5}, {1, 0.2}, {0.004, 0.001}, {4000, 1000}} {
		if got := niceStep(c.span); got != c.want {
			t.Errorf("niceStep(%v) = %v, want %v", c.span, got, c.want)
		}
	}
}

func TestWorkloadBeside(t *testing.T) {
	r := mirrorReport(t)
	r.Run.Workload = &workload.Summary{Tool: workload.Fio, Results: []workload.Result{
		{Name: "read", Job: "seq", Run: 1, Direction: workload.Read, Bytes: ptr(4e9), Seconds: ptr(20.0), BytesPerSecond: ptr(200e6), OperationsPerSecond: ptr(1526.0), LatencySeconds: ptr(0.00065)},
		{Name: "read", Job: "seq", Run: 2, Direction: workload.Read, Bytes: ptr(8e9), Seconds: ptr(40.0), BytesPerSecond: ptr(200e6)},
	}, Messages: []string{"fio: io_u error"}}
	got := strings.Join(workloadLines(r), "\n")
	want := "fio seq read: 8000 MB read in 40.0 s, 200.0 MB/s | pool: 4.00 MB read, 0.400 MB/s avg, 0.500 MB/s peak\nfio said: fio: io_u error"
	if got != want {
		t.Errorf("workload lines:\n%s\nwant (the last run only):\n%s", got, want)
	}
	r.Run.Workload.Results[1].LatencySeconds = ptr(0.00065)
	if l := workloadLines(r)[0]; !strings.Contains(l, "latency 0.650 ms") {
		t.Errorf("latency not shown: %s", l)
	}
	r = secondReport(t)
	if l := workloadLines(r); len(l) != 1 || !strings.HasPrefix(l[0], "note: the benchmark's output was not read: no benchmark summary") {
		t.Errorf("workload error note = %q", l)
	}
}
