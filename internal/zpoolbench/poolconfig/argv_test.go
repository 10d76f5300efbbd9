//go:build unix

package poolconfig

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A pool's name comes from zpool's output and may start with "-": every
// command that takes it (zpool get, zdb -C, zfs get) gets it after "--",
// which comes before the first operand (getopt without glibc's reordering
// stops there).
func TestPoolNameNeverReadAsOption(t *testing.T) {
	dir := t.TempDir()
	status := "  pool: -o\n state: ONLINE\nconfig:\n\n\tNAME        STATE     READ WRITE CKSUM\n\t-o          ONLINE       0     0     0\n\t  sda       ONLINE       0     0     0\n\nerrors: No known data errors\n"
	if err := os.WriteFile(filepath.Join(dir, "status.txt"), []byte(status), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each stand-in appends its argv to $D/argv, one call a line, each
	// argument ended by \x1f. zdb and zfs get fail, so that every form of
	// zfs get is tried.
	standIns := map[string]string{
		"zpool": `case "$1 $2" in
"status -j") exit 2 ;;
"status "*) cat "$D/status.txt" ;;
"get -Hp") [ $# -eq 3 ] && printf -- '-o\tsize\t100\t-\n' && exit 0; exit 2 ;;
*) exit 2 ;;
esac`,
		"zfs": "exit 2",
		"zdb": "exit 1",
	}
	for name, script := range standIns {
		body := "#!/bin/sh\nD=\"$(dirname \"$0\")\"\n{ printf '%s\\037' " + name + " \"$@\"; echo; } >>\"$D/argv\"\n" + script + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := Reader{
		Zpool: filepath.Join(dir, "zpool"), Zfs: filepath.Join(dir, "zfs"), Zdb: filepath.Join(dir, "zdb"),
		SysRoot: t.TempDir(), ProcRoot: t.TempDir(), OS: "linux", Timeout: 10 * time.Second,
	}
	cfg, err := Read(context.Background(), r, "-o")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Pool != "-o" || cfg.Layout != "stripe of 1" {
		t.Errorf("Read(-o) = %+v, want the stand-in's pool of one disk", cfg)
	}

	data, err := os.ReadFile(filepath.Join(dir, "argv"))
	if err != nil {
		t.Fatal(err)
	}
	var named [][]string
	for line := range strings.Lines(string(data)) {
		args := strings.Split(strings.TrimSuffix(line, "\n"), "\x1f")
		if args = args[:len(args)-1]; slices.Contains(args, "-o") {
			named = append(named, args)
		}
	}
	want := [][]string{
		{"zpool", "get", "-Hp", "--", "ashift", "-o", "all-vdevs"},
		{"zdb", "-C", "--", "-o"},
		{"zfs", "get", "-Hp", "--", "compression,recordsize", "-o"},
		{"zfs", "get", "-H", "--", "compression,recordsize", "-o"},
		{"zfs", "get", "--", "compression,recordsize", "-o"},
	}
	if !slices.EqualFunc(named, want, slices.Equal) {
		t.Errorf("commands naming the pool:\n%q\nwant:\n%q", named, want)
	}
}
