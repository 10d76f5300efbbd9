package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

func init() {
	register("vdev_io", true, "Per-vdev read/write operations and bytes as counters, from vdev properties or a zpool iostat stream; from vdev properties, ashift and OpenZFS 2.4's slow-disk properties", newVdevIOCollector)
}

var (
	vdevReadBytesDesc  = desc("vdev", "read_bytes_total", "Bytes read from the vdev. The vdev named after the pool is the whole pool.", "pool", "vdev")
	vdevWriteBytesDesc = desc("vdev", "write_bytes_total", "Bytes written to the vdev. The vdev named after the pool is the whole pool.", "pool", "vdev")
	vdevReadOpsDesc    = desc("vdev", "read_operations_total", "Read operations on the vdev.", "pool", "vdev")
	vdevWriteOpsDesc   = desc("vdev", "write_operations_total", "Write operations on the vdev.", "pool", "vdev")
)

type vdevIOCollector struct {
	sampler *IostatSampler
	logger  *slog.Logger
}

func newVdevIOCollector(cfg Config, logger *slog.Logger) (Collector, error) {
	return &vdevIOCollector{sampler: cfg.Sampler, logger: logger}, nil
}

func (c *vdevIOCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	// The vdev properties are read once status has answered: a pool that
	// hangs zpool status (suspended) would hang them too, each in a zpool
	// process of its own that no kill ends.
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	reads := newVdevPropertyReads(ctx, s)
	var names []string
	for _, p := range st.Pools {
		if p.Root != nil {
			names = append(names, p.Name)
		}
	}
	if c.sampler != nil {
		all := make([]string, 0, len(st.Pools))
		for _, p := range st.Pools {
			all = append(all, p.Name)
		}
		c.sampler.Expect(all)
	}
	if caps, _ := s.Detected(); !caps.VdevPropertiesKnown && caps.StatusFormat != zfs.StatusJSON && len(names) > 0 {
		// The first read tells whether this zpool has vdev properties at
		// all: the other pools wait for its answer rather than ask too. A
		// zpool that prints JSON status (OpenZFS 2.3 on) has them (2.2
		// on): every pool is asked at once, without that wait.
		reads.result(names[0])
	}
	for _, name := range names {
		reads.start(name)
	}
	var errs []error
	for _, p := range st.Pools {
		if p.Root == nil {
			continue
		}
		if err := c.collectPool(p, reads.result(p.Name), ch); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// maxVdevPropertyRuns bounds the zpool processes that read vdev
// properties at once. Past it a scrape waits a whole zpool run more for
// the rest: 16 keeps hosts of up to that many pools to one round.
const maxVdevPropertyRuns = 16

// poolVdevProperties is what the vdev properties of one pool gave.
type poolVdevProperties struct {
	props []zpool.Property
	ok    bool
	err   error
}

// vdevPropertyReads reads the I/O counters of pools' vdevs, a zpool run
// per pool, several at once: a scrape waits for the slowest run, not for
// their sum.
type vdevPropertyReads struct {
	ctx   context.Context
	s     *zfs.Scrape
	slots chan struct{}
	reads map[string]chan poolVdevProperties
}

func newVdevPropertyReads(ctx context.Context, s *zfs.Scrape) *vdevPropertyReads {
	return &vdevPropertyReads{ctx: ctx, s: s, slots: make(chan struct{}, maxVdevPropertyRuns), reads: map[string]chan poolVdevProperties{}}
}

// start starts reading a pool's vdev properties, unless it has begun.
func (r *vdevPropertyReads) start(pool string) {
	if _, ok := r.reads[pool]; ok {
		return
	}
	done := make(chan poolVdevProperties, 1)
	r.reads[pool] = done
	go func() {
		r.slots <- struct{}{}
		defer func() { <-r.slots }()
		var p poolVdevProperties
		p.props, p.ok, p.err = r.s.VdevProperties(r.ctx, pool, vdevAskedProperties...)
		done <- p
	}()
}

// result waits for the read of a pool's vdev properties, starting it if
// it has not begun.
func (r *vdevPropertyReads) result(pool string) poolVdevProperties {
	r.start(pool)
	p := <-r.reads[pool]
	r.reads[pool] <- p // for a later call
	return p
}

func (c *vdevIOCollector) collectPool(p *zpool.Pool, read poolVdevProperties, ch chan<- prometheus.Metric) error {
	if read.err != nil {
		return read.err
	}
	if read.ok {
		return collectVdevIOProperties(p, read.props, ch)
	}
	if c.sampler == nil {
		return nil
	}
	c.sampler.Need()
	rows, ok := c.sampler.Counters(p.Name)
	if !ok {
		return nil // not sampled yet
	}
	matched, err := zpool.MatchIostat(p, rows)
	if err != nil {
		// The stream's last report predates a change of layout (a spare
		// attached, a disk replaced); its next report, an interval later,
		// has the new one. Until then the pool has no I/O counters.
		c.logger.Debug("zpool iostat rows do not match zpool status yet", "pool", p.Name, "err", err)
		return nil
	}
	p.Root.WalkOnce(func(v *zpool.Vdev, _ string, _ *zpool.Vdev) {
		if row, ok := matched[v]; ok {
			sendVdevIO(ch, p.Name, v.Name, row.ReadBytes, row.WriteBytes, row.ReadOps, row.WriteOps)
		}
	})
	return nil
}

func sendVdevIO(ch chan<- prometheus.Metric, pool, vdev string, readBytes, writeBytes, readOps, writeOps float64) {
	counter(ch, vdevReadBytesDesc, readBytes, pool, vdev)
	counter(ch, vdevWriteBytesDesc, writeBytes, pool, vdev)
	counter(ch, vdevReadOpsDesc, readOps, pool, vdev)
	counter(ch, vdevWriteOpsDesc, writeOps, pool, vdev)
}

// collectVdevIOProperties sends the counters, the slow-disk gauges and
// the ashift of every vdev of the status tree that has them, in one pass
// over the properties. Vdev properties name the
// pool's own row "root-0".
func collectVdevIOProperties(p *zpool.Pool, props []zpool.Property, ch chan<- prometheus.Metric) error {
	values, flags, ashift := map[string]map[string]float64{}, map[string]map[string]float64{}, map[string]map[string]float64{}
	var bad error
	for _, prop := range props {
		into := values
		var v float64
		switch {
		case prop.Property == "ashift":
			x, ok, err := zpool.ParseSize(prop.Value)
			if err != nil {
				if bad == nil {
					bad = fmt.Errorf("pool %s: vdev %s: property %s: %w", p.Name, prop.Name, prop.Property, err)
				}
				continue
			}
			if !ok || x == 0 {
				continue // "-", or the root's 0, which is no sector size
			}
			into, v = ashift, x
		case slices.Contains(vdevSlowProperties, prop.Property):
			on, ok := onOff(prop.Value)
			if !ok {
				continue
			}
			into, v = flags, on
		case slices.Contains(vdevIOProperties, prop.Property):
			x, err := strconv.ParseFloat(prop.Value, 64)
			if err != nil {
				if prop.Value != "-" && bad == nil {
					bad = parse.Errorf(0, "pool %s: vdev %s: property %s: not a number: %q", p.Name, prop.Name, prop.Property, prop.Value)
				}
				continue
			}
			v = x
		default:
			continue
		}
		name := prop.Name
		if strings.HasPrefix(name, "root-") {
			name = p.Root.PrintedName()
		}
		if into[name] == nil {
			into[name] = map[string]float64{}
		}
		into[name][prop.Property] = v
	}
	tree := uniqueTreeNames(p.Root)
	values, flags, ashift = rekey(tree, values), rekey(tree, flags), rekey(tree, ashift)
	fillFromChildren(p.Root, values, true)
	// An active hot spare has one row in the vdev properties but two
	// places in the tree: it is sent once.
	p.Root.WalkOnce(func(v *zpool.Vdev, _ string, _ *zpool.Vdev) {
		if m, ok := values[v.Name]; ok && len(m) == 4 {
			sendVdevIO(ch, p.Name, v.Name, m["read_bytes"], m["write_bytes"], m["read_ops"], m["write_ops"])
		}
		for prop, on := range flags[v.Name] {
			gauge(ch, vdevSlowDescs[prop], on, p.Name, v.Name)
		}
		if m, ok := ashift[v.Name]; ok {
			gauge(ch, vdevAshiftDesc, m["ashift"], p.Name, v.Name)
		}
	})
	return bad
}

// onOff reads a vdev property that is on or off; "-" where it does not
// apply.
func onOff(value string) (float64, bool) {
	switch value {
	case "on":
		return 1, true
	case "off":
		return 0, true
	}
	return 0, false
}

// uniqueTreeNames maps each name zpool prints to the status tree's name
// for that vdev, to rekey the vdev properties, which name vdevs as zpool
// prints them. A name zpool prints for two vdevs (spare-0 under two dRAID
// vdevs) is left out: which of them its row describes cannot be told, and
// fillFromChildren sums their children instead.
func uniqueTreeNames(root *zpool.Vdev) map[string]string {
	names := map[string][]string{} // printed name -> the tree's names for it
	root.Walk(func(v *zpool.Vdev, _ string) {
		if !slices.Contains(names[v.PrintedName()], v.Name) {
			names[v.PrintedName()] = append(names[v.PrintedName()], v.Name)
		}
	})
	unique := make(map[string]string, len(names))
	for printed, tree := range names {
		if len(tree) == 1 {
			unique[printed] = tree[0]
		}
	}
	return unique
}

// rekey keys the rows of printed by the tree's names, leaving out those
// uniqueTreeNames has no name for.
func rekey(tree map[string]string, printed map[string]map[string]float64) map[string]map[string]float64 {
	values := make(map[string]map[string]float64, len(printed))
	for name, m := range printed {
		if t, ok := tree[name]; ok {
			values[t] = m
		}
	}
	return values
}

// fillFromChildren gives a vdev that the vdev properties leave without
// counters the sum of its children's, as zpool iostat adds them up:
// OpenZFS 2.2 and 2.3 keep none in root-0 (it reads 0), and 2.3.2 lists no
// dRAID vdev at all. The pool's row leaves out cache devices and spares,
// which are not under the root.
func fillFromChildren(v *zpool.Vdev, values map[string]map[string]float64, isRoot bool) {
	for _, c := range v.Children {
		fillFromChildren(c, values, false)
	}
	if m, ok := values[v.Name]; ok && len(m) == len(vdevIOProperties) && !(isRoot && allZero(m)) {
		return
	}
	sum := map[string]float64{}
	for _, c := range v.Children {
		m, ok := values[c.Name]
		if !ok || len(m) != len(vdevIOProperties) || isRoot && (c.Class == zpool.ClassCache || c.Class == zpool.ClassSpare) {
			continue
		}
		for prop, x := range m {
			sum[prop] += x
		}
	}
	if len(sum) == len(vdevIOProperties) {
		values[v.Name] = sum
	}
}

func allZero(m map[string]float64) bool {
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// vdevIOProperties are the vdev properties of the I/O counters.
var vdevIOProperties = []string{"read_bytes", "write_bytes", "read_ops", "write_ops"}

// vdevSlowProperties are OpenZFS 2.4's settings and state for slow disks,
// read in the same run where zpool knows them, with their gauges.
var (
	vdevSlowProperties = []string{"sit_out", "autosit", "slow_io_events"}
	vdevSlowDescs      = map[string]*prometheus.Desc{
		"sit_out": desc("vdev", "sit_out",
			"1 while ZFS sits the leaf out of its raidz or dRAID vdev for being slow, rebuilding its reads from the others (OpenZFS 2.4 on).", "pool", "vdev"),
		"autosit": desc("vdev", "autosit",
			"1 when the raidz or dRAID vdev sits out on its own a leaf it finds slow (property autosit; OpenZFS 2.4 on).", "pool", "vdev"),
		"slow_io_events": desc("vdev", "slow_io_events",
			"1 when the vdev posts events for its slow I/Os (property slow_io_events; OpenZFS 2.4 on).", "pool", "vdev"),
	}
)

// vdevAskedProperties are the vdev properties the collector asks for, in
// one zpool run: the counters, ashift (vdev_capacity.go), and last the
// properties of later releases, which zpool may refuse.
var vdevAskedProperties = slices.Concat(vdevIOProperties, vdevAshiftProperties, vdevSlowProperties)
