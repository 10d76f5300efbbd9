package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/goreleaser/nfpm/v2"
	"github.com/goreleaser/nfpm/v2/files"
)

const (
	// Debian and RPM package names take no underscore; the binaries, the
	// unit and its environment file keep the project's name.
	packageName = "zpool-exporter"
	homepage    = "https://github.com/zpool-exporter/zpool_exporter"
	// The dashboards and rules, under the package's name as Debian names
	// a package's data directory.
	dataDir = "/usr/share/" + packageName
)

// layout is what differs between the two formats: where each
// distribution family keeps units and the service's environment file,
// and which of its packages gives zpool.
type layout struct {
	format          string
	unitDir         string
	environmentFile string
	// zpool must come from the host's ZFS, matching its kernel module, so
	// no package is required: the OpenZFS tools are recommended.
	recommends []string
	suggests   []string
	scripts    nfpm.Scripts
}

var (
	debLayout = layout{
		format: "deb",
		// Where Debian 12's own packages install units; merged-/usr
		// systems find it under /usr/lib too.
		unitDir:         "/lib/systemd/system",
		environmentFile: "/etc/default/zpool_exporter",
		// zfs-fuse is the other ZFS of Debian's archive that the exporter
		// reads.
		recommends: []string{"zfsutils-linux | zfs-fuse"},
		suggests:   []string{"prometheus"},
		scripts: nfpm.Scripts{
			PostInstall: "packaging/debian/postinst",
			PreRemove:   "packaging/debian/prerm",
			PostRemove:  "packaging/debian/postrm",
		},
	}
	rpmLayout = layout{
		format:          "rpm",
		unitDir:         "/usr/lib/systemd/system",
		environmentFile: "/etc/sysconfig/zpool_exporter",
		// OpenZFS's own RPMs for RHEL and Fedora.
		recommends: []string{"zfs"},
		scripts: nfpm.Scripts{
			PostInstall: "packaging/rpm/post",
			PreRemove:   "packaging/rpm/preun",
			PostRemove:  "packaging/rpm/postun",
		},
	}
)

func layoutOf(format string) layout {
	if format == "rpm" {
		return rpmLayout
	}
	return debLayout
}

// synopsis is the package's one-line summary.
const synopsis = "Prometheus exporter for ZFS pools, vdevs, scrubs and resilvers"

// description is the package's long description.
func description(l layout) string {
	return `zpool_exporter reads zpool and the kernel's ZFS statistics and exports, for
every pool and every vdev, health states, error counters, scrub and
resilver progress and per-vdev read and write counters, with the same
metric names on OpenZFS, zfs-fuse, FreeBSD and illumos. zpool_bench runs a
benchmark inside a window of the exporter and reports what the pool did.

The service is installed neither enabled nor started: run
systemctl enable --now zpool_exporter. Its flags are in
` + l.environmentFile + `. The Grafana dashboards and the Prometheus
alerting and recording rules are in ` + dataDir + `.`
}

func (b *build) info(format string) *nfpm.Info {
	l := layoutOf(format)
	info := &nfpm.Info{
		Name:     packageName,
		Arch:     b.Arch,
		Platform: "linux",
		// Already in both formats' syntax (packageVersion): taken as it is.
		Version:       b.Version,
		VersionSchema: "none",
		Section:       "net",
		Priority:      "optional",
		Maintainer:    b.Maintainer,
		Description:   synopsis + "\n" + description(l),
		Homepage:      homepage,
		License:       b.License,
		MTime:         b.Date,
	}
	info.Recommends = l.recommends
	info.Suggests = l.suggests
	info.Scripts = nfpm.Scripts{
		PostInstall: b.src(l.scripts.PostInstall),
		PreRemove:   b.src(l.scripts.PreRemove),
		PostRemove:  b.src(l.scripts.PostRemove),
	}
	if format == "rpm" {
		// An RPM has its summary apart, where a .deb's is the first line.
		info.Description = description(l)
		info.RPM.Summary = synopsis
		info.RPM.BuildHost = b.BuildHost
	}
	info.Contents = b.contents(l)
	return info
}

