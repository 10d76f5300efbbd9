package benchhost

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// Write writes the host of s into dir, which must not exist yet: one
// capture per zpool command line, named as the replay decodes it and
// without a header, then kstat/, proc/, dev/ and sys/.
func Write(dir string, s Spec) error {
	h, err := writeZpool(dir, s)
	if err != nil {
		return err
	}
	for name, text := range kstatFiles(h) {
		if err := writeFile(filepath.Join(dir, "kstat", name), text); err != nil {
			return err
		}
	}
	if err := writeWith(filepath.Join(dir, "proc", "diskstats"), func(w *bufio.Writer) { writeDiskstats(w, h) }); err != nil {
		return err
	}
	if err := writeDeviceTree(dir, h); err != nil {
		return err
	}
	return bootTimes(filepath.Join(dir, "dev"))
}

// WriteZpool writes the zpool captures of the host of s alone into dir,
// which must not exist yet.
func WriteZpool(dir string, s Spec) error {
	_, err := writeZpool(dir, s)
	return err
}

func writeZpool(dir string, s Spec) (host, error) {
	if err := s.check(); err != nil {
		return host{}, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return host{}, err
	}
	h := layout(s)
	captures := []output{
		{"zpool status -j --json-int", func(w *bufio.Writer) { writeStatusJSON(w, h) }},
		{"zpool status -s -p", func(w *bufio.Writer) { writeStatusText(w, h, true) }},
		{"zpool status -p", func(w *bufio.Writer) { writeStatusText(w, h, false) }},
		{"zpool status", func(w *bufio.Writer) { writeStatusText(w, h, false) }},
		{"zpool get -Hp all", func(w *bufio.Writer) { writePoolProperties(w, h) }},
	}
	for _, p := range h.pools {
		// As recorded, without the "--" that the exporter now puts before
		// a pool's name: the replay and the stand-in answer both lines
		// from it, and exporters built before the "--" read it too.
		captures = append(captures, output{"zpool get -Hp all " + p.name + " all-vdevs", func(w *bufio.Writer) { writeVdevProperties(w, h, p) }})
	}
	for _, c := range captures {
		if err := writeWith(filepath.Join(dir, runner.CaptureFileName(c.line)), c.write); err != nil {
			return host{}, err
		}
	}
	return h, nil
}

// bootTimes sets the times of the directories under dev an hour back, as
// on a host whose links udev made at boot: the exporter keeps the disks it
// joined until a link changes, and takes a directory changed within the
// last seconds for one still changing.
func bootTimes(dev string) error {
	boot := time.Now().Add(-time.Hour)
	return filepath.WalkDir(dev, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		return os.Chtimes(p, boot, boot)
	})
}

// output is a command line and what writes its output.
type output struct {
	line  string
	write func(*bufio.Writer)
}

// writeWith creates path and writes it through a buffer.
func writeWith(path string, write func(*bufio.Writer)) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	write(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// Name is how a host of s is called in tables and directories: "1x1000"
// for one pool of 1,000 leaves.
func (s Spec) Name() string {
	return fmt.Sprintf("%dx%d", s.Pools, s.Leaves)
}

// ParseName reads a name that Name wrote.
func ParseName(name, version string) (Spec, error) {
	s := Spec{Version: version}
	pools, leaves, ok := strings.Cut(name, "x")
	if _, err := fmt.Sscan(pools, &s.Pools); !ok || err != nil {
		return Spec{}, fmt.Errorf("host %q: not POOLSxLEAVES", name)
	}
	if _, err := fmt.Sscan(leaves, &s.Leaves); err != nil {
		return Spec{}, fmt.Errorf("host %q: not POOLSxLEAVES", name)
	}
	return s, s.check()
}
