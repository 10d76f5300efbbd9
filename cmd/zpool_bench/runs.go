package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"unicode"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// maxSameName bounds the names saveRun tries for one run.
const maxSameName = 1000

// saveRun writes the report as DIR/<start>-<name>.json, and its chart
// beside it as .svg, and returns both paths. When either name is taken, by
// an earlier run of that name started in the same second or by anything
// else, a symbolic link included, the run takes the next free pair,
// <start>-<name>-2 and so on: a saved run is never overwritten, and what
// sits at a taken name is neither followed nor replaced.
func saveRun(dir string, r benchreport.Report) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	// Each file is written whole under a temporary name and then linked to
	// its own: link(2) fails on a name that exists, whatever it is, without
	// following it, and a run's files never show half written.
	jsonTemp, err := writeTemp(dir, func(w io.Writer) error { return benchreport.WriteJSON(w, r) })
	if err != nil {
		return nil, err
	}
	defer os.Remove(jsonTemp)
	svgTemp, err := writeTemp(dir, func(w io.Writer) error { return benchreport.WriteSVG(w, r) })
	if err != nil {
		return nil, err
	}
	defer os.Remove(svgTemp)

	stem := filepath.Join(dir, r.Run.Start.UTC().Format("20060102-150405")+"-"+slug(r.Run.Name))
	for n := 1; n <= maxSameName; n++ {
		base := stem
		if n > 1 {
			base = fmt.Sprintf("%s-%d", stem, n)
		}
		// The chart first: runs are found by their JSON, which then has it.
		err := os.Link(svgTemp, base+".svg")
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, linkError(dir, err)
		}
		err = os.Link(jsonTemp, base+".json")
		if err == nil {
			return []string{base + ".json", base + ".svg"}, nil
		}
		_ = os.Remove(base + ".svg")
		if !errors.Is(err, fs.ErrExist) {
			return nil, linkError(dir, err)
		}
	}
	return nil, fmt.Errorf("%s.json and the %d names after it (-2, -3...) are taken; move runs out of %s", stem, maxSameName-1, dir)
}

// linkError says what a failed link means for saving a run.
func linkError(dir string, err error) error {
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) {
		return fmt.Errorf("%w: runs are saved with hard links, which the file system of %s does not allow; point --runs.dir to another", err, dir)
	}
	return err
}

// writeTemp writes a new file in dir, under a name of its own that listings
// pass over, and returns its path.
func writeTemp(dir string, write func(io.Writer) error) (string, error) {
	path := filepath.Join(dir, ".zpool_bench-"+rand.Text()+".tmp")
	// O_EXCL fails on any name that exists, a symbolic link included;
	// O_NOFOLLOW says so again.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o666)
	if err != nil {
		return "", err
	}
	err = write(f)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return path, nil
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
