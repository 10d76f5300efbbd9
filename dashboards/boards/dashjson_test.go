package boards_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/zpool-exporter/zpool_exporter/dashboards/boards"
	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
	"github.com/zpool-exporter/zpool_exporter/dashboards/render"
)

// The lints and the contract test read the generated JSON, not the Go
// values, so that they check what Grafana will load.

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type target struct {
	RefID      string `json:"refId"`
	Expr       string `json:"expr"`
	Format     string `json:"format"`
	Datasource *dsRef `json:"datasource"`
}

type panel struct {
	ID          int      `json:"id"`
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Datasource  *dsRef   `json:"datasource"`
	Targets     []target `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
	// Panels of a collapsed row.
	Panels []panel `json:"panels"`
}

type variable struct {
	Type       string `json:"type"`
	Name       string `json:"name"`
	Query      any    `json:"query"`
	Datasource *dsRef `json:"datasource"`
}

type annotation struct {
	Name       string `json:"name"`
	Enable     bool   `json:"enable"`
	Expr       string `json:"expr"`
	Datasource *dsRef `json:"datasource"`
	// Target is the query of Grafana's own annotations.
	Target *struct {
		Type     string   `json:"type"`
		Tags     []string `json:"tags"`
		MatchAny bool     `json:"matchAny"`
		Limit    int      `json:"limit"`
	} `json:"target"`
}

// grafanaDS is Grafana's built-in data source, which serves the
// annotations kept in Grafana.
var grafanaDS = dsRef{Type: "grafana", UID: "-- Grafana --"}

// grafanaTags tells a query of Grafana's own annotations by tag: Grafana
// runs it, and it has no PromQL.
func (a annotation) grafanaTags() bool {
	return a.Datasource != nil && *a.Datasource == grafanaDS && a.Target != nil && a.Target.Type == "tags"
}

// link is a dashboard link; type dashboards lists the dashboards that
// carry its tags.
type link struct {
	Title       string   `json:"title"`
	Type        string   `json:"type"`
	Tags        []string `json:"tags"`
	AsDropdown  bool     `json:"asDropdown"`
	IncludeVars bool     `json:"includeVars"`
	KeepTime    bool     `json:"keepTime"`
}

type board struct {
	file       string
	UID        string   `json:"uid"`
	Title      string   `json:"title"`
	Tags       []string `json:"tags"`
	Links      []link   `json:"links"`
	Panels     []panel  `json:"panels"`
	Templating struct {
		List []variable `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []annotation `json:"list"`
	} `json:"annotations"`
}

// flatPanels lists every panel, rows included, with collapsed rows'
// panels after their row.
func (b *board) flatPanels() []panel {
	var out []panel
	for _, p := range b.Panels {
		out = append(out, p)
		out = append(out, p.Panels...)
	}
	return out
}

func (b *board) varNames() map[string]bool {
	names := map[string]bool{}
	for _, v := range b.Templating.List {
		names[v.Name] = true
	}
	return names
}

func generated(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := boards.Files(config.Default())
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("boards.Files returned no dashboards")
	}
	return files
}

func decode(t *testing.T, file string, raw []byte) *board {
	t.Helper()
	b := &board{file: file}
	if err := json.Unmarshal(raw, b); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return b
}

func decodeAll(t *testing.T) []*board {
	t.Helper()
	files := generated(t)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []*board
	for _, name := range names {
		out = append(out, decode(t, name, files[name]))
	}
	return out
}

// where names a dashboard and a panel in failure messages.
func where(b *board, p panel) string {
	return fmt.Sprintf("dashboard %q (%s), panel %d %q", b.Title, b.file, p.ID, p.Title)
}

// rateWindow stands in for $__rate_interval so that the parsed query
// still shows which range a rate() was given.
const rateWindow = 1234567 * time.Millisecond

// rateWindowText is rateWindow as PromQL writes it.
var rateWindowText = model.Duration(rateWindow).String()

// placeholder is the value substitute gives a dashboard's own variables.
const placeholder = "placeholder"

// substitute replaces Grafana's variables with values PromQL parses:
// durations for the built-in intervals, a word for the dashboard's own
// variables (which only appear inside label matchers). Anything else, like
// the $1 of label_replace, is left alone, and a built-in not listed here
// stays and fails to parse.
func substitute(expr string, vars map[string]bool) string {
	vals := map[string]string{"__rate_interval": rateWindowText, "__interval": "1h", "__range": "1h"}
	for name := range vars {
		vals[name] = placeholder
	}
	return render.Interpolate(expr, vals)
}

// labelValues matches Grafana's label_values(selector, label) variable
// query; the selector is PromQL, the function is not.
var labelValues = regexp.MustCompile(`^label_values\((.*),\s*(\w+)\)$`)

// expr is one PromQL expression found in a dashboard, with where it is.
type expr struct {
	where string
	text  string
	// selector is true for a variable's label_values selector.
	selector bool
}

// panelExprs lists the expressions of every panel target and variable
// query; annotations are listed by annotationExprs.
func panelExprs(b *board) []expr {
	var out []expr
	for _, p := range b.flatPanels() {
		for _, t := range p.Targets {
			out = append(out, expr{where: where(b, p) + " target " + t.RefID, text: t.Expr})
		}
	}
	for _, v := range b.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(string)
		w := fmt.Sprintf("dashboard %q (%s), variable %q", b.Title, b.file, v.Name)
		if m := labelValues.FindStringSubmatch(q); m != nil {
			out = append(out, expr{where: w, text: m[1], selector: true})
		} else {
			out = append(out, expr{where: w, text: q})
		}
	}
	return out
}

// annotationExprs lists the expressions of the annotations Prometheus
// answers: all but the tag queries of Grafana's own annotations. An
// annotation without an expression is listed with an empty one, for the
// callers to report.
func annotationExprs(b *board) []expr {
	var out []expr
	for _, a := range b.Annotations.List {
		if a.grafanaTags() {
			continue
		}
		out = append(out, expr{where: annotationWhere(b, a), text: a.Expr})
	}
	return out
}

func annotationWhere(b *board, a annotation) string {
	return fmt.Sprintf("dashboard %q (%s), annotation %q", b.Title, b.file, a.Name)
}

// promql is Prometheus' parser with its default functions.
var promql = parser.NewParser(parser.Options{})

func (e expr) parse(vars map[string]bool) (parser.Expr, error) {
	text := substitute(e.text, vars)
	if e.selector {
		if _, err := promql.ParseMetricSelector(text); err != nil {
			return nil, err
		}
	}
	return promql.ParseExpr(text)
}
