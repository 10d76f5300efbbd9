package statuspage

import (
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Reading is one look at the host: the `zpool status` the collectors read
// and the metrics they produced, at one time.
type Reading struct {
	Time      time.Time
	Status    *zpool.Status // nil when zpool status failed
	StatusErr error
	Families  []*dto.MetricFamily
	// Events are each pool's last events, oldest first; nil where zpool
	// has none or they are not followed.
	Events map[string][]events.Event
}

// View is what the page shows.
type View struct {
	Time      time.Time
	StatusErr string   // why zpool status failed, when it did
	Failing   []string // collectors whose last scrape failed
	Pools     []PoolView
	VdevIO    string // where the per-vdev figures come from, for the footnote
}

// PoolView is one pool, shaped like its `zpool status`.
type PoolView struct {
	Name, State               string
	Status, Action, MessageID string
	DataErrors                *float64
	Size, Allocated, Free     *float64
	Scans                     []ScanView // scans, then a removal and an expansion
	Checkpoint                *CheckpointView
	Rows                      []Row
	Warnings                  []string
	Events                    []EventView // newest first
}

// EventView is one of a pool's last events: "checksum" on a vdev,
// "statechange" to FAULTED, "resilver_finish".
type EventView struct {
	Time        time.Time
	Class, Vdev string
	State       string // a state change's new state
}

// Row is one line of the config tree, in print order.
type Row struct {
	Name    string
	Depth   int    // 0 for the pool's own row
	Section string // set on a class header row ("logs", "cache", ...), which has no figures
	Type    string
	State   string

	ReadErrors, WriteErrors, ChecksumErrors float64
	Note                                    string // what zpool notes after the counters, in short (see note)

	// Per-second figures between the last two samples; nil before there
	// are two, or when the source went stale.
	ReadBytes, WriteBytes, ReadOps, WriteOps *float64
}

// ScanView is one scrub, resilver or rebuild, or a vdev removal or a
// RAID-Z expansion: those copy a vdev's data for hours as a resilver does,
// and the metrics export them as scans of function remove and expand.
type ScanView struct {
	Function, State, Vdev            string
	Progress                         *float64 // ratio, may exceed 1
	Issued, Total, Processed, Errors *float64
	IssueRate, Remaining, Duration   *float64
	Start, End                       time.Time
	// Waiting is set while an expansion waits for a resilver, or for
	// zpool clear, before it goes on.
	Waiting bool
	// MappingMemory is what a removal's map of moved blocks costs.
	MappingMemory *float64

	// Head is the line above the bar; Facts are the figures under it,
	// in zpool's order.
	Head  string
	Facts []Fact
}

// Fact is one figure of a scan: "issued" "1.2 GiB of 3.4 GiB".
type Fact struct{ Label, Value string }

// scanView shows a scan as zpool reported it.
func scanView(s zpool.Scan) ScanView {
	return ScanView{
		Function: s.Function, State: s.State, Vdev: s.Vdev, Progress: s.Progress,
		Issued: s.Issued, Total: s.Total, Processed: s.Processed, Errors: s.Errors,
		IssueRate: s.IssueRate, Remaining: s.Remaining, Duration: s.Duration, Start: s.Start, End: s.End,
	}.described()
}

// described fills the texts the template prints.
func (s ScanView) described() ScanView {
	s.Head, s.Facts = s.head(), s.facts()
	return s
}

// head names what runs, on which vdev, and its state: "resilver: scanning",
// "expansion of raidz1-0: copying".
func (s ScanView) head() string {
	what, state := s.Function, s.State
	if noun, ok := copyNouns[s.Function]; ok {
		what = noun
		if s.State == zpool.ScanScanning {
			state = "copying"
		}
	}
	if s.Waiting {
		state = "waiting for a resilver or zpool clear"
	}
	if s.Vdev != "" {
		what += " of " + s.Vdev
	}
	return what + ": " + state
}

// facts lists what a person following the scan wants to read.
func (s ScanView) facts() []Fact {
	var f []Fact
	if s.Issued != nil {
		v := formatBytes(s.Issued)
		if s.Total != nil {
			v += " of " + formatBytes(s.Total)
		}
		f = append(f, Fact{s.issuedLabel(), v})
	}
	if s.IssueRate != nil {
		f = append(f, Fact{"at", formatRate(s.IssueRate)})
	}
	if s.State == zpool.ScanScanning && !s.Waiting {
		f = append(f, Fact{"time left", formatTimeLeft(s.Remaining)})
	}
	if s.Processed != nil {
		label := "resilvered"
		if s.Function == zpool.ScanScrub {
			label = "repaired"
		}
		f = append(f, Fact{label, formatBytes(s.Processed)})
	}
	if s.Errors != nil {
		f = append(f, Fact{"errors", formatCount(s.Errors)})
	}
	// A removal's text output counts whole minutes: a quick one took "0".
	if s.State == zpool.ScanFinished && s.Duration != nil && *s.Duration > 0 {
		f = append(f, Fact{"took", formatDuration(s.Duration)})
	}
	if !s.Start.IsZero() {
		f = append(f, Fact{"started", formatClock(s.Start)})
	}
	if !s.End.IsZero() {
		f = append(f, Fact{"ended", formatClock(s.End)})
	}
	if s.MappingMemory != nil && *s.MappingMemory > 0 {
		f = append(f, Fact{"memory for removed device mappings", formatBytes(s.MappingMemory)})
	}
	return f
}

// issuedLabel names the bytes done: a removal and an expansion copy them.
func (s ScanView) issuedLabel() string {
	if _, ok := copyNouns[s.Function]; ok {
		return "copied"
	}
	return "issued"
}

// sections are the headers zpool status prints before vdevs of a class.
var sections = map[string]string{
	zpool.ClassLog:     "logs",
	zpool.ClassCache:   "cache",
	zpool.ClassSpare:   "spares",
	zpool.ClassSpecial: "special",
	zpool.ClassDedup:   "dedup",
}

// vdevCounters are the per-vdev counters the page shows as rates.
var vdevCounters = []string{
	"zfs_vdev_read_bytes_total",
	"zfs_vdev_write_bytes_total",
	"zfs_vdev_read_operations_total",
	"zfs_vdev_write_operations_total",
}

// build makes the view of a reading, feeding its counters to rates.
func build(r Reading, rates *rateTracker) View {
	m := indexFamilies(r.Families)
	v := View{Time: r.Time}
	if r.StatusErr != nil {
		v.StatusErr = r.StatusErr.Error()
	}
	for _, s := range m.series("zfs_exporter_collector_success") {
		if s.value == 0 {
			v.Failing = append(v.Failing, s.labels["collector"])
		}
	}
	for _, s := range m.series("zfs_exporter_capabilities_info") {
		v.VdevIO = s.labels["vdev_io"]
	}

	// A counter's sample time is when its source last answered: the
	// iostat stream's last report, or the last `zpool get` of vdev
	// properties.
	var sampled time.Time
	for _, s := range m.series("zfs_exporter_source_last_success_timestamp_seconds") {
		if src := s.labels["source"]; src == "zpool_iostat_stream" || src == zfs.SourceVdevProperties {
			if at := unixTime(s.value); at.After(sampled) {
				sampled = at
			}
		}
	}
	if !sampled.IsZero() {
		for _, name := range vdevCounters {
			for _, s := range m.series(name) {
				rates.observe(name+"\x00"+s.labels["pool"]+"\x00"+s.labels["vdev"], sampled, s.value)
			}
		}
		rates.forgetUnseen()
	}
	rate := func(name, pool, vdev string) *float64 {
		if x, ok := rates.rate(name+"\x00"+pool+"\x00"+vdev, r.Time); ok {
			return &x
		}
		return nil
	}

	if r.Status == nil {
		return v
	}
	for _, p := range r.Status.Pools {
		pv := PoolView{
			Name: p.Name, State: p.State, Status: p.Status, Action: p.Action, MessageID: p.MessageID,
			DataErrors: p.DataErrors, Warnings: p.Warnings,
			Size:      m.value("zfs_pool_size_bytes", "pool", p.Name),
			Allocated: m.value("zfs_pool_allocated_bytes", "pool", p.Name),
			Free:      m.value("zfs_pool_free_bytes", "pool", p.Name),
		}
		for _, s := range p.Scans {
			pv.Scans = append(pv.Scans, scanView(s))
		}
		if p.Removal != nil {
			pv.Scans = append(pv.Scans, removalView(p.Removal))
		}
		if p.Expansion != nil {
			pv.Scans = append(pv.Scans, expansionView(p.Expansion))
		}
		pv.Checkpoint = checkpointView(p.Checkpoint, r.Time)
		var walk func(vd *zpool.Vdev, depth int, name string)
		walk = func(vd *zpool.Vdev, depth int, name string) {
			pv.Rows = append(pv.Rows, Row{
				Name: name, Depth: depth, Type: vd.Type, State: vd.State,
				ReadErrors: vd.ReadErrors, WriteErrors: vd.WriteErrors, ChecksumErrors: vd.ChecksumErrors,
				Note:       note(vd),
				ReadBytes:  rate("zfs_vdev_read_bytes_total", p.Name, vd.Name),
				WriteBytes: rate("zfs_vdev_write_bytes_total", p.Name, vd.Name),
				ReadOps:    rate("zfs_vdev_read_operations_total", p.Name, vd.Name),
				WriteOps:   rate("zfs_vdev_write_operations_total", p.Name, vd.Name),
			})
			for _, c := range vd.Children {
				walk(c, depth+1, c.PrintedName()) // the tree shows where it is
			}
		}
		if p.Root != nil {
			// The pool's row carries the pool's name, as in zpool status;
			// its counters are exported under vdev="<pool>".
			walk(&zpool.Vdev{
				Name: p.Name, Type: p.Root.Type, State: p.Root.State,
				ReadErrors: p.Root.ReadErrors, WriteErrors: p.Root.WriteErrors, ChecksumErrors: p.Root.ChecksumErrors,
				Note: p.Root.Note,
			}, 0, p.Name)
			section := ""
			for _, top := range p.Root.Children {
				if s := sections[top.Class]; s != section {
					section = s
					if s != "" {
						pv.Rows = append(pv.Rows, Row{Name: s, Depth: 0, Section: s})
					}
				}
				walk(top, 1, top.PrintedName())
			}
		}
		pv.Events = eventViews(p, r.Events[p.Name])
		v.Pools = append(v.Pools, pv)
	}
	return v
}

// eventViews shows a pool's last events, newest first, their vdevs named
// as in the tree: by GUID, else as zpool names a leaf of that device.
func eventViews(p *zpool.Pool, evs []events.Event) []EventView {
	if len(evs) == 0 {
		return nil
	}
	byGUID := map[string]string{}
	if p.Root != nil {
		p.Root.Walk(func(v *zpool.Vdev, _ string) {
			if v.GUID != "" {
				byGUID[v.GUID] = v.PrintedName()
			}
		})
	}
	views := make([]EventView, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		class := ev.Class
		for _, prefix := range []string{"ereport.fs.zfs.", "sysevent.fs.zfs.", "resource.fs.zfs."} {
			class = strings.TrimPrefix(class, prefix)
		}
		vdev, ok := byGUID[strconv.FormatUint(ev.VdevGUID, 10)]
		if !ok && ev.VdevPath != "" {
			vdev = zpool.LeafName(ev.VdevPath) // gone from the tree
		}
		views = append(views, EventView{Time: ev.Time, Class: class, Vdev: vdev, State: ev.VdevState})
	}
	return views
}

// series is one sample of a gathered family, its labels as a map.
type series struct {
	labels map[string]string
	value  float64
}

type familyIndex map[string][]series

func indexFamilies(families []*dto.MetricFamily) familyIndex {
	m := familyIndex{}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			s := series{labels: map[string]string{}}
			for _, l := range metric.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case metric.Gauge != nil:
				s.value = metric.GetGauge().GetValue()
			case metric.Counter != nil:
				s.value = metric.GetCounter().GetValue()
			case metric.Untyped != nil:
				s.value = metric.GetUntyped().GetValue()
			default:
				continue
			}
			m[f.GetName()] = append(m[f.GetName()], s)
		}
	}
	return m
}

