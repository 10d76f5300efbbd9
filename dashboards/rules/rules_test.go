package rules_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
	"github.com/zpool-exporter/zpool_exporter/dashboards/rules"
)

// Paths from dashboards/rules, where go test runs.
const (
	outDir      = "../out/rules"
	testsDir    = "../tests"
	runbookPath = "../RUNBOOK.md"
	// The Helm chart's copy of the rule files, written by cmd/mixin too.
	chartRulesDir = "../../deploy/helm/zpool-exporter/files/rules"
)

type testRule struct {
	Group       string            `yaml:"-"`
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

func (r testRule) name() string {
	if r.Alert != "" {
		return r.Alert
	}
	return r.Record
}

// generated returns every rule of every file Files makes from cfg.
func generated(t *testing.T, cfg config.Config) []testRule {
	t.Helper()
	files, err := rules.Files(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[rules.AlertsFile] == nil || files[rules.RulesFile] == nil {
		t.Fatalf("Files made %d files, want %s and %s", len(files), rules.AlertsFile, rules.RulesFile)
	}
	var all []testRule
	for _, name := range []string{rules.AlertsFile, rules.RulesFile} {
		var f struct {
			Groups []struct {
				Name  string     `yaml:"name"`
				Rules []testRule `yaml:"rules"`
			} `yaml:"groups"`
		}
		if err := yaml.Unmarshal(files[name], &f); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				r.Group = g.Name
				if (r.Alert == "") == (r.Record == "") {
					t.Errorf("%s: group %s: a rule must be an alert or a record: %+v", name, g.Name, r)
				}
				all = append(all, r)
			}
		}
	}
	return all
}

func parse(t *testing.T, r testRule) parser.Expr {
	t.Helper()
	expr, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
	if err != nil {
		t.Fatalf("rule %s (group %s): %v\n%s", r.name(), r.Group, err, r.Expr)
	}
	return expr
}

// selectors returns every vector selector of the expression.
func selectors(expr parser.Expr) []*parser.VectorSelector {
	var out []*parser.VectorSelector
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out
}

func TestCommittedFilesAreGenerated(t *testing.T) {
	checkGeneratedDir(t, outDir, "out/rules")
}

// The Helm chart's copy, from which its PrometheusRule takes its groups,
// is the same generated files: Helm reads only files inside the chart.
func TestChartFilesAreGenerated(t *testing.T) {
	checkGeneratedDir(t, chartRulesDir, "deploy/helm/zpool-exporter/files/rules")
}

// checkGeneratedDir fails for every rule file dir lacks or holds in
// another version than rules.Files makes, and for every file of dir that
// rules.Files does not make. shown is dir as the messages name it.
func checkGeneratedDir(t *testing.T, dir, shown string) {
	t.Helper()
	files, err := rules.Files(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s/%s: %v: run `go run ./cmd/mixin` from dashboards/", shown, name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s/%s differs from what rules.Files makes: run `go run ./cmd/mixin` from dashboards/", shown, name)
		}
	}
	committed, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, path := range committed {
		if files[filepath.Base(path)] == nil {
			t.Errorf("%s/%s is not made by rules.Files: remove it", shown, filepath.Base(path))
		}
	}
}

func TestFilesAreStable(t *testing.T) {
	a, err := rules.Files(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b, err := rules.Files(config.Default())
		if err != nil {
			t.Fatal(err)
		}
		for name := range a {
			if !bytes.Equal(a[name], b[name]) {
				t.Fatalf("%s changes from one run to the next", name)
			}
		}
	}
}

// Prometheus's own rule file parser (the current release's, where
// promtool is an older one) takes both files.
func TestRulefmtAcceptsFiles(t *testing.T) {
	files, err := rules.Files(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		groups, errs := rulefmt.Parse(data, false, model.LegacyValidation, parser.NewParser(parser.Options{}), slog.New(slog.DiscardHandler))
		for _, err := range errs {
			t.Errorf("%s: %v", name, err)
		}
		if groups == nil || len(groups.Groups) == 0 {
			t.Errorf("%s: no rule groups", name)
		}
	}
}

