package collector

import (
	"context"
	"log/slog"
	"path"
	"slices"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

func init() {
	register("events", true, "The kernel's ZFS events, from one long-running zpool events -vHf: counts by pool and class, by vdev for the events that name one, and the events the kernel dropped (OpenZFS on Linux and FreeBSD)", newEventsCollector)
}

var (
	poolEventsDesc    = desc("pool", "events_total", "Events of the pool counted since the exporter started, by class (ereport.fs.zfs.checksum, resource.fs.zfs.statechange, sysevent.fs.zfs.resilver_finish, ...): those the kernel's queue held then, and every later one.", "pool", "class")
	poolEventTimeDesc = desc("pool", "event_last_timestamp_seconds", "When the pool's latest event of the class was posted, in seconds since the epoch.", "pool", "class")
	vdevEventsDesc    = desc("vdev", "events_total", "Events that name the vdev, by class: checksum, I/O and delay (slow I/O) ereports, state changes.", "pool", "vdev", "class")
	eventsDroppedDesc = desc("events", "dropped_total", "Events the kernel dropped from its queue (zfs_zevent_len_max) while the exporter followed it, before it read them.")
	eventsUpDesc      = desc("exporter", "events_following", "Whether the zpool events stream is open: 0 while it is restarted.")
)

// vdevEventClasses are the classes of a leaf's events that the alerts
// watch, and poolEventClasses those of a pool's that the alerts and the
// boards' annotations watch: every leaf and pool has them from the start,
// at 0, so that the first event of each is an increase that Prometheus
// sees.
var (
	vdevEventClasses = []string{events.ClassChecksum, events.ClassIO, events.ClassDelay}
	poolEventClasses = []string{events.ClassChecksum, events.ClassIO, events.ClassDelay, events.ClassDeadman,
		events.ClassStateChange, events.ClassResilverStart, events.ClassResilverFinish, events.ClassScrubStart, events.ClassScrubFinish}
)

type eventsCollector struct {
	follower *EventFollower
}

func newEventsCollector(cfg Config, _ *slog.Logger) (Collector, error) {
	return &eventsCollector{follower: cfg.Events}, nil
}

func (c *eventsCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	if c.follower == nil {
		return nil
	}
	c.follower.Need()
	counts, following, ok := c.follower.Counts()
	if !ok {
		return nil // not known yet, or this zpool has no events
	}
	st, err := s.Status(ctx)
	if err != nil {
		st = &zpool.Status{} // the counts stand without it; leaves are named by their paths
	}
	names := map[string]*vdevNames{}
	for _, p := range st.Pools {
		names[p.Name] = newVdevNames(p)
		if counts.Pools[p.Name] == nil {
			counts.Pools[p.Name] = &PoolEvents{}
		}
	}
	for pool, pe := range counts.Pools {
		for _, class := range poolEventClasses {
			if _, ok := pe.Classes[class]; !ok && names[pool] != nil {
				counter(ch, poolEventsDesc, 0, pool, class)
			}
		}
		for class, ce := range pe.Classes {
			counter(ch, poolEventsDesc, float64(ce.Count), pool, class)
			gauge(ch, poolEventTimeDesc, float64(ce.Last.UnixNano())/1e9, pool, class)
		}
		// Two GUIDs may come to one name: a disk replaced by another at
		// the same path. Their events add up.
		byVdev := map[[2]string]uint64{}
		for key, n := range pe.Vdevs {
			if vdev := names[pool].name(key.GUID, pe.Paths[key.GUID]); vdev != "" {
				byVdev[[2]string{vdev, key.Class}] += n
			}
		}
		if n := names[pool]; n != nil {
			for _, leaf := range n.leaves {
				for _, class := range vdevEventClasses {
					if _, ok := byVdev[[2]string{leaf, class}]; !ok {
						byVdev[[2]string{leaf, class}] = 0
					}
				}
			}
		}
		for k, n := range byVdev {
			counter(ch, vdevEventsDesc, float64(n), pool, k[0], k[1])
		}
	}
	counter(ch, eventsDroppedDesc, float64(counts.Dropped))
	up := 0.0
	if following {
		up = 1
	}
	gauge(ch, eventsUpDesc, up)
	return nil
}

// vdevNames names the vdevs of events as the other vdev series do: by the
// GUID that JSON status gives, else by the device path.
type vdevNames struct {
	byGUID map[string]string // decimal GUID → vdev name
	byPath map[string]string
	leaves []string
}

func newVdevNames(p *zpool.Pool) *vdevNames {
	n := &vdevNames{byGUID: map[string]string{}, byPath: map[string]string{}}
	if p == nil || p.Root == nil {
		return n
	}
	p.Root.Walk(func(v *zpool.Vdev, _ string) {
		if v.GUID != "" {
			n.byGUID[v.GUID] = v.Name
		}
		if v.Path != "" {
			n.byPath[v.Path] = v.Name
		}
		if len(v.Children) == 0 && v.Type != "root" && v.Class != zpool.ClassSpare {
			n.leaves = append(n.leaves, v.Name)
		}
	})
	return n
}

// name is the vdev of an event: by GUID (JSON status), else by device
// path, else by the path's last element if a leaf has that name, else as
// zpool names a whole disk's leaf (zpool.LeafName; a vdev gone since);
// "" when the event gives neither GUID nor path.
func (n *vdevNames) name(guid uint64, devPath string) string {
	if n != nil {
		if name, ok := n.byGUID[strconv.FormatUint(guid, 10)]; ok {
			return name
		}
		if name, ok := n.byPath[devPath]; ok && devPath != "" {
			return name
		}
	}
	if devPath == "" {
		return ""
	}
	if base := path.Base(devPath); n != nil && slices.Contains(n.leaves, base) {
		return base
	}
	return zpool.LeafName(devPath)
}
