package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

func init() {
	register("vdev_latency", true, "Per-vdev latency histograms from zpool iostat -w (OpenZFS 0.7 on): disk wait of every vdev, total wait of pools and top-level vdevs; queue waits, request sizes (-r) and queue lengths (-q) by flag", newVdevLatencyCollector)
}

var (
	vdevTotalWaitDesc = desc("vdev", "total_wait_seconds",
		"Time from an I/O's entry in ZFS's queue to its completion, since the pool's import (zpool iostat -w total_wait). "+
			"_sum is an estimate, each I/O at the middle of its bucket: zpool keeps no sum.", "pool", "vdev", "type")
	vdevDiskWaitDesc = desc("vdev", "disk_wait_seconds",
		"Time an I/O took on the disk, from its issue to its completion (zpool iostat -w disk_wait). _sum is an estimate, as for total_wait.", "pool", "vdev", "type")
	vdevQueueWaitDesc = desc("vdev", "queue_wait_seconds",
		"Time an I/O waited in ZFS's queue of its class before it was issued to the disk (zpool iostat -w syncq_wait, asyncq_wait, scrub, trim, rebuild). _sum is an estimate, as for total_wait.", "pool", "vdev", "class")
	vdevRequestSizeDesc = desc("vdev", "request_size_bytes",
		"Sizes of the I/Os ZFS issued, by class: as queued (individual) or as merged with their neighbours (aggregated), since the pool's import (zpool iostat -r). "+
			"zpool's buckets run from a power of two to the next, excluded: le=8191 holds the 4 KiB requests. _sum counts each I/O at the bottom of its bucket, exact for sizes that are powers of two.", "pool", "vdev", "class", "request")
	vdevQueuePendingDesc = desc("vdev", "queue_pending", "I/Os waiting in ZFS's queue of the class, not yet issued, now (zpool iostat -q pend).", "pool", "vdev", "class")
	vdevQueueActiveDesc  = desc("vdev", "queue_active", "I/Os of the class issued to the disk and not yet completed, now (zpool iostat -q activ).", "pool", "vdev", "class")
	latencyLeftOutDesc   = desc("exporter", "vdev_latency_left_out", "Vdevs whose histograms and queue lengths --collector.vdev_latency.max-vdevs left out of the last scrape, the last in zpool's order.")
)

// The vdevs whose figures are sent play one of these roles. A pool's row
// and an interior vdev's sum those of the leaves below them (zpool adds up
// its children's histograms), so the leaves carry the detail that no sum
// can give back: the disk wait that tells a slow disk.
type vdevRole int

const (
	rolePool     vdevRole = iota
	roleTop               // mirror-0, raidz1-1, or a disk alone at the top
	roleInterior          // spare-N and replacing-N, between a top-level vdev and its leaves
	roleLeaf
)

// LatencyDetail is what the vdev_latency collector sends beyond its
// default: the disk wait of every vdev, and the total wait of pools,
// top-level vdevs and, with InteriorVdevs, interior ones. Each field is a
// flag of its own, whose cost per vdev docs/metrics.md's latency section
// states.
type LatencyDetail struct {
	// FullResolution keeps every bucket zpool prints (37 for latency, 16
	// for request sizes) rather than every second one.
	FullResolution bool
	// QueueWait adds the per-class queue waits (zfs_vdev_queue_wait_seconds)
	// of every vdev, and the total wait of leaves.
	QueueWait bool
	// RequestSizes adds zfs_vdev_request_size_bytes, from zpool iostat -r.
	RequestSizes bool
	// QueueLengths adds zfs_vdev_queue_pending and _active, from zpool
	// iostat -q.
	QueueLengths bool
	// InteriorVdevs adds spare-N and replacing-N, as top-level vdevs.
	InteriorVdevs bool
	// MaxVdevs caps how many vdevs have figures, the first in zpool's
	// order (0: no cap).
	MaxVdevs int
}

// sends reports whether the latency family d goes out for a vdev of role.
func (o LatencyDetail) sends(d *prometheus.Desc, role vdevRole) bool {
	switch d {
	case vdevDiskWaitDesc:
		return true
	case vdevTotalWaitDesc:
		return role != roleLeaf || o.QueueWait
	case vdevQueueWaitDesc:
		return o.QueueWait
	}
	return false
}

