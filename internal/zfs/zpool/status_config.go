package zpool

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// configTable builds the vdev tree of one pool from the rows of its config
// table. Indentation alone tells the depth: zpool indents each level by
// two columns after a tab, but pastes turn tabs into spaces, documents
// shift columns, and -g prints GUIDs one column off, so a row is the child
// of the nearest row above it that is indented less.
type configTable struct {
	counters []string // READ WRITE CKSUM [SLOW], as the header names them
	power    bool     // a POWER column (--power) follows the counters

	root    *Vdev
	rootCol int
	class   string  // class of the section being read
	stack   []frame // open rows, outermost first
	toks    []token // of the row being read, reused from row to row
	vdevs   vdevBlocks

	loc *time.Location // of the dates in TRIM and initialization annotations
	// warning is an annotation of the last row that could not be read;
	// the row itself was.
	warning error
}

type frame struct {
	col  int
	vdev *Vdev // nil for a class header: its rows are top-level vdevs
}

// classHeaders are the section rows that zpool prints after the main tree.
var classHeaders = map[string]string{
	"logs":    ClassLog,
	"cache":   ClassCache,
	"spares":  ClassSpare,
	"special": ClassSpecial,
	"dedup":   ClassDedup,
}

// newConfigTable reads the NAME header: besides the error counters it may
// carry SLOW (-s; DELAY in 0.8 development builds), POWER (--power) and
// the columns of -c scripts, whose values end up in Note.
func newConfigTable(header string, loc *time.Location) (*configTable, error) {
	f := strings.Fields(header)
	if len(f) < 2 || f[0] != "NAME" || f[1] != "STATE" {
		return nil, fmt.Errorf("expected the NAME STATE ... header of the config table, got %q", strings.TrimSpace(header))
	}
	t := &configTable{class: ClassNormal, loc: loc}
columns:
	for _, c := range f[2:] {
		switch c {
		case "READ", "WRITE", "CKSUM", "SLOW", "DELAY":
			t.counters = append(t.counters, c)
		case "POWER":
			t.power = true
		default:
			break columns
		}
	}
	return t, nil
}

type token struct {
	text string
	end  int // offset just past the token in its line
}

// tokenize appends the blank-separated tokens of line to toks.
func tokenize(toks []token, line string) []token {
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] != ' ' && line[j] != '\t' {
			j++
		}
		toks = append(toks, token{line[i:j], j})
		i = j
	}
	return toks
}

// column is the display column of a line's first character, tabs set
// every eight columns.
func column(line string) int {
	col := 0
	for _, c := range line {
		switch c {
		case ' ':
			col++
		case '\t':
			col = col/8*8 + 8
		default:
			return col
		}
	}
	return col
}

func (t *configTable) row(line string) error {
	col := column(line)
	t.toks = tokenize(t.toks[:0], line)
	toks := t.toks
	name := toks[0].text
	if class, ok := classHeaders[name]; ok && t.root != nil && col <= t.rootCol {
		// Old outputs give the header a state and counters of its own
		// ("logs FAULTED 0 0 0 bad intent log"): it is not a vdev.
		t.class = class
		t.stack = []frame{{col: col}}
		return nil
	}
	if len(toks) < 2 {
		return fmt.Errorf("vdev %q has no state", name)
	}
	v := t.vdevs.new()
	v.Name, v.State = name, lowerState(toks[1].text)
	end, err := t.readCounters(v, toks[2:])
	if err != nil {
		return fmt.Errorf("vdev %q: %w", name, err)
	}
	if end == 0 {
		end = toks[1].end
	}
	v.Note = strings.TrimSpace(line[end:])
	annotate(v)
	t.warning = nil
	if err := annotateOps(v, t.loc); err != nil {
		t.warning = fmt.Errorf("vdev %q: %w", name, err)
	}
	t.insert(col, v)
	return nil
}

// readCounters reads the counter columns and a POWER value, and returns
// where they end in the line (0 when the row has none: hot spares print
// only a state).
func (t *configTable) readCounters(v *Vdev, toks []token) (int, error) {
	n, err := t.readErrorCounts(v, toks)
	if err != nil {
		return 0, err
	}
	end := 0
	if n > 0 {
		end = toks[n-1].end
	}
	if t.power && len(toks) > n {
		switch p := toks[n]; p.text {
		case "on", "off", "-":
			end = p.end
		}
	}
	return end, nil
}

// readErrorCounts reads READ WRITE CKSUM [SLOW] and returns how many
// tokens they took.
func (t *configTable) readErrorCounts(v *Vdev, toks []token) (int, error) {
	spare := t.class == ClassSpare || v.State == "avail" || v.State == "inuse"
	for i, name := range t.counters {
		if i >= len(toks) {
			if i == 0 && spare {
				return 0, nil
			}
			return 0, fmt.Errorf("missing %s count", name)
		}
		n, ok, err := ParseSize(toks[i].text)
		if err != nil && i == 0 && spare {
			return 0, nil
		}
		if err != nil || (!ok && name != "SLOW" && name != "DELAY") {
			return 0, fmt.Errorf("cannot parse %s count %q", name, toks[i].text)
		}
		setCounter(v, name, n, ok)
	}
	return len(t.counters), nil
}

func setCounter(v *Vdev, column string, n float64, ok bool) {
	switch column {
	case "READ":
		v.ReadErrors = n
	case "WRITE":
		v.WriteErrors = n
	case "CKSUM":
		v.ChecksumErrors = n
	case "SLOW", "DELAY":
		// Interior vdevs print "-": only leaves count slow I/Os.
		if ok {
			slow := n
			v.SlowIOs = &slow
		}
	}
}

var processedNote = regexp.MustCompile(`^(\S+) (resilvered|repaired)\b`)

