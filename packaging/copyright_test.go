package main

import (
	"bytes"
	"debug/buildinfo"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The copyright file gives the license files of every module linked into a
// binary, found in the module cache under its escaped path; this test's own
// binary, which links nfpm's modules (github.com/AlekSi/pointer among them,
// spelled !alek!si in the cache), stands for the exporter's.
func TestCopyrightGivesEveryModulesLicense(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	info, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Deps) == 0 {
		t.Fatal("the test binary lists no modules")
	}
	cache, goroot, checkout := t.TempDir(), t.TempDir(), t.TempDir()
	write := func(path, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range info.Deps {
		dir := filepath.Join(cache, escapeModulePath(d.Path)+"@"+escapeModulePath(d.Version))
		write(filepath.Join(dir, "LICENSE"), "the license of "+d.Path+"  \n\n\n")
		write(filepath.Join(dir, "README.md"), "not a license")
	}
	write(filepath.Join(goroot, "LICENSE"), "the license of Go")

	var out bytes.Buffer
	if err := writeCopyright(&out, checkout, []string{exe, exe}, cache, goroot); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	wants := []string{"The project has not published a license for its own code yet.", "\nthe license of Go\n"}
	for _, d := range info.Deps {
		wants = append(wants, "\n  "+d.Path+" "+d.Version+"\n", "\n"+d.Path+" "+d.Version+": LICENSE\n", "\nthe license of "+d.Path+"\n")
	}
	for _, w := range wants {
		if strings.Count(text, w) != 1 {
			t.Errorf("%q appears %d times, want once", w, strings.Count(text, w))
		}
	}
	if strings.Contains(text, "not a license") || strings.Contains(text, " \n") {
		t.Errorf("a file that is no license, or trailing spaces:\n%s", text)
	}

	// The project's own license, once it has one, comes first.
	write(filepath.Join(checkout, "LICENSE"), "the project's license")
	out.Reset()
	if err := writeCopyright(&out, checkout, []string{exe}, cache, goroot); err != nil {
		t.Fatal(err)
	}
	if own, std := strings.Index(out.String(), "the project's license"), strings.Index(out.String(), "the license of Go"); own < 0 || own > std {
		t.Errorf("the project's license is not before the modules':\n%s", out.String())
	}

	// A module without a license file stops the build.
	missing := info.Deps[0]
	os.Remove(filepath.Join(cache, escapeModulePath(missing.Path)+"@"+escapeModulePath(missing.Version), "LICENSE"))
	err = writeCopyright(&bytes.Buffer{}, checkout, []string{exe}, cache, goroot)
	if err == nil || !strings.Contains(err.Error(), missing.Path) {
		t.Errorf("error %v, want one naming %s", err, missing.Path)
	}
}

func TestEscapeModulePath(t *testing.T) {
	if got := escapeModulePath("github.com/AlekSi/pointer"); got != "github.com/!alek!si/pointer" {
		t.Errorf("got %s", got)
	}
}
