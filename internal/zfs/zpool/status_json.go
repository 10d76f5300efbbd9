package zpool

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParseStatusJSON reads the output of `zpool status -j` (OpenZFS 2.3+),
// with or without --json-int and --json-flat-vdevs. Pools come sorted by
// name, as zpool prints them; vdevs keep the order of the output, which is
// the order of the text config table.
//
// Without --json-int, numbers are human-readable strings ("1.94K") and
// times are dates, read in time.Local unless they name their zone. Epoch
// times (--json-int, -p) are returned in UTC.
//
// Running scans carry raw pass figures instead of rates, because the
// output has no clock: call Scan.Estimate with the time of the run, and
// Removal.Estimate and Expansion.Estimate for a running removal or
// expansion.
// Sequential rebuilds carry their own pass time, so their rates are filled.
//
// The strings of the status share the memory of the output, which is read
// whole.
func ParseStatusJSON(r io.Reader) (*Status, error) {
	out := readOutput(r)
	if out.err != nil {
		return nil, out.err
	}
	doc, err := decodeJSON(out.text)
	if err != nil {
		return nil, err
	}
	st := &Status{}
	pools, err := doc.object("pools")
	if err != nil {
		return nil, err
	}
	if pools == nil {
		return st, nil
	}
	for _, m := range pools.members {
		o, ok := m.value.(*jsonObject)
		if !ok {
			return nil, parse.Errorf(m.line, "pool %q is not an object", m.key)
		}
		p, err := poolFromJSON(m.key, m.line, o)
		if err != nil {
			return nil, err
		}
		st.Pools = append(st.Pools, p)
	}
	slices.SortStableFunc(st.Pools, func(a, b *Pool) int { return strings.Compare(a.Name, b.Name) })
	return st, nil
}

// Estimate fills in the rates and times left of a JSON status's scans,
// removals and expansions at now. JSON carries raw figures only; zpool's
// text derives these from them and the clock, and so does this.
func (st *Status) Estimate(now time.Time) {
	for _, p := range st.Pools {
		for i := range p.Scans {
			p.Scans[i].Estimate(now)
		}
		if p.Removal != nil {
			p.Removal.Estimate(now)
		}
		if p.Expansion != nil {
			p.Expansion.Estimate(now)
		}
	}
}

// Estimate fills ScanRate, IssueRate and Remaining of a running scan from
// its raw pass figures, as `zpool status` computes them at time now. It
// does nothing for scans that are not running or carry no pass start
// (text output, rebuilds).
func (s *Scan) Estimate(now time.Time) {
	if s.State != ScanScanning || s.PassStart.IsZero() {
		return
	}
	// zpool counts whole seconds and never divides by zero.
	elapsed := math.Floor(now.Sub(s.PassStart).Seconds())
	if s.PausedSeconds != nil {
		elapsed -= *s.PausedSeconds
	}
	if elapsed < 1 {
		elapsed = 1
	}
	// zpool prints a rate only when it is not zero.
	s.ScanRate = positiveRate(s.PassExamined, elapsed)
	s.IssueRate = positiveRate(s.PassIssued, elapsed)
	s.Remaining = nil
	if s.IssueRate == nil || s.Total == nil || s.Issued == nil || *s.Total < *s.Issued {
		return
	}
	// Below 10 MiB/s zpool prints "no estimated completion time".
	if *s.IssueRate >= minEstimateRate {
		left := (*s.Total - *s.Issued) / *s.IssueRate
		s.Remaining = &left
	}
}

// minEstimateRate is the rate below which zpool gives no completion time.
const minEstimateRate = 10 << 20

func positiveRate(bytes *float64, seconds float64) *float64 {
	if bytes == nil || *bytes <= 0 {
		return nil
	}
	r := *bytes / seconds
	return &r
}

func poolFromJSON(key string, line int, o *jsonObject) (*Pool, error) {
	f := fieldReader{obj: o}
	p := &Pool{
		Name:      firstNonEmpty(f.str("name"), key),
		State:     strings.ToLower(f.str("state")),
		GUID:      firstNonEmpty(f.str("pool_guid"), f.str("guid")),
		Status:    joinParagraph(f.str("status")),
		Action:    joinParagraph(f.str("action")),
		MessageID: f.str("msgid"),
	}
	if p.Name == "" {
		return nil, parse.Errorf(line, "pool without a name")
	}
	p.DataErrors = f.num("error_count")
	scanStats := f.object("scan_stats")
	if f.err != nil {
		return nil, f.err
	}
	scans, err := scansFromJSON(o, scanStats)
	if err != nil {
		return nil, err
	}
	p.Scans = scans
	if p.Removal, err = removalFromJSON(o); err != nil {
		return nil, err
	}
	if p.Expansion, err = expansionFromJSON(o); err != nil {
		return nil, err
	}
	if p.Checkpoint, err = checkpointFromJSON(o); err != nil {
		return nil, err
	}

	b := vdevBuilder{pool: p.Name, processed: processedKind(scanStats, scans)}
	root, err := b.tree(o)
	if err != nil {
		return nil, err
	}
	if root == nil {
		// No vdevs at all: still give the pool its own row.
		root = &Vdev{Name: p.Name, Type: "root", Class: ClassNormal}
	}
	if root.State == "" {
		root.State = p.State
	}
	noteScanning(root, scans)
	qualifyNames(root)
	p.Root = root
	return p, nil
}

