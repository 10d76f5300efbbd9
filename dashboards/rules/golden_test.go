package rules_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"

	"go.yaml.in/yaml/v3"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
	"github.com/zpool-exporter/zpool_exporter/dashboards/rules"
)

// The rules run over the exporter's real expositions (collector/testdata),
// held constant for half an hour: the label shapes of real pools, spares
// and vdev trees, not the ones the hand-written unit tests assume.

type inputSeries struct {
	Series string `yaml:"series"`
	Values string `yaml:"values"`
}

type expAlert struct {
	ExpLabels      map[string]string `yaml:"exp_labels"`
	ExpAnnotations map[string]string `yaml:"exp_annotations,omitempty"`
}

type alertTest struct {
	EvalTime  string     `yaml:"eval_time"`
	Alertname string     `yaml:"alertname"`
	ExpAlerts []expAlert `yaml:"exp_alerts"`
}

type expSample struct {
	Labels string  `yaml:"labels"`
	Value  float64 `yaml:"value"`
}

type exprTest struct {
	EvalTime   string      `yaml:"eval_time"`
	Expr       string      `yaml:"expr"`
	ExpSamples []expSample `yaml:"exp_samples"`
}

type testGroup struct {
	Interval    string        `yaml:"interval"`
	InputSeries []inputSeries `yaml:"input_series"`
	AlertTests  []alertTest   `yaml:"alert_rule_test,omitempty"`
	ExprTests   []exprTest    `yaml:"promql_expr_test,omitempty"`
}

const goldenInstance = "nas:9134"

