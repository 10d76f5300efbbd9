package iostat

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"path/filepath"
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

// fixture returns the output part of testdata/<name>.txt.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	f := sample.MustRead(t, filepath.Join("testdata", name+".txt"))
	return f.Body
}

func TestParseIostatGolden(t *testing.T) {
	for _, name := range []string{
		"illumos-iostat-xncM-1-2",
		"freebsd-iostat-x-w-1-c-2",
		"linux-sysstat12-iostat-x-1-2",
	} {
		t.Run(name, func(t *testing.T) {
			reports, err := ParseIostat(bytes.NewReader(fixture(t, name)))
			if err != nil {
				t.Fatal(err)
			}
			if len(reports) != 2 {
				t.Fatalf("got %d reports, want 2", len(reports))
			}
			checkGolden(t, filepath.Join("testdata", name+".golden.json"), reports)
		})
	}
}

func TestParseErrorSummaryGolden(t *testing.T) {
	got, err := ParseErrorSummary(bytes.NewReader(fixture(t, "solaris-iostat-En")))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[1].Hard != 12 || got[1].Product != "WDC WD40EFRX-68N" || got[2].SerialNo != "" {
		t.Errorf("unexpected summary: %+v", got)
	}
	checkGolden(t, filepath.Join("testdata", "solaris-iostat-En.golden.json"), got)
}

// The illumos fixture in numbers: the units the package promises.
func TestIllumosUnits(t *testing.T) {
	reports, err := ParseIostat(bytes.NewReader(fixture(t, "illumos-iostat-xncM-1-2")))
	if err != nil {
		t.Fatal(err)
	}
	d := reports[1].Devices[1] // 612.3 3.0 76.5 0.0 2.1 9.8 3.4 16.0 38 97 c1t0d0
	if d.Name != "c1t0d0" || d.ReadOps != 612.3 || d.ReadBytes != 76.5*1024*1024 {
		t.Errorf("c1t0d0 = %+v", d)
	}
	for what, got := range map[string]struct{ got, want float64 }{
		"wait":   {*d.Wait, 2.1},
		"actv":   {*d.Actv, 9.8},
		"wsvc_t": {*d.WaitSvcSeconds, 0.0034},
		"asvc_t": {*d.ActvSvcSeconds, 0.016},
		"%w":     {*d.WaitRatio, 0.38},
		"%b":     {*d.BusyRatio, 0.97},
	} {
		if got.got != got.want {
			t.Errorf("%s = %v, want %v", what, got.got, got.want)
		}
	}
	if cpu := reports[1].CPU; cpu == nil || cpu.System != 0.21 || cpu.IOWait == nil || *cpu.IOWait != 0 || cpu.Idle != 0.76 {
		t.Errorf("CPU = %+v", cpu)
	}
}