// latencyColumn reports whether a column of -w is read: those of the
// families sent for some vdev, so that the queue waits are not parsed
// when they are not sent.
func (o LatencyDetail) latencyColumn(name string) bool {
	m, ok := latencyColumns[name]
	return ok && (o.sends(m.desc, rolePool) || o.sends(m.desc, roleLeaf))
}

// latencyColumns maps the columns of -w to a family and its last label.
var latencyColumns = map[string]struct {
	desc  *prometheus.Desc
	label string
}{
	"total_wait_read": {vdevTotalWaitDesc, "read"}, "total_wait_write": {vdevTotalWaitDesc, "write"},
	"disk_wait_read": {vdevDiskWaitDesc, "read"}, "disk_wait_write": {vdevDiskWaitDesc, "write"},
	"syncq_wait_read": {vdevQueueWaitDesc, "sync_read"}, "syncq_wait_write": {vdevQueueWaitDesc, "sync_write"},
	"asyncq_wait_read": {vdevQueueWaitDesc, "async_read"}, "asyncq_wait_write": {vdevQueueWaitDesc, "async_write"},
	"scrub": {vdevQueueWaitDesc, "scrub"}, "trim": {vdevQueueWaitDesc, "trim"}, "rebuild": {vdevQueueWaitDesc, "rebuild"},
}

type vdevLatencyCollector struct {
	LatencyDetail
	logger *slog.Logger
}

func newVdevLatencyCollector(cfg Config, logger *slog.Logger) (Collector, error) {
	return &vdevLatencyCollector{cfg.Latency, logger}, nil
}

// vdevTables is what one of zpool iostat's -w, -r and -q gave.
type vdevTables struct {
	tables []zpool.Histograms
	rows   []zpool.IostatRow
	err    error
}

func (c *vdevLatencyCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	// Once status has answered, as for the vdev properties: a suspended
	// pool that hangs zpool status would hang these too.
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	// What is not asked for is not run: -r and -q cost a zpool run and
	// their parsing each, at every scrape.
	none := vdevTables{err: zfs.ErrNoHistograms}
	latency, sizes, queues := none, none, none
	var wg sync.WaitGroup
	wg.Go(func() { latency.tables, latency.err = s.Histograms(ctx, zpool.LatencyHistogram, c.latencyColumn) })
	if c.RequestSizes {
		wg.Go(func() { sizes.tables, sizes.err = s.Histograms(ctx, zpool.SizeHistogram, nil) })
	}
	if c.QueueLengths {
		wg.Go(func() { queues.rows, queues.err = s.Queues(ctx) })
	}
	wg.Wait()
	if errors.Is(latency.err, zfs.ErrNoHistograms) && errors.Is(sizes.err, zfs.ErrNoHistograms) && errors.Is(queues.err, zfs.ErrNoHistograms) {
		return ErrNoData
	}
	vdevs := reportedVdevs(st, c.InteriorVdevs)
	leftOut := 0
	if c.MaxVdevs > 0 && len(vdevs) > c.MaxVdevs {
		leftOut = len(vdevs) - c.MaxVdevs
		vdevs = vdevs[:c.MaxVdevs]
		c.logger.Debug("vdevs left out by --collector.vdev_latency.max-vdevs", "left_out", leftOut, "max", c.MaxVdevs)
	}
	gauge(ch, latencyLeftOutDesc, float64(leftOut))
	var errs []error
	for _, t := range []struct {
		kind zpool.HistogramKind
		vdevTables
	}{{zpool.LatencyHistogram, latency}, {zpool.SizeHistogram, sizes}} {
		if t.err != nil {
			if !errors.Is(t.err, zfs.ErrNoHistograms) {
				errs = append(errs, t.err)
			}
			continue
		}
		if err := c.sendHistograms(ch, st, vdevs, t.kind, t.tables); err != nil {
			errs = append(errs, err)
		}
	}
	if queues.err == nil {
		errs = append(errs, sendQueues(ch, st, vdevs, queues.rows))
	} else if !errors.Is(queues.err, zfs.ErrNoHistograms) {
		errs = append(errs, queues.err)
	}
	return errors.Join(errs...)
}

// reportedVdev is a vdev whose figures are sent, its pool and its role.
type reportedVdev struct {
	pool string
	vdev *zpool.Vdev
	role vdevRole
}

