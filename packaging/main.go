// Command packaging builds the .deb and .rpm of zpool_exporter for one
// Linux architecture, from the binaries scripts/dist.sh built for it, with
// nfpm. make dist runs it; it prints the names of the packages it wrote.
//
// It is a module of its own so that nfpm and everything it brings stay out
// of the exporter's go.mod. It needs nothing of the exporter's code: it
// packages files, and reads the binaries' build information for the
// copyright file.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	var (
		b        build
		describe = flag.String("version", "", "the version stamped into the binaries (git describe --tags --always --dirty)")
		epoch    = flag.String("date", "", "SOURCE_DATE_EPOCH: the time of every file, and the changelog's date")
		formats  = flag.String("formats", "deb rpm", "the package formats to write, space separated")
	)
	flag.StringVar(&b.Revision, "revision", "", "the git commit the binaries were built from")
	flag.StringVar(&b.Arch, "arch", "", "the GOARCH of the binaries: amd64 or arm64")
	flag.StringVar(&b.Binaries, "binaries", "", "the directory holding zpool_exporter and zpool_bench for -arch")
	flag.StringVar(&b.HostBinaries, "host-binaries", "", "a directory holding zpool_exporter and zpool_bench built for this machine, run for their man pages")
	flag.StringVar(&b.Source, "source", ".", "the top of the checkout: deploy/, dashboards/out/, README.md, packaging/")
	flag.StringVar(&b.Out, "out", "dist", "the directory to write the packages into")
	flag.StringVar(&b.Maintainer, "maintainer", "", "the packages' maintainer, as Name <address>")
	flag.StringVar(&b.License, "license", "", "the SPDX license expression of the RPM's License tag")
	flag.StringVar(&b.BuildHost, "build-host", "", "the host name in the RPM's header")
	flag.StringVar(&b.ModCache, "modcache", "", "GOMODCACHE, where the license files of the modules in the binaries are")
	flag.StringVar(&b.GoRoot, "goroot", "", "GOROOT of the Go that built the binaries, for its license")
	flag.Parse()
	b.Formats = strings.Fields(*formats)

	if err := run(&b, *describe, *epoch); err != nil {
		fmt.Fprintln(os.Stderr, "packaging:", err)
		os.Exit(1)
	}
}

func run(b *build, describe, epoch string) error {
	for name, v := range map[string]string{
		"-version": describe, "-date": epoch, "-revision": b.Revision, "-arch": b.Arch, "-binaries": b.Binaries,
		"-host-binaries": b.HostBinaries, "-maintainer": b.Maintainer, "-build-host": b.BuildHost,
		"-modcache": b.ModCache, "-goroot": b.GoRoot,
	} {
		if v == "" {
			return fmt.Errorf("%s is required", name)
		}
	}
	if len(b.Formats) == 0 {
		return fmt.Errorf("-formats names no format")
	}
	for _, f := range b.Formats {
		if f != "deb" && f != "rpm" {
			return fmt.Errorf("-formats: %q is neither deb nor rpm", f)
		}
	}
	seconds, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return fmt.Errorf("-date %q: want seconds since 1970", epoch)
	}
	b.Date = time.Unix(seconds, 0).UTC()
	if b.Version, err = packageVersion(describe, b.Date); err != nil {
		return err
	}
	written, err := b.packages()
	for _, p := range written {
		fmt.Println(p)
	}
	return err
}