// goldenInput turns an exposition into input series of the job the
// default selector picks, each constant for 30 minutes.
func goldenInput(t *testing.T, name string) []inputSeries {
	t.Helper()
	path := filepath.Join(filepath.Dir(contract.GoldenGlob), name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []inputSeries
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", name, line, err)
		}
		metric, labels := line[:i], ""
		if j := strings.IndexByte(metric, '{'); j >= 0 {
			metric, labels = line[:j], ","+strings.TrimSuffix(line[j+1:i], "}")
		}
		out = append(out, inputSeries{
			Series: metric + `{job="zfs",instance="` + goldenInstance + `"` + labels + "}",
			Values: strconv.FormatFloat(v, 'f', -1, 64) + "x30",
		})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func alertLabels(severity string, labels map[string]string) map[string]string {
	l := map[string]string{"job": "zfs", "instance": goldenInstance, "severity": severity}
	for k, v := range labels {
		l[k] = v
	}
	return l
}

// quiet lists alerts that must not fire on an exposition held constant.
func quiet(names ...string) []alertTest {
	var out []alertTest
	for _, n := range names {
		out = append(out, alertTest{EvalTime: "20m", Alertname: n, ExpAlerts: []expAlert{}})
	}
	return out
}

func poolRates(pools ...string) []expSample {
	var out []expSample
	for _, p := range pools {
		out = append(out, expSample{Labels: config.RecordPoolWriteBytesRate + `{job="zfs",instance="` + goldenInstance + `",pool="` + p + `"}`, Value: 0})
	}
	return out
}

func topLevelCounts(counts map[string]float64) []expSample {
	var out []expSample
	for p, n := range counts {
		out = append(out, expSample{Labels: `{pool="` + p + `"}`, Value: n})
	}
	return out
}

func TestRulesOverGoldenExpositions(t *testing.T) {
	bin := contract.Promtool(t)
	always := []string{
		rules.AlertVdevErrorsIncreasing, rules.AlertPoolDataErrors, rules.AlertPoolCapacityWarning,
		rules.AlertResilverStalled, rules.AlertScrubOverdue, rules.AlertSourceStale,
		rules.AlertCollectorFailing, rules.AlertPoolMetricsAbsent, rules.AlertPoolSuspended,
		rules.AlertVdevSlowDisk, rules.AlertVdevSlowIOsIncreasing,
		rules.AlertPoolFillingUp, rules.AlertPoolFragmentationHigh, rules.AlertPoolReadOnly, rules.AlertVersionMismatch, rules.AlertPoolOperationStalled,
		rules.AlertVdevEreportsIncreasing, rules.AlertVdevDelayEventsIncreasing, rules.AlertPoolDeadman, rules.AlertEventsDropped,
	}
	datasetAlerts := []string{rules.AlertDatasetQuotaNearlyFull, rules.AlertSnapshotsStale, rules.AlertDatasetKeyUnavailable}
	countTop := "count by (pool) (" + config.RecordTopVdevWriteBytesRate + ")"
	pointer := rules.RunbookURL + "zfspoolnotonline"
	groups := []testGroup{
		// OpenZFS 2.3: r10 degraded (a faulted disk in mirror-0), rz1 with
		// a log, a cache and an available spare.
		{
			InputSeries: goldenInput(t, "openzfs-2.3-09-errors-repaired.prom"),
			AlertTests: append(quiet(append(always, rules.AlertVdevNotOnline, rules.AlertHotSpareInUse)...), alertTest{
				EvalTime: "20m", Alertname: rules.AlertPoolNotOnline,
				ExpAlerts: []expAlert{{
					ExpLabels: alertLabels("critical", map[string]string{"pool": "r10", "state": "degraded"}),
					ExpAnnotations: map[string]string{
						"summary":     "ZFS pool r10 is degraded.",
						"description": "Pool r10 on nas:9134 is degraded: it runs with less redundancy than it was built with, or some of its data is unreachable. Vdev mirror-0 is degraded. Vdev virtio-zd03 is faulted. See zpool status -v r10.",
						"runbook_url": pointer,
					},
				}},
			}),
			ExprTests: []exprTest{
				{EvalTime: "20m", Expr: config.RecordPoolWriteBytesRate, ExpSamples: poolRates("r10", "rz1", "scratch", "tank")},
				// The mirrors, the raidz and the log device (the cache and
				// the spare have no write counters here); a single disk.
				{EvalTime: "20m", Expr: countTop, ExpSamples: topLevelCounts(map[string]float64{"r10": 2, "rz1": 2, "scratch": 1, "tank": 1})},
			},
		},
		// zfs-fuse: a raidz with a disk offline.
		{
			InputSeries: goldenInput(t, "zfs-fuse-001.prom"),
			AlertTests: append(quiet(append(always, rules.AlertVdevNotOnline, rules.AlertHotSpareInUse)...), alertTest{
				EvalTime: "20m", Alertname: rules.AlertPoolNotOnline,
				ExpAlerts: []expAlert{{
					ExpLabels: alertLabels("critical", map[string]string{"pool": "backup", "state": "degraded"}),
					ExpAnnotations: map[string]string{
						"summary":     "ZFS pool backup is degraded.",
						"description": "Pool backup on nas:9134 is degraded: it runs with less redundancy than it was built with, or some of its data is unreachable. Vdev /var/tmp/zfs-fuse-replay/b2 is offline. Vdev raidz1-0 is degraded. See zpool status -v backup.",
						"runbook_url": pointer,
					},
				}},
			}),
			ExprTests: []exprTest{
				{EvalTime: "20m", Expr: config.RecordPoolWriteBytesRate, ExpSamples: poolRates("backup", "tank")},
			},
		},
		// zfs-fuse: the hot spare stands in, inside spare-2.
		{
			InputSeries: goldenInput(t, "zfs-fuse-002.prom"),
			AlertTests: append(quiet(append(always, rules.AlertVdevNotOnline, rules.AlertPoolNotOnline)...), alertTest{
				EvalTime: "20m", Alertname: rules.AlertHotSpareInUse,
				ExpAlerts: []expAlert{{
					ExpLabels: alertLabels("warning", map[string]string{"pool": "backup", "vdev": "/var/tmp/zfs-fuse-replay/b4", "state": "inuse"}),
					ExpAnnotations: map[string]string{
						"summary":     "Hot spare /var/tmp/zfs-fuse-replay/b4 of pool backup is in use.",
						"description": "Hot spare /var/tmp/zfs-fuse-replay/b4 of pool backup on nas:9134 stands in for a failed device: the pool has one spare fewer for the next failure until the failed device is replaced or detached.",
						"runbook_url": rules.RunbookURL + "zfshotspareinuse",
					},
				}},
			}),
			ExprTests: []exprTest{
				{EvalTime: "20m", Expr: countTop, ExpSamples: topLevelCounts(map[string]float64{"backup": 1, "tank": 1})},
			},
		},
		// OpenZFS 2.3, all healthy after a scrub.
		{
			InputSeries: goldenInput(t, "openzfs-2.3-04-scrubbed-healthy.prom"),
			AlertTests:  quiet(append(always, rules.AlertVdevNotOnline, rules.AlertPoolNotOnline, rules.AlertHotSpareInUse, rules.AlertVdevErrorsPresent)...),
		},
		// The datasets of zfs-fuse and of OpenZFS 2.3 (a volume, an
		// encrypted filesystem with its key loaded): quotas and
		// refquotas with room left, snapshots and listings whose times
		// are all after the test's clock.
		{
			InputSeries: goldenInput(t, "dataset-zfs-fuse.prom"),
			AlertTests:  quiet(append(always, datasetAlerts...)...),
		},
		{
			InputSeries: goldenInput(t, "dataset-openzfs-2.3.prom"),
			AlertTests:  quiet(append(always, datasetAlerts...)...),
		},
	}
	// The events of the OpenZFS 2.4 guest's walk, as the events collector
	// counts them from zpool events: the checksum, I/O and delay
	// ereports of every leaf at 0, state changes, scrubs and resilvers.
	// Counts that stand still are no new event.
	events, err := filepath.Glob(filepath.Join(filepath.Dir(contract.GoldenGlob), "events-*.prom"))
	if err != nil || len(events) == 0 {
		t.Fatalf("no golden expositions of events (%v)", err)
	}
	for _, path := range events {
		groups = append(groups, testGroup{
			InputSeries: goldenInput(t, filepath.Base(path)),
			AlertTests:  quiet(always...),
		})
	}
	for i := range groups {
		groups[i].Interval = "1m"
	}

	dir := t.TempDir()
	files, err := rules.Files(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	var ruleFiles []string
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ruleFiles = append(ruleFiles, path)
	}
	data, err := yaml.Marshal(map[string]any{
		"rule_files":          ruleFiles,
		"evaluation_interval": "1m",
		"tests":               groups,
	})
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(dir, "golden.yaml")
	if err := os.WriteFile(unit, data, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "test", "rules", unit)
	cmd.Env = append(os.Environ(), "TMPDIR="+scratchDir(t))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules over the golden expositions: %v\n%s", err, out)
	}
}