func (m familyIndex) series(name string) []series { return m[name] }

// value is the first sample of name whose label has the given value.
func (m familyIndex) value(name, label, want string) *float64 {
	for _, s := range m[name] {
		if s.labels[label] == want {
			x := s.value
			return &x
		}
	}
	return nil
}

func unixTime(seconds float64) time.Time {
	return time.Unix(0, int64(seconds*1e9))
}

// stateClass is the CSS class of a state: known states have their colour,
// any other word zpool prints gets the neutral one.
func stateClass(state string) string {
	switch s := strings.ToLower(state); s {
	case "online", "degraded", "faulted", "offline", "unavail", "removed", "suspended", "avail", "inuse":
		return "state-" + s
	default:
		return "state-other"
	}
}

// BenchmarkView is the benchmark windows section: the newest windows.
type BenchmarkView struct {
	APIPath string
	Windows []WindowView
	More    int // windows held but not shown
}

// WindowView is one benchmark window, one row of the table.
type WindowView struct {
	ID, Name, Pool, Command string
	Start, End              time.Time // local time; End zero while running
	Running                 bool
	Duration                *float64 // seconds, so far while running
}

// benchmarks shows the first limit of windows, which come newest first.
func benchmarks(windows []benchwindow.Window, limit int) *BenchmarkView {
	b := &BenchmarkView{APIPath: benchwindow.Path}
	for i, w := range windows {
		if i == limit {
			b.More = len(windows) - limit
			break
		}
		d := w.DurationSeconds
		v := WindowView{ID: w.ID, Name: w.Name, Pool: w.Pool, Command: w.Command,
			Start: w.Start.Local(), Running: w.Active, Duration: &d}
		if !w.End.IsZero() {
			v.End = w.End.Local()
		}
		b.Windows = append(b.Windows, v)
	}
	return b
}
