package e2e

import (
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
	compared := 0
	for line := range strings.Lines(get) {
		f := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(f) != 3 || strings.ContainsAny(f[0], "@#") {
			continue
		}
		name, prop, value := f[0], f[1], strings.TrimSuffix(f[2], "x")
		metric, ok := DatasetFigures[prop]
		if !ok {
			t.Errorf("zfs get printed %s, which no metric exports", prop)
			continue
		}
		got, exported := m.Get(metric, map[string]string{"dataset": name})
		want, err := strconv.ParseFloat(value, 64)
		none := value == "-" || (want == 0 && (prop == "quota" || prop == "refquota" || prop == "reservation" || prop == "refreservation"))
		switch {
		case none && exported:
			t.Errorf("%s %s is %q in zfs get, exported as %s %v", name, prop, f[2], metric, got)
		case none:
		case err != nil || !exported || got != want:
			t.Errorf("%s %s is %s in zfs get, exported as %s %v (present %v)", name, prop, f[2], metric, got, exported)
		default:
			compared++
		}
	}
	return compared
}
