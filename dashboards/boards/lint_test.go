package boards_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/zpool-exporter/zpool_exporter/dashboards/boards"
)

const dsUID = "${datasource}"

// zpoolBenchTag is the tag zpool_bench gives the region annotation of
// every run it marks in Grafana. cmd/zpool_bench/run.go in the exporter's
// module writes it as a literal (and its tests check the request it
// sends); this module cannot import that package, so the two are kept
// equal by hand here: a change to one needs the other.
const zpoolBenchTag = "zpool-bench"

// lint returns what is wrong with one dashboard, each problem naming the
// dashboard and the panel (or variable, or annotation).
func lint(b *board) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	// The datasource variable exists and everything reads from it.
	var dsVar *variable
	for i, v := range b.Templating.List {
		if v.Type == "datasource" && v.Name == "datasource" {
			dsVar = &b.Templating.List[i]
		}
	}
	if dsVar == nil {
		add("dashboard %q (%s): no datasource variable named datasource", b.Title, b.file)
	} else if q, _ := dsVar.Query.(string); q != "prometheus" {
		add("dashboard %q (%s): datasource variable is of type %q, want prometheus", b.Title, b.file, q)
	}
	for _, want := range []string{"job", "instance", "pool"} {
		if !b.varNames()[want] {
			add("dashboard %q (%s): no %s variable", b.Title, b.file, want)
		}
	}
	usesVar := func(ds *dsRef) bool { return ds != nil && ds.UID == dsUID && ds.Type == "prometheus" }
	for _, v := range b.Templating.List {
		if v.Type == "query" && !usesVar(v.Datasource) {
			add("dashboard %q (%s), variable %q: datasource is not %s", b.Title, b.file, v.Name, dsUID)
		}
	}
	// Annotations read Prometheus through the variable too, but for the
	// regions zpool_bench writes to Grafana: a tag query of Grafana's own
	// annotations, for exactly its tag (more tags, with match any off,
	// would hide its regions).
	for _, a := range b.Annotations.List {
		w := annotationWhere(b, a)
		switch {
		case a.grafanaTags():
			if !slices.Equal(a.Target.Tags, []string{zpoolBenchTag}) || a.Target.MatchAny {
				add("%s: tags %q (match any %v), want exactly [%s]", w, a.Target.Tags, a.Target.MatchAny, zpoolBenchTag)
			}
			if a.Target.Limit <= 0 {
				add("%s: limit %d shows no annotation", w, a.Target.Limit)
			}
			if a.Expr != "" {
				add("%s: a Grafana tag query with PromQL %q", w, a.Expr)
			}
		case a.Datasource != nil && a.Datasource.Type == grafanaDS.Type:
			add("%s: Grafana's built-in data source serves tag queries only here", w)
		case !usesVar(a.Datasource):
			add("%s: datasource is not %s", w, dsUID)
		}
	}

	for _, p := range b.flatPanels() {
		w := where(b, p)
		if strings.TrimSpace(p.Title) == "" {
			add("%s: no title", w)
		}
		if p.Type == "row" {
			continue
		}
		if strings.TrimSpace(p.Description) == "" {
			add("%s: no description", w)
		}
		if p.FieldConfig.Defaults.Unit == "" {
			add("%s: no unit", w)
		}
		if !usesVar(p.Datasource) {
			add("%s: panel datasource is not %s", w, dsUID)
		}
		if len(p.Targets) == 0 {
			add("%s: no targets", w)
		}
		for _, t := range p.Targets {
			if !usesVar(t.Datasource) {
				add("%s target %s: datasource is not %s", w, t.RefID, dsUID)
			}
		}
	}

	vars := b.varNames()
	for _, e := range append(panelExprs(b), annotationExprs(b)...) {
		if strings.TrimSpace(e.text) == "" {
			add("%s: no expression", e.where)
			continue
		}
		node, err := e.parse(vars)
		if err != nil {
			add("%s: PromQL does not parse: %v\n\t%s", e.where, err, e.text)
			continue
		}
		for _, call := range rangeCalls(node) {
			add("%s: %s\n\t%s", e.where, call, e.text)
		}
		if strings.HasSuffix(e.where, `variable "job"`) {
			continue // the variable lists the jobs
		}
		for _, sel := range withoutJobVariable(node) {
			add("%s: %s does not pick its job by the job variable (job=~\"$job\")\n\t%s", e.where, sel, e.text)
		}
	}
	return problems
}