// joinParagraph turns the status and action texts, which zpool wraps with
// "\n\t", into one line, as the text parser does.
func joinParagraph(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// scansFromJSON returns the pool's scan (scrub or healing resilver), its
// error scrub, then its sequential rebuilds, one per top-level vdev.
func scansFromJSON(pool, stats *jsonObject) ([]Scan, error) {
	var scans []Scan
	var rebuilds *jsonObject
	if stats != nil {
		s, err := scanFromJSON(stats)
		if err != nil {
			return nil, err
		}
		if s != nil {
			scans = append(scans, *s)
		}
		es, err := errorScrubFromJSON(stats)
		if err != nil {
			return nil, err
		}
		if es != nil {
			scans = append(scans, *es)
		}
		if rebuilds, err = stats.object("rebuild_stats"); err != nil {
			return nil, err
		}
	}
	if rebuilds == nil {
		var err error
		if rebuilds, err = pool.object("rebuild_stats"); err != nil {
			return nil, err
		}
	}
	if rebuilds == nil {
		return scans, nil
	}
	for _, m := range rebuilds.members {
		o, ok := m.value.(*jsonObject)
		if !ok {
			return nil, parse.Errorf(m.line, "rebuild_stats %q is not an object", m.key)
		}
		s, err := rebuildFromJSON(m.key, o)
		if err != nil {
			return nil, err
		}
		scans = append(scans, s)
	}
	return scans, nil
}

func scanFromJSON(o *jsonObject) (*Scan, error) {
	f := fieldReader{obj: o}
	fn := f.str("function")
	if fn == "" || strings.EqualFold(fn, "NONE") {
		return nil, nil
	}
	s := &Scan{
		Function:      scanFunction(fn),
		State:         scanState(f.str("state")),
		Start:         f.time("start_time"),
		End:           f.time("end_time"),
		Total:         f.num("to_examine"),
		Examined:      f.num("examined"),
		Issued:        f.num("issued"),
		Processed:     f.num("processed"),
		Errors:        f.num("errors"),
		PassStart:     f.time("pass_start"),
		PassExamined:  f.num("bytes_per_scan"),
		PassIssued:    f.num("issued_bytes_per_scan"),
		PausedSeconds: f.num("scrub_spent_paused"),
	}
	if f.err != nil {
		return nil, f.err
	}
	if s.State == ScanScanning && f.nonZero("scrub_pause") {
		s.State = ScanPaused
	}
	s.fillProgress()
	return s, nil
}

// errorScrubFromJSON reads the err_scrub_* fields that zpool adds when an
// error scrub (`zpool scrub -e`) ran.
func errorScrubFromJSON(o *jsonObject) (*Scan, error) {
	f := fieldReader{obj: o}
	if f.str("err_scrub_func") == "" {
		return nil, nil
	}
	s := &Scan{
		Function: ScanErrorScrub,
		State:    scanState(f.str("err_scrub_state")),
		Start:    f.time("err_scrub_start_time"),
		End:      f.time("err_scrub_end_time"),
		Examined: f.num("err_scrub_examined"),
		Total:    f.num("err_scrub_to_examine"),
	}
	if f.err != nil {
		return nil, f.err
	}
	if s.State == ScanScanning && f.nonZero("err_scrub_pause") {
		s.State = ScanPaused
	}
	s.fillProgress()
	return s, nil
}

// fillProgress sets Progress of a running scan as zpool computes it (issued
// over total, examined over total before issuing existed), and the
// duration of a finished one.
func (s *Scan) fillProgress() {
	switch s.State {
	case ScanScanning, ScanPaused:
		done := s.Issued
		if done == nil {
			done = s.Examined
		}
		if done != nil && s.Total != nil && *s.Total > 0 {
			p := *done / *s.Total
			s.Progress = &p
		}
	case ScanFinished:
		if !s.Start.IsZero() && !s.End.IsZero() {
			d := math.Floor(s.End.Sub(s.Start).Seconds())
			s.Duration = &d
		}
	}
}

// rebuildFromJSON reads one entry of rebuild_stats: a sequential resilver
// of one top-level vdev. Rates and remaining time follow zpool's
// print_rebuild_status_impl, from the pass time it carries.
func rebuildFromJSON(key string, o *jsonObject) (Scan, error) {
	f := fieldReader{obj: o}
	s := Scan{
		Function:  ScanRebuild,
		State:     rebuildState(f.str("state")),
		Vdev:      firstNonEmpty(f.str("name"), key),
		Start:     f.time("start_time"),
		End:       f.time("end_time"),
		Examined:  f.num("scanned"),
		Issued:    f.num("issued"),
		Processed: f.num("rebuilt"),
		Total:     f.num("to_scan"),
		Errors:    f.num("errors"),
	}
	scanTime := f.seconds("scan_time")
	passTime := f.seconds("pass_time")
	passScanned := f.num("pass_scanned")
	passIssued := f.num("pass_issued")
	if f.err != nil {
		return Scan{}, f.err
	}
	switch s.State {
	case ScanFinished:
		if scanTime != nil {
			d := math.Floor(*scanTime)
			s.Duration = &d
		}
	case ScanScanning:
		if passTime != nil {
			// zpool adds a millisecond so that it never divides by zero.
			seconds := (*passTime*1000 + 1) / 1000
			s.ScanRate = rate(passScanned, seconds)
			s.IssueRate = rate(passIssued, seconds)
		}
		if s.Examined != nil && s.Total != nil {
			p := math.Min(*s.Examined/(*s.Total+1), 1)
			s.Progress = &p
			if s.ScanRate != nil && *s.ScanRate >= minEstimateRate {
				left := math.Max(*s.Total-*s.Examined, 0) / *s.ScanRate
				s.Remaining = &left
			}
		}
	}
	return s, nil
}

func rate(bytes *float64, seconds float64) *float64 {
	if bytes == nil {
		return nil
	}
	r := *bytes / seconds
	return &r
}

func scanFunction(s string) string {
	switch strings.ToUpper(s) {
	case "SCRUB":
		return ScanScrub
	case "RESILVER":
		return ScanResilver
	case "ERRORSCRUB":
		return ScanErrorScrub
	}
	return strings.ToLower(s)
}

func scanState(s string) string {
	switch strings.ToUpper(s) {
	case "NONE":
		return ScanNone
	case "SCANNING", "ERRORSCRUBBING":
		return ScanScanning
	case "FINISHED":
		return ScanFinished
	case "CANCELED":
		return ScanCanceled
	}
	return strings.ToLower(s)
}

func rebuildState(s string) string {
	switch strings.ToUpper(s) {
	case "NONE":
		return ScanNone
	case "ACTIVE":
		return ScanScanning
	case "COMPLETE":
		return ScanFinished
	case "CANCELED":
		return ScanCanceled
	}
	return strings.ToLower(s)
}

// processedKind tells whether the per-vdev scan_processed counts bytes
// resilvered or bytes repaired: it follows the pool's last scan.
func processedKind(stats *jsonObject, scans []Scan) string {
	if stats != nil {
		switch scanFunction(fieldReader{obj: stats}.str("function")) {
		case ScanScrub:
			return ScanScrub
		case ScanResilver:
			return ScanResilver
		}
	}
	for _, s := range scans {
		if s.Function == ScanRebuild {
			return ScanResilver
		}
	}
	return ""
}

// Sections of a pool object that hold top-level vdevs of a class other
// than normal, as zpool prints them after the main tree.
var vdevSections = map[string]string{
	"logs":    ClassLog,
	"l2cache": ClassCache,
	"spares":  ClassSpare,
	"special": ClassSpecial,
	"dedup":   ClassDedup,
}

// vdevBuilder turns the vdev objects of one pool into a tree.
type vdevBuilder struct {
	pool      string
	processed string // ScanResilver or ScanScrub: what scan_processed means
	vdevs     vdevBlocks
}

type flatVdev struct {
	vdev   *Vdev
	parent string
	isRoot bool
}

// tree returns the pool's root vdev with every class below it. Nested
// output holds the tree itself. Flat output (--json-flat-vdevs) lists
// every vdev at one level with its "parent", children before parents, and
// needs relinking; OpenZFS 2.3 also nests copies of the children in each
// interior vdev there, which are ignored.
func (b *vdevBuilder) tree(pool *jsonObject) (*Vdev, error) {
	vdevs, err := pool.object("vdevs")
	if err != nil {
		return nil, err
	}
	flat := vdevs != nil && hasParentField(vdevs)
	var entries []flatVdev
	for _, m := range pool.members {
		class, isSection := vdevSections[m.key]
		if m.key != "vdevs" && !isSection {
			continue
		}
		if class == "" {
			class = ClassNormal
		}
		if m.value == nil {
			continue
		}
		section, ok := m.value.(*jsonObject)
		if !ok {
			return nil, parse.Errorf(m.line, "%s is not an object", m.key)
		}
		for _, vm := range section.members {
			o, ok := vm.value.(*jsonObject)
			if !ok {
				return nil, parse.Errorf(vm.line, "vdev %q is not an object", vm.key)
			}
			var v *Vdev
			if flat {
				v, err = b.vdev(vm.key, o, class)
			} else {
				v, err = b.subtree(vm.key, o, class, 0)
			}
			if err != nil {
				return nil, err
			}
			f := fieldReader{obj: o}
			entries = append(entries, flatVdev{
				vdev:   v,
				parent: f.str("parent"),
				isRoot: m.key == "vdevs" && (v.Type == "root" || (f.str("vdev_type") == "" && v.Name == b.pool)),
			})
		}
	}
	return link(entries, flat, b.pool)
}

func hasParentField(vdevs *jsonObject) bool {
	for _, m := range vdevs.members {
		if o, ok := m.value.(*jsonObject); ok {
			if _, has := o.get("parent"); has {
				return true
			}
		}
	}
	return false
}

// link attaches every entry to its parent (flat output) or to the root,
// keeping their order, and refuses loops.
func link(entries []flatVdev, flat bool, pool string) (*Vdev, error) {
	var root *Vdev
	byName := map[string]*Vdev{}
	for _, e := range entries {
		if e.isRoot && root == nil {
			root = e.vdev
			root.Type = "root"
		}
		if _, dup := byName[e.vdev.Name]; !dup {
			byName[e.vdev.Name] = e.vdev
		}
	}
	if root == nil {
		if len(entries) == 0 {
			return nil, nil
		}
		root = &Vdev{Name: pool, Type: "root", Class: ClassNormal}
	}
	parentOf := map[*Vdev]*Vdev{}
	for _, e := range entries {
		if e.vdev == root {
			continue
		}
		parent := root
		if p, ok := byName[e.parent]; flat && ok && p != e.vdev {
			parent = p
		}
		if err := checkLink(e.vdev, parent, parentOf); err != nil {
			return nil, err
		}
		parentOf[e.vdev] = parent
		parent.Children = append(parent.Children, e.vdev)
	}
	return root, nil
}

// checkLink refuses to put child under parent when that closes a loop or
// nests deeper than any real pool.
func checkLink(child, parent *Vdev, parentOf map[*Vdev]*Vdev) error {
	depth := 0
	for n := parent; n != nil; n = parentOf[n] {
		if n == child {
			return parse.Errorf(0, "vdev %q is its own ancestor", child.Name)
		}
		if depth++; depth > maxVdevDepth {
			return parse.Errorf(0, "vdev %q: tree deeper than %d levels", child.Name, maxVdevDepth)
		}
	}
	return nil
}

// maxVdevDepth bounds recursion on hostile input; real trees are at most
// five levels deep (root, draid, spare, replacing, leaf).
const maxVdevDepth = 64

// subtree reads a vdev and its nested children.
func (b *vdevBuilder) subtree(key string, o *jsonObject, class string, depth int) (*Vdev, error) {
	if depth > maxVdevDepth {
		return nil, parse.Errorf(0, "vdev %q: tree deeper than %d levels", key, maxVdevDepth)
	}
	v, err := b.vdev(key, o, class)
	if err != nil {
		return nil, err
	}
	children, err := o.object("vdevs")
	if err != nil || children == nil {
		return v, err
	}
	for _, m := range children.members {
		co, ok := m.value.(*jsonObject)
		if !ok {
			return nil, parse.Errorf(m.line, "vdev %q is not an object", m.key)
		}
		c, err := b.subtree(m.key, co, v.Class, depth+1)
		if err != nil {
			return nil, err
		}
		v.Children = append(v.Children, c)
	}
	return v, nil
}

// vdev reads one vdev object, without its children. class is the class of
// its section or parent, used when the object names none.
func (b *vdevBuilder) vdev(key string, o *jsonObject, class string) (*Vdev, error) {
	f := fieldReader{obj: o}
	v := b.vdevs.new()
	v.Name = firstNonEmpty(f.str("name"), key)
	v.Class = class
	v.State = vdevStateJSON(f.str("state"), f.str("aux"))
	v.Path = f.str("path")
	v.GUID = f.str("guid")
	v.Note = auxNote(f.str("aux"))
	v.Type = vdevTypeJSON(f.str("vdev_type"), v.Name)
	if c := f.str("class"); c != "" {
		v.Class = vdevClass(c)
	}
	v.ReadErrors, _ = f.float("read_errors")
	v.WriteErrors, _ = f.float("write_errors")
	v.ChecksumErrors, _ = f.float("checksum_errors")
	v.SlowIOs = f.num("slow_ios")
	processed := f.num("scan_processed")
	if f.err != nil {
		return nil, f.err
	}
	var err error
	switch b.processed {
	case ScanResilver:
		v.ResilveredBytes = processed
	case ScanScrub:
		v.RepairedBytes = processed
	}
	if v.Trim, err = vdevOpFromJSON(o, "trim_state", "trimmed", "to_trim", "trim_time", "trim_errors"); err != nil {
		return nil, err
	}
	if v.Initialize, err = vdevOpFromJSON(o, "init_state", "initialized", "to_initialize", "init_time", "init_errors"); err != nil {
		return nil, err
	}
	if f.nonZero("trim_notsup") {
		v.Trim = &VdevOp{State: VdevOpUnsupported}
	}
	if v.Class == ClassSpare && v.State == "inuse" && v.Note == "" {
		v.Note = "currently in use" // as the text output says
	}
	// The fields behind the text's notes; "(resilvering)" and
	// "(repairing)" wait for the tree (see noteScanning).
	for _, a := range []struct{ field, activity string }{
		{"resilver_deferred", ActivityAwaitingResilver},
		{"removing", ActivityRemoving},
		{"noalloc", ActivityNonAllocating},
	} {
		if f.nonZero(a.field) {
			v.Activities = append(v.Activities, a.activity)
		}
	}
	return v, nil
}

// noteScanning gives the leaves that a running scan has processed bytes
// on the activity the text notes for them, as zpool decides it: an
// online leaf, while the pool's scrub or healing resilver runs. The text
// also notes the leaves of a running rebuild, whose per-vdev figure the
// JSON leaves out.
func noteScanning(root *Vdev, scans []Scan) {
	activity := ""
	for _, s := range scans {
		if s.State != ScanScanning {
			continue
		}
		switch s.Function {
		case ScanResilver:
			activity = ActivityResilvering
		case ScanScrub:
			activity = ActivityRepairing
		}
	}
	if activity == "" {
		return
	}
	root.Walk(func(v *Vdev, _ string) {
		processed := v.ResilveredBytes
		if processed == nil {
			processed = v.RepairedBytes
		}
		if len(v.Children) == 0 && v.State == "online" && processed != nil && *processed != 0 {
			v.Activities = append([]string{activity}, v.Activities...)
		}
	})
}

// vdevStateJSON names a vdev state as the text output does. JSON prints
// the kernel's state names (vdev_state_t), where the text prints
// zpool_state_to_name's: CANT_OPEN is UNAVAIL there, or FAULTED when the
// aux state says the data or the intent log is bad, and CLOSED is
// OFFLINE. Early 2.3 development builds printed HEALTHY for ONLINE.
func vdevStateJSON(state, aux string) string {
	switch strings.ToUpper(state) {
	case "HEALTHY":
		return "online"
	case "CLOSED":
		return "offline"
	case "CANT_OPEN":
		switch strings.TrimPrefix(strings.ToUpper(aux), "VDEV_AUX_") {
		case "CORRUPT_DATA", "BAD_LOG":
			return "faulted"
		case "SPLIT_POOL":
			return "split"
		}
		return "unavail"
	}
	return lowerState(state)
}

func vdevClass(c string) string {
	switch strings.ToLower(c) {
	case "normal":
		return ClassNormal
	case "log", "logs":
		return ClassLog
	case "l2cache", "cache":
		return ClassCache
	case "spare", "spares":
		return ClassSpare
	case "special":
		return ClassSpecial
	case "dedup":
		return ClassDedup
	}
	return strings.ToLower(c)
}

// vdevTypeJSON names a vdev type as the text output does: JSON says
// "raidz" and "draid", the parity is in the name ("raidz2-0",
// "draid1:4d:11c:1s-0"). OpenZFS 2.3.2 prints no vdev_type at all for a
// dRAID vdev: the name tells it then.
func vdevTypeJSON(t, name string) string {
	typed := parityTypeInName(name) // "raidz2" of "raidz2-0"
	switch {
	case (t == "raidz" || t == "draid") && typed != "" && typed[:len(t)] == t:
		return typed
	case t == "" && typed != "":
		return typed
	case t == "":
		return interiorTypeInName(name)
	}
	return t
}

// parityTypeInName returns the "raidz1".."draid3" that starts the name of
// a raidz or dRAID vdev, before a "-" or ":", or "".
func parityTypeInName(name string) string {
	if len(name) < len("raidz1-") || name[:5] != "raidz" && name[:5] != "draid" {
		return ""
	}
	if parity, sep := name[5], name[6]; parity < '1' || parity > '3' || sep != '-' && sep != ':' {
		return ""
	}
	return name[:6]
}

// interiorTypeInName returns "mirror", "replacing" or "spare" for a name
// "<type>-<index>", or "".
func interiorTypeInName(name string) string {
	t, index, _ := strings.Cut(name, "-")
	if index == "" || strings.Trim(index, "0123456789") != "" {
		return ""
	}
	switch t {
	case "mirror", "replacing", "spare":
		return t
	}
	return ""
}

// auxNotes are the words `zpool status` prints for a vdev's aux state
// (print_status_config in zpool_main.c).
var auxNotes = map[string]string{
	"OPEN_FAILED":      "cannot open",
	"BAD_GUID_SUM":     "missing device",
	"NO_REPLICAS":      "insufficient replicas",
	"VERSION_NEWER":    "newer version",
	"UNSUP_FEAT":       "unsupported feature(s)",
	"ASHIFT_TOO_BIG":   "unsupported minimum blocksize",
	"SPARED":           "currently in use",
	"ERR_EXCEEDED":     "too many errors",
	"IO_FAILURE":       "experienced I/O failures",
	"BAD_LOG":          "bad intent log",
	"EXTERNAL":         "external device fault",
	"SPLIT_POOL":       "split into new pool",
	"ACTIVE":           "currently in use",
	"CHILDREN_OFFLINE": "all children offline",
	"BAD_LABEL":        "invalid label",
	"CORRUPT_DATA":     "corrupted data",
}

func auxNote(aux string) string {
	if n, ok := auxNotes[strings.TrimPrefix(aux, "VDEV_AUX_")]; ok {
		return n
	}
	return aux
}

// fieldReader reads typed fields of one JSON object and keeps the first
// error, so that a mapping reads as a list of fields.
type fieldReader struct {
	obj *jsonObject
	err error
}

// str returns a string or number field as printed, "" when absent.
func (f fieldReader) str(key string) string {
	m, ok := f.obj.get(key)
	if !ok {
		return ""
	}
	switch m.value.(type) {
	case jsonString, jsonNumber:
		return m.text
	}
	return ""
}

func (f *fieldReader) fail(m jsonMember, what string, v any) {
	if f.err == nil {
		f.err = parse.Errorf(m.line, "cannot parse %s %q as %s", m.key, fmt.Sprint(v), what)
	}
}

func (f *fieldReader) object(key string) *jsonObject {
	o, err := f.obj.object(key)
	if err != nil && f.err == nil {
		f.err = err
	}
	return o
}

// scalar returns a field's text, whether zpool printed it as a JSON
// number (--json-int, -p) or as a string. Absent fields, null, "" and "-"
// are no value.
func (f *fieldReader) scalar(key, what string) (string, jsonMember, bool) {
	m, ok := f.obj.get(key)
	if !ok || m.value == nil {
		return "", m, false
	}
	var s string
	switch m.value.(type) {
	case jsonNumber:
		s = m.text
	case jsonString:
		s = strings.TrimSpace(m.text)
	default:
		f.fail(m, what, m.value)
		return "", m, false
	}
	return s, m, s != "" && s != "-"
}

// num reads a number: exact (--json-int, -p) or human-readable ("6.12K").
func (f *fieldReader) num(key string) *float64 {
	n, ok := f.float(key)
	if !ok {
		return nil
	}
	return &n
}

// float is num without a pointer: 0 and false for no value.
func (f *fieldReader) float(key string) (float64, bool) {
	s, m, ok := f.scalar(key, "a number")
	if !ok {
		return 0, false
	}
	n, ok, err := ParseSize(s)
	if err != nil {
		f.fail(m, "a number", s)
		return 0, false
	}
	return n, ok
}

// nonZero tells whether a field is set to something other than zero: the
// pause times, whose format differs between --json-int, -p and neither
// ("1796036400", a date, "-").
func (f fieldReader) nonZero(key string) bool {
	switch v := f.str(key); v {
	case "", "-", "0":
		return false
	default:
		return true
	}
}

// time reads an epoch (--json-int, -p) or a date as zpool prints it
// without them. Zero and "-" mean no time.
func (f *fieldReader) time(key string) time.Time {
	s, m, ok := f.scalar(key, "a time")
	if !ok {
		return time.Time{}
	}
	t, err := parseJSONTime(s)
	if err != nil {
		f.fail(m, "a time", s)
	}
	return t
}

// seconds reads a duration: nanoseconds (--json-int, -p) or a
// human-readable time ("135s", "12ms").
func (f *fieldReader) seconds(key string) *float64 {
	s, m, ok := f.scalar(key, "a duration")
	if !ok {
		return nil
	}
	d, err := parseNiceDuration(s)
	if err != nil {
		f.fail(m, "a duration", s)
		return nil
	}
	return &d
}

var niceTimeUnits = []struct {
	suffix string
	scale  float64
}{
	{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1},
}

// parseNiceDuration reads zfs_nicenum's time format in seconds; a bare
// number is nanoseconds.
func parseNiceDuration(s string) (float64, error) {
	scale := 1e-9
	for _, u := range niceTimeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, scale = strings.TrimSuffix(s, u.suffix), u.scale
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return v * scale, nil
}

// Date layouts of zpool's JSON times after collapsing spaces: the C locale
// ("Mon Nov 30 07:07:35 UTC 2026"), 12-hour locales ("Wed Jan 7 02:35:05
// AM PST 2026") and ctime without a zone.
var (
	zonedDateLayouts = []string{"Mon Jan 2 15:04:05 MST 2006", "Mon Jan 2 03:04:05 PM MST 2006"}
	localDateLayouts = []string{"Mon Jan 2 15:04:05 2006", "Mon Jan 2 03:04:05 PM 2006"}
)

func parseJSONTime(s string) (time.Time, error) {
	if s == "" || s == "-" {
		return time.Time{}, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n == 0 {
			return time.Time{}, nil
		}
		return time.Unix(n, 0).UTC(), nil
	}
	s = strings.Join(strings.Fields(s), " ")
	for _, layout := range zonedDateLayouts {
		t, err := time.ParseInLocation(layout, s, time.Local)
		if err != nil {
			continue
		}
		if loc := t.Location(); loc == time.Local || loc == time.UTC {
			return epochAsZero(t), nil
		}
		// An abbreviation unknown here gets a made-up zero offset: zpool
		// printed local time, so read it as such.
		abbrev, _ := t.Zone()
		s = strings.Replace(s, " "+abbrev+" ", " ", 1)
		break
	}
	for _, layout := range localDateLayouts {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return epochAsZero(t), nil
		}
	}
	return time.Time{}, fmt.Errorf("unknown date format %q", s)
}

