package boards_test

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"
)

// recorded is a recording rule's output, level:metric:operations. It is
// not in the exposition; the rules' tests check what it is made of, and
// TestRecordedSeriesAreRecorded that a rule writes it.
var recorded = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*:[a-zA-Z0-9_:]+$`)

// benchmarkOnly are the metrics the exporter serves only with
// --web.enable-benchmark-api, so that the golden expositions lack them;
// the runs table of the benchmark dashboard reads them.
var benchmarkOnly = map[string]bool{
	"zfs_benchmark_window_active":             true,
	"zfs_benchmark_window_start_time_seconds": true,
	"zfs_benchmark_window_end_time_seconds":   true,
}

// Every metric a panel or variable reads is one the exporter serves.
// Annotations are left out: the benchmark windows read
// zfs_benchmark_window_active, which the golden expositions lack.
func TestMetricsExistInExposition(t *testing.T) {
	have := contract.Exposed(t)
	allowed := benchmarkOnly
	for name := range allowed {
		if have[name] {
			t.Errorf("%s is in the golden expositions now: take it out of benchmarkOnly", name)
		}
	}

	checked := 0
	for _, b := range decodeAll(t) {
		n, problems := unknownMetrics(b, have, allowed)
		checked += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	if checked == 0 {
		t.Fatal("no metric names found in the dashboards")
	}
}

// unknownMetrics checks the metric names of a dashboard's panels and
// variables, and returns how many it checked and the problems, each
// naming the dashboard and panel.
func unknownMetrics(b *board, have, allowed map[string]bool) (int, []string) {
	var problems []string
	checked := 0
	vars := b.varNames()
	for _, e := range panelExprs(b) {
		node, err := e.parse(vars)
		if err != nil {
			problems = append(problems, e.where+": "+err.Error())
			continue
		}
		names := contract.MetricNames(node)
		if len(names) == 0 {
			problems = append(problems, e.where+": selects no metric")
		}
		for _, name := range names {
			checked++
			switch {
			case name == "":
				problems = append(problems, e.where+": a selector without a metric name")
			case recorded.MatchString(name):
			case !have[name] && !allowed[name]:
				problems = append(problems, e.where+": "+name+" is in no golden exposition ("+contract.GoldenGlob+")")
			}
		}
	}
	return checked, problems
}

// The contract test must catch a metric the exporter does not serve and
// name the panel that reads it.
func TestContractCatchesUnknownMetric(t *testing.T) {
	have := contract.Exposed(t)
	b, id := mutated(t, "zfs-pools.json", "Fragmentation", func(p *panel) {
		p.Targets[0].Expr = strings.Replace(p.Targets[0].Expr, "zfs_pool_fragmentation_ratio", "zfs_pool_fragmentation_percent", 1)
	})
	_, missing := unknownMetrics(b, have, nil)
	sort.Strings(missing)
	if len(missing) != 1 || !strings.Contains(missing[0], `"Fragmentation"`) || !strings.Contains(missing[0], "zfs_pool_fragmentation_percent") {
		t.Errorf("problems %q, want one for zfs_pool_fragmentation_percent in panel %d \"Fragmentation\"", missing, id)
	}
}

// A recorded series a panel reads is one the generated rules write.
func TestRecordedSeriesAreRecorded(t *testing.T) {
	rules := recordedByRules(t)
	used := 0
	for _, b := range decodeAll(t) {
		vars := b.varNames()
		for _, e := range panelExprs(b) {
			node, err := e.parse(vars)
			if err != nil {
				t.Errorf("%s: %v", e.where, err)
				continue
			}
			for _, name := range contract.MetricNames(node) {
				if !recorded.MatchString(name) {
					continue
				}
				used++
				if !rules[name] {
					t.Errorf("%s: %s is recorded by no rule in %s; run `go run ./cmd/mixin`", e.where, name, rulesGlob)
				}
			}
		}
	}
	if used == 0 {
		t.Log("no dashboard reads a recorded series")
	}
}
