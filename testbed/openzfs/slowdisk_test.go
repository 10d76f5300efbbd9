package openzfs

import (
	"bufio"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// slowDiskAlert is the alert the slow-disk scenario must raise for the
// throttled leaf and for no other vdev.
const slowDiskAlert = "ZFSVdevSlowDisk"

// slowDiskFamilies are the families the slow-disk rules read; the rest of
// each exposition is left out of the unit test.
var slowDiskFamilies = []string{
	"zfs_vdev_disk_wait_seconds_bucket", "zfs_vdev_disk_wait_seconds_count", "zfs_vdev_disk_wait_seconds_sum",
	"zfs_vdev_info", "zfs_vdev_sit_out", "zfs_vdev_autosit", "zfs_vdev_slow_ios_total", "zfs_vdev_state", "zfs_pool_state",
}

// slowDiskRuleTest turns expositions scraped every interval into a
// promtool unit test of the mixin's rules: at the last scrape the slow-disk
// alert's expression must select pool's leaf and nothing else. The
// alert's for is longer than the scenario, so the alert is pending:
// ALERTS has it either way.
func slowDiskRuleTest(header string, expositions []string, interval time.Duration, pool, leaf string) (string, error) {
	return alertRuleTest(alertCase{
		header: header, expositions: expositions, interval: interval, families: slowDiskFamilies,
		alert: slowDiskAlert, by: []string{"pool", "vdev"}, want: []string{pool, leaf},
	})
}

// alertCase is a promtool unit test of one of the mixin's alerts over real
// scrapes.
type alertCase struct {
	header      string
	expositions []string // one per interval
	interval    time.Duration
	families    []string // those the alert reads: the rest is left out
	alert       string
	// At the last scrape, the alert has one series, whose labels by have
	// the values want.
	by, want []string
	firing   bool // firing, where pending would do too
}

// alertRuleTest writes the unit test of c, its rule_files relative to
// dashboards/tests.
func alertRuleTest(c alertCase) (string, error) {
	values := map[string][]string{}
	for i, text := range c.expositions {
		sc := bufio.NewScanner(strings.NewReader(text))
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			s := sc.Text()
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			series, value, ok := cutLast(s)
			if !ok {
				return "", fmt.Errorf("exposition %d, line %d: no value in %q", i, line, s)
			}
			name, _, _ := strings.Cut(series, "{")
			if !slices.Contains(c.families, name) {
				continue
			}
			v, seen := values[series]
			if !seen {
				v = slices.Repeat([]string{"_"}, len(c.expositions))
				values[series] = v
			}
			v[i] = value
		}
		if err := sc.Err(); err != nil {
			return "", fmt.Errorf("exposition %d: %v", i, err)
		}
	}
	if len(values) == 0 {
		return "", fmt.Errorf("no series of %v in %d expositions", c.families, len(c.expositions))
	}
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimRight(c.header, "\n"), "\n") {
		fmt.Fprintf(&b, "# %s\n", line)
	}
	fmt.Fprintf(&b, "rule_files:\n  - ../out/rules/zfs-alerts.yaml\n  - ../out/rules/zfs-rules.yaml\nevaluation_interval: %s\n\n", promDuration(c.interval))
	fmt.Fprintf(&b, "tests:\n  - interval: %s\n    input_series:\n", promDuration(c.interval))
	for _, series := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(&b, "      - series: '%s'\n        values: '%s'\n", withTarget(series), strings.Join(values[series], " "))
	}
	selector := fmt.Sprintf("alertname=%q", c.alert)
	if c.firing {
		selector += `, alertstate="firing"`
	}
	fmt.Fprintf(&b, "    promql_expr_test:\n      - expr: group by (%s) (ALERTS{%s})\n", strings.Join(c.by, ", "), selector)
	fmt.Fprintf(&b, "        eval_time: %s\n        exp_samples:\n", promDuration(time.Duration(len(c.expositions)-1)*c.interval))
	var labels []string
	for i, l := range c.by {
		labels = append(labels, fmt.Sprintf("%s=%q", l, c.want[i]))
	}
	fmt.Fprintf(&b, "          - labels: '{%s}'\n            value: 1\n", strings.Join(labels, ", "))
	return b.String(), nil
}

// cutLast splits an exposition line at its last space: the series and
// its value (the exporter writes no timestamps).
func cutLast(line string) (series, value string, ok bool) {
	i := strings.LastIndexByte(line, ' ')
	if i <= 0 {
		return "", "", false
	}
	return line[:i], line[i+1:], true
}

// withTarget adds the labels Prometheus gives a scraped series, with the
// job the mixin's selector picks.
func withTarget(series string) string {
	const target = `job="zfs",instance="guest:9134"`
	name, labels, ok := strings.Cut(series, "{")
	if !ok {
		return name + "{" + target + "}"
	}
	return name + "{" + target + "," + labels
}

// promDuration writes d in whole seconds, as Prometheus reads durations.
func promDuration(d time.Duration) string {
	return fmt.Sprintf("%ds", int(d.Round(time.Second).Seconds()))
}

func TestSlowDiskRuleTest(t *testing.T) {
	first := `# HELP zfs_vdev_sit_out x
# TYPE zfs_vdev_sit_out gauge
zfs_vdev_sit_out{pool="slow",vdev="virtio-zd24"} 0
zfs_exporter_build_info{version="1"} 1
`
	second := first + `zfs_vdev_disk_wait_seconds_bucket{pool="slow",type="write",vdev="virtio-zd24",le="+Inf"} 1.5e+06
`
	got, err := slowDiskRuleTest("made here\nfor a test", []string{first, second}, 10*time.Second, "slow", "virtio-zd24")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# made here\n# for a test\n",
		"evaluation_interval: 10s\n",
		`      - series: 'zfs_vdev_sit_out{job="zfs",instance="guest:9134",pool="slow",vdev="virtio-zd24"}'` + "\n        values: '0 0'\n",
		`      - series: 'zfs_vdev_disk_wait_seconds_bucket{job="zfs",instance="guest:9134",pool="slow",type="write",vdev="virtio-zd24",le="+Inf"}'` + "\n        values: '_ 1.5e+06'\n",
		"        eval_time: 10s\n",
		`          - labels: '{pool="slow", vdev="virtio-zd24"}'`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the unit test lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "zfs_exporter_build_info") {
		t.Errorf("a family the rules do not read was kept:\n%s", got)
	}
	if _, err := slowDiskRuleTest("", []string{first}, time.Second, "slow", "x"); err != nil {
		t.Errorf("one exposition of a kept family: %v", err)
	}
	if _, err := slowDiskRuleTest("", []string{"zfs_exporter_build_info 1\n"}, time.Second, "slow", "x"); err == nil {
		t.Error("expositions without any kept family gave a test")
	}
}
