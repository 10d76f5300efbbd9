package packages

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// The files of the .rpm besides the dashboards and rules: mode, and rpm's
// flags (c config, n noreplace, d doc, l license).
var rpmWant = map[string]string{
	"/etc/sysconfig/zpool_exporter":                  "-rw-r--r-- cn",
	"/usr/bin/zpool_bench":                           "-rwxr-xr-x ",
	"/usr/bin/zpool_exporter":                        "-rwxr-xr-x ",
	"/usr/lib/systemd/system/zpool_exporter.service": "-rw-r--r-- ",
	"/usr/share/doc/zpool-exporter":                  "drwxr-xr-x ",
	"/usr/share/doc/zpool-exporter/README.md":        "-rw-r--r-- d",
	"/usr/share/licenses/zpool-exporter":             "drwxr-xr-x ",
	"/usr/share/licenses/zpool-exporter/copyright":   "-rw-r--r-- l",
	"/usr/share/man/man1/zpool_bench.1.gz":           "-rw-r--r-- ",
	"/usr/share/man/man1/zpool_exporter.1.gz":        "-rw-r--r-- ",
	"/usr/share/zpool-exporter":                      "drwxr-xr-x ",
	"/usr/share/zpool-exporter/dashboards":           "drwxr-xr-x ",
	"/usr/share/zpool-exporter/rules":                "drwxr-xr-x ",
}

// rpm -qip: the package's metadata; only rpm's own features are required,
// OpenZFS is recommended.
func TestRPMInfo(t *testing.T) {
	dir := dist(t)
	rpm := repotest.Tool(t, "rpm", "rpm")
	field := regexp.MustCompile(`(?m)^([A-Z][A-Za-z ]*?)\s*: (.*)$`)
	for arch, name := range rpmFile {
		p := filepath.Join(dir, name)
		info := map[string]string{}
		for _, m := range field.FindAllStringSubmatch(run(t, rpm, "-qip", p), -1) {
			info[m[1]] = m[2]
		}
		for k, want := range map[string]string{
			"Name":         "zpool-exporter",
			"Version":      packageVersion,
			"Release":      "1",
			"Architecture": map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[arch],
			"Summary":      "Prometheus exporter for ZFS pools, vdevs, scrubs and resilvers",
			"URL":          "https://github.com/zpool-exporter/zpool_exporter",
			"Build Host":   buildHost,
			"License":      "Apache-2.0",
		} {
			if info[k] != want {
				t.Errorf("%s: %s: %q, want %q", name, k, info[k], want)
			}
		}
		if !maintainer.MatchString(info["Packager"]) {
			t.Errorf("%s: Packager %q, want Name <address>", name, info["Packager"])
		}
		if got := run(t, rpm, "-qp", "--qf", "%{BUILDTIME}", p); got != fmt.Sprint(sourceDate) {
			t.Errorf("%s: build time %s, want SOURCE_DATE_EPOCH", name, got)
		}
		if got := run(t, rpm, "-qp", "--recommends", p); got != "zfs\n" {
			t.Errorf("%s: recommends %q, want zfs", name, got)
		}
		for req := range strings.Lines(run(t, rpm, "-qp", "--requires", p)) {
			if !strings.HasPrefix(req, "rpmlib(") {
				t.Errorf("%s: requires %s", name, strings.TrimSpace(req))
			}
		}
	}
}

// rpm -qlp lists every file and the directories the package owns; each has
// its mode, root as owner and, for the environment file, the readme and
// the copyright, the right flags.
func TestRPMFiles(t *testing.T) {
	dir := dist(t)
	rpm := repotest.Tool(t, "rpm", "rpm")
	want := map[string]string{}
	for p, v := range rpmWant {
		want[p] = v
	}
	for _, p := range mixin(t) {
		want[p] = "-rw-r--r-- "
	}
	var wantList []string
	for p := range want {
		wantList = append(wantList, p)
	}
	slices.Sort(wantList)
	for _, name := range rpmFile {
		p := filepath.Join(dir, name)
		if got := strings.Fields(run(t, rpm, "-qlp", p)); !slices.Equal(got, wantList) {
			t.Errorf("%s: rpm -qlp:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(wantList, "\n"))
		}
		for line := range strings.Lines(run(t, rpm, "-qp", "--qf", `[%{FILEMODES:perms} %{FILEUSERNAME}:%{FILEGROUPNAME} %{FILEFLAGS:fflags} %{FILENAMES}\n]`, p)) {
			f := strings.Fields(line)
			if len(f) == 3 { // no flags
				f = []string{f[0], f[1], "", f[2]}
			}
			if len(f) != 4 {
				t.Errorf("%s: line %q", name, line)
				continue
			}
			if f[1] != "root:root" {
				t.Errorf("%s: %s owned by %s", name, f[3], f[1])
			}
			if got := f[0] + " " + f[2]; got != want[f[3]] {
				t.Errorf("%s: %s: %q, want %q", name, f[3], got, want[f[3]])
			}
		}
		if got := run(t, rpm, "-qp", "--configfiles", p); got != "/etc/sysconfig/zpool_exporter\n" {
			t.Errorf("%s: config files %q", name, got)
		}
	}
}

// rpm installs the package into a throwaway root and erases it again,
// directories included; the unit reads the environment file where RHEL
// keeps it. The scriptlets are left out here (they run in
// TestMaintainerScriptsUnderSystemd): rpm would run them chrooted in a
// root with no shell.
func TestRPMInstallsIntoRoot(t *testing.T) {
	needRoot(t, "installing the .rpm into a throwaway root")
	rpmPath := filepath.Join(dist(t), rpmFile["amd64"])
	rpm := repotest.Tool(t, "rpm", "rpm")
	r := t.TempDir()
	run(t, rpm, "--root", r, "--initdb")
	run(t, rpm, "--root", r, "-i", "--nodeps", "--noscripts", "--nosignature", "--ignorearch", rpmPath)
	unit, err := os.ReadFile(filepath.Join(r, "usr/lib/systemd/system/zpool_exporter.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(unit), "\nEnvironmentFile=-/etc/sysconfig/zpool_exporter\n") || !strings.Contains(string(unit), "\nExecStart=/usr/bin/zpool_exporter ") {
		t.Errorf("the RPM's unit:\n%s", unit)
	}
	for _, p := range []string{"etc/sysconfig/zpool_exporter", "usr/bin/zpool_exporter", "usr/share/zpool-exporter/rules/zfs-alerts.yaml"} {
		if _, err := os.Stat(filepath.Join(r, p)); err != nil {
			t.Error(err)
		}
	}
	run(t, rpm, "--root", r, "-e", "--noscripts", "zpool-exporter")
	for _, p := range []string{"usr/bin/zpool_exporter", "usr/share/zpool-exporter", "usr/share/licenses/zpool-exporter"} {
		if _, err := os.Lstat(filepath.Join(r, p)); !os.IsNotExist(err) {
			t.Errorf("%s left after rpm -e: %v", p, err)
		}
	}
}
