package boards_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/plugins"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
)

// buildErrors reads the result of one of the SDK's strict unmarshals. On
// success they return an empty but non-nil cog.BuildErrors, so a plain
// err != nil check would reject every dashboard: what counts is whether
// the list holds an error.
func buildErrors(err error) []string {
	var be cog.BuildErrors
	switch {
	case err == nil:
		return nil
	case errors.As(err, &be):
		var out []string
		for _, e := range be {
			out = append(out, e.Error())
		}
		return out
	default:
		return []string{err.Error()}
	}
}

func TestStrictUnmarshalAndValidate(t *testing.T) {
	// Without the plugins, panel options and targets are decoded as
	// untyped maps and nothing in them is checked.
	plugins.RegisterDefaultPlugins()
	for name, raw := range generated(t) {
		var d dashboard.Dashboard
		for _, e := range buildErrors(d.UnmarshalJSONStrict(raw)) {
			t.Errorf("%s: strict unmarshal: %s", name, e)
		}
		if err := d.Validate(); err != nil {
			t.Errorf("%s: validate: %v", name, err)
		}

		// The same empty error list trips the SDK itself: the dashboard's
		// strict unmarshal reports the panels' errors but keeps none of
		// the panels it decoded, so Validate above never sees them. Each
		// panel is decoded and validated on its own here.
		var top struct {
			Panels []json.RawMessage `json:"panels"`
		}
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		targets := 0
		for i, rawPanel := range top.Panels {
			n, errs := strictPanel(rawPanel)
			targets += n
			for _, e := range errs {
				t.Errorf("%s: panels[%d]: %s", name, i, e)
			}
		}
		if targets == 0 {
			t.Errorf("%s: no Prometheus targets decoded", name)
		}
	}
}

// strictPanel decodes and validates one panel or row, and counts its
// targets that decoded as Prometheus queries.
func strictPanel(raw []byte) (int, []string) {
	var kind struct {
		Type  string `json:"type"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal(raw, &kind); err != nil {
		return 0, []string{err.Error()}
	}
	if kind.Type == "row" {
		var r dashboard.RowPanel
		errs := buildErrors(r.UnmarshalJSONStrict(raw))
		if err := r.Validate(); err != nil {
			errs = append(errs, "validate: "+err.Error())
		}
		return 0, errs
	}
	var p dashboard.Panel
	errs := buildErrors(p.UnmarshalJSONStrict(raw))
	if err := p.Validate(); err != nil {
		errs = append(errs, "validate: "+err.Error())
	}
	// The panel's strict unmarshal drops every target for the same
	// reason (it reports their errors, keeps none), so they are decoded
	// once more as what they must be: Prometheus queries.
	var targets struct {
		Targets []json.RawMessage `json:"targets"`
	}
	if err := json.Unmarshal(raw, &targets); err != nil {
		return 0, append(errs, err.Error())
	}
	n := 0
	for i, rawTarget := range targets.Targets {
		var q prometheus.Dataquery
		qerrs := buildErrors(q.UnmarshalJSONStrict(rawTarget))
		if err := q.Validate(); err != nil {
			qerrs = append(qerrs, "validate: "+err.Error())
		}
		for _, e := range qerrs {
			errs = append(errs, fmt.Sprintf("%q: targets[%d]: %s", kind.Title, i, e))
		}
		if len(qerrs) == 0 && q.Expr != "" {
			n++
		}
	}
	return n, errs
}

// A misspelt field must be reported, both by the dashboard's strict
// unmarshal and by the panel's, and a good dashboard must not be.
func TestStrictUnmarshalRejectsUnknownField(t *testing.T) {
	plugins.RegisterDefaultPlugins()
	raw := generated(t)["zfs-pools.json"]
	var d dashboard.Dashboard
	if errs := buildErrors(d.UnmarshalJSONStrict(raw)); len(errs) != 0 {
		t.Fatalf("good dashboard rejected: %q", errs)
	}
	bad := []byte(strings.Replace(string(raw), `"fieldConfig"`, `"fieldConfg"`, 1))
	var d2 dashboard.Dashboard
	if errs := buildErrors(d2.UnmarshalJSONStrict(bad)); len(errs) == 0 {
		t.Error("dashboard strict unmarshal accepted an unknown panel field")
	}
	var top struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(bad, &top); err != nil {
		t.Fatal(err)
	}
	rejected := false
	for _, p := range top.Panels {
		if _, errs := strictPanel(p); len(errs) > 0 {
			rejected = true
		}
	}
	if !rejected {
		t.Error("panel strict unmarshal accepted an unknown field")
	}

	// A misspelt target field is caught by decoding the targets.
	badTarget := []byte(strings.Replace(string(raw), `"legendFormat"`, `"legendFormt"`, 1))
	if err := json.Unmarshal(badTarget, &top); err != nil {
		t.Fatal(err)
	}
	rejected = false
	for _, p := range top.Panels {
		if _, errs := strictPanel(p); len(errs) > 0 {
			rejected = true
		}
	}
	if !rejected {
		t.Error("target strict unmarshal accepted an unknown field")
	}
}
