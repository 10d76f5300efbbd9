package packages

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// dpkg installs the .deb into a throwaway root, its scripts running outside
// a chroot with DPKG_ROOT set (the root has no shell), as Debian's
// bootstrap tools do; it enables nothing, and a purge takes away the
// environment file and the links of a systemctl enable.
func TestDebInstallsIntoRoot(t *testing.T) {
	needRoot(t, "installing the .deb into a throwaway root")
	deb := filepath.Join(dist(t), debFile["amd64"])
	dpkg := repotest.Tool(t, "dpkg", "dpkg")
	dpkgQuery := repotest.Tool(t, "dpkg-query", "dpkg")
	r := t.TempDir()
	for _, d := range []string{"var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers"} {
		if err := os.MkdirAll(filepath.Join(r, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(r, "var/lib/dpkg/status"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dpkgIn := func(args ...string) string {
		t.Helper()
		return run(t, dpkg, append([]string{"--root=" + r, "--force-script-chrootless", "--log=/dev/null"}, args...)...)
	}
	dpkgIn("-i", deb)
	status := run(t, dpkgQuery, "--admindir="+filepath.Join(r, "var/lib/dpkg"), "-W", "-f", "${Status} ${Version}\n${Conffiles}\n", "zpool-exporter")
	if !strings.HasPrefix(status, "install ok installed "+packageVersion+"\n /etc/default/zpool_exporter ") {
		t.Errorf("dpkg-query:\n%s", status)
	}
	for _, p := range []string{"usr/bin/zpool_exporter", "lib/systemd/system/zpool_exporter.service", "etc/default/zpool_exporter"} {
		if _, err := os.Stat(filepath.Join(r, p)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Lstat(filepath.Join(r, "etc/systemd")); !os.IsNotExist(err) {
		t.Errorf("the install made /etc/systemd (an enabled unit?): %v", err)
	}

	// What systemctl enable zpool_exporter makes, which a purge undoes.
	wants := filepath.Join(r, "etc/systemd/system/multi-user.target.wants")
	if err := os.MkdirAll(wants, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/lib/systemd/system/zpool_exporter.service", filepath.Join(wants, "zpool_exporter.service")); err != nil {
		t.Fatal(err)
	}
	dpkgIn("--purge", "zpool-exporter")
	for _, p := range []string{"usr/bin/zpool_exporter", "etc/default/zpool_exporter", "usr/share/zpool-exporter", filepath.Join(wants, "zpool_exporter.service")} {
		if !filepath.IsAbs(p) {
			p = filepath.Join(r, p)
		}
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s left after the purge: %v", p, err)
		}
	}
}

// The maintainer scripts of both packages, run as on a host where systemd
// runs, with systemctl and Debian's helpers replaced by stand-ins that
// record their arguments: an install tells systemd of the unit and does
// nothing more, an upgrade restarts only an exporter that runs, a removal
// stops it.
func TestMaintainerScriptsUnderSystemd(t *testing.T) {
	needRoot(t, "a mount namespace with /run/systemd/system")
	dir := dist(t)
	unshare := repotest.Tool(t, "unshare", "util-linux")
	sh := repotest.Tool(t, "sh", "dash")
	dpkgDeb := repotest.Tool(t, "dpkg-deb", "dpkg")
	rpm := repotest.Tool(t, "rpm", "rpm")

	scripts := t.TempDir()
	run(t, dpkgDeb, "--control", filepath.Join(dir, debFile["amd64"]), filepath.Join(scripts, "deb"))
	rpmPath := filepath.Join(dir, rpmFile["amd64"])
	for _, s := range []string{"POSTIN", "PREUN", "POSTUN"} {
		text := run(t, rpm, "-qp", "--qf", "%{"+s+"}", rpmPath)
		if err := os.WriteFile(filepath.Join(scripts, strings.ToLower(s)), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stubs := t.TempDir()
	for _, name := range []string{"systemctl", "deb-systemd-invoke", "deb-systemd-helper"} {
		stub := "#!/bin/sh\necho \"" + name + " $*\" >>\"$ZPE_CALLS\"\n"
		if err := os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	daemonReload := "systemctl --system daemon-reload"
	for _, tc := range []struct {
		script string
		args   []string
		want   []string
	}{
		{"deb/postinst", []string{"configure"}, []string{daemonReload}},
		{"deb/postinst", []string{"configure", "1.2.2"}, []string{daemonReload, "deb-systemd-invoke try-restart zpool_exporter.service"}},
		{"deb/postinst", []string{"abort-upgrade", "1.2.4"}, nil},
		{"deb/prerm", []string{"upgrade", "1.2.4"}, nil},
		{"deb/prerm", []string{"remove"}, []string{"deb-systemd-invoke stop zpool_exporter.service"}},
		{"deb/postrm", []string{"upgrade", "1.2.4"}, nil},
		{"deb/postrm", []string{"remove"}, []string{daemonReload}},
		{"postin", []string{"1"}, []string{"systemctl daemon-reload"}},
		{"postin", []string{"2"}, []string{"systemctl daemon-reload"}},
		{"preun", []string{"1"}, nil},
		{"preun", []string{"0"}, []string{"systemctl --no-reload disable --now zpool_exporter.service"}},
		{"postun", []string{"1"}, []string{"systemctl daemon-reload", "systemctl try-restart zpool_exporter.service"}},
		{"postun", []string{"0"}, []string{"systemctl daemon-reload"}},
	} {
		calls := filepath.Join(t.TempDir(), "calls")
		// A tmpfs on /run in a mount namespace of its own: the script sees
		// /run/systemd/system, the host does not.
		cmd := exec.Command(unshare, append([]string{"--mount", "--", sh, "-c",
			`mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && exec "$@"`, "sh", sh, filepath.Join(scripts, tc.script)}, tc.args...)...)
		cmd.Env = append(os.Environ(), "PATH="+stubs+":"+os.Getenv("PATH"), "ZPE_CALLS="+calls, "DPKG_ROOT=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", tc.script, strings.Join(tc.args, " "), err, out)
			continue
		}
		var got []string
		if b, err := os.ReadFile(calls); err == nil {
			got = strings.Split(strings.TrimSpace(string(b)), "\n")
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s ran %q, want %q", tc.script, strings.Join(tc.args, " "), got, tc.want)
		}
	}
}