// withoutJobVariable lists the series selectors of node that do not pick
// their job by the board's job variable, alone: a job written into a
// query empties the board under any other job name.
func withoutJobVariable(node parser.Node) []string {
	var bad []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		jobs := 0
		for _, m := range vs.LabelMatchers {
			if m.Name != "job" {
				continue
			}
			jobs++
			if m.Type != labels.MatchRegexp || m.Value != placeholder {
				jobs = 2
			}
		}
		if jobs != 1 {
			bad = append(bad, vs.String())
		}
		return nil
	})
	return bad
}

// rateFuncs must be given $__rate_interval, which Grafana keeps at least
// four scrape intervals wide so that they never come back empty.
var rateFuncs = map[string]bool{"rate": true, "irate": true, "increase": true}

func rangeCalls(node parser.Node) []string {
	var bad []string
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		call, ok := n.(*parser.Call)
		if !ok || !rateFuncs[call.Func.Name] {
			return nil
		}
		for _, arg := range call.Args {
			ms, ok := arg.(*parser.MatrixSelector)
			if !ok {
				bad = append(bad, fmt.Sprintf("%s() over a subquery or expression, not [$__rate_interval]", call.Func.Name))
				continue
			}
			if ms.Range != rateWindow {
				bad = append(bad, fmt.Sprintf("%s() over [%s], not [$__rate_interval]", call.Func.Name, model.Duration(ms.Range)))
			}
		}
		return nil
	})
	return bad
}

func TestLints(t *testing.T) {
	for _, b := range decodeAll(t) {
		for _, p := range lint(b) {
			t.Error(p)
		}
	}
}

// UIDs are what links, bookmarks and provisioning point at: they are
// fixed here, not derived from titles that may be reworded.
func TestUIDsStableAndUnique(t *testing.T) {
	want := map[string]string{
		"zfs-pools.json":     "zfs-pools",
		"zfs-io.json":        "zfs-io",
		"zfs-benchmark.json": "zfs-benchmark",
		"zfs-scans.json":     "zfs-scans",
		"zfs-datasets.json":  "zfs-datasets",
		"zfs-arc.json":       "zfs-arc",
	}
	seen := map[string]string{}
	bs := decodeAll(t)
	if len(bs) != len(want) {
		t.Errorf("%d dashboards, want %d", len(bs), len(want))
	}
	for _, b := range bs {
		if b.UID != want[b.file] {
			t.Errorf("%s: uid %q, want %q", b.file, b.UID, want[b.file])
		}
		if other, dup := seen[b.UID]; dup {
			t.Errorf("%s and %s share uid %q", other, b.file, b.UID)
		}
		seen[b.UID] = b.file
		ids := map[int]string{}
		for _, p := range b.flatPanels() {
			if p.ID == 0 {
				t.Errorf("%s: no panel id", where(b, p))
			}
			if other, dup := ids[p.ID]; dup {
				t.Errorf("%s: id also used by %q", where(b, p), other)
			}
			ids[p.ID] = p.Title
		}
	}
	for _, bd := range boards.Boards() {
		if want[bd.File] != bd.UID {
			t.Errorf("boards.Boards: %s has uid %q, want %q", bd.File, bd.UID, want[bd.File])
		}
	}
}

