package collector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

func init() {
	register("properties", true, "Pool size, allocation, fragmentation and dedup ratio from zpool get", newPropertiesCollector)
}

var (
	poolSizeDesc          = desc("pool", "size_bytes", "Total size of the pool.", "pool")
	poolAllocatedDesc     = desc("pool", "allocated_bytes", "Space allocated in the pool.", "pool")
	poolFreeDesc          = desc("pool", "free_bytes", "Space free in the pool.", "pool")
	poolFragmentationDesc = desc("pool", "fragmentation_ratio", "Fragmentation of the pool's free space, 0 to 1.", "pool")
	poolDedupDesc         = desc("pool", "dedup_ratio", "Deduplication ratio of the pool (1 without dedup).", "pool")
	poolInfoDesc          = desc("pool", "info", "Pool identity and settings: GUID, on-disk version (empty for feature-flag pools), failmode, readonly, ashift (0: chosen per vdev), autotrim, autoexpand, autoreplace; empty where zpool has no such property.", "pool", "guid", "version", "failmode", "readonly", "ashift", "autotrim", "autoexpand", "autoreplace")
)

// poolValues maps a property to its metric and how to read its value.
var poolValues = []struct {
	property string
	desc     *prometheus.Desc
	parse    func(string) (float64, bool, error)
}{
	{"size", poolSizeDesc, zpool.ParseSize},
	{"allocated", poolAllocatedDesc, zpool.ParseSize},
	{"free", poolFreeDesc, zpool.ParseSize},
	{"fragmentation", poolFragmentationDesc, zpool.ParsePercent},
	{"dedupratio", poolDedupDesc, zpool.ParseRatio},
}

type propertiesCollector struct{ logger *slog.Logger }

func newPropertiesCollector(_ Config, logger *slog.Logger) (Collector, error) {
	return propertiesCollector{logger: logger}, nil
}

func (c propertiesCollector) Update(ctx context.Context, s *zfs.Scrape, ch chan<- prometheus.Metric) error {
	props, err := s.Properties(ctx)
	if err != nil {
		return err
	}
	byPool := map[string]map[string]string{}
	var pools []string
	for _, p := range props {
		if byPool[p.Name] == nil {
			byPool[p.Name] = map[string]string{}
			pools = append(pools, p.Name)
		}
		byPool[p.Name][p.Property] = p.Value
	}
	var errs []error
	for _, pool := range pools {
		// One unreadable value costs that value only.
		if err := collectPoolProperties(pool, byPool[pool], ch); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func collectPoolProperties(pool string, values map[string]string, ch chan<- prometheus.Metric) error {
	gauge(ch, poolInfoDesc, 1, pool, dash(values["guid"]), dash(values["version"]), dash(values["failmode"]), dash(values["readonly"]),
		dash(values["ashift"]), dash(values["autotrim"]), dash(values["autoexpand"]), dash(values["autoreplace"]))
	var errs []error
	for _, pv := range poolValues {
		raw, present := values[pv.property]
		if !present {
			continue
		}
		v, ok, err := pv.parse(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("pool %s: property %s: %w", pool, pv.property, err))
			continue
		}
		if ok {
			gauge(ch, pv.desc, v, pool)
		}
	}
	return errors.Join(errs...)
}

// dash turns zpool's "-" (no value) into an empty label.
func dash(s string) string {
	if s == "-" {
		return ""
	}
	return s
}
