package packages

import (
	"bytes"
	"compress/gzip"
	"debug/elf"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// The files of the .deb besides the dashboards and rules, with their modes.
var debWant = map[string]string{
	"/etc/default/zpool_exporter":                 "-rw-r--r--",
	"/lib/systemd/system/zpool_exporter.service":  "-rw-r--r--",
	"/usr/bin/zpool_bench":                        "-rwxr-xr-x",
	"/usr/bin/zpool_exporter":                     "-rwxr-xr-x",
	"/usr/share/doc/zpool-exporter/README.md.gz":  "-rw-r--r--",
	"/usr/share/doc/zpool-exporter/changelog.gz":  "-rw-r--r--",
	"/usr/share/doc/zpool-exporter/copyright":     "-rw-r--r--",
	"/usr/share/lintian/overrides/zpool-exporter": "-rw-r--r--",
	"/usr/share/man/man1/zpool_bench.1.gz":        "-rw-r--r--",
	"/usr/share/man/man1/zpool_exporter.1.gz":     "-rw-r--r--",
}

var (
	maintainer = regexp.MustCompile(`^[^<>]+ <[^<>@ ]+@[^<>@ ]+>$`)
	// A line of dpkg-deb --contents: mode, owner, size, date, time, path.
	contentsLine = regexp.MustCompile(`^([-dlrwxst]{10}) (\S+/\S+) +\d+ \S+ \S+ \.(/\S*)$`)
)

// dpkg-deb --field: the package's metadata, with no hard dependency (zpool
// must come from the host's ZFS, matching its kernel module).
func TestDebControl(t *testing.T) {
	dir := dist(t)
	dpkgDeb := repotest.Tool(t, "dpkg-deb", "dpkg")
	for arch, name := range debFile {
		fields := controlFields(run(t, dpkgDeb, "--field", filepath.Join(dir, name)))
		for k, want := range map[string]string{
			"Package":      "zpool-exporter",
			"Version":      packageVersion,
			"Architecture": arch,
			"Section":      "net",
			"Priority":     "optional",
			"Homepage":     "https://github.com/zpool-exporter/zpool_exporter",
			"Recommends":   "zfsutils-linux | zfs-fuse",
			"Suggests":     "prometheus",
		} {
			if fields[k] != want {
				t.Errorf("%s: %s: %q, want %q", name, k, fields[k], want)
			}
		}
		for _, k := range []string{"Depends", "Pre-Depends"} {
			if v, ok := fields[k]; ok {
				t.Errorf("%s: %s: %s; want none: zpool comes from the host's ZFS", name, k, v)
			}
		}
		if !maintainer.MatchString(fields["Maintainer"]) {
			t.Errorf("%s: Maintainer %q, want Name <address>", name, fields["Maintainer"])
		}
		synopsis, long, _ := strings.Cut(fields["Description"], "\n")
		if synopsis != "Prometheus exporter for ZFS pools, vdevs, scrubs and resilvers" || !strings.Contains(long, "systemctl enable --now zpool_exporter") {
			t.Errorf("%s: Description:\n%s", name, fields["Description"])
		}
	}
}

// dpkg-deb --info: the environment file is the one conffile, and the
// maintainer scripts are postinst, prerm and postrm.
func TestDebConffilesAndScripts(t *testing.T) {
	deb := filepath.Join(dist(t), debFile["amd64"])
	dpkgDeb := repotest.Tool(t, "dpkg-deb", "dpkg")
	if got := run(t, dpkgDeb, "--info", deb, "conffiles"); got != "/etc/default/zpool_exporter\n" {
		t.Errorf("conffiles: %q, want /etc/default/zpool_exporter alone", got)
	}
	var members []string
	for line := range strings.Lines(run(t, dpkgDeb, "--info", deb)) {
		// " 519 bytes,    15 lines   *  postinst   #!/bin/sh"
		f := strings.Fields(line)
		if len(f) >= 5 && f[1] == "bytes," {
			members = append(members, slices.DeleteFunc(f[4:], func(s string) bool { return s == "*" })[0])
		}
	}
	slices.Sort(members)
	if want := []string{"conffiles", "control", "md5sums", "postinst", "postrm", "prerm"}; !slices.Equal(members, want) {
		t.Errorf("control members %q, want %q", members, want)
	}
}

// dpkg-deb --contents: every file and directory, owned by root, with its
// mode; the binaries are of the package's architecture and every file has
// the time of the commit.
func TestDebContents(t *testing.T) {
	dir := dist(t)
	dpkgDeb := repotest.Tool(t, "dpkg-deb", "dpkg")
	want := map[string]string{}
	for p, mode := range debWant {
		want[p] = mode
	}
	for _, p := range mixin(t) {
		want[p] = "-rw-r--r--"
	}
	for p := range debWant {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			want[d+"/"] = "drwxr-xr-x"
		}
	}
	for _, p := range mixin(t) {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			want[d+"/"] = "drwxr-xr-x"
		}
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}
	for arch, name := range debFile {
		deb := filepath.Join(dir, name)
		got := map[string]string{}
		for line := range strings.Lines(run(t, dpkgDeb, "--contents", deb)) {
			m := contentsLine.FindStringSubmatch(strings.TrimRight(line, "\n"))
			if m == nil {
				t.Errorf("%s: dpkg-deb --contents line %q", name, line)
				continue
			}
			if m[2] != "root/root" {
				t.Errorf("%s: %s owned by %s", name, m[3], m[2])
			}
			got[m[3]] = m[1]
		}
		for p, mode := range want {
			if got[p] != mode {
				t.Errorf("%s: %s: %q, want %q", name, p, got[p], mode)
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				t.Errorf("%s: unexpected %s", name, p)
			}
		}
		for p, f := range debFiles(t, deb) {
			if !f.modTime.Equal(time.Unix(sourceDate, 0)) {
				t.Errorf("%s: %s has time %s, want SOURCE_DATE_EPOCH", name, p, f.modTime.UTC())
			}
			if strings.HasPrefix(p, "./usr/bin/") && f.mode.IsRegular() {
				e, err := elf.NewFile(bytes.NewReader(f.data))
				if err != nil || e.Machine != machine[arch] {
					t.Errorf("%s: %s is not an %s ELF binary: %v", name, p, machine[arch], err)
				}
			}
		}
	}
}

