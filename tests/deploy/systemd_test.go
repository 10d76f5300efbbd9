package deploy

import (
	"bufio"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

var unitFile = repo("deploy", "systemd", "zpool_exporter.service")

// unitSettings returns the [Service] settings of a unit, each key with its
// values in order.
func unitSettings(t testing.TB, text string) map[string][]string {
	t.Helper()
	settings := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("unit line %q", line)
			}
			settings[section+"."+k] = append(settings[section+"."+k], v)
		}
	}
	return settings
}

// verifiableUnit writes the unit with ExecStart on the built exporter
// (systemd-analyze verify wants the program to exist) and returns its
// path.
func verifiableUnit(t testing.TB, text string) string {
	t.Helper()
	bin := exporterBinary(t)
	exec := regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/zpool_exporter `)
	if !exec.MatchString(text) {
		t.Fatal("the unit's ExecStart is not /usr/local/bin/zpool_exporter")
	}
	p := filepath.Join(t.TempDir(), "zpool_exporter.service")
	writeFile(t, p, exec.ReplaceAllLiteralString(text, "ExecStart="+bin+" "))
	return p
}

// verify runs systemd-analyze verify and returns what it says about the
// unit.
func verify(t testing.TB, unit string) []string {
	t.Helper()
	sa := repotest.Tool(t, "systemd-analyze", "systemd")
	out, err := run(t, "", sa, "verify", "--man=no", unit)
	var about []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, filepath.Base(unit)) {
			about = append(about, strings.TrimSpace(line))
		}
	}
	if err != nil && len(about) == 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
	return about
}

// systemd-analyze verify has nothing to say about the unit, nor about it
// with its commented-out settings turned on; it does about a broken copy.
func TestSystemdUnitVerifies(t *testing.T) {
	text := readFile(t, unitFile)
	if got := verify(t, verifiableUnit(t, text)); len(got) != 0 {
		t.Errorf("systemd-analyze verify:\n%s", strings.Join(got, "\n"))
	}
	on := uncomment(text)
	if on == text {
		t.Fatal("the unit has no commented-out settings")
	}
	if got := verify(t, verifiableUnit(t, on)); len(got) != 0 {
		t.Errorf("systemd-analyze verify, commented-out settings on:\n%s", strings.Join(got, "\n"))
	}
	broken := strings.Replace(text, "ProtectSystem=strict", "ProtectSystem=strict\nProtectSystme=full", 1)
	if got := verify(t, verifiableUnit(t, broken)); len(got) == 0 {
		t.Error("systemd-analyze verify said nothing about an unknown setting")
	}
}

// systemd's own rating of the sandbox.
func TestSystemdUnitExposure(t *testing.T) {
	sa := repotest.Tool(t, "systemd-analyze", "systemd")
	unit := verifiableUnit(t, readFile(t, unitFile))
	out, err := run(t, "", sa, "security", "--offline=true", unit)
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for \S+: (\d+\.\d+) (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no overall exposure in:\n%s", out)
	}
	level, _ := strconv.ParseFloat(m[1], 64)
	const limit = 2.5
	if level > limit {
		t.Errorf("exposure %s %s, above %.1f:\n%s", m[1], m[2], limit, out)
	}
}

// The hardening stops short of what breaks zpool, and the unit reads the
// flags from the defaults file that docs/install.md installs.
func TestSystemdUnitSettings(t *testing.T) {
	s := unitSettings(t, readFile(t, unitFile))
	last := func(k string) string {
		v := s["Service."+k]
		if len(v) == 0 {
			return ""
		}
		return v[len(v)-1]
	}
	for k, want := range map[string]string{
		"CapabilityBoundingSet": "",
		"NoNewPrivileges":       "yes",
		"ProtectSystem":         "strict",
		"DevicePolicy":          "closed",
		"PrivateDevices":        "no",
		"ProcSubset":            "all",
		"ProtectProc":           "default",
		"EnvironmentFile":       "-/etc/default/zpool_exporter",
		"ExecStart":             "/usr/local/bin/zpool_exporter $ZPOOL_EXPORTER_ARGS",
	} {
		if _, ok := s["Service."+k]; !ok {
			t.Errorf("no %s=", k)
		} else if got := last(k); got != want {
			t.Errorf("%s=%s, want %s", k, got, want)
		}
	}
	// zpool opens /dev/zfs: the device policy must let it through.
	if !slices.ContainsFunc(s["Service.DeviceAllow"], func(v string) bool { return strings.HasPrefix(v, "/dev/zfs ") && strings.Contains(v, "rw") }) {
		t.Errorf("DeviceAllow %q does not allow /dev/zfs rw", s["Service.DeviceAllow"])
	}
	// In a user namespace ZFS shows no pool; without a user root cannot
	// open root's /dev/zfs.
	for _, k := range []string{"PrivateUsers", "DynamicUser", "User"} {
		if v := last(k); v != "" && v != "no" && v != "root" {
			t.Errorf("%s=%s: zpool would see no pool, or no /dev/zfs", k, v)
		}
	}
	if families := strings.Fields(last("RestrictAddressFamilies")); !slices.Contains(families, "AF_UNIX") {
		t.Errorf("RestrictAddressFamilies=%v: zfs-fuse's zpool needs AF_UNIX", families)
	}
	if !slices.Contains(s["Unit.After"], "network-online.target zfs-import.target zfs.target") {
		t.Errorf("After=%q: start after the pools are imported", s["Unit.After"])
	}
	if last("Restart") == "" {
		t.Error("no Restart=")
	}
	if got := s["Install.WantedBy"]; !slices.Equal(got, []string{"multi-user.target"}) {
		t.Errorf("WantedBy=%v", got)
	}
}
