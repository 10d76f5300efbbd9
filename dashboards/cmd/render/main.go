// Command render draws the dashboards as SVG pictures from a Prometheus
// server's data, laid out as Grafana shows them, without Grafana:
//
//	go run ./cmd/render -prometheus http://127.0.0.1:9090 \
//	    -from 2025-01-02T10:00:00Z -to 2025-01-02T11:00:00Z -out pictures
//
// It writes DIR/<dashboard uid>.svg for each dashboard JSON file given
// (by default those in out/dashboards) and exits 1 if a query failed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/dashboards/render"
)

func main() {
	os.Exit(run(os.Args[1:], time.Now(), os.Stdout, os.Stderr))
}

// varFlags collects repeated -var name=value flags.
type varFlags map[string][]string

func (v varFlags) String() string { return "" }

func (v varFlags) Set(s string) error {
	name, value, ok := strings.Cut(s, "=")
	if !ok || name == "" {
		return fmt.Errorf("%q is not name=value", s)
	}
	v[name] = append(v[name], value)
	return nil
}

func run(args []string, now time.Time, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	prom := fs.String("prometheus", "", "base URL of the Prometheus server to query (required)")
	from := fs.String("from", "now-1h", "start of the range: RFC3339, Unix seconds, or now-DURATION")
	to := fs.String("to", "now", "end of the range, like -from")
	step := fs.Duration("step", 0, "resolution of range queries (0: about 300 points, at least -scrape-interval)")
	scrape := fs.Duration("scrape-interval", 15*time.Second, "the server's scrape interval, for $__rate_interval as Grafana computes it")
	out := fs.String("out", "", "directory to write <uid>.svg into (required)")
	themeName := fs.String("theme", "dark", "dark or light")
	vars := varFlags{}
	fs.Var(vars, "var", "template variable as name=value (repeat it; several values of one name become (a|b)); default: the variable's All value")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	opt, err := options(*prom, *from, *to, *themeName, *out, now)
	if err != nil {
		fmt.Fprintln(stderr, "render:", err)
		return 2
	}
	opt.Step, opt.ScrapeInterval, opt.Vars = *step, *scrape, vars
	files := fs.Args()
	if len(files) == 0 {
		if files, err = filepath.Glob(filepath.Join("out", "dashboards", "*.json")); err != nil || len(files) == 0 {
			fmt.Fprintln(stderr, "render: no dashboard files given and none in out/dashboards")
			return 2
		}
		sort.Strings(files)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(stderr, "render:", err)
		return 1
	}
	failed := false
	for _, f := range files {
		if !renderFile(f, *out, opt, stdout, stderr) {
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

func options(prom, from, to, theme, out string, now time.Time) (render.Options, error) {
	var opt render.Options
	if prom == "" || out == "" {
		return opt, errors.New("-prometheus and -out are required")
	}
	t, ok := render.ThemeByName(theme)
	if !ok {
		return opt, fmt.Errorf("unknown theme %q", theme)
	}
	start, err := parseTime(from, now)
	if err != nil {
		return opt, fmt.Errorf("-from: %w", err)
	}
	end, err := parseTime(to, now)
	if err != nil {
		return opt, fmt.Errorf("-to: %w", err)
	}
	return render.Options{
		Prometheus: prom,
		Client:     &http.Client{Timeout: time.Minute},
		From:       start,
		To:         end,
		Theme:      t,
	}, nil
}

// parseTime reads RFC3339, Unix seconds, now or now-DURATION.
func parseTime(s string, now time.Time) (time.Time, error) {
	if rest, ok := strings.CutPrefix(s, "now"); ok {
		if rest == "" {
			return now, nil
		}
		if d, err := time.ParseDuration(strings.TrimPrefix(rest, "-")); err == nil && strings.HasPrefix(rest, "-") {
			return now.Add(-d), nil
		}
		return time.Time{}, fmt.Errorf("%q: want now or now-DURATION", s)
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	secs, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither RFC3339 nor Unix seconds", s)
	}
	return time.UnixMilli(int64(secs * 1000)), nil
}

// renderFile draws one dashboard and says what it could not draw; it
// returns false if the picture could not be made or a query failed.
func renderFile(file, out string, opt render.Options, stdout, stderr io.Writer) bool {
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(stderr, "render:", err)
		return false
	}
	d, err := render.Parse(data)
	if err != nil {
		fmt.Fprintf(stderr, "render: %s: %v\n", file, err)
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	svg, report, err := render.Render(ctx, d, opt)
	if err != nil {
		fmt.Fprintf(stderr, "render: %s: %v\n", file, err)
		return false
	}
	path := filepath.Join(out, d.UID+".svg")
	if err := os.WriteFile(path, svg, 0o644); err != nil {
		fmt.Fprintln(stderr, "render:", err)
		return false
	}
	fmt.Fprintf(stdout, "%s: %d panels\n", path, report.Panels)
	for _, n := range report.NotDrawn {
		fmt.Fprintf(stdout, "%s: not drawn: %s\n", path, n)
	}
	for _, p := range report.Problems {
		fmt.Fprintf(stderr, "render: %s: %v\n", d.UID, p)
	}
	return len(report.Problems) == 0
}
