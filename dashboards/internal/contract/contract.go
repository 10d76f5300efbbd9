// Package contract holds what the dashboards' and the rules' tests both
// need: the metric names the exporter really serves, read from its golden
// expositions, the metric names a PromQL expression reads, and promtool.
package contract

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// GoldenGlob finds the exporter's golden expositions from a package
// directory of this module (dashboards/boards, dashboards/rules).
const GoldenGlob = "../../collector/testdata/*.prom"

// Exposed returns the metric names of the golden expositions, from their
// # TYPE lines: a histogram or summary also stands for its _bucket, _sum
// and _count series.
func Exposed(t testing.TB) map[string]bool {
	t.Helper()
	paths, err := filepath.Glob(GoldenGlob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden expositions at %s (%v)", GoldenGlob, err)
	}
	names := map[string]bool{}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) != 4 || fields[0] != "#" || fields[1] != "TYPE" {
				continue
			}
			name := fields[2]
			names[name] = true
			switch fields[3] {
			case "histogram", "gaugehistogram":
				names[name+"_bucket"] = true
				fallthrough
			case "summary":
				names[name+"_sum"], names[name+"_count"] = true, true
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	return names
}

// MetricName is the metric a selector reads, by name or by a __name__
// matcher; "" when it reads none by name.
func MetricName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == model.MetricNameLabel && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// MetricNames lists the metric names a PromQL expression reads.
func MetricNames(node parser.Node) []string {
	var names []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			names = append(names, MetricName(vs))
		}
		return nil
	})
	return names
}

// Promtool finds promtool; without it the test is skipped, except in CI.
func Promtool(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but promtool is not installed (Debian package prometheus)")
		}
		t.Skip("promtool is not installed (Debian package prometheus)")
	}
	return path
}
