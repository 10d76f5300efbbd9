package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// DatasetFigures maps each numeric property of `zfs get` to the metric
// that the dataset collector exports it as.
var DatasetFigures = map[string]string{
	"used": "zfs_dataset_used_bytes", "available": "zfs_dataset_available_bytes", "referenced": "zfs_dataset_referenced_bytes",
	"logicalused": "zfs_dataset_logical_used_bytes", "logicalreferenced": "zfs_dataset_logical_referenced_bytes",
	"written":       "zfs_dataset_written_bytes",
	"usedbydataset": "zfs_dataset_used_by_dataset_bytes", "usedbychildren": "zfs_dataset_used_by_children_bytes",
	"usedbysnapshots": "zfs_dataset_used_by_snapshots_bytes", "usedbyrefreservation": "zfs_dataset_used_by_refreservation_bytes",
	"quota": "zfs_dataset_quota_bytes", "refquota": "zfs_dataset_refquota_bytes",
	"reservation": "zfs_dataset_reservation_bytes", "refreservation": "zfs_dataset_refreservation_bytes",
	"volsize": "zfs_dataset_volume_size_bytes", "compressratio": "zfs_dataset_compression_ratio",
}

// CompareDatasets checks m against get, the output of `zfs get -Hp -o
// name,property,value` of some of DatasetFigures' properties: every
// figure of a filesystem or volume is exported with the value zfs
// printed, and a property zfs prints as "-", or a quota or reservation of
// 0 (none), has no series. It returns how many figures it compared.
func CompareDatasets(t testing.TB, m Metrics, get string) int {
	t.Helper()
	mismatches, compared := DatasetMismatches(m, get)
	for _, e := range mismatches {
		t.Error(e)
	}
	return compared
}

// DatasetMismatches is CompareDatasets' check, returning each figure
// that differs instead of reporting it, for a caller that reads again
// while a pool's figures still move.
func DatasetMismatches(m Metrics, get string) (mismatches []string, compared int) {
	for line := range strings.Lines(get) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 3 || strings.ContainsAny(f[0], "@#") {
			continue
		}
		name, prop, value := f[0], f[1], strings.TrimSuffix(f[2], "x")
		metric, ok := DatasetFigures[prop]
		if !ok {
			mismatches = append(mismatches, fmt.Sprintf("zfs get printed %s, which no metric exports", prop))
			continue
		}
		got, exported := m.Get(metric, map[string]string{"dataset": name})
		want, err := strconv.ParseFloat(value, 64)
		none := value == "-" || (want == 0 && (prop == "quota" || prop == "refquota" || prop == "reservation" || prop == "refreservation"))
		switch {
		case none && exported:
			mismatches = append(mismatches, fmt.Sprintf("%s %s is %q in zfs get, exported as %s %v", name, prop, f[2], metric, got))
		case none:
		case err != nil || !exported || got != want:
			mismatches = append(mismatches, fmt.Sprintf("%s %s is %s in zfs get, exported as %s %v (present %v)", name, prop, f[2], metric, got, exported))
		default:
			compared++
		}
	}
	return mismatches, compared
}

// CompareSnapshots checks m against get, the output of `zfs get -Hp -o
// name,property,value` of creation and used (among others) for some
// datasets and their snapshots: each dataset zfs printed has the count of
// snapshots zfs printed for it, and one with snapshots the creation time
// of its oldest and newest and the sum of their used. It returns how many
// datasets it compared.
func CompareSnapshots(t testing.TB, m Metrics, get string) int {
	t.Helper()
	type summary struct {
		count                int
		oldest, newest, used float64
	}
	datasets := map[string]*summary{}
	for line := range strings.Lines(get) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 3 || strings.Contains(f[0], "#") {
			continue
		}
		name, snapshot, isSnapshot := strings.Cut(f[0], "@")
		s := datasets[name]
		if s == nil {
			s = &summary{}
			datasets[name] = s
		}
		if !isSnapshot {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Errorf("%s@%s %s: %q is not a number", name, snapshot, f[1], f[2])
			continue
		}
		switch f[1] {
		case "creation":
			s.count++
			if s.oldest == 0 || v < s.oldest {
				s.oldest = v
			}
			s.newest = max(s.newest, v)
		case "used":
			s.used += v
		}
	}
	compared := 0
	for name, s := range datasets {
		labels := map[string]string{"dataset": name}
		if got, ok := m.Get("zfs_dataset_snapshots", labels); !ok || got != float64(s.count) {
			t.Errorf("%s has %d snapshots in zfs get, exported %v (present %v)", name, s.count, got, ok)
			continue
		}
		compared++
		for metric, want := range map[string]float64{
			"zfs_dataset_oldest_snapshot_timestamp_seconds": s.oldest,
			"zfs_dataset_newest_snapshot_timestamp_seconds": s.newest,
			"zfs_dataset_snapshots_used_bytes":              s.used,
		} {
			got, ok := m.Get(metric, labels)
			switch {
			case s.count == 0 && ok:
				t.Errorf("%s has no snapshots, exported %s %v", name, metric, got)
			case s.count > 0 && (!ok || got != want):
				t.Errorf("%s: %s %v (present %v), want %v from zfs get", name, metric, got, ok, want)
			}
		}
	}
	return compared
}
