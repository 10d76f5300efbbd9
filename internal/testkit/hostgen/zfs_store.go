package hostgen

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// A host's datasets are two files under zfs/, tab-separated, each headed
// by the release ("# OpenZFS 2.4") and a line naming its columns, the
// first "name" and the last "sources":
//
//   - datasets.tsv: every filesystem and volume, a row each, with a
//     "type" column, in the order zfs lists them (by name, byte for byte);
//   - snapshots.tsv: the snapshots, grouped under their dataset: a line
//     with the dataset's name alone, then a row for each of its
//     snapshots, named from its "@" on, oldest first (zfs's order); the
//     groups in the order of datasets.tsv.
//
// A value is as `zfs get -p` prints it; "-" (or an empty field) where zfs
// has none. A property that is not a column of the file takes, for a
// snapshot, its dataset's value, else the value every dataset of the host
// has (zfsPropTable). The sources column lists the properties whose
// source is not that of zfsPropTable ("-" for read-only properties,
// "default" for the others), as zfs get prints it, separated by commas:
// "quota=local,mountpoint=inherited from tank0".
const (
	zfsDir        = "zfs"
	datasetsFile  = "datasets.tsv"
	snapshotsFile = "snapshots.tsv"
)

// ErrNoDatasets means the host was written without datasets.
var ErrNoDatasets = errors.New("the host has no datasets (written with Datasets = 0)")

// zfsHost is a host's datasets, read from its files.
type zfsHost struct {
	dir       string
	version   string
	ds        zfsTable
	typeField int
	byName    map[string]int32
	// The snapshots, read when asked for: snapshot rows, and where each
	// dataset's are among them.
	snaps      *zfsTable
	snapStart  []int32
	snapCount  []int32
	snapsError error
}

// zfsTable is one of the files: its columns, and its rows split in
// fields.
type zfsTable struct {
	column  map[string]int
	field   []int // of each property of zfsProps, by its order; 0 where none
	sources int
	rows    [][]string
}

// fieldOf is the field of a property in the table's rows, 0 for none.
func (t *zfsTable) fieldOf(p *zfsProp) int {
	if t.field == nil {
		t.field = make([]int, len(zfsProps))
		for _, q := range zfsProps {
			t.field[q.order] = t.column[q.name]
		}
	}
	return t.field[p.order]
}

// zref is a dataset (snap < 0) or one of its snapshots (an index into the
// snapshot rows).
type zref struct{ ds, snap int32 }

func (r zref) isSnapshot() bool { return r.snap >= 0 }

