package prometheus3

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// histogramFamilies are the histograms the dashboards and rules read.
var histogramFamilies = []string{
	"zfs_vdev_disk_wait_seconds", "zfs_vdev_total_wait_seconds", "zfs_vdev_queue_wait_seconds",
	"zfs_vdev_request_size_bytes", "zfs_pool_txg_sync_seconds",
}

// The dashboards and recording rules over the histograms a Prometheus 3
// stores with the settings of deploy/compose/prometheus.yml (classic
// histograms converted to native ones with custom buckets, request sizes
// native): each query reads the native form and falls back to the classic
// series. Two Prometheus 3.16 servers scrape the exporter over a replay of
// the OpenZFS 2.4 walk, whose histograms grow step by step. The first
// stores both forms (always_scrape_classic_histograms): there every query
// is evaluated as written, which takes the native form, and with the
// native names taken out, which takes the classic one; the two must agree.
// The second has the shipped settings, stores no classic series of these
// histograms, and must answer every query the first answers.
func TestBoardsAndRulesReadConvertedHistograms(t *testing.T) {
	prom, exporter := binaries(t)
	// The steps' histograms only grow. The replay starts over after the
	// last, and a histogram read across that reset differs between the
	// forms (Prometheus takes a native histogram's reset as a whole, each
	// classic bucket apart): the queries are evaluated in the last step.
	scenarios := []string{"01-created", "02-offline", "03-scrub-paused", "04-resilvering"}
	const step = 5 * time.Second
	replay := walkReplay(t, scenarios...)
	started := time.Now()
	e := e2e.Start(t, exporter, nil, "--zpool.replay-dir="+replay, "--zpool.replay-step="+step.String(),
		"--collector.vdev_latency.request-sizes", "--collector.vdev_latency.queue-wait")
	target := strings.TrimPrefix(e.URL, "http://")

	shipped := shippedHistogramSettings(t)
	rules := repotest.Path("dashboards", "out", "rules")
	config := func(settings string) string {
		return everySecond(fmt.Sprintf(`  - job_name: zfs
%s    static_configs: [{targets: [%q]}]
`, settings, target))
	}
	both := startPrometheusIn(t, prom, config(shipped+"    always_scrape_classic_histograms: true\n"), rules)
	converted := startPrometheusIn(t, prom, config(shipped), rules)

	// Late in the last step, the boards' rate interval (10s) holds the
	// two steps before it.
	at := started.Add(time.Duration(len(scenarios))*step - 1500*time.Millisecond)
	time.Sleep(time.Until(at) + 500*time.Millisecond)
	if time.Since(started) >= time.Duration(len(scenarios))*step {
		t.Fatalf("the servers took %s to start: the replay started over", time.Since(started).Round(time.Second))
	}

	// What each server stores.
	classic := `{__name__=~"(` + strings.Join(histogramFamilies, "|") + `)_(bucket|sum|count)", job="zfs"}`
	if s := converted.mustQuery(t, "count("+classic+")"); len(s) != 0 {
		t.Errorf("with the shipped settings Prometheus stores %v classic histogram series, want none", s[0].float())
	}
	if s := both.mustQuery(t, "count("+classic+")"); len(s) == 0 {
		t.Fatal("with always_scrape_classic_histograms Prometheus stores no classic histogram series")
	}
	for _, name := range []string{"zfs_vdev_disk_wait_seconds", "zfs_vdev_request_size_bytes"} {
		for _, s := range converted.mustQuery(t, name+`{job="zfs"}`) {
			if _, err := s.histogram(); err != nil {
				t.Fatalf("%s %v: %v", name, s.Metric, err)
			}
		}
	}

	// The classic bounds of each histogram, for the resolution the two
	// forms agree to.
	bounds := map[string][]float64{}
	for _, f := range histogramFamilies {
		for _, s := range both.mustQuery(t, `group by (le) (`+f+`_bucket{job="zfs"})`) {
			le, err := strconv.ParseFloat(s.Metric["le"], 64)
			if err != nil {
				t.Fatalf("%s_bucket: le %q", f, s.Metric["le"])
			}
			bounds[f] = append(bounds[f], le)
		}
		slices.Sort(bounds[f])
	}

	compared, answered := 0, 0
	for _, q := range histogramQueries(t) {
		asWritten, err := both.queryAt(q.expr, at)
		if err != nil {
			t.Errorf("%s: %v", q.where, err)
			continue
		}
		if q.heatmap {
			// The classic buckets by le, and where none is stored the
			// native sum: one histogram.
			native, err := both.queryAt(withoutClassic(q.expr), at)
			if err != nil || len(native) != 1 || native[0].Histogram == nil {
				t.Errorf("%s: with the classic buckets taken out, %d results (%v), want one histogram", q.where, len(native), err)
			}
		} else {
			fallback, err := both.queryAt(withoutNative(q.expr), at)
			if err != nil {
				t.Errorf("%s, classic form: %v", q.where, err)
				continue
			}
			compared += compareVectors(t, q, asWritten, fallback, bounds)
		}
		shippedResult, err := converted.queryAt(q.expr, at)
		switch {
		case err != nil:
			t.Errorf("%s, shipped settings: %v", q.where, err)
		case len(shippedResult) == 0 && len(asWritten) > 0:
			t.Errorf("%s: no series with the shipped settings, %d with both forms stored: %s", q.where, len(asWritten), q.expr)
		case len(shippedResult) > 0:
			answered++
		}
	}
	t.Logf("%d series compared between the native and the classic form, %d histogram queries answered with the shipped settings", compared, answered)
	if compared < 40 || answered < 20 {
		t.Errorf("only %d series compared and %d queries answered: the replay's histograms did not move", compared, answered)
	}
}

