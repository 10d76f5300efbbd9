package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// varRef matches the forms Grafana accepts for a variable: ${name},
// ${name:format}, [[name]] and $name. A name starts with a letter or an
// underscore, so label_replace's $1 is left alone.
var varRef = regexp.MustCompile(`\$\{([A-Za-z_]\w*)(?::[^}]*)?\}|\[\[([A-Za-z_]\w*)(?::[^\]]*)?\]\]|\$([A-Za-z_]\w*)`)

// Interpolate replaces the Grafana variables of vars in s; unknown ones
// stay as they are.
func Interpolate(s string, vars map[string]string) string {
	return varRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		if v, ok := vars[name]; ok {
			return v
		}
		return ref
	})
}

// variables gives each templating variable the value a query sees: the
// values given on the command line, or else what Grafana substitutes for
// the variable's default ("All" becomes its allValue).
func variables(d *Dashboard, given map[string][]string) map[string]string {
	vars := map[string]string{}
	for _, v := range d.Templating.List {
		vars[v.Name] = defaultValue(v)
	}
	for name, values := range given {
		vars[name] = joinValues(values)
	}
	return vars
}

func defaultValue(v Variable) string {
	switch v.Type {
	case "datasource":
		return "prometheus"
	case "constant":
		if s, ok := v.Query.(string); ok {
			return s
		}
	}
	if values := currentValues(v.Current.Value); len(values) > 0 {
		return joinValues(values)
	}
	if v.IncludeAll && v.AllValue != "" {
		return v.AllValue
	}
	return ".*"
}

// currentValues are the values a variable is set to in the dashboard,
// none when it is set to All.
func currentValues(current any) []string {
	var values []string
	switch c := current.(type) {
	case string:
		values = []string{c}
	case []any:
		for _, v := range c {
			if s, ok := v.(string); ok {
				values = append(values, s)
			}
		}
	}
	for _, v := range values {
		if v == "$__all" || v == "" {
			return nil
		}
	}
	return values
}

// joinValues writes several values of one variable as Grafana does for
// a regex matcher: (a|b).
func joinValues(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return "(" + strings.Join(values, "|") + ")"
}

// intervalVars are Grafana's built-in interval variables for a query
// over [from, to] with the given step.
func intervalVars(from, to time.Time, step, rateInterval time.Duration) map[string]string {
	rng := to.Sub(from)
	return map[string]string{
		"__interval":      promDuration(step),
		"__interval_ms":   strconv.FormatInt(step.Milliseconds(), 10),
		"__rate_interval": promDuration(rateInterval),
		"__range":         strconv.FormatInt(int64(rng.Seconds()), 10) + "s",
		"__range_s":       strconv.FormatInt(int64(rng.Seconds()), 10),
		"__range_ms":      strconv.FormatInt(rng.Milliseconds(), 10),
	}
}

// rateInterval is Grafana's $__rate_interval: four scrape intervals, or
// the step plus one scrape interval when that is longer, so that a rate
// always spans at least two samples.
func rateInterval(step, scrape time.Duration) time.Duration {
	return max(step+scrape, 4*scrape)
}

// promDuration writes d in PromQL's duration syntax (1h30m, 20s, 500ms).
func promDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d%time.Second != 0 {
		return fmt.Sprintf("%dms", d.Milliseconds())
	}
	var b strings.Builder
	for _, u := range []struct {
		unit time.Duration
		name string
	}{{time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.unit; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.name)
			d -= n * u.unit
		}
	}
	return b.String()
}
