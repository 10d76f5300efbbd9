package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

// build is one run: the packages of one architecture.
type build struct {
	Version  string    // the package version (packageVersion)
	Revision string    // git commit
	Date     time.Time // every file's time, and the changelog's
	Arch     string    // GOARCH
	Formats  []string  // deb, rpm

	Binaries     string // zpool_exporter and zpool_bench for Arch
	HostBinaries string // the same, runnable here, for --help-man
	Source       string // the top of the checkout
	Out          string

	Maintainer string
	License    string // SPDX, for the RPM header
	BuildHost  string
	ModCache   string
	GoRoot     string

	stage string // generated files: unit, man pages, copyright, changelog
}

// commands are the binaries the packages install, with the one-line
// summary of each that their man pages' NAME section gives.
var commands = []struct{ name, summary string }{
	{"zpool_exporter", "Prometheus exporter for ZFS pools, vdevs, scrubs and resilvers"},
	{"zpool_bench", "run a benchmark in a window of zpool_exporter and report what the pool did"},
}

func (b *build) packages() ([]string, error) {
	stage, err := os.MkdirTemp("", "zpool-exporter-packaging-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(stage)
	b.stage = stage
	if err := b.generate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(b.Out, 0o755); err != nil {
		return nil, err
	}
	var written []string
	for _, format := range b.Formats {
		p, err := b.write(format)
		if err != nil {
			return written, fmt.Errorf("%s: %w", format, err)
		}
		written = append(written, p)
	}
	return written, nil
}

// generate writes what the packages hold that is not a file of the
// checkout as it is.
func (b *build) generate() error {
	unit, err := os.ReadFile(b.src("deploy", "systemd", "zpool_exporter.service"))
	if err != nil {
		return err
	}
	for _, l := range []layout{debLayout, rpmLayout} {
		packaged, err := packagedUnit(unit, l.environmentFile)
		if err != nil {
			return fmt.Errorf("deploy/systemd/zpool_exporter.service: %w", err)
		}
		if err := os.WriteFile(b.staged(l.format+".service"), packaged, 0o644); err != nil {
			return err
		}
	}
	for _, c := range commands {
		out, err := exec.Command(filepath.Join(b.HostBinaries, c.name), "--help-man").Output()
		if err != nil {
			return fmt.Errorf("%s --help-man: %w", c.name, err)
		}
		page, err := manPage(out, c.name, c.summary, b.Version, b.Date)
		if err != nil {
			return fmt.Errorf("%s --help-man: %w", c.name, err)
		}
		if err := writeGzip(b.staged(c.name+".1.gz"), page); err != nil {
			return err
		}
	}
	if len(b.mixinFiles()) == 0 {
		return errors.New("no dashboards nor rules in dashboards/out (make mixin writes them)")
	}
	readme, err := os.ReadFile(b.src("README.md"))
	if err != nil {
		return err
	}
	if err := writeGzip(b.staged("README.md.gz"), readme); err != nil {
		return err
	}
	var bins []string
	for _, c := range commands {
		bins = append(bins, filepath.Join(b.Binaries, c.name))
	}
	var text bytes.Buffer
	if err := writeCopyright(&text, b.Source, bins, b.ModCache, b.GoRoot); err != nil {
		return err
	}
	if err := os.WriteFile(b.staged("copyright"), text.Bytes(), 0o644); err != nil {
		return err
	}
	return writeGzip(b.staged("changelog.gz"), debianChangelog(b))
}

func (b *build) write(format string) (string, error) {
	info := b.info(format)
	packager, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	info = nfpm.WithDefaults(info)
	path := filepath.Join(b.Out, packager.ConventionalFileName(info))
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := packager.Package(info, f); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	return path, f.Close()
}

func (b *build) src(parts ...string) string {
	return filepath.Join(append([]string{b.Source}, parts...)...)
}

func (b *build) staged(name string) string { return filepath.Join(b.stage, name) }

// writeGzip compresses as gzip -9n does, with no name nor time in the
// header, so that the file depends on its contents alone.
func writeGzip(path string, data []byte) error {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	if _, err := zw.Write(data); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
