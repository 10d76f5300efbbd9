package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/zpool-exporter/zpool_exporter/internal/benchreport"
)

// saveRun writes the report as DIR/<start>-<name>.json, and its chart
// beside it as .svg, and returns both paths.
func saveRun(dir string, r benchreport.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, r.Run.Start.UTC().Format("20060102-150405")+"-"+slug(r.Run.Name))
	if err := writeFile(base+".json", func(f *os.File) error { return benchreport.WriteJSON(f, r) }); err != nil {
		return nil, err
	}
	if err := writeFile(base+".svg", func(f *os.File) error { return benchreport.WriteSVG(f, r) }); err != nil {
		return nil, err
	}
	return []string{base + ".json", base + ".svg"}, nil
}

// slug makes a run's name fit in a file name.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if r := []rune(s); len(r) > 60 {
		s = strings.TrimRight(string(r[:60]), "-")
	}
	if s == "" {
		s = "run"
	}
	return s
}

// savedRun is a run read from the runs directory.
type savedRun struct {
	path   string
	report benchreport.Report
}

// savedRuns reads the runs saved in dir, newest first; files that are not
// runs are passed over.
func savedRuns(dir string) ([]savedRun, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("there is no runs directory %s (see --runs.dir)", dir)
		}
		return nil, err
	}
	var runs []savedRun
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) != ".json" {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if r, err := readRun(path); err == nil {
			runs = append(runs, savedRun{path: path, report: r})
		}
	}
	slices.SortStableFunc(runs, func(a, b savedRun) int { return b.report.Run.Start.Compare(a.report.Run.Start) })
	return runs, nil
}

// loadRun finds a saved run: a file, or in dir a run whose window ID or
// name is ref (the newest when several have that name).
func loadRun(dir, ref string) (benchreport.Report, error) {
	if info, err := os.Stat(ref); err == nil && !info.IsDir() {
		return readRun(ref)
	}
	runs, err := savedRuns(dir)
	if err != nil {
		return benchreport.Report{}, fmt.Errorf("no run %q: it is not a file, and %w", ref, err)
	}
	var names []string
	for _, r := range runs {
		if r.report.Run.ID == ref || r.report.Run.Name == ref || strings.TrimSuffix(filepath.Base(r.path), ".json") == ref {
			return r.report, nil
		}
		names = append(names, fmt.Sprintf("%s (%s)", r.report.Run.Name, r.report.Run.ID))
	}
	if len(names) == 0 {
		return benchreport.Report{}, fmt.Errorf("no run %q: %s holds no saved runs", ref, dir)
	}
	return benchreport.Report{}, fmt.Errorf("no run %q in %s; it holds: %s (zpool_bench list shows them)", ref, dir, strings.Join(names, ", "))
}

func readRun(path string) (benchreport.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return benchreport.Report{}, err
	}
	defer f.Close()
	r, err := benchreport.ReadJSON(f)
	if err != nil {
		return benchreport.Report{}, fmt.Errorf("%s is not a saved run: %w", path, err)
	}
	if r.Run.ID == "" || r.Run.Start.IsZero() {
		return benchreport.Report{}, fmt.Errorf("%s is not a saved run of zpool_bench", path)
	}
	return r, nil
}