func TestRulesAreWellFormed(t *testing.T) {
	alertNames := map[string]bool{}
	for _, r := range generated(t, config.Default()) {
		parse(t, r)
		if r.Record != "" {
			if strings.Count(r.Record, ":") != 2 {
				t.Errorf("record %s is not named level:metric:operations", r.Record)
			}
			continue
		}
		alertNames[r.Alert] = true
		switch r.Labels["severity"] {
		case "warning", "critical":
		default:
			t.Errorf("alert %s: severity %q, want warning or critical", r.Alert, r.Labels["severity"])
		}
		for _, key := range []string{"summary", "description", "runbook_url"} {
			if strings.TrimSpace(r.Annotations[key]) == "" {
				t.Errorf("alert %s has no %s", r.Alert, key)
			}
		}
		if want := rules.RunbookURL + strings.ToLower(r.Alert); r.Annotations["runbook_url"] != want {
			t.Errorf("alert %s: runbook_url %q, want %q", r.Alert, r.Annotations["runbook_url"], want)
		}
	}
	for _, name := range []string{
		rules.AlertPoolNotOnline, rules.AlertPoolSuspended, rules.AlertVdevNotOnline, rules.AlertHotSpareInUse,
		rules.AlertVdevErrorsIncreasing, rules.AlertPoolDataErrors, rules.AlertPoolCapacityWarning,
		rules.AlertPoolCapacityCritical, rules.AlertResilverStalled, rules.AlertScrubOverdue,
		rules.AlertSourceStale, rules.AlertCollectorFailing, rules.AlertPoolMetricsAbsent,
		rules.AlertDatasetQuotaNearlyFull, rules.AlertSnapshotsStale, rules.AlertDatasetKeyUnavailable,
		rules.AlertVdevSlowDisk, rules.AlertVdevSlowIOsIncreasing,
		rules.AlertVdevEreportsIncreasing, rules.AlertVdevDelayEventsIncreasing, rules.AlertPoolDeadman, rules.AlertEventsDropped,
	} {
		if !alertNames[name] {
			t.Errorf("no alert %s", name)
		}
	}
}

// Every recorded series the dashboards may use has a rule.
func TestEveryRecordConstantIsRecorded(t *testing.T) {
	recorded := map[string]bool{}
	for _, r := range generated(t, config.Default()) {
		recorded[r.Record] = true
	}
	for _, name := range []string{
		config.RecordTopVdevReadBytesRate, config.RecordTopVdevWriteBytesRate,
		config.RecordTopVdevReadOpsRate, config.RecordTopVdevWriteOpsRate,
		config.RecordPoolReadBytesRate, config.RecordPoolWriteBytesRate,
		config.RecordPoolReadOpsRate, config.RecordPoolWriteOpsRate,
		config.RecordARCHitRatio, config.RecordARCHitRatioByKind,
		config.RecordHostCPUBusyRatio, config.RecordEngineCPURate, config.RecordEngineCPUTotalRate,
		config.RecordEngineCPURatio, config.RecordTxgSyncMean, config.RecordTxgSyncQuantile,
		rules.RecordLeafDiskOpsRate(config.Default().SlowDiskWindow),
		rules.RecordLeafDiskWaitQuantile(config.Default().SlowDiskWindow),
	} {
		if !recorded[name] {
			t.Errorf("config names %s, but no rule records it", name)
		}
	}
}

