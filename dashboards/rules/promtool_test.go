package rules_test

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"

	"go.yaml.in/yaml/v3"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
	"github.com/zpool-exporter/zpool_exporter/dashboards/rules"
)

func TestPromtoolCheckRules(t *testing.T) {
	bin := contract.Promtool(t)
	files, err := rules.Files(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// A lint finding (duplicate rules) fails the check, as it does
	// promtool check config of a Prometheus that loads these files.
	args := []string{"check", "rules", "--lint-fatal"}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// unitTestFiles are the promtool unit tests, relative to dashboards/.
func unitTestFiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(testsDir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no promtool unit tests in %s (%v)", testsDir, err)
	}
	rel := make([]string, len(paths))
	for i, p := range paths {
		rel[i] = filepath.Join("tests", filepath.Base(p))
	}
	return rel
}

// The unit tests read the committed files: TestCommittedFilesAreGenerated
// keeps those equal to what the generator makes.
func TestPromtoolTestRules(t *testing.T) {
	bin := contract.Promtool(t)
	cmd := exec.Command(bin, append([]string{"test", "rules"}, unitTestFiles(t)...)...)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "TMPDIR="+scratchDir(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules (from dashboards/): %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "SUCCESS") {
		t.Fatalf("promtool test rules said no SUCCESS:\n%s", out)
	}
}

// scratchDir is where promtool keeps the storage of its unit tests. That
// storage syncs to disk: on tmpfs the tests take a third of the time.
func scratchDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "zfs-mixin-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

type unitTestFile struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		AlertRuleTest []struct {
			EvalTime  string           `yaml:"eval_time"`
			Alertname string           `yaml:"alertname"`
			ExpAlerts []map[string]any `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
		PromqlExprTest []struct {
			Expr       string           `yaml:"expr"`
			ExpSamples []map[string]any `yaml:"exp_samples"`
		} `yaml:"promql_expr_test"`
	} `yaml:"tests"`
}

// Adding an alert or a recording rule without unit tests fails here.
func TestEveryRuleHasUnitTests(t *testing.T) {
	all := generated(t, config.Default())
	alerts, records := map[string]bool{}, map[string]bool{}
	for _, r := range all {
		if r.Alert != "" {
			alerts[r.Alert] = true
		} else {
			records[r.Record] = true
		}
	}
	fires, quiet, tested := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, rel := range unitTestFiles(t) {
		data, err := os.ReadFile(filepath.Join("..", rel))
		if err != nil {
			t.Fatal(err)
		}
		var f unitTestFile
		if err := yaml.Unmarshal(data, &f); err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		for _, want := range []string{"../out/rules/" + rules.AlertsFile, "../out/rules/" + rules.RulesFile} {
			if !slices.Contains(f.RuleFiles, want) {
				t.Errorf("%s: rule_files lacks %s", rel, want)
			}
		}
		for _, group := range f.Tests {
			for _, c := range group.AlertRuleTest {
				if !alerts[c.Alertname] {
					t.Errorf("%s: at %s tests alert %s, which no rule makes", rel, c.EvalTime, c.Alertname)
				}
				if len(c.ExpAlerts) > 0 {
					fires[c.Alertname] = true
				} else {
					quiet[c.Alertname] = true
				}
			}
			for _, c := range group.PromqlExprTest {
				r := testRule{Group: rel, Record: "promql_expr_test", Expr: c.Expr}
				for _, vs := range selectors(parse(t, r)) {
					if name := contract.MetricName(vs); records[name] && len(c.ExpSamples) > 0 {
						tested[name] = true
					}
				}
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(alerts)) {
		if !fires[name] {
			t.Errorf("alert %s has no unit test where it fires", name)
		}
		if !quiet[name] {
			t.Errorf("alert %s has no unit test where it does not fire", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(records)) {
		if !tested[name] {
			t.Errorf("recorded series %s has no promql_expr_test with samples", name)
		}
	}
}

// The rules follow the configured selector, and nothing else ties them to
// a job name: generated for job "zpool", every unit test passes with its
// series and expected labels moved to that job; the shipped rules, made
// for job "zfs", then do not fire.
func TestRulesFollowTheSelector(t *testing.T) {
	bin := contract.Promtool(t)
	cfg := config.Default()
	if cfg.Selector != `job="zfs"` {
		t.Fatalf("the default selector is %s; this test moves the unit tests from job zfs", cfg.Selector)
	}
	cfg.Selector = `job="zpool"`
	generated, err := rules.Files(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shipped := map[string][]byte{}
	for name, data := range generated {
		s, err := os.ReadFile(filepath.Join(outDir, name))
		if err != nil {
			t.Fatal(err)
		}
		shipped[name] = s
		// The Helm chart moves the shipped rules to its ServiceMonitor's
		// job by replacing the selector's text: that must be what
		// generating them for the job gives.
		if moved := strings.ReplaceAll(string(s), `job="zfs"`, `job="zpool"`); moved != string(data) {
			t.Errorf("%s: the rules generated for job zpool differ from the shipped ones with the selector's text replaced", name)
		}
	}
	// The unit tests name their rule files as ../out/rules/NAME.
	toZpool := strings.NewReplacer(`job="zfs"`, `job="zpool"`, "job: zfs\n", "job: zpool\n")
	run := func(ruleFiles map[string][]byte, tests []string) (string, error) {
		root := t.TempDir()
		for dir, files := range map[string]map[string][]byte{"out/rules": ruleFiles, "tests": nil} {
			if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(root, dir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, rel := range tests {
			data, err := os.ReadFile(filepath.Join("..", rel))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, rel), []byte(toZpool.Replace(string(data))), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(bin, append([]string{"test", "rules"}, tests...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "TMPDIR="+scratchDir(t))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(generated, unitTestFiles(t)); err != nil || !strings.Contains(out, "SUCCESS") {
		t.Fatalf("the rules generated for job zpool, over the unit tests moved to job zpool: %v\n%s", err, out)
	}
	// The pools' tests alone show it, at a tenth of the time.
	out, err := run(shipped, []string{filepath.Join("tests", "pools.yaml")})
	if err == nil {
		t.Fatalf("the shipped rules (job zfs) passed the unit tests moved to job zpool:\n%s", out)
	}
	if !strings.Contains(out, "ZFSPoolNotOnline") {
		t.Errorf("the shipped rules failed under job zpool, but not on ZFSPoolNotOnline:\n%.2000s", out)
	}
}
