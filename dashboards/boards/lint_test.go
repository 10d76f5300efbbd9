package boards_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/zpool-exporter/zpool_exporter/dashboards/boards"
)

const dsUID = "${datasource}"

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
	for _, want := range []string{"instance", "pool"} {
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
	for _, a := range b.Annotations.List {
		if !usesVar(a.Datasource) {
			add("dashboard %q (%s), annotation %q: datasource is not %s", b.Title, b.file, a.Name, dsUID)
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
		node, err := e.parse(vars)
		if err != nil {
			add("%s: PromQL does not parse: %v\n\t%s", e.where, err, e.text)
			continue
		}
		for _, call := range rangeCalls(node) {
			add("%s: %s\n\t%s", e.where, call, e.text)
		}
	}
	return problems
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