// epochAsZero maps a printed epoch (zpool's rendering of "no time") to the
// zero time.
func epochAsZero(t time.Time) time.Time {
	if t.Year() < 1971 {
		return time.Time{}
	}
	return t
}

// removalFromJSON reads removal_stats, which zpool prints once a removal
// has started (and keeps after it ends).
func removalFromJSON(pool *jsonObject) (*Removal, error) {
	o, err := pool.object("removal_stats")
	if o == nil || err != nil {
		return nil, err
	}
	f := fieldReader{obj: o}
	r := &Removal{
		State:         scanState(f.str("state")),
		Vdev:          f.str("name"),
		Start:         f.time("start_time"),
		End:           f.time("end_time"),
		Copied:        f.num("copied"),
		Total:         f.num("to_copy"),
		MappingMemory: f.num("mapping_memory"),
	}
	index := f.num("removing_vdev")
	if f.err != nil {
		return nil, f.err
	}
	if r.State == ScanNone || r.State == "" {
		return nil, nil
	}
	if index != nil && *index >= 0 && *index <= math.MaxInt32 {
		i := int(*index)
		r.VdevIndex = &i
	}
	r.Progress, r.Duration = copyProgress(r.State, r.Copied, r.Total, r.Start, r.End)
	return r, nil
}

