package hostgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// WriteCaptures writes one scenario of the test bed's captures (files
// "<scenario>__*.txt" in srcDirs, each headed by "# command:") into dir,
// which must not exist, laid out as Write lays out a generated host: the
// zpool and zfs outputs named after their command lines, without their headers,
// and the kstats under kstat/. It is the real host beside the generated
// ones.
func WriteCaptures(dir, scenario string, srcDirs ...string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return AddCaptures(dir, scenario, srcDirs...)
}

// AddCaptures adds to a host written by WriteCaptures the outputs of
// another scenario that it lacks: the kstats of the scenario they were
// captured in, beside the zpool outputs of a later one.
func AddCaptures(dir, scenario string, srcDirs ...string) error {
	n := 0
	for _, src := range srcDirs {
		paths, err := filepath.Glob(filepath.Join(src, scenario+"__*.txt"))
		if err != nil {
			return err
		}
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			command, body, err := splitCapture(data)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			var dst string
			switch kstat, isKstat := strings.CutPrefix(command, "cat /proc/spl/kstat/zfs/"); {
			case isKstat:
				dst = filepath.Join(dir, "kstat", filepath.FromSlash(kstat))
			case strings.HasPrefix(command, "zpool "):
				dst = filepath.Join(dir, runner.CaptureFileName(command))
			case strings.HasPrefix(command, "zfs "):
				// zfs's command lines name every property, too long for a
				// file's name: the capture keeps its header, which names
				// the command for the replay, under the capture's own name.
				dst, body = filepath.Join(dir, strings.TrimPrefix(filepath.Base(p), scenario+"__")), data
			default:
				continue
			}
			if _, err := os.Stat(dst); err == nil {
				continue
			}
			if err := writeFile(dst, string(body)); err != nil {
				return err
			}
			n++
		}
	}
	if n == 0 {
		return fmt.Errorf("no capture of scenario %s in %v", scenario, srcDirs)
	}
	return nil
}

// splitCapture reads a capture's header ("# key: value" lines ended by
// "# ---") and returns its command and output. Only captures of commands
// that succeeded are taken.
func splitCapture(data []byte) (command string, body []byte, err error) {
	rest := data
	for len(rest) > 0 {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		rest = after
		if string(line) == "# ---" {
			if command == "" {
				return "", nil, fmt.Errorf("no command in its header")
			}
			return command, rest, nil
		}
		key, value, ok := strings.Cut(strings.TrimPrefix(string(line), "# "), ": ")
		switch {
		case !ok || !strings.HasPrefix(string(line), "# "):
			return "", nil, fmt.Errorf("no header (# command: ...)")
		case key == "command":
			command = value
		case key == "exit" && value != "0":
			return "", nil, fmt.Errorf("%s exited %s", command, value)
		}
	}
	return "", nil, fmt.Errorf("header without its end (# ---)")
}