func TestScannerYieldsEachReport(t *testing.T) {
	// Two illumos reports with -T u: the first is complete when the
	// second's timestamp arrives, the last at the end of input.
	in := strings.Join([]string{
		"1700000000",
		"                    extended device statistics",
		"    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device",
		"    1.0    2.0    3.0    4.0  0.0  0.0    0.0    1.0   0   1 c1t0d0",
		"1700000001",
		"                    extended device statistics",
		"    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device",
		"<<device added: c1t1d0>>",
		"",
	}, "\n")
	s := NewScanner(strings.NewReader(in))
	var times []time.Time
	var devices []int
	for s.Scan() {
		times = append(times, s.Report().Time)
		devices = append(devices, len(s.Report().Devices))
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	want := []time.Time{time.Unix(1700000000, 0).UTC(), time.Unix(1700000001, 0).UTC()}
	if len(times) != 2 || !times[0].Equal(want[0]) || !times[1].Equal(want[1]) {
		t.Errorf("times = %v, want %v", times, want)
	}
	// -z with every device idle prints a header and no rows.
	if len(devices) != 2 || devices[0] != 1 || devices[1] != 0 {
		t.Errorf("devices per report = %v, want [1 0]", devices)
	}
}

// A sysstat report is complete at its blank line, before any more input.
func TestScannerLinuxBlankLineEndsReport(t *testing.T) {
	r, w := io.Pipe()
	s := NewScanner(r)
	go func() {
		_, _ = io.WriteString(w, "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"+
			"           1.00    0.00    2.00    3.00    0.00   94.00\n\n"+
			"Device            r/s     w/s     rkB/s     wkB/s  %util\n"+
			"sda              1.00    2.00      4.00      8.00  50.00\n\n")
		// The writer stays open: the report must come without EOF.
	}()
	if !s.Scan() {
		t.Fatalf("no report: %v", s.Err())
	}
	if got := s.Report(); len(got.Devices) != 1 || *got.Devices[0].BusyRatio != 0.5 || got.CPU.User != 0.01 {
		t.Errorf("report = %+v", got)
	}
	w.Close()
	if s.Scan() {
		t.Errorf("unexpected second report %+v", s.Report())
	}
}

func TestParseIostatColumns(t *testing.T) {
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, r []Report)
	}{
		{
			name: "sysstat 9 sectors and old names",
			input: "Device:         rrqm/s   wrqm/s     r/s     w/s   rsec/s   wsec/s avgrq-sz avgqu-sz   await  svctm  %util\n" +
				"sda               0.00     0.00    1.00    2.00     8.00    16.00     8.00     0.50    4.00   1.00   0.30\n",
			check: func(t *testing.T, r []Report) {
				d := r[0].Devices[0]
				if d.ReadBytes != 4096 || d.WriteBytes != 8192 || *d.QueueLength != 0.5 || *d.AwaitSeconds != 0.004 || d.Extra["svctm"] != 1 {
					t.Errorf("sda = %+v", d)
				}
			},
		},
		{
			name: "illumos -xe errors",
			input: "                  extended device statistics       ---- errors ---\n" +
				"device    r/s    w/s   kr/s   kw/s wait actv  svc_t  %w  %b s/w h/w trn tot\n" +
				"sd0       0.1    0.2    1.0    2.0  0.0  0.0    3.5   0   0   1   2   3   6\n",
			check: func(t *testing.T, r []Report) {
				d := r[0].Devices[0]
				if d.Errors == nil || *d.Errors != (DeviceErrors{Soft: 1, Hard: 2, Transport: 3, Total: 6}) || *d.AwaitSeconds != 0.0035 {
					t.Errorf("sd0 = %+v", d)
				}
			},
		},
		{
			name: "decimal comma",
			input: "Device            r/s     w/s     rkB/s     wkB/s  %util\n" +
				"sda              1,50    2,00      4,00      8,00  12,50\n",
			check: func(t *testing.T, r []Report) {
				if d := r[0].Devices[0]; d.ReadOps != 1.5 || *d.BusyRatio != 0.125 {
					t.Errorf("sda = %+v", d)
				}
			},
		},
		{
			name: "sysstat -t timestamp",
			input: "12/02/2021 10:15:03 AM\n" +
				"Device            r/s     w/s     rkB/s     wkB/s  %util\n" +
				"sda              1.00    2.00      4.00      8.00  12.50\n",
			check: func(t *testing.T, r []Report) {
				if want := time.Date(2021, 12, 2, 10, 15, 3, 0, time.UTC); !r[0].Time.Equal(want) {
					t.Errorf("time = %v, want %v", r[0].Time, want)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseIostat(strings.NewReader(tt.input))
			if err != nil {
				t.Fatal(err)
			}
			if len(r) != 1 || len(r[0].Devices) != 1 {
				t.Fatalf("got %+v", r)
			}
			tt.check(t, r)
		})
	}
}

