package poolconfig

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// FromMetrics reads a pool's configuration from zpool_exporter's metrics,
// for a benchmark run on a machine without zpool (a client copying to
// the pool over SMB or iSCSI): the vdev tree of zfs_vdev_info, the states,
// the vdevs' ashift, the root dataset's compression and recordsize, and
// the ZFS release. families are a scrape of the exporter by family name;
// pool may be empty when the exporter knows one pool only.
func FromMetrics(families map[string]*dto.MetricFamily, pool string) (Config, error) {
	type vdev struct{ name, typ, class, parent string }
	byPool := map[string][]vdev{}
	for _, m := range metrics(families, "zfs_vdev_info") {
		l := labels(m)
		byPool[l["pool"]] = append(byPool[l["pool"]], vdev{l["vdev"], l["vdev_type"], l["class"], l["parent"]})
	}
	names := make([]string, 0, len(byPool))
	for name := range byPool {
		names = append(names, name)
	}
	slices.Sort(names)
	switch {
	case len(names) == 0:
		return Config{}, fmt.Errorf("%w %q: the exporter serves no zfs_vdev_info (no pools, or its status collector is off)", ErrUnknownPool, pool)
	case pool == "" && len(names) > 1:
		return Config{}, fmt.Errorf("no pool named, and the exporter serves several: %s", strings.Join(names, ", "))
	case pool == "":
		pool = names[0]
	case byPool[pool] == nil:
		return Config{}, fmt.Errorf("%w %q: the exporter serves pools %s", ErrUnknownPool, pool, strings.Join(names, ", "))
	}

	states := map[string]string{} // by vdev; the pool's under its name
	for _, m := range metrics(families, "zfs_vdev_state") {
		if l := labels(m); l["pool"] == pool && m.GetGauge().GetValue() == 1 {
			states[l["vdev"]] = l["state"]
		}
	}
	cfg := Config{Pool: pool}
	for _, m := range metrics(families, "zfs_pool_state") {
		if l := labels(m); l["pool"] == pool && m.GetGauge().GetValue() == 1 {
			cfg.State = l["state"]
		}
	}

	// Width counts the positions under a top-level vdev as positions does
	// on zpool's tree: a replacing or spare vdev is one.
	children := map[string][]vdev{}
	for _, v := range byPool[pool] {
		children[v.parent] = append(children[v.parent], v)
	}
	var width func(v vdev) int
	width = func(v vdev) int {
		kids := children[v.name]
		if len(kids) == 0 || v.typ == "replacing" || v.typ == "spare" {
			return 1
		}
		n := 0
		for _, c := range kids {
			n += width(c)
		}
		return n
	}
	ashift := map[string]int{}
	for _, m := range metrics(families, "zfs_vdev_ashift") {
		if l := labels(m); l["pool"] == pool {
			ashift[l["vdev"]] = int(m.GetGauge().GetValue())
		}
	}
	for _, v := range children[pool] {
		if v.typ == "root" {
			continue
		}
		cfg.Vdevs = append(cfg.Vdevs, Vdev{Name: v.name, Type: v.typ, Class: v.class, Width: width(v), State: states[v.name], Ashift: ashift[v.name]})
	}
	// zpool status's order is not in the metrics: by class as Layout
	// lists them, then by name, numbers in order (mirror-2 before mirror-10).
	slices.SortFunc(cfg.Vdevs, func(a, b Vdev) int {
		return cmp.Or(cmp.Compare(slices.Index(layoutClasses, a.Class), slices.Index(layoutClasses, b.Class)), naturalCompare(a.Name, b.Name))
	})
	cfg.Layout = Layout(cfg.Vdevs)
	if cfg.Layout == "" {
		cfg.missing("layout", "the exporter serves no vdevs of the pool")
	}
	if cfg.State == "" {
		cfg.missing("state", "the exporter serves no zfs_pool_state of the pool")
	}

	if a, ok, reason := commonAshift(cfg.Vdevs); ok {
		cfg.Ashift = a
	} else {
		for _, m := range metrics(families, "zfs_pool_info") {
			if l := labels(m); l["pool"] == pool {
				cfg.Ashift, _ = strconv.Atoi(l["ashift"])
			}
		}
		if cfg.Ashift == 0 {
			if reason == "" {
				reason = "the exporter serves no zfs_vdev_ashift of the pool's vdevs (OpenZFS before 2.2)"
			}
			cfg.missing("ashift", "%s, and the pool's ashift property is 0 (chosen per vdev)", reason)
		}
	}

	for _, m := range metrics(families, "zfs_dataset_info") {
		if l := labels(m); l["pool"] == pool && l["dataset"] == pool {
			cfg.Compression = l["compression"]
			cfg.Recordsize, _ = strconv.ParseInt(l["block_size"], 10, 64)
		}
	}
	if cfg.Compression == "" {
		cfg.missing("compression", "the exporter serves no zfs_dataset_info of the pool's root dataset (its dataset collector is off, or leaves it out)")
	}
	if cfg.Recordsize == 0 {
		cfg.missing("recordsize", "the exporter serves no block size of the pool's root dataset")
	}

	for _, m := range metrics(families, "zfs_version_info") {
		if l := labels(m); l["userland"] != "" || l["kernel"] != "" {
			cfg.Version = releaseName(l["userland"], l["kernel"], "")
		}
	}
	if cfg.Version == "" {
		cfg.missing("version", "the exporter serves no zfs_version_info (a zpool without a version command)")
	}
	return cfg, nil
}

func metrics(families map[string]*dto.MetricFamily, name string) []*dto.Metric {
	if f := families[name]; f != nil {
		return f.GetMetric()
	}
	return nil
}

func labels(m *dto.Metric) map[string]string {
	l := make(map[string]string, len(m.GetLabel()))
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// naturalCompare orders names with their trailing numbers as numbers.
func naturalCompare(a, b string) int {
	split := func(s string) (string, int) {
		i := len(s)
		for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			i--
		}
		n, err := strconv.Atoi(s[i:])
		if err != nil {
			return s, -1
		}
		return s[:i], n
	}
	as, an := split(a)
	bs, bn := split(b)
	return cmp.Or(cmp.Compare(as, bs), cmp.Compare(an, bn), cmp.Compare(a, b))
}