// expansionFromJSON reads raidz_expand_stats. zpool names the vdev there
// by its type alone ("raidz2"), and gives its index apart: they make the
// name that the text prints.
func expansionFromJSON(pool *jsonObject) (*Expansion, error) {
	o, err := pool.object("raidz_expand_stats")
	if o == nil || err != nil {
		return nil, err
	}
	f := fieldReader{obj: o}
	e := &Expansion{
		State:              scanState(f.str("state")),
		Vdev:               f.str("name"),
		Start:              f.time("start_time"),
		End:                f.time("end_time"),
		Copied:             f.num("reflowed"),
		Total:              f.num("to_reflow"),
		WaitingForResilver: f.nonZero("waiting_for_resilver"),
	}
	index := f.str("expanding_vdev")
	if f.err != nil {
		return nil, f.err
	}
	if e.State == ScanNone || e.State == "" {
		return nil, nil
	}
	if e.Vdev != "" && !numberedSuffix(e.Vdev) && index != "" && isDigits(index) {
		e.Vdev += "-" + index
	}
	e.Progress, e.Duration = copyProgress(e.State, e.Copied, e.Total, e.Start, e.End)
	return e, nil
}

// numberedSuffix tells a name that ends in "-<index>".
func numberedSuffix(name string) bool {
	i := strings.LastIndexByte(name, '-')
	return i >= 0 && i < len(name)-1 && isDigits(name[i+1:])
}

