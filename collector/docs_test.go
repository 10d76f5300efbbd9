package collector_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// docRow is a row of docs/metrics.md's reference table: the families it
// names, their types and the labels they carry.
type docRow struct {
	line   int
	names  []string // full names; a name ending in * stands for a prefix
	types  []string
	labels []string // nil with "...": open
	open   bool
}

// docMetricsTable reads the reference table of docs/metrics.md. A name
// written as a suffix ("`_misses_total`" after "`zfs_l2arc_hits_total`")
// extends the longest prefix of the row's last full name, cut at an
// underscore, that makes a name exposed (or a documented one when none is).
func docMetricsTable(t *testing.T, exposed map[string]family) []docRow {
	t.Helper()
	f, err := os.Open("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	code := regexp.MustCompile("`([^`]+)`")
	var rows []docRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "| `zfs_") {
			if len(rows) > 0 && !strings.HasPrefix(line, "|") {
				break // the end of the table
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) < 4 {
			t.Fatalf("docs/metrics.md:%d: %d cells, want 4: %s", n, len(cells), line)
		}
		r := docRow{line: n}
		last := ""
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			name := m[1]
			if strings.HasPrefix(name, "_") {
				name = extend(last, name, exposed, r.names)
			} else {
				last = name
			}
			r.names = append(r.names, name)
		}
		for _, ty := range strings.Split(cells[1], ",") {
			r.types = append(r.types, strings.TrimSpace(ty))
		}
		for _, l := range strings.Split(cells[2], ",") {
			switch l = strings.TrimSpace(l); {
			case strings.HasSuffix(l, "..."):
				r.open = true
				r.labels = append(r.labels, strings.TrimSuffix(l, "..."))
			case l != "":
				r.labels = append(r.labels, l)
			}
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 50 {
		t.Fatalf("docs/metrics.md: %d rows in the reference table", len(rows))
	}
	return rows
}

// extend resolves a suffix written after full, as docMetricsTable says,
// to a name the row has not named yet.
func extend(full, suffix string, exposed map[string]family, named []string) string {
	var candidates []string
	for i := len(full) - 1; i > 0; i-- {
		if full[i] == '_' {
			candidates = append(candidates, full[:i]+suffix)
		}
	}
	for _, c := range candidates {
		if _, ok := exposed[c]; ok && !slices.Contains(named, c) {
			return c
		}
	}
	if len(candidates) > 0 {
		return candidates[len(candidates)-1] // the shortest prefix: reported as not exposed
	}
	return suffix
}

// family is what the golden expositions show of one family.
type family struct {
	types  map[string]bool
	labels map[string]bool
	files  []string
}

// exposedFamilies reads every golden exposition of the collectors: the
// captured hosts of every ZFS the exporter knows, each collector's.
func exposedFamilies(t *testing.T) map[string]family {
	t.Helper()
	var paths []string
	err := filepath.WalkDir("testdata", func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".prom") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil || len(paths) < 30 {
		t.Fatalf("%d golden expositions (%v)", len(paths), err)
	}
	out := map[string]family{}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for name, mf := range fams {
			fam, ok := out[name]
			if !ok {
				fam = family{types: map[string]bool{}, labels: map[string]bool{}}
			}
			fam.types[strings.ToLower(mf.GetType().String())] = true
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					fam.labels[l.GetName()] = true
				}
			}
			fam.files = append(fam.files, filepath.Base(p))
			out[name] = fam
		}
	}
	return out
}

// notInGoldens are families docs/metrics.md documents that no golden
// exposition holds, and why.
var notInGoldens = map[string]string{
	"zfs_benchmark_window_active":             "served with --web.enable-benchmark-api, by cmd/zpool_exporter",
	"zfs_benchmark_window_start_time_seconds": "served with --web.enable-benchmark-api, by cmd/zpool_exporter",
	"zfs_benchmark_window_end_time_seconds":   "served with --web.enable-benchmark-api, by cmd/zpool_exporter",
	"zfs_benchmark_windows_started_total":     "served with --web.enable-benchmark-api, by cmd/zpool_exporter",
	"zfs_exporter_build_info":                 "client_golang's version collector, registered by cmd/zpool_exporter",
	"zfs_exporter_command_hung":               "only while a killed zpool has not exited (source_metrics_test.go)",
	"zfs_exporter_command_failures_total":     "only once a command failed (source_metrics_test.go, cmd/zpool_exporter's hang tests)",
	"zfs_exporter_dropped_series_total":       "only once a series was dropped (admission_test.go)",
	"zfs_exporter_collector_duration_seconds": "left out of the goldens, which hold no timings (collector_test.go)",
	"zfs_exporter_vdev_latency_left_out":      "only past --collector.vdev_latency.max-vdevs (vdev_latency_test.go)",
	"zfs_vdev_expand_size_bytes":              "only while a vdev can grow, which no capture shows (vdev_space_test.go)",
}

// docs/metrics.md's reference table holds every family of every captured
// host's exposition, with its type and its labels; and every family it
// documents is one the exporter serves.
func TestMetricsReferenceMatchesTheExpositions(t *testing.T) {
	exposed := exposedFamilies(t)
	rows := docMetricsTable(t, exposed)
	documented := map[string]docRow{}
	for _, r := range rows {
		for _, name := range r.names {
			documented[name] = r
			if _, ok := exposed[name]; ok || strings.HasSuffix(name, "*") {
				continue
			}
			if why, ok := notInGoldens[name]; !ok {
				t.Errorf("docs/metrics.md:%d documents %s, which no golden exposition holds", r.line, name)
			} else if why == "" {
				t.Errorf("%s: no reason", name)
			}
		}
	}
	for name, fam := range exposed {
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			continue
		}
		r, ok := documented[name]
		if !ok {
			for doc, dr := range documented {
				if prefix, wild := strings.CutSuffix(doc, "*"); wild && strings.HasPrefix(name, prefix) {
					r, ok = dr, true
				}
			}
		}
		if !ok {
			t.Errorf("%s (in %s) is not in docs/metrics.md's reference table", name, fam.files[0])
			continue
		}
		for ty := range fam.types {
			if !slices.Contains(r.types, ty) {
				t.Errorf("docs/metrics.md:%d: %s is a %s, documented as %s", r.line, name, ty, strings.Join(r.types, ", "))
			}
		}
		for l := range fam.labels {
			if l != "le" && l != "quantile" && !slices.Contains(r.labels, l) && !r.open {
				t.Errorf("docs/metrics.md:%d: %s has label %s, not documented (%s)", r.line, name, l, strings.Join(r.labels, ", "))
			}
		}
	}
	t.Logf("%d families in the golden expositions, %d documented in %d rows", len(exposed), len(documented), len(rows))
	// Each documented label is one a family of its row carries.
	for _, r := range rows {
		carried := map[string]bool{}
		seen := false
		for _, name := range r.names {
			if fam, ok := exposed[name]; ok {
				seen = true
				for l := range fam.labels {
					carried[l] = true
				}
			}
		}
		for _, l := range r.labels {
			if seen && !r.open && !carried[l] {
				t.Errorf("docs/metrics.md:%d: label %s of %s is on none of them", r.line, l, strings.Join(r.names, ", "))
			}
		}
	}
}
