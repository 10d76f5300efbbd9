package render

import (
	"testing"
	"time"
)

func TestInterpolate(t *testing.T) {
	vars := map[string]string{"pool": "tank", "instance": ".+", "__rate_interval": "1m", "__range": "600s", "__range_s": "600"}
	for in, want := range map[string]string{
		`x{pool=~"$pool"}`:                         `x{pool=~"tank"}`,
		`x{pool=~"${pool}"}`:                       `x{pool=~"tank"}`,
		`x{pool=~"${pool:regex}"}`:                 `x{pool=~"tank"}`,
		`x{pool=~"[[pool]]"}`:                      `x{pool=~"tank"}`,
		`rate(x[$__rate_interval])`:                `rate(x[1m])`,
		`increase(x[$__range])`:                    `increase(x[600s])`,
		`$__range_s`:                               `600`,
		`label_replace(x, "a", "$1", "b", "(.+)")`: `label_replace(x, "a", "$1", "b", "(.+)")`,
		`$unknown and ${other}`:                    `$unknown and ${other}`,
		`$instance$pool`:                           `.+tank`,
	} {
		if got := Interpolate(in, vars); got != want {
			t.Errorf("Interpolate(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestVariableDefaults(t *testing.T) {
	d := &Dashboard{}
	d.Templating.List = []Variable{
		{Name: "datasource", Type: "datasource"},
		{Name: "all", Type: "query", IncludeAll: true, AllValue: ".+", Current: struct{ Value any }{"$__all"}},
		{Name: "any", Type: "query", IncludeAll: true, Current: struct{ Value any }{[]any{"$__all"}}},
		{Name: "picked", Type: "custom", Current: struct{ Value any }{"tank"}},
		{Name: "fixed", Type: "constant", Query: "zfs"},
		{Name: "given", Type: "query", AllValue: ".+"},
	}
	got := variables(d, map[string][]string{"given": {"a", "b"}})
	want := map[string]string{"datasource": "prometheus", "all": ".+", "any": ".*", "picked": "tank", "fixed": "zfs", "given": "(a|b)"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("$%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestIntervals(t *testing.T) {
	for _, c := range []struct {
		step, scrape time.Duration
		want         string
	}{
		{5 * time.Second, 15 * time.Second, "1m"},
		{2 * time.Minute, 15 * time.Second, "2m15s"},
		{time.Second, 5 * time.Second, "20s"},
	} {
		if got := promDuration(rateInterval(c.step, c.scrape)); got != c.want {
			t.Errorf("rate interval for step %s, scrape %s = %s, want %s", c.step, c.scrape, got, c.want)
		}
	}
	for d, want := range map[time.Duration]string{
		90 * time.Minute: "1h30m", time.Hour: "1h", 500 * time.Millisecond: "500ms", 0: "0s",
	} {
		if got := promDuration(d); got != want {
			t.Errorf("promDuration(%s) = %s, want %s", d, got, want)
		}
	}
	from := time.Unix(1000, 0)
	v := intervalVars(from, from.Add(time.Hour), 15*time.Second, time.Minute)
	if v["__range"] != "3600s" || v["__range_s"] != "3600" || v["__interval"] != "15s" || v["__interval_ms"] != "15000" || v["__rate_interval"] != "1m" {
		t.Errorf("interval variables: %v", v)
	}
}

func TestCurrentValues(t *testing.T) {
	d := &Dashboard{}
	d.Templating.List = []Variable{
		{Name: "one", Type: "query", Current: struct{ Value any }{[]any{"tank"}}},
		{Name: "two", Type: "custom", Current: struct{ Value any }{[]any{"tank", "backup"}}},
	}
	got := variables(d, nil)
	if got["one"] != "tank" || got["two"] != "(tank|backup)" {
		t.Errorf("variables set in the dashboard: %v", got)
	}
}
