package main

import (
	"os"
	"strings"
	"testing"
)

func TestPackagedUnit(t *testing.T) {
	unit, err := os.ReadFile("../deploy/systemd/zpool_exporter.service")
	if err != nil {
		t.Fatal(err)
	}
	got, err := packagedUnit(unit, "/etc/sysconfig/zpool_exporter")
	if err != nil {
		t.Fatal(err)
	}
	text := string(got)
	for _, want := range []string{
		"\nExecStart=/usr/bin/zpool_exporter $ZPOOL_EXPORTER_ARGS\n",
		"\nEnvironmentFile=-/etc/sysconfig/zpool_exporter\n",
		"#   systemctl enable --now zpool_exporter\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the packaged unit lacks %q", want)
		}
	}
	if strings.Contains(text, "/usr/local/bin") || strings.Contains(text, "/etc/default/") {
		t.Errorf("the packaged unit still names /usr/local/bin or /etc/default:\n%s", text)
	}
	// Past the first comment, the lines are the unit's own but those two.
	_, ownRest, _ := strings.Cut(string(unit), "\n#\n")
	_, gotRest, _ := strings.Cut(text, "\n#\n")
	ownLines, gotLines := strings.Split(ownRest, "\n"), strings.Split(gotRest, "\n")
	if len(ownLines) != len(gotLines) {
		t.Fatalf("%d lines past the first comment, want %d", len(gotLines), len(ownLines))
	}
	changed := 0
	for i := range ownLines {
		if ownLines[i] != gotLines[i] {
			changed++
		}
	}
	if changed != 2 {
		t.Errorf("%d lines changed past the first comment, want 2 (ExecStart, EnvironmentFile)", changed)
	}
}

func TestPackagedUnitRefusesAnotherUnit(t *testing.T) {
	for name, unit := range map[string]string{
		"no ExecStart":       "# install in /usr/local/bin\n#\n[Service]\nEnvironmentFile=-/etc/default/zpool_exporter\n",
		"two ExecStart":      "# /usr/local/bin\n#\n[Service]\nEnvironmentFile=-/etc/default/zpool_exporter\nExecStart=/usr/local/bin/zpool_exporter\nExecStart=/usr/local/bin/zpool_exporter\n",
		"no EnvironmentFile": "# /usr/local/bin\n#\n[Service]\nExecStart=/usr/local/bin/zpool_exporter\n",
		"no install comment": "[Service]\nEnvironmentFile=-/etc/default/zpool_exporter\nExecStart=/usr/local/bin/zpool_exporter\n",
	} {
		if _, err := packagedUnit([]byte(unit), "/etc/default/zpool_exporter"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
