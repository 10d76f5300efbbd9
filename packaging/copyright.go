package main

import (
	"cmp"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// The files in which a module gives its terms: LICENSE, COPYING, NOTICE
// (which Apache-2.0 asks to pass on) and PATENTS, with any suffix.
var licenseFile = regexp.MustCompile(`(?i)^(licen[cs]e|copying|notice|patents)([.-].*)?$`)

// module is a Go module linked into the binaries.
type module struct{ path, version string }

// writeCopyright writes the package's copyright file. The binaries are
// static: besides the project's code they hold the Go standard library and
// every module they import, whose licenses ask that their terms go with
// the binary. So the file gives the project's terms, then each of those
// modules with its license files as the module ships them, read from the
// module cache the binaries were built from.
func writeCopyright(w io.Writer, source string, binaries []string, modCache, goroot string) error {
	var goVersion string
	seen := map[module]bool{}
	var mods []module
	for _, bin := range binaries {
		info, err := buildinfo.ReadFile(bin)
		if err != nil {
			return err
		}
		goVersion = info.GoVersion
		for _, d := range info.Deps {
			if d.Replace != nil {
				d = d.Replace
			}
			m := module{d.Path, d.Version}
			if m.version == "" {
				return fmt.Errorf("%s: module %s is replaced by a directory: its license cannot be found by version", bin, d.Path)
			}
			if !seen[m] {
				seen[m] = true
				mods = append(mods, m)
			}
		}
	}
	slices.SortFunc(mods, func(a, b module) int { return cmp.Or(cmp.Compare(a.path, b.path), cmp.Compare(a.version, b.version)) })

	fmt.Fprintf(w, `zpool_exporter, packaged as %s.
Source: %s

The programs zpool_exporter and zpool_bench are statically linked Go
binaries. Besides the project's own code they contain the Go standard
library (%s) and these Go modules:

`, packageName, homepage, goVersion)
	for _, m := range mods {
		fmt.Fprintf(w, "  %s %s\n", m.path, m.version)
	}
	fmt.Fprint(w, `
Each is under the license it ships with, reproduced in full below after
the project's own terms.
`)
	own, err := licenseTexts(source)
	if err != nil {
		return err
	}
	if len(own) == 0 {
		fmt.Fprint(w, "\nThe project has not published a license for its own code yet.\n")
	}
	writeSection(w, "zpool_exporter", own)

	std, err := licenseTexts(goroot)
	if err != nil {
		return err
	}
	if len(std) == 0 {
		return fmt.Errorf("no license file in GOROOT %s", goroot)
	}
	writeSection(w, "The Go standard library, "+goVersion, std)
	for _, m := range mods {
		dir := filepath.Join(modCache, escapeModulePath(m.path)+"@"+escapeModulePath(m.version))
		texts, err := licenseTexts(dir)
		if err != nil {
			return err
		}
		if len(texts) == 0 {
			return fmt.Errorf("module %s %s has no license file in %s", m.path, m.version, dir)
		}
		writeSection(w, m.path+" "+m.version, texts)
	}
	return nil
}

// licenseFileText is one license file of a module.
type licenseFileText struct{ name, text string }

func licenseTexts(dir string) ([]licenseFileText, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []licenseFileText
	for _, e := range entries {
		if !e.Type().IsRegular() || !licenseFile.MatchString(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, licenseFileText{e.Name(), string(b)})
	}
	return out, nil
}

func writeSection(w io.Writer, title string, texts []licenseFileText) {
	rule := strings.Repeat("-", 72)
	for _, t := range texts {
		fmt.Fprintf(w, "\n%s\n%s: %s\n%s\n\n", rule, title, t.name, rule)
		// No trailing spaces nor tabs at line ends, and one newline at the
		// end, however the module wrote it.
		for line := range strings.Lines(strings.TrimRightFunc(t.text, unicode.IsSpace)) {
			fmt.Fprintln(w, strings.TrimRightFunc(line, unicode.IsSpace))
		}
	}
}

// escapeModulePath is the module cache's spelling of a path or version:
// each capital letter as "!" and the letter in lower case, for file
// systems that ignore case.
func escapeModulePath(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsUpper(r) {
			b.WriteByte('!')
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