// The lints must catch what they are for: each mutation of a good
// dashboard has to be reported, naming the panel.
func TestLintsCatchMutations(t *testing.T) {
	for _, c := range []struct {
		name, file, panel, want string
		mutate                  func(p *panel)
	}{
		{"unit removed", "zfs-pools.json", "Capacity used", "no unit", func(p *panel) { p.FieldConfig.Defaults.Unit = "" }},
		{"description removed", "zfs-io.json", "Disk busy", "no description", func(p *panel) { p.Description = " " }},
		{"title removed", "zfs-scans.json", "Issue rate", "no title", func(p *panel) { p.Title = "" }},
		{"panel datasource fixed", "zfs-benchmark.json", "ARC hit ratio", "panel datasource", func(p *panel) { p.Datasource = &dsRef{Type: "prometheus", UID: "P1809F7CD0C75ACF3"} }},
		{"target datasource fixed", "zfs-benchmark.json", "ARC hit ratio", "target B: datasource", func(p *panel) { p.Targets[1].Datasource = nil }},
		{"fixed rate window", "zfs-benchmark.json", "Pool bandwidth", "rate() over [5m]", func(p *panel) {
			p.Targets[0].Expr = strings.Replace(p.Targets[0].Expr, "$__rate_interval", "5m", 1)
		}},
		{"irate over $__interval", "zfs-io.json", "Disk busy", "irate() over [1h]", func(p *panel) {
			p.Targets[0].Expr = strings.Replace(strings.Replace(p.Targets[0].Expr, "rate(", "irate(", 1), "$__rate_interval", "$__interval", 1)
		}},
		{"broken PromQL", "zfs-pools.json", "Fragmentation", "does not parse", func(p *panel) { p.Targets[0].Expr += ")" }},
		{"job written in", "zfs-io.json", "Disk busy", "job variable", func(p *panel) {
			p.Targets[0].Expr = strings.Replace(p.Targets[0].Expr, `job=~"$job"`, `job="zfs"`, 1)
		}},
		{"job variable left out", "zfs-pools.json", "Capacity used", "job variable", func(p *panel) {
			p.Targets[0].Expr = strings.Replace(p.Targets[0].Expr, `job=~"$job", `, "", 1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, id := mutated(t, c.file, c.panel, c.mutate)
			problems := lint(b)
			for _, p := range problems {
				if strings.Contains(p, c.want) && strings.Contains(p, fmt.Sprintf("panel %d ", id)) && strings.Contains(p, c.file) {
					return
				}
			}
			t.Errorf("no problem mentions %q for panel %q of %s; got %q", c.want, c.panel, c.file, problems)
		})
	}
}

// mutated decodes one generated dashboard with one of its panels changed,
// and returns that panel's id.
func mutated(t *testing.T, file, title string, mutate func(*panel)) (*board, int) {
	t.Helper()
	b := decode(t, file, generated(t)[file])
	if problems := lint(b); len(problems) > 0 {
		t.Fatalf("%s already has problems: %q", file, problems)
	}
	for i := range b.Panels {
		if b.Panels[i].Title == title {
			mutate(&b.Panels[i])
			return b, b.Panels[i].ID
		}
	}
	t.Fatalf("%s has no panel %q", file, title)
	return nil, 0
}

// The lints must catch a wrong annotation too: each mutation of a good
// dashboard's annotation has to be reported, naming the annotation.
func TestLintsCatchAnnotationMutations(t *testing.T) {
	const (
		windows = "Benchmark windows"
		runs    = "Benchmark runs (zpool_bench)"
	)
	for _, c := range []struct {
		name, file, annotation, want string
		mutate                       func(a *annotation)
	}{
		{"tag misspelt", "zfs-benchmark.json", runs, "want exactly [zpool-bench]", func(a *annotation) { a.Target.Tags = []string{"zpool_bench"} }},
		{"pool tag added", "zfs-io.json", runs, "want exactly [zpool-bench]", func(a *annotation) { a.Target.Tags = append(a.Target.Tags, "pool:tank") }},
		{"match any", "zfs-benchmark.json", runs, "match any true", func(a *annotation) { a.Target.MatchAny = true }},
		{"no limit", "zfs-benchmark.json", runs, "limit 0", func(a *annotation) { a.Target.Limit = 0 }},
		{"dashboard query on Grafana", "zfs-benchmark.json", runs, "tag queries only", func(a *annotation) { a.Target.Type = "dashboard" }},
		{"PromQL on Grafana", "zfs-benchmark.json", windows, "tag queries only", func(a *annotation) { a.Datasource = &dsRef{Type: grafanaDS.Type, UID: grafanaDS.UID} }},
		{"fixed datasource", "zfs-benchmark.json", windows, "datasource is not", func(a *annotation) { a.Datasource = &dsRef{Type: "prometheus", UID: "P1809F7CD0C75ACF3"} }},
		{"expression removed", "zfs-benchmark.json", windows, "no expression", func(a *annotation) { a.Expr = "" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := decode(t, c.file, generated(t)[c.file])
			if problems := lint(b); len(problems) > 0 {
				t.Fatalf("%s already has problems: %q", c.file, problems)
			}
			found := false
			for i := range b.Annotations.List {
				if b.Annotations.List[i].Name == c.annotation {
					c.mutate(&b.Annotations.List[i])
					found = true
				}
			}
			if !found {
				t.Fatalf("%s has no annotation %q", c.file, c.annotation)
			}
			problems := lint(b)
			for _, p := range problems {
				if strings.Contains(p, c.want) && strings.Contains(p, fmt.Sprintf("annotation %q", c.annotation)) && strings.Contains(p, c.file) {
					return
				}
			}
			t.Errorf("no problem mentions %q for annotation %q of %s; got %q", c.want, c.annotation, c.file, problems)
		})
	}
}

// The dashboards read while benchmarking shade zpool_bench's runs: each
// has one enabled tag query of Grafana's annotations (its tags are
// checked by the lints).
func TestBenchmarkRunRegionsShown(t *testing.T) {
	want := map[string]bool{"zfs-benchmark.json": true, "zfs-io.json": true}
	for _, b := range decodeAll(t) {
		n := 0
		for _, a := range b.Annotations.List {
			if a.grafanaTags() {
				n++
				if !a.Enable {
					t.Errorf("%s: not enabled", annotationWhere(b, a))
				}
			}
		}
		if want[b.file] && n != 1 {
			t.Errorf("%s: %d tag queries of Grafana's annotations, want 1", b.file, n)
		}
	}
}

// The dashboards link each other through one dropdown: a link of type
// dashboards on the tag every one of them carries, which keeps the time
// range and the variables. A new dashboard is in every other's dropdown,
// and they are all in its own, so that the pools and datasets dashboards
// (and the others) lead to each other.
func TestDashboardsLinkEachOther(t *testing.T) {
	const tag = "zfs"
	bs := decodeAll(t)
	for _, b := range bs {
		if !slices.Contains(b.Tags, tag) {
			t.Errorf("%s: tags %q lack %q: the other dashboards do not link to it", b.file, b.Tags, tag)
		}
		found := false
		for _, l := range b.Links {
			if l.Type == "dashboards" && slices.Equal(l.Tags, []string{tag}) {
				found = true
				if !l.IncludeVars || !l.KeepTime {
					t.Errorf("%s: link %q does not carry the variables (%v) and the time range (%v)", b.file, l.Title, l.IncludeVars, l.KeepTime)
				}
			}
		}
		if !found {
			t.Errorf("%s: no link of type dashboards on tag %q: it does not link to the others", b.file, tag)
		}
	}
	if len(bs) < 2 {
		t.Fatalf("%d dashboards", len(bs))
	}
}

// The I/O dashboard's pool, top-level and leaf panels of one counter sit
// side by side and must agree at every instant: all take raw rates over
// $__rate_interval, none a recorded 5m rate, which lags a short run.
func TestIOLevelsAgree(t *testing.T) {
	levels := regexp.MustCompile(`^(Read|Write) (bandwidth|operations) per (pool|top-level vdev|leaf vdev)$`)
	for _, b := range decodeAll(t) {
		if b.file != "zfs-io.json" {
			continue
		}
		vars, seen := b.varNames(), 0
		for _, p := range b.flatPanels() {
			if !levels.MatchString(p.Title) {
				continue
			}
			seen++
			for _, target := range p.Targets {
				e := expr{where: where(b, p) + " target " + target.RefID, text: target.Expr}
				node, err := e.parse(vars)
				if err != nil {
					t.Fatalf("%s: %v", e.where, err)
				}
				rates := 0
				parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
					switch n := n.(type) {
					case *parser.VectorSelector:
						if strings.Contains(n.Name, ":") {
							t.Errorf("%s reads the recorded series %s", e.where, n.Name)
						}
					case *parser.Call:
						if n.Func.Name == "rate" {
							rates++
						}
					}
					return nil
				})
				if rates != 1 {
					t.Errorf("%s: %d rate() calls, want 1\n\t%s", e.where, rates, e.text)
				}
			}
		}
		if seen != 12 {
			t.Errorf("%d bandwidth and operations panels per level, want 12", seen)
		}
	}
}
