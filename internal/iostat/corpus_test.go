package iostat

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// printedDeviceNames lists the device rows of iostat -x output without the
// parser: a row is a line of at least three numbers and exactly one other
// word, the name, either first (illumos without -n, FreeBSD, Linux) or last
// (illumos -n).
func printedDeviceNames(body []byte) []string {
	var names []string
	for _, line := range strings.Split(string(body), "\n") {
		fields := strings.Fields(line)
		var words []int
		for i, f := range fields {
			if _, err := strconv.ParseFloat(f, 64); err != nil {
				words = append(words, i)
			}
		}
		if len(fields)-len(words) < 3 || len(words) != 1 {
			continue
		}
		if i := words[0]; i == 0 || i == len(fields)-1 {
			names = append(names, fields[i])
		}
	}
	return names
}

func parsedDeviceNames(reports []Report) []string {
	var names []string
	for _, r := range reports {
		for _, d := range r.Devices {
			names = append(names, d.Name)
		}
	}
	return names
}

func TestCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/iostat")
	var complete, partial int
	for _, f := range sample.Glob(t, dir, "*.txt") {
		name := filepath.Base(f.Path)
		t.Run(name, func(t *testing.T) {
			reports, err := ParseIostat(bytes.NewReader(f.Body))
			if strings.Contains(f.Header["command"], "iostat -E") {
				if !errors.Is(err, ErrNotExtended) {
					t.Errorf("ParseIostat of iostat -E output: err = %v, want ErrNotExtended", err)
				}
				summary, err := ParseErrorSummary(bytes.NewReader(f.Body))
				if err == nil || !strings.Contains(err.Error(), `"[...]"`) || summary != nil {
					t.Errorf("the fragment should fail at its [...] line: %v", err)
				}
				partial++
				return
			}
			if f.Truncated() {
				partial++ // must only not panic
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, want := parsedDeviceNames(reports), printedDeviceNames(f.Body); !slices.Equal(got, want) {
				t.Errorf("devices = %q, printed %q", got, want)
			}
			complete++
		})
	}
	t.Logf("iostat corpus: %d complete samples parse with every printed device; %d truncated, fragment or -E, no panics", complete, partial)
}

// The corpus samples carry the layouts' features; check a few values.
func TestCorpusValues(t *testing.T) {
	dir := sample.Dir(t, "corpus/iostat")
	parse := func(name string) []Report {
		t.Helper()
		f := sample.MustRead(t, filepath.Join(dir, name))
		r, err := ParseIostat(bytes.NewReader(f.Body))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	r := parse("illumos-man-iostat-xcnCXTdz-controller.txt")
	if len(r) != 2 || r[1].Time.Format("2006-01-02 15:04:05") != "2003-11-24 14:58:41" ||
		r[1].CPU == nil || r[1].CPU.DTrace == nil || *r[1].CPU.DTrace != 0.01 ||
		r[0].Devices[2].Name != "d10" || *r[0].Devices[2].ActvSvcSeconds != 0.3563 ||
		r[0].Devices[0].WriteBytes != 44*1024 {
		t.Errorf("-xcnCXTdz: %+v", r)
	}

	r = parse("illumos-man-iostat-xtc-instance-names.txt")
	if len(r) != 2 || r[1].CPU == nil || r[1].CPU.Idle != 1 || *r[0].Devices[4].AwaitSeconds != 0.0356 {
		t.Errorf("-xtc: %+v", r)
	}

	// A fragment: its part before "[...]" is complete.
	f := sample.MustRead(t, filepath.Join(dir, "solaris-iostat-xnze-errors-columns.txt"))
	complete, _, _ := bytes.Cut(f.Body, []byte("[...]"))
	r, err := ParseIostat(bytes.NewReader(complete))
	if err != nil || len(r) != 1 || len(r[0].Devices) != 4 || r[0].Devices[3].Errors == nil {
		t.Errorf("-xnze before [...]: %+v, %v", r, err)
	}

	r = parse("linux-sysstat12-iostat-mx-ubuntu2010.txt")
	if d := r[0].Devices[0]; d.Name != "dm-0" || d.ReadBytes != 0.10*1024*1024 || r[0].CPU.Steal == nil {
		t.Errorf("-mx: %+v", d)
	}
}

func TestCaptures(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	files := sample.Glob(t, dir, "*__iostat-x.txt")
	for _, f := range files {
		t.Run(filepath.Base(f.Path), func(t *testing.T) {
			reports, err := ParseIostat(bytes.NewReader(f.Body))
			if err != nil {
				t.Fatal(err)
			}
			if len(reports) != 1 || reports[0].CPU == nil {
				t.Fatalf("want one report with avg-cpu, got %+v", reports)
			}
			if got, want := parsedDeviceNames(reports), printedDeviceNames(f.Body); !slices.Equal(got, want) {
				t.Errorf("devices = %q, printed %q", got, want)
			}
		})
	}
	t.Logf("openzfs-2.3 captures: %d iostat -x outputs parse", len(files))
}