// reportedVdevs lists, in print order, the vdevs whose figures are sent:
// each pool's row, its top-level vdevs and its leaves, and with interior
// the spare-N and replacing-N that stand between a top-level vdev and its
// leaves for a while.
func reportedVdevs(st *zpool.Status, interior bool) []reportedVdev {
	var vdevs []reportedVdev
	for _, p := range st.Pools {
		if p.Root == nil {
			continue
		}
		top := make(map[*zpool.Vdev]bool, len(p.Root.Children))
		for _, v := range p.Root.Children {
			top[v] = true
		}
		p.Root.WalkOnce(func(v *zpool.Vdev, _ string, _ *zpool.Vdev) {
			// A disk alone at the top (a log, a cache, a pool of one
			// disk) is a top-level vdev first: the board of top-level
			// vdevs shows it with the others.
			role := roleInterior
			switch {
			case v == p.Root:
				role = rolePool
			case top[v]:
				role = roleTop
			case len(v.Children) == 0:
				role = roleLeaf
			}
			if role != roleInterior || interior {
				vdevs = append(vdevs, reportedVdev{p.Name, v, role})
			}
		})
	}
	return vdevs
}

func (c *vdevLatencyCollector) sendHistograms(ch chan<- prometheus.Metric, st *zpool.Status, vdevs []reportedVdev, kind zpool.HistogramKind, tables []zpool.Histograms) error {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.Name
	}
	index, err := zpool.MatchIostatTables(st, names)
	if err != nil {
		// A vdev added or a pool imported between status and iostat: the
		// next scrape has both alike.
		return fmt.Errorf("matching the tables of zpool iostat %s with zpool status: %w", histogramFlag(kind), err)
	}
	for _, r := range vdevs {
		i, ok := index[r.vdev]
		if !ok {
			continue
		}
		t := tables[i]
		for col, name := range t.Columns {
			if kind == zpool.LatencyHistogram {
				if m, ok := latencyColumns[name]; ok && c.sends(m.desc, r.role) {
					ch <- latencyHistogram(m.desc, t, col, c.FullResolution, r.pool, r.vdev.Name, m.label)
				}
				continue
			}
			if class, request, ok := sizeColumn(name); ok {
				ch <- sizeHistogram(t, col, c.FullResolution, r.pool, r.vdev.Name, class, request)
			}
		}
	}
	return nil
}

func histogramFlag(kind zpool.HistogramKind) string {
	if kind == zpool.LatencyHistogram {
		return "-w"
	}
	return "-r"
}

// sizeColumn splits a column of -r, "sync_read_ind", into its class and
// whether the requests are individual or aggregated.
func sizeColumn(name string) (class, request string, ok bool) {
	if class, ok := strings.CutSuffix(name, "_ind"); ok {
		return class, "individual", true
	}
	if class, ok := strings.CutSuffix(name, "_agg"); ok {
		return class, "aggregated", true
	}
	return "", "", false
}

// latencyHistogram is column col of a -w table. zpool's bucket i holds
// the I/Os of 2^i to 2^(i+1)-1 ns, the last one all slower ones too. By
// default every second bound is kept, from 16 µs (2^14-1 ns) to 17 s
// (2^34-1 ns): a bucket per factor of four, enough to tell an NVMe drive
// from an SSD and a disk, and a healthy disk from a dying one, at 12
// buckets instead of 37. Faster I/Os than 16 µs come from no disk.
// It stays classic, with no native buckets: zpool's bounds are 2^n ns, and
// 2^n ns = 2^n·10^-9 s lies on no exponential schema's grid of 2^(j/2^s) s,
// since log2(10^-9) is irrational, so every native bucket would straddle
// one of zpool's bounds. Prometheus's convert_classic_histograms_to_nhcb
// keeps these bounds exact instead.
func latencyHistogram(d *prometheus.Desc, t zpool.Histograms, col int, full bool, labels ...string) prometheus.Metric {
	last := len(t.Bounds) - 1
	keep := func(i int) bool {
		return i < last && (full || (i+1)%2 == 0 && i+1 >= 14 && i+1 <= 34)
	}
	middle := func(i int) float64 {
		if i == last {
			return t.Bounds[i-1] // all slower: at least its bottom
		}
		return (t.Bounds[i] + prevBound(t.Bounds, i)) / 2
	}
	bounds, buckets, count, sum := cumulate(t, col, keep, func(i int) float64 { return t.Bounds[i] }, middle)
	return classicHistogram(d, bounds, buckets, count, sum, labels)
}

