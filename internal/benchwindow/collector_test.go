package benchwindow

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestCollectorLints(t *testing.T) {
	s := NewStore(Options{})
	mustStart(t, s, "raid10", "tank", "")
	problems, err := testutil.CollectAndLint(NewCollector(s))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestCollectorValues(t *testing.T) {
	c := newClock()
	s := NewStore(Options{Now: c.Now, Retention: time.Hour})
	col := NewCollector(s)
	if n := testutil.CollectAndCount(col); n != 1 {
		t.Errorf("empty store: %d series, want only the started counter", n)
	}
	old := mustStart(t, s, "old run", "", "dd if=/dev/zero of=/tank/f")
	c.Advance(10 * time.Second)
	if _, err := s.End(old.ID); err != nil {
		t.Fatal(err)
	}
	c.Advance(5 * time.Second)
	cur := mustStart(t, s, `raid10 "ashift=12" lz4`, "tank", "")

	start := float64(c.Now().Unix())
	want := `
# HELP zfs_benchmark_window_active 1 while the benchmark window is running, 0 once it ended; one series per window still retained (--benchmark.retention). window is its id in the API, name the run's name, pool the pool benchmarked (empty when not given). Dashboards draw windows from zfs_benchmark_window_active == 1.
# TYPE zfs_benchmark_window_active gauge
zfs_benchmark_window_active{name="old run",pool="",window="` + old.ID + `"} 0
zfs_benchmark_window_active{name="raid10 \"ashift=12\" lz4",pool="tank",window="` + cur.ID + `"} 1
# HELP zfs_benchmark_window_end_time_seconds When the benchmark window ended, in seconds since the Unix epoch; absent while it runs.
# TYPE zfs_benchmark_window_end_time_seconds gauge
zfs_benchmark_window_end_time_seconds{name="old run",pool="",window="` + old.ID + `"} ` + ftoa(start-5) + `
# HELP zfs_benchmark_window_start_time_seconds When the benchmark window started, in seconds since the Unix epoch.
# TYPE zfs_benchmark_window_start_time_seconds gauge
zfs_benchmark_window_start_time_seconds{name="old run",pool="",window="` + old.ID + `"} ` + ftoa(start-15) + `
zfs_benchmark_window_start_time_seconds{name="raid10 \"ashift=12\" lz4",pool="tank",window="` + cur.ID + `"} ` + ftoa(start) + `
# HELP zfs_benchmark_windows_started_total Benchmark windows started through the API since the exporter started, including those no longer retained.
# TYPE zfs_benchmark_windows_started_total counter
zfs_benchmark_windows_started_total 2
`
	if err := testutil.CollectAndCompare(col, strings.NewReader(want)); err != nil {
		t.Error(err)
	}

	// Past the retention the old window's series are gone; the counter
	// still counts it.
	c.Advance(time.Hour)
	if err := testutil.CollectAndCompare(col, strings.NewReader(`
# HELP zfs_benchmark_windows_started_total Benchmark windows started through the API since the exporter started, including those no longer retained.
# TYPE zfs_benchmark_windows_started_total counter
zfs_benchmark_windows_started_total 2
`), "zfs_benchmark_windows_started_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(col, "zfs_benchmark_window_active"); n != 1 {
		t.Errorf("%d active series an hour after the old window ended, want only the running one", n)
	}
	if n := testutil.CollectAndCount(col, "zfs_benchmark_window_end_time_seconds"); n != 0 {
		t.Errorf("%d end times with only a running window, want none", n)
	}

	// It registers beside others without clashing.
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(col); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("pedantic gather: %v", err)
	}
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