// contents lists every file of the package with its mode, so that neither
// the checkout's modes nor the umask of whoever builds changes them.
func (b *build) contents(l layout) files.Contents {
	file := func(src, dst string, mode os.FileMode) *files.Content {
		return &files.Content{Source: src, Destination: dst, FileInfo: &files.ContentFileInfo{Mode: mode}}
	}
	c := files.Contents{
		file(b.staged(l.format+".service"), l.unitDir+"/zpool_exporter.service", 0o644),
	}
	for _, cmd := range commands {
		c = append(c,
			file(filepath.Join(b.Binaries, cmd.name), "/usr/bin/"+cmd.name, 0o755),
			file(b.staged(cmd.name+".1.gz"), "/usr/share/man/man1/"+cmd.name+".1.gz", 0o644))
	}
	env := file(b.src("deploy", "systemd", "zpool_exporter.default"), l.environmentFile, 0o644)
	env.Type = files.TypeConfig
	if l.format == "rpm" {
		// An edited file stays in place on upgrade; the new one is
		// written beside it as .rpmnew (dpkg asks instead).
		env.Type = files.TypeConfigNoReplace
	}
	c = append(c, env)
	for _, rel := range b.mixinFiles() {
		c = append(c, file(b.src("dashboards", "out", rel), dataDir+"/"+filepath.ToSlash(rel), 0o644))
	}

	doc := "/usr/share/doc/" + packageName
	switch l.format {
	case "deb":
		c = append(c,
			file(b.staged("copyright"), doc+"/copyright", 0o644),
			// The name for a native package, which one made by the project
			// itself is: its version has no Debian revision.
			file(b.staged("changelog.gz"), doc+"/changelog.gz", 0o644),
			file(b.staged("README.md.gz"), doc+"/README.md.gz", 0o644),
			file(b.src("packaging", "debian", "lintian-overrides"), "/usr/share/lintian/overrides/"+packageName, 0o644))
	case "rpm":
		license := file(b.staged("copyright"), "/usr/share/licenses/"+packageName+"/copyright", 0o644)
		license.Type = files.TypeRPMLicense
		readme := file(b.src("README.md"), doc+"/README.md", 0o644)
		readme.Type = files.TypeRPMDoc
		c = append(c, license, readme)
		// An RPM owns only the directories it lists: these go with it when
		// it is erased.
		for _, dir := range []string{dataDir, dataDir + "/dashboards", dataDir + "/rules", doc, "/usr/share/licenses/" + packageName} {
			c = append(c, &files.Content{Destination: dir, Type: files.TypeDir, FileInfo: &files.ContentFileInfo{Mode: 0o755}})
		}
	}
	return c
}

// mixinFiles are the generated dashboards and rules (make mixin), relative
// to dashboards/out.
func (b *build) mixinFiles() []string {
	var rel []string
	for _, pattern := range []string{"dashboards/*.json", "rules/*.yaml"} {
		matches, _ := filepath.Glob(b.src("dashboards", "out", pattern))
		for _, m := range matches {
			r, _ := filepath.Rel(b.src("dashboards", "out"), m)
			rel = append(rel, r)
		}
	}
	slices.Sort(rel)
	return rel
}

// debianChangelog is the one entry a binary package needs: this build, and
// where its changes are told.
func debianChangelog(b *build) []byte {
	return fmt.Appendf(nil, `%s (%s) stable; urgency=medium

  * Built from revision %s of
    %s,
    whose git history tells the changes.

 -- %s  %s
`, packageName, b.Version, b.Revision, homepage, b.Maintainer, b.Date.Format("Mon, 02 Jan 2006 15:04:05 -0700"))
}