// cumulate adds up column col of t: the buckets keep chooses, at the
// upper bounds le gives, their cumulative counts, the count of all, and a
// sum that counts each I/O at value(i) of its bucket.
func cumulate(t zpool.Histograms, col int, keep func(int) bool, le, value func(int) float64) (bounds []float64, buckets []uint64, count uint64, sum float64) {
	for i, row := range t.Counts {
		n := row[col]
		count += n
		sum += float64(n) * value(i)
		if keep(i) {
			bounds = append(bounds, le(i))
			buckets = append(buckets, count)
		}
	}
	return bounds, buckets, count, sum
}

// sizeHistogram is column col of a -r table. zpool prints each bucket's
// bottom, 512<<i bytes, and it holds the requests up to the next, the
// last one all larger ones too. By default every second bound is kept,
// 2 KiB-1 to 8 MiB-1 (9 buckets instead of 16), so that 4 KiB, 8 KiB,
// 64 KiB, 128 KiB and 1 MiB requests each fall in a bucket of their own.
// Native schema-0 buckets of every row come with them (withNativeSizes).
func sizeHistogram(t zpool.Histograms, col int, full bool, labels ...string) prometheus.Metric {
	last := len(t.Bounds) - 1
	keep := func(i int) bool { return i < last && (full || i%2 == 1) }
	top := func(i int) float64 { return 2*t.Bounds[i] - 1 }
	bottom := func(i int) float64 { return t.Bounds[i] }
	m := constHistogram(vdevRequestSizeDesc, t, col, keep, top, bottom, labels)
	return withNativeSizes(m, t, col, labels)
}

// prevBound is the bound below bucket i, 0 below the first.
func prevBound(bounds []float64, i int) float64 {
	if i == 0 {
		return 0
	}
	return bounds[i-1]
}

// constHistogram builds a histogram of column col of t: the buckets keep
// chooses, at the upper bounds le gives, and a sum that counts each I/O
// at value(i) of its bucket.
func constHistogram(d *prometheus.Desc, t zpool.Histograms, col int, keep func(int) bool, le, value func(int) float64, labels []string) prometheus.Metric {
	buckets := make(map[float64]uint64)
	var count uint64
	var sum float64
	for i, row := range t.Counts {
		n := row[col]
		count += n
		sum += float64(n) * value(i)
		if keep(i) {
			buckets[le(i)] = count
		}
	}
	labels = labelValues(labels)
	m, err := prometheus.NewConstHistogram(d, count, sum, buckets, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return keyed{m, seriesKey(labels)}
}

// sendQueues sends the queue lengths of -q, whose rows carry, after the
// six base columns, pending and active for each class of
// zfs.QueueClasses that this zpool prints.
func sendQueues(ch chan<- prometheus.Metric, st *zpool.Status, vdevs []reportedVdev, rows []zpool.IostatRow) error {
	matched, err := zpool.MatchIostatReport(st, rows)
	if err != nil {
		return fmt.Errorf("matching the rows of zpool iostat -q with zpool status: %w", err)
	}
	var bad error
	for _, r := range vdevs {
		row, ok := matched[r.vdev]
		if !ok {
			continue
		}
		if n := len(row.Extra); n%2 != 0 || n/2 > len(zfs.QueueClasses) || n < 10 {
			if bad == nil {
				bad = fmt.Errorf("zpool iostat -q: vdev %s: %d queue columns, want pending and active for 5 to %d classes", r.vdev.Name, n, len(zfs.QueueClasses))
			}
			continue
		}
		for i := 0; i+1 < len(row.Extra); i += 2 {
			class := zfs.QueueClasses[i/2]
			for j, d := range []*prometheus.Desc{vdevQueuePendingDesc, vdevQueueActiveDesc} {
				if x, ok := queueLength(row.Extra[i+j]); ok {
					gauge(ch, d, x, r.pool, r.vdev.Name, class)
				}
			}
		}
	}
	return bad
}

// queueLength reads a count of -q: a number, or "-" for none.
func queueLength(s string) (float64, bool) {
	v, ok, err := zpool.ParseSize(s)
	return v, ok && err == nil && v >= 0
}