// The selector reaches every series a rule reads, recorded ones included,
// and the thresholds reach the expressions and the words.
func TestConfigReachesEveryRule(t *testing.T) {
	cfg := config.Config{
		Selector:         `job="nas", cluster="eu-1"`,
		CapacityWarning:  0.7,
		CapacityCritical: 0.85,
		ScrubMaxAge:      7 * 24 * time.Hour,
		ResilverStallFor: time.Hour,
		StaleAfter:       10 * time.Minute,

		DatasetQuotaWarning:       0.75,
		SnapshotMaxAge:            3 * 24 * time.Hour,
		SnapshotListingStaleAfter: 2 * time.Hour,

		SlowDiskFactor:     8,
		SlowDiskMinLatency: 120 * time.Millisecond,
		SlowDiskMinOps:     2.5,
		SlowDiskWindow:     20 * time.Minute,
		SlowDiskFor:        45 * time.Minute,
		SlowDiskSitOutFor:  7 * time.Minute,
	}
	all := generated(t, cfg)
	for _, r := range all {
		for _, vs := range selectors(parse(t, r)) {
			var job, cluster bool
			for _, m := range vs.LabelMatchers {
				job = job || (m.Name == "job" && m.Type == labels.MatchEqual && m.Value == "nas")
				cluster = cluster || (m.Name == "cluster" && m.Type == labels.MatchEqual && m.Value == "eu-1")
			}
			if !job || !cluster {
				t.Errorf("rule %s (group %s): selector %s lacks the configured selector", r.name(), r.Group, vs)
			}
		}
		// The annotation's query needs the selector as well.
		if strings.Contains(r.Annotations["description"], "query") && !strings.Contains(r.Annotations["description"], cfg.Selector) {
			t.Errorf("alert %s: the description's query lacks the configured selector", r.Alert)
		}
	}
	// source picks the rules of ZFSExporterSourceStale for the snapshot
	// listing (source="zfs_list_snapshots") or for the other sources.
	find := func(alert, label, value, source string) testRule {
		t.Helper()
		for _, r := range all {
			if r.Alert == alert && (label == "" || r.Labels[label] == value) &&
				(source == "" || strings.Contains(r.Expr, source)) {
				return r
			}
		}
		t.Fatalf("no alert %s with %s=%q reading %s", alert, label, value, source)
		return testRule{}
	}
	const snapshots, others = `source="zfs_list_snapshots"`, `source!="zfs_list_snapshots"`
	for _, c := range []struct {
		alert, label, value, source string
		expr, forDur, text          string
	}{
		{rules.AlertPoolCapacityWarning, "", "", "", "> 0.7", "5m", "70%"},
		{rules.AlertPoolCapacityCritical, "", "", "", "> 0.85", "5m", "85%"},
		{rules.AlertScrubOverdue, "last_scan", "old", "", "> 604800", "", "7 days"},
		{rules.AlertScrubOverdue, "last_scan", "none", "", "", "7d", "7 days"},
		{rules.AlertResilverStalled, "", "", "", "offset 1h", "", "1 hour"},
		{rules.AlertSourceStale, "last_success", "old", others, "> 600", "", ""},
		{rules.AlertSourceStale, "last_success", "none", others, "", "10m", "10 minutes"},
		{rules.AlertSourceStale, "last_success", "old", snapshots, "> 7200", "", "2 hours"},
		{rules.AlertSourceStale, "last_success", "none", snapshots, "", "2h", "2 hours"},
		{rules.AlertCollectorFailing, "", "", "", "", "10m", "10 minutes"},
		{rules.AlertPoolMetricsAbsent, "", "", "", "", "10m", ""},
		{rules.AlertDatasetQuotaNearlyFull, "quota", "quota", "", "> 0.75", "15m", "75%"},
		{rules.AlertDatasetQuotaNearlyFull, "quota", "refquota", "", "> 0.75", "15m", "75%"},
		{rules.AlertSnapshotsStale, "", "", "", "> 259200", "30m", "3 days"},
		// Held back while the snapshot listing is older than its limit.
		{rules.AlertSnapshotsStale, "", "", "", "> 7200", "30m", ""},
		{rules.AlertVdevSlowDisk, "signal", "latency", "", "8 * min by", "45m", "more than 8 times as long, for 45 minutes"},
		{rules.AlertVdevSlowDisk, "signal", "latency", "", "_seconds:histogram_quantile_rate20m{job=\"nas\", cluster=\"eu-1\", quantile=\"0.9\"} > 0.12", "45m", "over 20 minutes"},
		{rules.AlertVdevSlowDisk, "signal", "latency", "", "disk_operations:rate20m{job=\"nas\", cluster=\"eu-1\"} >= 2.5", "45m", ">= 2.5"},
		{rules.AlertVdevSlowDisk, "signal", "sit_out", "", "", "7m", "7 minutes"},
	} {
		r := find(c.alert, c.label, c.value, c.source)
		if !strings.Contains(r.Expr, c.expr) {
			t.Errorf("alert %s %s: expression lacks %q:\n%s", c.alert, c.value, c.expr, r.Expr)
		}
		if r.For != c.forDur {
			t.Errorf("alert %s %s: for %q, want %q", c.alert, c.value, r.For, c.forDur)
		}
		if !strings.Contains(r.Annotations["summary"]+r.Annotations["description"], c.text) {
			t.Errorf("alert %s %s: annotations do not say %q", c.alert, c.value, c.text)
		}
	}

	// The recorded series of the slow-disk alert are over its window, and
	// named for it.
	for _, name := range []string{rules.RecordLeafDiskOpsRate(cfg.SlowDiskWindow), rules.RecordLeafDiskWaitQuantile(cfg.SlowDiskWindow)} {
		i := slices.IndexFunc(all, func(r testRule) bool { return r.Record == name })
		switch {
		case !strings.HasSuffix(name, "rate20m"):
			t.Errorf("record %s is not named for the 20m window", name)
		case i < 0:
			t.Errorf("no rule records %s", name)
		case !strings.Contains(all[i].Expr, "[20m]") || strings.Contains(all[i].Expr, "[10m]"):
			t.Errorf("record %s is not over the 20m window:\n%s", name, all[i].Expr)
		}
	}

	// No selector at all still makes valid PromQL.
	cfg.Selector = ""
	for _, r := range generated(t, cfg) {
		parse(t, r)
	}
}