// walkReplay lays out the captures of the OpenZFS 2.4 guest's scenarios
// as the steps of a replay directory, with the first one's kstats and
// zpool version for every step.
func walkReplay(t *testing.T, scenarios ...string) string {
	t.Helper()
	replay := t.TempDir()
	for i, scenario := range scenarios {
		if err := hostgen.WriteCaptures(filepath.Join(replay, fmt.Sprintf("%03d", i)), scenario,
			repotest.Path("internal", "zfs", "zpool", "testdata", "openzfs-2.4-guest"),
			repotest.Path("collector", "testdata", "openzfs-2.4-guest")); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Rename(filepath.Join(replay, "000", "kstat"), filepath.Join(replay, "kstat")); err != nil {
		t.Fatal(err)
	}
	version := runner.CaptureFileName("zpool version")
	data, err := os.ReadFile(filepath.Join(replay, "000", version))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(replay, version), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return replay
}

// shippedHistogramSettings returns the histogram settings of the zfs job
// of deploy/compose/prometheus.yml, as lines of a scrape config, and
// fails unless they convert classic histograms.
func shippedHistogramSettings(t *testing.T) string {
	t.Helper()
	path := repotest.Path("deploy", "compose", "prometheus.yml")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []map[string]any `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, job := range cfg.ScrapeConfigs {
		if job["job_name"] != "zfs" {
			continue
		}
		var b strings.Builder
		for _, key := range []string{"scrape_native_histograms", "convert_classic_histograms_to_nhcb"} {
			if job[key] != true {
				t.Fatalf("%s: the zfs job has %s: %v, want true", path, key, job[key])
			}
			fmt.Fprintf(&b, "    %s: true\n", key)
		}
		return b.String()
	}
	t.Fatalf("%s has no zfs job", path)
	return ""
}

// histogramQuery is a dashboard query or a recording rule that reads a
// histogram, its Grafana variables given values that select everything.
type histogramQuery struct {
	where, expr string
	heatmap     bool
}

// grafanaVariable is a Grafana variable in a query: $name or ${name}
// (label_replace's $1 is not one).
var grafanaVariable = regexp.MustCompile(`\$(?:\{([A-Za-z_]\w*)(?::[^}]*)?\}|([A-Za-z_]\w*))`)

func histogramQueries(t *testing.T) []histogramQuery {
	t.Helper()
	values := map[string]string{"job": ".*", "instance": ".*", "pool": ".*", "dataset": ".*", "__rate_interval": "9s", "__interval": "1s", "__range": "1m"}
	readsHistogram := func(expr string) bool {
		return slices.ContainsFunc(histogramFamilies, func(f string) bool { return strings.Contains(expr, f) })
	}
	var out []histogramQuery
	for _, q := range boardQueries(t, values) {
		if readsHistogram(q.expr) {
			out = append(out, q)
		}
	}
	data, err := os.ReadFile(repotest.Path("dashboards", "out", "rules", "zfs-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct{ Record, Expr string }
		}
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatalf("zfs-rules.yaml: %v", err)
	}
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			if readsHistogram(r.Expr) {
				out = append(out, histogramQuery{where: "zfs-rules.yaml: " + r.Record, expr: r.Expr})
			}
		}
	}
	return out
}

// boardQueries are the queries of every panel of the shipped dashboards,
// their Grafana variables given the values.
func boardQueries(t *testing.T, values map[string]string) []histogramQuery {
	t.Helper()
	var out []histogramQuery
	boards, err := filepath.Glob(repotest.Path("dashboards", "out", "dashboards", "*.json"))
	if err != nil || len(boards) == 0 {
		t.Fatalf("no dashboards in dashboards/out/dashboards (%v)", err)
	}
	type panel struct {
		Type    string  `json:"type"`
		Title   string  `json:"title"`
		Panels  []panel `json:"panels"`
		Targets []struct {
			Expr  string `json:"expr"`
			RefID string `json:"refId"`
		} `json:"targets"`
	}
	for _, path := range boards {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var board struct{ Panels []panel }
		if err := json.Unmarshal(data, &board); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var walk func([]panel)
		walk = func(panels []panel) {
			for _, p := range panels {
				for _, tg := range p.Targets {
					where := fmt.Sprintf("%s: panel %q target %s", filepath.Base(path), p.Title, tg.RefID)
					expr := grafanaVariable.ReplaceAllStringFunc(tg.Expr, func(ref string) string {
						m := grafanaVariable.FindStringSubmatch(ref)
						v, ok := values[m[1]+m[2]]
						if !ok {
							t.Fatalf("%s: variable %s has no value in this test", where, ref)
						}
						return v
					})
					out = append(out, histogramQuery{where: where, expr: expr, heatmap: p.Type == "heatmap"})
				}
				walk(p.Panels)
			}
		}
		walk(board.Panels)
	}
	return out
}

// withoutNative names no stored series where expr reads a native
// histogram, so that only its classic side can answer.
func withoutNative(expr string) string { return unstored(expr, "") }

// withoutClassic is withoutNative for the classic buckets.
func withoutClassic(expr string) string { return unstored(expr, "_bucket") }

// unstored renames every selector of a histogram family's series (its own
// name with suffix "", or _bucket) to a name Prometheus stores nothing under.
func unstored(expr, suffix string) string {
	for _, f := range histogramFamilies {
		expr = strings.ReplaceAll(expr, f+suffix+"{", f+suffix+"_not_stored{")
	}
	return expr
}

// compareVectors checks that two results hold the same series with
// values that agree, and returns how many carry a number. They agree to
// the histogram's resolution, not exactly: rate() extrapolates each
// classic series by its own values near the window's start, a native
// histogram by its count alone. A quantile must lie in the classic
// bucket of the classic result (a relative 1e-3 beyond it for the
// request sizes, whose native buckets end at a power of two and classic
// ones one byte below); any other figure within 5 %.
func compareVectors(t *testing.T, q histogramQuery, native, classic []sample, bounds map[string][]float64) int {
	t.Helper()
	values := func(v []sample) map[string]float64 {
		m := map[string]float64{}
		for _, s := range v {
			m[fmt.Sprint(s.Metric)] = s.float()
		}
		return m
	}
	n, c := values(native), values(classic)
	if len(n) != len(c) {
		t.Errorf("%s: %d series as written (native), %d from the classic series", q.where, len(n), len(c))
		return 0
	}
	var les []float64
	if strings.Contains(q.expr, "histogram_quantile") {
		for f, b := range bounds {
			if strings.Contains(q.expr, f) {
				les = b
			}
		}
		if len(les) == 0 {
			t.Errorf("%s: a quantile of no histogram the servers store", q.where)
			return 0
		}
	}
	numbers := 0
	for key, cv := range c {
		nv, ok := n[key]
		lo, hi := cv*0.95, cv*1.05
		if les != nil {
			i, _ := slices.BinarySearch(les, cv) // the bucket (les[i-1], les[i]]
			lo, hi = 0, math.Inf(1)
			if i > 0 {
				lo = les[i-1] * (1 - 1e-3)
			}
			if i < len(les) {
				hi = les[i] * (1 + 1e-3)
			}
		}
		switch {
		case !ok:
			t.Errorf("%s: series %s from the classic series only", q.where, key)
		case math.IsNaN(nv) && math.IsNaN(cv):
		case !(nv >= lo && nv <= hi):
			t.Errorf("%s: %s is %v as written (native), %v from the classic series, want it within [%v, %v]", q.where, key, nv, cv, lo, hi)
		default:
			numbers++
		}
	}
	return numbers
}