// annotate reads what the Note tells besides its text: the bytes an old
// zpool reports per leaf ("16.6M resilvered", "12.9M repaired"), the
// last path of a missing device ("was /dev/sdb1") and what the vdev is
// doing ("(resilvering)").
func annotate(v *Vdev) {
	if v.Note == "" {
		return // most rows
	}
	if m := processedNote.FindStringSubmatch(v.Note); m != nil {
		if n, ok, err := ParseSize(m[1]); err == nil && ok {
			if m[2] == "resilvered" {
				v.ResilveredBytes = &n
			} else {
				v.RepairedBytes = &n
			}
		}
	}
	if rest, ok := strings.CutPrefix(v.Note, "was "); ok {
		if f := strings.Fields(rest); len(f) > 0 {
			v.Path = f[0]
		}
	}
	for _, a := range activityNotes {
		if strings.Contains(v.Note, a.note) {
			v.Activities = append(v.Activities, a.activity)
		}
	}
}

// insert hangs v under the nearest open row indented less. A row indented
// no deeper than the section it is in (a pasted table can shift one)
// becomes a top-level vdev of that section.
func (t *configTable) insert(col int, v *Vdev) {
	if t.root == nil {
		v.Type, v.Class = "root", ClassNormal
		t.root, t.rootCol = v, col
		t.stack = []frame{{col: col, vdev: v}}
		return
	}
	for len(t.stack) > 1 && t.stack[len(t.stack)-1].col >= col {
		t.stack = t.stack[:len(t.stack)-1]
	}
	parent := t.stack[len(t.stack)-1].vdev
	if parent == nil || parent == t.root {
		v.Class = t.class
		t.root.Children = append(t.root.Children, v)
	} else {
		v.Class = parent.Class
		parent.Children = append(parent.Children, v)
	}
	t.stack = append(t.stack, frame{col: col, vdev: v})
}

// finishTree gives the vdevs of a pool their modern names and their types.
// Top-level vdevs are numbered by their place among the pool's top-level
// vdevs of every class that has them (normal, dedup, special, log: cache
// devices and spares are kept apart), children by their place under their
// parent, as zpool numbers them.
func finishTree(root *Vdev) {
	top := 0
	for _, v := range root.Children {
		index := -1
		if v.Class != ClassCache && v.Class != ClassSpare {
			index = top
			top++
		}
		finishVdev(v, index)
	}
}

func finishVdev(v *Vdev, index int) {
	if base, ok := bareInterior[v.Name]; ok && len(v.Children) > 0 && index >= 0 {
		v.Name = fmt.Sprintf("%s-%d", base, index)
	}
	if isGUID(v.Name) {
		v.GUID = v.Name
	}
	if v.Path == "" && strings.HasPrefix(v.Name, "/") {
		v.Path = v.Name
	}
	v.Type = vdevType(v)
	for i, c := range v.Children {
		finishVdev(c, i)
	}
}

// bareInterior are the unnumbered names of old outputs, with the type
// prefix modern zpool gives them.
var bareInterior = map[string]string{
	"mirror":    "mirror",
	"raidz":     "raidz1",
	"raidz1":    "raidz1",
	"raidz2":    "raidz2",
	"raidz3":    "raidz3",
	"replacing": "replacing",
	"spare":     "spare",
}

// isGUID tells a vdev named by its GUID (a missing device, or -g) from a
// device whose name is a short number: it has 10 to 20 digits.
func isGUID(name string) bool {
	return len(name) >= 10 && len(name) <= 20 && isDigits(name)
}

// vdevType reads the type from the name, which is all the text output
// tells. An interior vdev whose name does not tell (a GUID under -g) has
// no type.
func vdevType(v *Vdev) string {
	if isDistributedSpare(v.Name) {
		return "dspare"
	}
	if t, options := numberedType(v.Name); t != "" && (!options || strings.HasPrefix(t, "draid")) {
		if t == "raidz" {
			return "raidz1"
		}
		return t
	}
	if len(v.Children) > 0 {
		return ""
	}
	if strings.HasPrefix(v.Path, "/") && !strings.HasPrefix(v.Path, "/dev/") {
		return "file"
	}
	return "disk"
}

// numberedTypes are the types that a numbered interior vdev's name starts
// with: "mirror-0", "raidz2-1", "draid1:4d:11c:1s-0", "replacing-3".
var numberedTypes = map[string]bool{
	"mirror": true, "raidz": true, "raidz1": true, "raidz2": true, "raidz3": true,
	"draid1": true, "draid2": true, "draid3": true, "replacing": true, "spare": true,
	"root": true, "hole": true, "missing": true, "indirect": true,
}

// numberedType returns the type of a numbered interior vdev's name,
// "<type>[:<options>]-<index>", and whether it has options (of lowercase
// letters, digits and colons: "draid1:4d:11c:1s-0"); "" when the name is
// not one.
func numberedType(name string) (t string, options bool) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || !isDigits(name[i+1:]) {
		return "", false
	}
	t, opts, options := strings.Cut(name[:i], ":")
	if !numberedTypes[t] || strings.Trim(opts, "0123456789abcdefghijklmnopqrstuvwxyz:") != "" {
		return "", false
	}
	return t, options
}

// isDistributedSpare tells the name of a dRAID's distributed spare:
// "draid1-0-0".
func isDistributedSpare(name string) bool {
	rest, ok := strings.CutPrefix(name, "draid")
	if !ok || len(rest) < 2 || rest[0] < '1' || rest[0] > '3' || rest[1] != '-' {
		return false
	}
	group, spare, ok := strings.Cut(rest[2:], "-")
	return ok && isDigits(group) && isDigits(spare)
}