// The unit is deploy/systemd's, hardening and all, with the binary in
// /usr/bin; the environment file is deploy/systemd's; the man pages are
// well formed; the binary is the one dist.sh stamps.
func TestDebFiles(t *testing.T) {
	files := debFiles(t, filepath.Join(dist(t), debFile["amd64"]))
	unit := string(files["./lib/systemd/system/zpool_exporter.service"].data)
	deployed, err := os.ReadFile(repo("deploy", "systemd", "zpool_exporter.service"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(unit, "\nExecStart=/usr/bin/zpool_exporter $ZPOOL_EXPORTER_ARGS\n") ||
		!strings.Contains(unit, "\nEnvironmentFile=-/etc/default/zpool_exporter\n") {
		t.Errorf("the unit runs another binary or reads another file:\n%s", unit)
	}
	if body(unit) != strings.ReplaceAll(body(string(deployed)), "/usr/local/bin/", "/usr/bin/") {
		t.Errorf("the unit's sections differ from deploy/systemd/zpool_exporter.service's but for ExecStart:\n%s", unit)
	}
	env, err := os.ReadFile(repo("deploy", "systemd", "zpool_exporter.default"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(files["./etc/default/zpool_exporter"].data, env) {
		t.Error("/etc/default/zpool_exporter is not deploy/systemd/zpool_exporter.default")
	}
	for _, cmd := range []string{"zpool_exporter", "zpool_bench"} {
		page := gunzip(t, files["./usr/share/man/man1/"+cmd+".1.gz"].data)
		head := `.TH "` + strings.ToUpper(cmd) + `" 1 2025-12-02 "` + cmd + " " + packageVersion + `" "User Commands"` + "\n.SH \"NAME\"\n" + cmd + ` \- `
		if !strings.HasPrefix(page, head) || !strings.Contains(page, "\n.SH \"OPTIONS\"\n") {
			t.Errorf("man page of %s:\n%s", cmd, page)
		}
	}
	copyright := string(files["./usr/share/doc/zpool-exporter/copyright"].data)
	for _, want := range []string{"github.com/prometheus/client_golang", "Apache License", "The Go standard library"} {
		if !strings.Contains(copyright, want) {
			t.Errorf("the copyright file lacks %q", want)
		}
	}
	// The project's own terms come first: its LICENSE, before any module's.
	license, err := os.ReadFile(repo("LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if own, modules := strings.Index(copyright, strings.TrimSpace(string(license))), strings.Index(copyright, "The Go standard library"); own < 0 || own > modules {
		t.Errorf("the copyright file does not give the project's LICENSE before the modules' (at %d, modules at %d)", own, modules)
	}
	if runtime.GOARCH == "amd64" {
		bin := filepath.Join(t.TempDir(), "zpool_exporter")
		if err := os.WriteFile(bin, files["./usr/bin/zpool_exporter"].data, 0o755); err != nil {
			t.Fatal(err)
		}
		out := run(t, bin, "--version")
		if !strings.Contains(out, "version "+describe+" ") || !strings.Contains(out, "revision: "+revision) {
			t.Errorf("zpool_exporter --version:\n%s", out)
		}
	}
}

// body is a unit from its first section on, without the comments before.
func body(unit string) string {
	i := strings.Index(unit, "\n[Unit]\n")
	if i < 0 {
		return ""
	}
	return unit[i:]
}

func gunzip(t testing.TB, data []byte) string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lintian, pedantic and experimental tags included, finds nothing that
// packaging/debian/lintian-overrides does not explain.
func TestDebLintian(t *testing.T) {
	dir := dist(t)
	lintian := repotest.Tool(t, "lintian", "lintian")
	for _, name := range debFile {
		out := run(t, lintian, "--display-info", "--display-experimental", "--pedantic", "--fail-on", "none", filepath.Join(dir, name))
		for line := range strings.Lines(out) {
			line = strings.TrimRight(line, "\n")
			if len(line) < 3 || !strings.Contains("EWIPX", line[:1]) || line[1:3] != ": " {
				continue
			}
			// Which strings of a binary the spelling check reads across
			// changes from build to build: its override may go unused.
			if strings.Contains(line, "unused-override spelling-error-in-binary") {
				continue
			}
			t.Errorf("%s: %s", name, line)
		}
	}
}