// copyProgress gives what the text output prints of a removal or an
// expansion besides its raw figures: the ratio done while it runs, and
// the time a finished one took.
func copyProgress(state string, copied, total *float64, start, end time.Time) (progress, duration *float64) {
	switch state {
	case ScanScanning:
		if copied != nil && total != nil && *total > 0 {
			p := *copied / *total
			progress = &p
		}
	case ScanFinished:
		if !start.IsZero() && !end.IsZero() {
			d := math.Floor(end.Sub(start).Seconds())
			duration = &d
		}
	}
	return progress, duration
}

// Estimate fills Rate and Remaining of a running removal as `zpool
// status` computes them at time now: the rate since the start, and no
// estimate beyond 30 days ("copy is slow").
func (r *Removal) Estimate(now time.Time) {
	if r.State == ScanScanning {
		r.Rate, r.Remaining = copyEstimate(now, r.Start, r.Copied, r.Total)
	}
}

// Estimate fills Rate and Remaining of a running expansion, as
// Removal.Estimate does; an expansion waiting for a resilver has no
// remaining time.
func (e *Expansion) Estimate(now time.Time) {
	if e.State != ScanScanning {
		return
	}
	e.Rate, e.Remaining = copyEstimate(now, e.Start, e.Copied, e.Total)
	if e.WaitingForResilver {
		e.Remaining = nil
	}
}