func TestBadConfigIsRefused(t *testing.T) {
	for name, change := range map[string]func(*config.Config){
		"warning above critical":   func(c *config.Config) { c.CapacityWarning = 0.95 },
		"critical above 1":         func(c *config.Config) { c.CapacityCritical = 90 },
		"no warning":               func(c *config.Config) { c.CapacityWarning = 0 },
		"scrub age of seconds":     func(c *config.Config) { c.ScrubMaxAge = time.Second },
		"no stall time":            func(c *config.Config) { c.ResilverStallFor = 0 },
		"no stale time":            func(c *config.Config) { c.StaleAfter = 0 },
		"no quota threshold":       func(c *config.Config) { c.DatasetQuotaWarning = 0 },
		"quota threshold of 90":    func(c *config.Config) { c.DatasetQuotaWarning = 90 },
		"snapshot age of a minute": func(c *config.Config) { c.SnapshotMaxAge = time.Minute },
		"snapshot listing stale sooner than the sources": func(c *config.Config) { c.SnapshotListingStaleAfter = time.Minute },
		"snapshot listing as stale as the snapshots":     func(c *config.Config) { c.SnapshotListingStaleAfter = c.SnapshotMaxAge },
		"backquote in selector":                          func(c *config.Config) { c.Selector = "job=`zfs`" },
		"slow-disk factor of 1":                          func(c *config.Config) { c.SlowDiskFactor = 1 },
		"no slow-disk latency":                           func(c *config.Config) { c.SlowDiskMinLatency = 0 },
		"no slow-disk ops":                               func(c *config.Config) { c.SlowDiskMinOps = 0 },
		"slow-disk window of a minute":                   func(c *config.Config) { c.SlowDiskWindow = time.Minute },
		"negative slow-disk for":                         func(c *config.Config) { c.SlowDiskFor = -time.Minute },
		"sit-out for of seconds":                         func(c *config.Config) { c.SlowDiskSitOutFor = time.Second },
	} {
		cfg := config.Default()
		change(&cfg)
		if _, err := rules.Files(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

var (
	templateMetric = regexp.MustCompile(`\bzfs_[a-z0-9_]+`)
	// templateRecord is a recorded series (level:metric:operations) in an
	// annotation's query; its middle part is no metric of the exporter.
	templateRecord = regexp.MustCompile(`\b[a-z_]+:[a-z0-9_]+:[a-z0-9_]+`)
)

// unknownMetrics names, per rule, each metric the rule reads that the
// exporter does not expose, and each recorded series no rule records.
func unknownMetrics(t *testing.T, all []testRule, exposed map[string]bool) []string {
	t.Helper()
	recorded := map[string]bool{}
	for _, r := range all {
		if r.Record != "" {
			recorded[r.Record] = true
		}
	}
	var problems []string
	for _, r := range all {
		for _, vs := range selectors(parse(t, r)) {
			name := contract.MetricName(vs)
			switch {
			case name == "":
				problems = append(problems, fmt.Sprintf("rule %s (group %s): selector %s names no metric", r.name(), r.Group, vs))
			case strings.Contains(name, ":"):
				if !recorded[name] {
					problems = append(problems, fmt.Sprintf("rule %s (group %s): reads %s, which no rule records", r.name(), r.Group, name))
				}
			case !exposed[name]:
				problems = append(problems, fmt.Sprintf("rule %s (group %s): metric %s is in no collector/testdata/*.prom", r.name(), r.Group, name))
			}
		}
		// Queries and hints in annotations.
		for _, key := range slices.Sorted(maps.Keys(r.Annotations)) {
			text := r.Annotations[key]
			for _, name := range templateRecord.FindAllString(text, -1) {
				if !recorded[name] {
					problems = append(problems, fmt.Sprintf("alert %s: annotation %s reads %s, which no rule records", r.name(), key, name))
				}
			}
			text = templateRecord.ReplaceAllString(text, "")
			for _, name := range templateMetric.FindAllString(text, -1) {
				if !exposed[name] {
					problems = append(problems, fmt.Sprintf("alert %s: annotation %s names %s, which is in no collector/testdata/*.prom", r.name(), key, name))
				}
			}
		}
	}
	return problems
}

func TestEveryMetricIsExposed(t *testing.T) {
	exposed := contract.Exposed(t)
	for _, problem := range unknownMetrics(t, generated(t, config.Default()), exposed) {
		t.Error(problem)
	}
}

// The contract check itself finds a made-up metric and names the rule.
func TestUnknownMetricIsCaught(t *testing.T) {
	exposed := contract.Exposed(t)
	fake := []testRule{
		{Group: "g", Alert: "MadeUp", Expr: `rate(zfs_made_up_total{job="zfs"}[5m]) > 0`,
			Annotations: map[string]string{"description": "see zfs_also_made_up", "summary": "{{ `instance:zfs_never_recorded:rate5m + instance:zfs_x:rate5m` | query }}"}},
		{Group: "g", Record: "instance:zfs_x:rate5m", Expr: `instance:zfs_not_recorded:rate5m + zfs_pool_size_bytes`},
	}
	problems := strings.Join(unknownMetrics(t, fake, exposed), "\n")
	for _, want := range []string{
		"rule MadeUp (group g): metric zfs_made_up_total",
		"alert MadeUp: annotation description names zfs_also_made_up",
		"rule instance:zfs_x:rate5m (group g): reads instance:zfs_not_recorded:rate5m",
		"alert MadeUp: annotation summary reads instance:zfs_never_recorded:rate5m, which no rule records",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	if strings.Contains(problems, "zfs_pool_size_bytes") {
		t.Errorf("an exposed metric was reported:\n%s", problems)
	}
	// A recorded series in a query is checked as one, not as the exporter's
	// metric its middle part names.
	if strings.Contains(problems, "names zfs_never_recorded") || strings.Contains(problems, "reads instance:zfs_x:rate5m") {
		t.Errorf("a recorded series in an annotation was taken for a metric, or a recorded one reported:\n%s", problems)
	}
}

// tests/latency.yaml evaluates the latency rule's expression of
// ZFSVdevSlowDisk itself, where it must pick one slow disk and where it
// must pick none: its copy there is the generated one, whitespace aside.
func TestSlowDiskExprIsTested(t *testing.T) {
	var want string
	for _, r := range generated(t, config.Default()) {
		if r.Alert == rules.AlertVdevSlowDisk && r.Labels["signal"] == "latency" {
			want = parse(t, r).String()
		}
	}
	if want == "" {
		t.Fatalf("no %s rule with signal=latency", rules.AlertVdevSlowDisk)
	}
	const rel = "tests/latency.yaml"
	data, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	var f unitTestFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	var one, none int
	for _, group := range f.Tests {
		for _, c := range group.PromqlExprTest {
			if parse(t, testRule{Group: rel, Record: "promql_expr_test", Expr: c.Expr}).String() != want {
				continue
			}
			switch len(c.ExpSamples) {
			case 0:
				none++
			case 1:
				one++
			}
		}
	}
	if one == 0 || none == 0 {
		t.Errorf("%s: %d promql_expr_tests of the alert's expression pick one disk and %d none, want at least one of each; the expression is:\n%s", rel, one, none, want)
	}
}

// githubAnchor is the anchor GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			sb.WriteRune('-')
		case r == '-' || r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'):
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

func TestRunbookHasEveryAlert(t *testing.T) {
	data, err := os.ReadFile(runbookPath)
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "#") {
			anchors[githubAnchor(strings.TrimLeft(line, "#"))] = true
		}
	}
	seen := map[string]bool{}
	for _, r := range generated(t, config.Default()) {
		if r.Alert == "" || seen[r.Alert] {
			continue
		}
		seen[r.Alert] = true
		anchor := strings.TrimPrefix(r.Annotations["runbook_url"], rules.RunbookURL)
		if !anchors[anchor] {
			t.Errorf("alert %s: RUNBOOK.md has no heading with anchor #%s", r.Alert, anchor)
		}
	}
	if len(seen) == 0 {
		t.Fatal("no alerts")
	}
}

func TestGithubAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		" ZFSPoolNotOnline":          "zfspoolnotonline",
		"What to do: replace a disk": "what-to-do-replace-a-disk",
		"zfs_pool_state`s meaning":   "zfs_pool_states-meaning",
	} {
		if got := githubAnchor(heading); got != want {
			t.Errorf("githubAnchor(%q) = %q, want %q", heading, got, want)
		}
	}
}