func TestParseIostatErrors(t *testing.T) {
	tests := []struct {
		name, input, want string
		notExtended       bool
	}{
		{"error summary", "c1t0d0           Soft Errors: 0 Hard Errors: 0 Transport Errors: 0\n", "line 1: not iostat -x output", true},
		{"plain linux iostat", "Device             tps    kB_read/s    kB_wrtn/s    kB_read    kB_wrtn\n", "line 1: not iostat -x output", true},
		{"FreeBSD -I counts", "device           r/i         w/i         kr/i         kw/i qlen   tsvc_t/i      sb/i\n", "line 1: not iostat -x output", true},
		{"bad value", "device r/s w/s\nada0 1 x1\n", `line 2: device ada0: cannot parse w/s "x1"`, false},
		{"short row", "device r/s w/s kr/s\nada0 1 2\n", "line 2: device row has 3 fields, the header has 4 columns", false},
		{"NaN", "device r/s w/s\nada0 NaN 1\n", `line 2: device ada0: cannot parse r/s "NaN"`, false},
		{"stray line", "device r/s w/s\nada0 1 2\n\n[...]\n", `line 4: unexpected "[...]" outside a device table`, false},
		{"CPU values missing", "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n", "line 1: input ends before the CPU values", false},
		{"bad error count", "device r/s w/s s/w\nsd0 1 2 0.5\n", "line 2: device sd0: s/w: error count 0.5 is not a whole number", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseIostat(strings.NewReader(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if r != nil {
				t.Errorf("got reports %+v with the error", r)
			}
			if errors.Is(err, ErrNotExtended) != tt.notExtended {
				t.Errorf("errors.Is(ErrNotExtended) = %v, want %v", !tt.notExtended, tt.notExtended)
			}
			parsetest.CheckAt(t, err, tt.want)
		})
	}
}

func TestParseErrorSummaryErrors(t *testing.T) {
	for input, want := range map[string]string{
		"Vendor: ATA Product: X\n":                                     `line 1: "Vendor" before the first device`,
		"sd0 Soft Errors: x Hard Errors: 0 Transport Errors: 0\n":      `line 1: device sd0: cannot parse Soft Errors "x"`,
		"sd0 Soft Errors: 0 Hard Errors: 0 Transport Errors: 0\n[...]": `line 2: no iostat -E label in "[...]"`,
		"sd0 Soft Errors: 0\nSize: 1.00GB\n":                           `line 2: device sd0: cannot find the byte count in Size "1.00GB"`,
	} {
		got, err := ParseErrorSummary(strings.NewReader(input))
		if err == nil || !strings.Contains(err.Error(), want) || got != nil {
			t.Errorf("%q: got %v, %v; want error %q", input, got, err, want)
		}
		parsetest.CheckAt(t, err, want)
	}
}

// illumos prints state change notices after the rows of a report; the
// report after them averages since boot again, so they belong to it.
func TestScannerStateChangesMarkTheNextReport(t *testing.T) {
	in := strings.Join([]string{
		"                    extended device statistics",
		"    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device",
		"    1.0    2.0    3.0    4.0  0.0  0.0    0.0    1.0   0   1 c1t0d0",
		"                    extended device statistics",
		"    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device",
		"    1.0    2.0    3.0    4.0  0.0  0.0    0.0    1.0   0   1 c1t0d0",
		"<<disk added: c1t1d0>>",
		"<<processors removed: 3>>",
		"                    extended device statistics",
		"    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device",
		"    9.0    9.0    9.0    9.0  0.0  0.0    0.0    1.0   0   1 c1t0d0",
		"    0.5    0.1    1.0    2.0  0.0  0.0    0.0    1.0   0   0 c1t1d0",
	}, "\n")
	reports, err := ParseIostat(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, r := range reports {
		got = append(got, r.StateChanges)
	}
	if len(got) != 3 || got[0] != nil || got[1] != nil || strings.Join(got[2], "|") != "disk added: c1t1d0|processors removed: 3" {
		t.Errorf("state changes per report = %q", got)
	}
}