// maxCopyEstimate is the remaining time beyond which zpool prints no
// estimate for a removal or an expansion.
const maxCopyEstimate = 30 * 24 * 3600

func copyEstimate(now, start time.Time, copied, total *float64) (rate, remaining *float64) {
	if start.IsZero() || copied == nil {
		return nil, nil
	}
	// zpool counts whole seconds and whole bytes per second, never zero.
	elapsed := math.Max(math.Floor(now.Sub(start).Seconds()), 1)
	done := math.Max(*copied, 1)
	r := math.Max(math.Floor(done/elapsed), 1)
	rate = &r
	if total != nil && *total >= done {
		if left := math.Floor((*total - done) / r); left < maxCopyEstimate {
			remaining = &left
		}
	}
	return rate, remaining
}

// checkpointFromJSON reads checkpoint_stats; state NONE is no checkpoint.
func checkpointFromJSON(pool *jsonObject) (*Checkpoint, error) {
	o, err := pool.object("checkpoint_stats")
	if o == nil || err != nil {
		return nil, err
	}
	f := fieldReader{obj: o}
	c := &Checkpoint{
		State:   strings.ToLower(f.str("state")),
		Created: f.time("start_time"),
		Space:   f.num("space"),
	}
	if f.err != nil {
		return nil, f.err
	}
	if c.State == "" || c.State == "none" {
		return nil, nil
	}
	return c, nil
}

