// Package sample reads the shared corpus of real zpool, iostat and kstat
// outputs (../shared/corpus) and the OpenZFS captures (../shared/captures)
// for tests. Those files live beside the checkout, never inside it
// ($ZPE_SHARED moves them).
package sample

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SharedEnv names the environment variable that moves the shared samples:
// when set, tests read $ZPE_SHARED/<sub> instead of ../shared/<sub>. Set to
// a missing directory, it shows what a checkout without them runs.
const SharedEnv = "ZPE_SHARED"

// Dir returns the absolute path of ../shared/<sub> beside the repository
// root. Outside CI the test is skipped when it is missing; with CI=true a
// missing directory fails the test, because CI must run every test.
func Dir(t testing.TB, sub string) string {
	t.Helper()
	dir := sharedDir(t, sub)
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("shared samples %s missing in CI: %v", dir, err)
		}
		t.Skipf("shared samples not found at %s (they sit beside the checkout, or set %s): %v", dir, SharedEnv, err)
	}
	return dir
}

// Seeds reads the shared samples matching pattern in ../shared/<sub> for a
// fuzz target's seed corpus, and reads none when they are missing, in CI
// too: a fuzz target must fuzz without them, from its package's own
// fixtures, while the tests that need them (through Dir) fail in CI.
func Seeds(t testing.TB, sub, pattern string) []File {
	t.Helper()
	dir := sharedDir(t, sub)
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	return Glob(t, dir, pattern)
}

// Bodies returns the bodies of the samples, as fuzz targets take them.
func Bodies(files ...[]File) [][]byte {
	var bodies [][]byte
	for _, fs := range files {
		for _, f := range fs {
			bodies = append(bodies, f.Body)
		}
	}
	return bodies
}

// CheckSeeds runs each of a package's fuzz seed functions with the shared
// samples hidden and fails the test when one skips, fails or gives no
// input: without the shared samples, a fuzz target must still start from
// its package's own fixtures.
func CheckSeeds(t *testing.T, seeds map[string]func(testing.TB) [][]byte) {
	t.Helper()
	t.Setenv(SharedEnv, filepath.Join(t.TempDir(), "missing"))
	for name, seed := range seeds {
		n, skipped := 0, false
		ok := t.Run(name, func(t *testing.T) {
			defer func() { skipped = t.Skipped() }()
			n = len(seed(t))
		})
		switch {
		case skipped:
			t.Errorf("%s: seeding skipped the fuzz target without the shared samples", name)
		case ok && n == 0:
			t.Errorf("%s: no seed input without the shared samples", name)
		}
	}
}

// sharedDir is where the shared samples of sub are: under $ZPE_SHARED, or
// in ../shared beside the repository root.
func sharedDir(t testing.TB, sub string) string {
	t.Helper()
	if dir := os.Getenv(SharedEnv); dir != "" {
		abs, err := filepath.Abs(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		return abs
	}
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(filepath.Dir(root), "shared", sub)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			if _, err := os.Stat(filepath.Join(dir, "cmd", "zpool_exporter")); err == nil {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("repository root not found above the test's directory")
		}
		dir = parent
	}
}

// File is one sample: its header fields and the verbatim output after them.
type File struct {
	Path   string
	Header map[string]string // "source", "platform", "command", "notes", "scenario"...
	Body   []byte
}

// Truncated reports whether the corpus marks the sample as incomplete
// (TRUNCATED or FRAGMENT in its notes).
func (f File) Truncated() bool {
	n := f.Header["notes"]
	return strings.Contains(n, "TRUNCATED") || strings.Contains(n, "FRAGMENT")
}

// Read reads a sample whose header is "# key: value" lines ended by "# ---".
func Read(path string) (File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	f := File{Path: path, Header: map[string]string{}}
	rest := data
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		if !bytes.HasPrefix(line, []byte("# ")) {
			return File{}, fmt.Errorf("%s: header ends without a '# ---' line", path)
		}
		rest = after
		if string(line) == "# ---" {
			f.Body = rest
			return f, nil
		}
		k, v, _ := strings.Cut(strings.TrimPrefix(string(line), "# "), ":")
		f.Header[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return File{}, fmt.Errorf("%s: no '# ---' line", path)
}

// MustRead reads a sample, failing the test when it cannot.
func MustRead(t testing.TB, path string) File {
	t.Helper()
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Glob reads every sample matching pattern under dir.
func Glob(t testing.TB, dir, pattern string) []File {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no samples match %s in %s", pattern, dir)
	}
	var files []File
	for _, p := range paths {
		if strings.HasSuffix(p, ".stderr.txt") {
			continue
		}
		f, err := Read(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// Golden compares got with the golden file at path, or rewrites the file
// when update is set (the -update flag of the calling test package).
// Golden files are reviewed as diffs after an update.
func Golden(t testing.TB, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("result differs from %s (run go test -update and review the diff):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// GoldenJSON compares v, as indented JSON, with the golden file at path,
// or rewrites it when update is set.
func GoldenJSON(t testing.TB, path string, v any, update bool) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	Golden(t, path, append(got, '\n'), update)
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
