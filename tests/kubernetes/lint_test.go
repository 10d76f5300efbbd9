package kubernetes

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/action"
)

// lint runs `helm lint --strict` on the chart with vals as overrides and
// returns its errors and warnings (strict makes warnings fail it too).
func lint(vals map[string]any) []string {
	l := action.NewLint()
	l.Strict = true
	l.Namespace = namespace
	res := l.Run([]string{chartDir}, vals)
	var out []string
	for _, err := range res.Errors {
		out = append(out, err.Error())
	}
	return out
}

func TestHelmLintStrictPassesWithDefaultValues(t *testing.T) {
	if errs := lint(nil); len(errs) > 0 {
		t.Errorf("helm lint --strict:\n%s", strings.Join(errs, "\n"))
	}
}

// Each value set the render tests use lints too: the template rule of
// helm lint renders with them and parses what comes out.
func TestHelmLintStrictPassesWithEveryTestedValueSet(t *testing.T) {
	for name, vals := range valueSets {
		if errs := lint(vals); len(errs) > 0 {
			t.Errorf("%s: helm lint --strict:\n%s", name, strings.Join(errs, "\n"))
		}
	}
}

// values.schema.json closes every object of values.yaml, so that a
// misspelt key is an error rather than a setting silently ignored.
func TestMistypedValueFailsHelmLintAndRender(t *testing.T) {
	for _, c := range []struct {
		name string
		vals map[string]any
		want string // in the schema's error
	}{
		{"misspelt top-level key", map[string]any{"imagee": map[string]any{}}, "imagee"},
		{"misspelt nested key", map[string]any{"zfsDevice": map[string]any{"resourceNam": "squat.ai/zfs"}}, "resourceNam"},
		{"string for a boolean", map[string]any{"serviceMonitor": map[string]any{"enabled": "yes"}}, "enabled"},
		{"resource name without a domain", map[string]any{"zfsDevice": map[string]any{"resourceName": "zfs"}}, "resourceName"},
		{"flag without dashes", map[string]any{"extraArgs": []any{"collector.dataset.max=10"}}, "extraArgs"},
		{"unknown pull policy", map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := lint(c.vals)
			if len(errs) == 0 {
				t.Fatalf("helm lint --strict passed with %v", c.vals)
			}
			all := strings.Join(errs, "\n")
			if !strings.Contains(all, "schema") || !strings.Contains(all, c.want) {
				t.Errorf("helm lint failed, but not on the schema naming %q:\n%s", c.want, all)
			}
			if _, err := renderManifest(c.vals); err == nil {
				t.Errorf("helm template rendered with %v", c.vals)
			} else if !strings.Contains(err.Error(), c.want) {
				t.Errorf("helm template failed, but not naming %q: %v", c.want, err)
			}
		})
	}
}
