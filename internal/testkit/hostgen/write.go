package hostgen

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// Write writes the host of s into dir, which must not exist yet: one
// capture per zpool command line, named as the replay decodes it and
// without a header, its events queue (WriteEvents), then kstat/, proc/,
// dev/ and sys/.
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
	if s.Datasets > 0 {
		if err := writeZFS(dir, h, time.Now()); err != nil {
			return err
		}
	}
	names := make([]string, len(h.pools))
	for i, p := range h.pools {
		names[i] = p.name
	}
	if err := WriteEvents(dir, names); err != nil {
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
		{"zpool status -j --json-int -t -i", func(w *bufio.Writer) { writeStatusJSON(w, h, true) }},
		{"zpool status -j --json-int", func(w *bufio.Writer) { writeStatusJSON(w, h, false) }},
		{"zpool status -s -p -t -i", func(w *bufio.Writer) { writeStatusText(w, h, true, true) }},
		{"zpool status -s -p", func(w *bufio.Writer) { writeStatusText(w, h, true, false) }},
		{"zpool status -p", func(w *bufio.Writer) { writeStatusText(w, h, false, false) }},
		{"zpool status", func(w *bufio.Writer) { writeStatusText(w, h, false, false) }},
		{"zpool get -Hp all", func(w *bufio.Writer) { writePoolProperties(w, h) }},
		{"zpool iostat -vHp -w", func(w *bufio.Writer) { writeIostatTables(w, h, true) }},
		{"zpool iostat -vHp -r", func(w *bufio.Writer) { writeIostatTables(w, h, false) }},
		{"zpool iostat -vHp -q", func(w *bufio.Writer) { writeIostatQueues(w, h) }},
		{"zpool version", func(w *bufio.Writer) { writeVersion(w, h) }},
		{"zpool list -v -Hp", func(w *bufio.Writer) { writeVdevList(w, h) }},
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

// Name is how a host of s is called in tables and directories:
// POOLSxLEAVES, then :Nd for N datasets and :Ns for N snapshots where it
// has any. "1x1000" is one pool of 1,000 leaves; "1x8:10000d:100000s" one
// pool of 8 leaves holding 10,000 datasets (filesystems and volumes, its
// root dataset counted) and 100,000 snapshots.
func (s Spec) Name() string {
	name := fmt.Sprintf("%dx%d", s.Pools, s.Leaves)
	if s.Datasets > 0 {
		name += fmt.Sprintf(":%dd", s.Datasets)
	}
	if s.Snapshots > 0 {
		name += fmt.Sprintf(":%ds", s.Snapshots)
	}
	return name
}

// ParseName reads a name that Name wrote; the datasets and snapshots may
// come in either order.
func ParseName(name, version string) (Spec, error) {
	s := Spec{Version: version}
	layout, counts, hasCounts := strings.Cut(name, ":")
	pools, leaves, ok := strings.Cut(layout, "x")
	if _, err := fmt.Sscan(pools, &s.Pools); !ok || err != nil {
		return Spec{}, fmt.Errorf("host %q: not POOLSxLEAVES[:Nd][:Ns]", name)
	}
	if _, err := fmt.Sscan(leaves, &s.Leaves); err != nil {
		return Spec{}, fmt.Errorf("host %q: not POOLSxLEAVES[:Nd][:Ns]", name)
	}
	for count := range strings.SplitSeq(counts, ":") {
		var into *int
		switch {
		case !hasCounts:
			continue
		case strings.HasSuffix(count, "d") && s.Datasets == 0:
			into = &s.Datasets
		case strings.HasSuffix(count, "s") && s.Snapshots == 0:
			into = &s.Snapshots
		default:
			return Spec{}, fmt.Errorf("host %q: %q is not a count of datasets (Nd) or snapshots (Ns), each at most once", name, count)
		}
		n, err := strconv.Atoi(count[:len(count)-1])
		if err != nil || n <= 0 {
			return Spec{}, fmt.Errorf("host %q: %q is not a count of datasets (Nd) or snapshots (Ns)", name, count)
		}
		*into = n
	}
	return s, s.check()
}

// versions are what `zpool version` prints for a host's release: what
// the guest's zpool printed, as built by Debian's backports.
var versions = map[string]string{"2.3": "2.3.2-2~bpo12+2", "2.4": "2.4.4-1~bpo13+1"}

// writeVersion writes `zpool version`: the tools and the loaded module,
// of one release.
func writeVersion(w *bufio.Writer, h host) {
	v := versions[h.spec.Version]
	fmt.Fprintf(w, "zfs-%s\nzfs-kmod-%s\n", v, v)
}