// goldenExpositions is every golden exposition of the collectors, one
// after the other.
func goldenExpositions(t *testing.T) string {
	t.Helper()
	paths, err := filepath.Glob(contract.GoldenGlob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden expositions at %s (%v)", contract.GoldenGlob, err)
	}
	var all strings.Builder
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	return all.String()
}

// The sources the rules single out are named as the exporter names them
// in its golden expositions.
func TestSingledOutSourcesAreExposed(t *testing.T) {
	all := goldenExpositions(t)
	for _, source := range []string{config.SourceDatasets, config.SourceSnapshots} {
		if series := `zfs_exporter_source_up{source="` + source + `"}`; !strings.Contains(all, series) {
			t.Errorf("no golden exposition holds %s", series)
		}
	}
}

// The event classes the rules single out are named as the exporter names
// them in its golden expositions: those it has at 0 for every leaf and
// pool from the start, which the vdev alerts read, and the state changes
// the boards mark.
func TestSingledOutEventClassesAreExposed(t *testing.T) {
	all := goldenExpositions(t)
	for _, class := range []string{config.EventChecksum, config.EventIO, config.EventDelay} {
		for _, metric := range []string{"zfs_vdev_events_total", "zfs_pool_events_total"} {
			if series := metric + `{class="` + class + `"`; !strings.Contains(all, series) {
				t.Errorf("no golden exposition holds %s...}", series)
			}
		}
	}
	if series := `zfs_pool_events_total{class="` + config.EventStateChange + `"`; !strings.Contains(all, series) {
		t.Errorf("no golden exposition holds %s...}", series)
	}
}
