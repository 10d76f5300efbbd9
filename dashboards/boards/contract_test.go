package boards_test

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// goldenGlob are the exporter's golden expositions: what it really
// serves for real pools, per collector and whole.
const goldenGlob = "../../collector/testdata/*.prom"

// exposed reads the metric names of the golden expositions from their
// # TYPE lines; a histogram or summary also exposes _bucket, _sum and
// _count series.
func exposed(t *testing.T) map[string]bool {
	t.Helper()
	paths, err := filepath.Glob(goldenGlob)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no golden expositions match %s", goldenGlob)
	}
	names := map[string]bool{}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 4 || f[0] != "#" || f[1] != "TYPE" {
				continue
			}
			names[f[2]] = true
			switch f[3] {
			case "histogram", "gaugehistogram":
				names[f[2]+"_bucket"] = true
				fallthrough
			case "summary":
				names[f[2]+"_sum"] = true
				names[f[2]+"_count"] = true
			}
		}
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if len(names) == 0 {
		t.Fatalf("no # TYPE lines in %s", goldenGlob)
	}
	return names
}

// recorded is a recording rule's output, level:metric:operations. It is
// not in the exposition; the rules' tests check what it is made of, and
// TestRecordedSeriesAreRecorded that a rule writes it.
var recorded = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*:[a-zA-Z0-9_:]+$`)

// metricNames lists the metric names a PromQL expression selects.
func metricNames(node parser.Node) []string {
	var names []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		name := vs.Name
		if name == "" {
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
					name = m.Value
				}
			}
		}
		names = append(names, name)
		return nil
	})
	return names
}

// Every metric a panel or variable reads is one the exporter serves.
// Annotations are left out: the benchmark windows read
// zfs_benchmark_window_active, which the exporter does not serve yet.
func TestMetricsExistInExposition(t *testing.T) {
	have := exposed(t)
	allowed := map[string]bool{}

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
		names := metricNames(node)
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
				problems = append(problems, e.where+": "+name+" is in no golden exposition ("+goldenGlob+")")
			}
		}
	}
	return checked, problems
}

// The contract test must catch a metric the exporter does not serve and
// name the panel that reads it.
func TestContractCatchesUnknownMetric(t *testing.T) {
	have := exposed(t)
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
			for _, name := range metricNames(node) {
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
