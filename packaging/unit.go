package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
)

var (
	execStart       = regexp.MustCompile(`(?m)^ExecStart=/usr/local/bin/zpool_exporter( |$)`)
	environmentFile = regexp.MustCompile(`(?m)^EnvironmentFile=-/etc/default/zpool_exporter$`)
)

// packagedUnit is deploy/systemd's unit as the package installs it: the
// binary in /usr/bin, where a package puts it (the unit of deploy/ is for
// a binary installed by hand in /usr/local/bin), the environment file where
// the distribution keeps it, and a first comment that tells how to turn
// the service on instead of how to install it by hand. The hardening is
// the same, line for line.
func packagedUnit(unit []byte, envFile string) ([]byte, error) {
	if n := len(execStart.FindAll(unit, -1)); n != 1 {
		return nil, fmt.Errorf("want one ExecStart=/usr/local/bin/zpool_exporter line, found %d", n)
	}
	if n := len(environmentFile.FindAll(unit, -1)); n != 1 {
		return nil, fmt.Errorf("want one EnvironmentFile=-/etc/default/zpool_exporter line, found %d", n)
	}
	// The first paragraph of comments, up to a line of "#" alone, is how
	// to install the unit by hand.
	end := bytes.Index(unit, []byte("\n#\n"))
	if end < 0 || !bytes.HasPrefix(unit, []byte("#")) || !bytes.Contains(unit[:end], []byte("/usr/local/bin")) {
		return nil, errors.New("its first comment paragraph is not the instructions to install it in /usr/local/bin")
	}
	header := fmt.Sprintf(`# zpool_exporter as a systemd service, installed by the %s package,
# which neither enables nor starts it. To run it, now and at every boot:
#   systemctl enable --now zpool_exporter
# Its flags are ZPOOL_EXPORTER_ARGS in %s.`, packageName, envFile)
	out := append([]byte(header), unit[end:]...)
	out = execStart.ReplaceAll(out, []byte("ExecStart=/usr/bin/zpool_exporter$1"))
	return environmentFile.ReplaceAllLiteral(out, []byte("EnvironmentFile=-"+envFile)), nil
}