// jsonVdevOpStates are the states zpool_main.c prints, in the words of
// the text: every leaf has two under -t -i.
var jsonVdevOpStates = map[string]string{
	"": "", "UNTRIMMED": "untrimmed", "UNINITIALIZED": "uninitialized",
	"ACTIVE": VdevOpActive, "SUSPENDED": VdevOpSuspended, "CANCELED": VdevOpCanceled, "COMPLETE": VdevOpComplete,
}

// vdevOpFromJSON reads the TRIM or initialization fields that `zpool
// status -j -t` or `-i` add to leaf vdevs: the state ("UNTRIMMED",
// "ACTIVE", "COMPLETE"...), the bytes done and to do, the time of the
// last change of state and the errors. Nil when the state is absent.
func vdevOpFromJSON(o *jsonObject, stateKey, doneKey, totalKey, timeKey, errorsKey string) (*VdevOp, error) {
	f := fieldReader{obj: o}
	state, ok := jsonVdevOpStates[f.str(stateKey)]
	if !ok {
		state = strings.ToLower(f.str(stateKey))
	}
	if state == "" {
		return nil, nil
	}
	op := &VdevOp{
		State:  state,
		Done:   f.num(doneKey),
		Total:  f.num(totalKey),
		Errors: f.num(errorsKey),
	}
	at := f.time(timeKey)
	if f.err != nil {
		return nil, f.err
	}
	switch state {
	case "untrimmed", "uninitialized":
		op.State = VdevOpNone
	case VdevOpActive, VdevOpSuspended:
		op.Start = at
	case VdevOpComplete, VdevOpCanceled:
		op.End = at
	}
	switch op.State {
	case VdevOpComplete:
		one := 1.0
		op.Progress = &one
	case VdevOpActive, VdevOpSuspended:
		if op.Done != nil && op.Total != nil && *op.Total > 0 {
			p := *op.Done / *op.Total
			op.Progress = &p
		}
	}
	return op, nil
}