// loadZFS reads the datasets of the host in dir, but not its snapshots.
func loadZFS(dir string) (*zfsHost, error) {
	data, err := os.ReadFile(filepath.Join(dir, zfsDir, datasetsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoDatasets
	}
	if err != nil {
		return nil, err
	}
	h := &zfsHost{dir: dir}
	var body string
	if h.version, h.ds.column, h.ds.sources, body, err = splitTable(string(data)); err != nil {
		return nil, fmt.Errorf("%s: %w", datasetsFile, err)
	}
	if h.typeField = h.ds.column["type"]; h.typeField == 0 {
		return nil, fmt.Errorf("%s: no type column", datasetsFile)
	}
	h.byName = make(map[string]int32)
	for line := range strings.Lines(body) {
		f := strings.Split(strings.TrimSuffix(line, "\n"), "\t")
		if len(f) != len(h.ds.column)+2 {
			return nil, fmt.Errorf("%s: %d fields, want %d: %q", datasetsFile, len(f), len(h.ds.column)+2, line)
		}
		h.byName[f[0]] = int32(len(h.ds.rows))
		h.ds.rows = append(h.ds.rows, f)
	}
	return h, nil
}

// splitTable reads a file's header: its release and columns.
func splitTable(data string) (version string, column map[string]int, sources int, body string, err error) {
	first, rest, _ := strings.Cut(data, "\n")
	header, body, _ := strings.Cut(rest, "\n")
	version, ok := strings.CutPrefix(first, "# OpenZFS ")
	names := strings.Split(header, "\t")
	if !ok || len(names) < 2 || names[0] != "name" || names[len(names)-1] != "sources" {
		return "", nil, 0, "", fmt.Errorf("no header (# OpenZFS VERSION, then name ... sources)")
	}
	column = make(map[string]int, len(names))
	for i, n := range names[1 : len(names)-1] {
		column[n] = i + 1
	}
	return version, column, len(names) - 1, body, nil
}

// loadSnapshots reads the snapshots, once.
func (h *zfsHost) loadSnapshots() error {
	if h.snaps != nil || h.snapsError != nil {
		return h.snapsError
	}
	h.snapsError = h.readSnapshots()
	return h.snapsError
}

func (h *zfsHost) readSnapshots() error {
	h.snapStart = make([]int32, len(h.ds.rows))
	h.snapCount = make([]int32, len(h.ds.rows))
	data, err := os.ReadFile(filepath.Join(h.dir, zfsDir, snapshotsFile))
	if errors.Is(err, fs.ErrNotExist) {
		h.snaps = &zfsTable{}
		return nil
	}
	if err != nil {
		return err
	}
	t := &zfsTable{}
	var body string
	if _, t.column, t.sources, body, err = splitTable(string(data)); err != nil {
		return fmt.Errorf("%s: %w", snapshotsFile, err)
	}
	t.rows = make([][]string, 0, strings.Count(body, "\n"))
	ds := int32(-1)
	for line := range strings.Lines(body) {
		line = strings.TrimSuffix(line, "\n")
		if !strings.HasPrefix(line, "@") {
			i, ok := h.byName[line]
			if !ok {
				return fmt.Errorf("%s: snapshots of %q, which is not a dataset", snapshotsFile, line)
			}
			ds = i
			h.snapStart[ds] = int32(len(t.rows))
			continue
		}
		f := strings.Split(line, "\t")
		if ds < 0 || len(f) != len(t.column)+2 {
			return fmt.Errorf("%s: a snapshot outside a dataset, or with %d fields: %q", snapshotsFile, len(f), line)
		}
		h.snapCount[ds]++
		t.rows = append(t.rows, f)
	}
	h.snaps = t
	return nil
}

// typeOf is the kind of a dataset or snapshot.
func (h *zfsHost) typeOf(r zref) zfsType {
	if r.isSnapshot() {
		return typeSnapshot
	}
	return h.dsType(r.ds)
}

func (h *zfsHost) dsType(ds int32) zfsType {
	if h.ds.rows[ds][h.typeField] == "volume" {
		return typeVolume
	}
	return typeFilesystem
}

// name is the full name of a dataset or snapshot.
func (h *zfsHost) name(r zref) string {
	if r.isSnapshot() {
		return h.ds.rows[r.ds][0] + h.snaps.rows[r.snap][0]
	}
	return h.ds.rows[r.ds][0]
}

// pool is the name of the pool a dataset is in.
func (h *zfsHost) pool(r zref) string {
	name := h.ds.rows[r.ds][0]
	if i := strings.IndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return name
}

// propState is what zfs_prop_get made of a property of a dataset.
type propState uint8

const (
	propValue   propState = iota // a value, with its source
	propNone                     // none: zfs prints "-", its source none
	propNotType                  // not a property of this kind of dataset: also "-", but zfs list's JSON keeps the source of the property before
)

// lookup returns the value of p for r as -p prints it, and its source as
// zfs get prints it.
func (h *zfsHost) lookup(r zref, p *zfsProp) (value, source string, state propState) {
	t := h.typeOf(r)
	if p.types&t == 0 {
		return "-", "-", propNotType
	}
	switch p.name {
	case "name":
		return h.name(r), "-", propValue
	case "type":
		return typeNames[t][0], "-", propValue
	}
	dsRow := h.ds.rows[r.ds]
	var row []string
	var table *zfsTable
	if r.isSnapshot() {
		// get_numeric_property takes a snapshot's number only where its
		// dataset has it too.
		if p.numeric() && p.kind != kindDate && p.types != typeSnapshot && p.types&h.dsType(r.ds) == 0 {
			return "-", "-", propNone
		}
		row, table = h.snaps.rows[r.snap], h.snaps
		if table.fieldOf(p) == 0 {
			row, table = dsRow, &h.ds
		}
	} else {
		row, table = dsRow, &h.ds
	}
	if i := table.fieldOf(p); i > 0 {
		value = row[i]
	} else if p.name == "guid" {
		value = strconv.FormatUint(nameGUID(h.name(r)), 10)
	} else {
		value = p.value
	}
	if value == "" || value == "-" {
		return "-", "-", propNone
	}
	source = p.source
	if table.sources > 0 {
		if s, ok := sourceOf(row[table.sources], p.name); ok {
			source = s
		}
	}
	return value, source, propValue
}

// sourceOf finds a property's source in a row's list of sources.
func sourceOf(list, property string) (string, bool) {
	for list != "" {
		var entry string
		entry, list, _ = strings.Cut(list, ",")
		if name, source, ok := strings.Cut(entry, "="); ok && name == property {
			return source, true
		}
	}
	return "", false
}

// nameGUID is the GUID of a dataset of a generated host, fixed by its
// name.
func nameGUID(name string) uint64 {
	f := fnv.New64a()
	f.Write([]byte(name))
	return guid(f.Sum64(), 0x5a5)
}

// zfsTableWriter writes one of the files.
type zfsTableWriter struct {
	w       *bufio.Writer
	columns []string // between name and sources
}

func (t zfsTableWriter) header(version string) {
	t.w.WriteString("# OpenZFS " + version + "\nname")
	for _, c := range t.columns {
		t.w.WriteByte('\t')
		t.w.WriteString(c)
	}
	t.w.WriteString("\tsources\n")
}
