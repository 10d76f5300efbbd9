package boards_test

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"
	"github.com/zpool-exporter/zpool_exporter/dashboards/render"
)

// histogramProblems returns what is wrong with the way a dashboard reads
// histogram buckets. Buckets are cumulative counters: each _bucket series
// must go through rate() into a sum that keeps le, and that sum is either
// a heatmap's query (by le alone, in heatmap format, which Grafana turns
// back into one cell per bucket; the left side of an "or" whose right is
// the native form) or histogram_quantile's argument. Any other sum mixes
// buckets, or is a pile of cumulative counts that no panel shows as such.
// A query that reads a histogram's classic series (_bucket, _sum,
// _count) must read its native form too: a Prometheus 3 converting
// classic histograms (convert_classic_histograms_to_nhcb) stores no
// classic series, and the panel would be empty there.
func histogramProblems(b *board) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	vars := b.varNames()
	for _, p := range b.flatPanels() {
		heat := p.Type == "heatmap"
		for _, tg := range p.Targets {
			w := where(b, p) + " target " + tg.RefID
			if heat && tg.Format != "heatmap" {
				add("%s: format %q in a heatmap, want heatmap", w, tg.Format)
			}
			if !heat && tg.Format == "heatmap" {
				add("%s: format heatmap in a %s panel", w, p.Type)
			}
			node, err := expr{text: tg.Expr}.parse(vars)
			if err != nil {
				continue // the lints report it
			}
			buckets := 0
			parser.Inspect(node, func(n parser.Node, path []parser.Node) error {
				vs, ok := n.(*parser.VectorSelector)
				if !ok || !strings.HasSuffix(contract.MetricName(vs), "_bucket") {
					return nil
				}
				buckets++
				if msg := bucketUse(path, heat); msg != "" {
					add("%s: %s %s", w, contract.MetricName(vs), msg)
				}
				return nil
			})
			names := contract.MetricNames(node)
			for _, name := range names {
				for _, suffix := range []string{"_bucket", "_sum", "_count"} {
					base, ok := strings.CutSuffix(name, suffix)
					if ok && histogramFamilies[base] && !slices.Contains(names, base) {
						add("%s: reads %s but not the native histogram %s", w, name, base)
					}
				}
			}
			if heat && buckets == 0 {
				add("%s: a heatmap that reads no histogram buckets", w)
			}
		}
	}
	return problems
}

// bucketUse says what is wrong with one _bucket selector, given its
// ancestors from the root of the expression down, or "".
func bucketUse(path []parser.Node, heat bool) string {
	rated := false
	for i := len(path) - 1; i >= 0; i-- {
		switch n := path[i].(type) {
		case *parser.Call:
			if n.Func.Name == "rate" {
				rated = true
			}
		case *parser.AggregateExpr:
			if !rated {
				return "is summed without rate()"
			}
			by := strings.Join(n.Grouping, ", ")
			switch {
			case n.Op != parser.SUM || n.Without || !slices.Contains(n.Grouping, "le"):
				return fmt.Sprintf("goes into %s, which drops le", n.Op)
			case heat && !slices.Equal(n.Grouping, []string{"le"}):
				return fmt.Sprintf("is summed by (%s) in a heatmap, want by (le) alone", by)
			case heat && i != 0 && !leftOfOr(path[:i+1]):
				return "is summed by le inside a larger expression in a heatmap"
			case !heat && !quantileArg(path[:i]):
				return fmt.Sprintf("is summed by (%s) outside histogram_quantile", by)
			}
			return ""
		}
	}
	return "is not summed by le"
}

// leftOfOr tells whether the last node of path is the whole query or the
// left side of an "or" that is: a heatmap's classic buckets, before the
// native form that stands in where no bucket is stored.
func leftOfOr(path []parser.Node) bool {
	if len(path) != 2 {
		return len(path) == 1
	}
	or, ok := path[0].(*parser.BinaryExpr)
	return ok && or.Op == parser.LOR && or.LHS == path[1]
}

// histogramFamilies are the histograms the dashboards read.
var histogramFamilies = map[string]bool{
	"zfs_vdev_total_wait_seconds": true, "zfs_vdev_disk_wait_seconds": true, "zfs_vdev_queue_wait_seconds": true,
	"zfs_vdev_request_size_bytes": true, "zfs_pool_txg_sync_seconds": true,
}

// quantileArg tells whether the node below path is histogram_quantile's
// argument, parentheses aside.
func quantileArg(path []parser.Node) bool {
	for i := len(path) - 1; i >= 0; i-- {
		switch n := path[i].(type) {
		case *parser.ParenExpr:
			continue
		case *parser.Call:
			return n.Func.Name == "histogram_quantile"
		default:
			return false
		}
	}
	return false
}

func TestHistogramBucketsSummedByLe(t *testing.T) {
	heatmaps := map[string]int{}
	for _, b := range decodeAll(t) {
		for _, p := range histogramProblems(b) {
			t.Error(p)
		}
		for _, p := range b.flatPanels() {
			if p.Type == "heatmap" {
				heatmaps[b.file]++
			}
		}
	}
	// The I/O dashboard draws disk and total wait, read and write, and
	// both kinds of request size as heatmaps.
	if heatmaps["zfs-io.json"] != 6 {
		t.Errorf("zfs-io.json has %d heatmaps, want 6", heatmaps["zfs-io.json"])
	}
}

// The histogram check must catch a heatmap or a quantile that loses or
// mixes the buckets, naming the panel.
func TestHistogramChecksCatchMutations(t *testing.T) {
	for _, c := range []struct {
		name, file, panel, want string
		mutate                  func(p *panel)
	}{
		{"heatmap summed by instance too", "zfs-io.json", "Read disk wait", "want by (le) alone", func(p *panel) {
			p.Targets[0].Expr = strings.Replace(p.Targets[0].Expr, "sum by (le)", "sum by (instance, le)", 1)
		}},
		{"heatmap as a time series", "zfs-io.json", "Individual request sizes", `format "time_series" in a heatmap`, func(p *panel) {
			p.Targets[0].Format = "time_series"
		}},
		{"heatmap buckets without rate", "zfs-io.json", "Write total wait", "without rate()", func(p *panel) {
			p.Targets[0].Expr = strings.Replace(strings.Replace(p.Targets[0].Expr, "rate(", "(", 1), "[$__rate_interval]", "", 1)
		}},
		{"quantile without le", "zfs-io.json", "Read disk wait per leaf vdev", "drops le", func(p *panel) {
			p.Targets[1].Expr = strings.Replace(p.Targets[1].Expr, "vdev, le)", "vdev)", 1)
		}},
		{"buckets outside histogram_quantile", "zfs-benchmark.json", "Pool total wait", "outside histogram_quantile", func(p *panel) {
			p.Targets[0].Expr = strings.Replace(p.Targets[0].Expr, "histogram_quantile(0.5, sum by (instance, pool, type, le)", "max(sum by (instance, pool, type, le)", 1)
		}},
		{"quantile of the classic form alone", "zfs-io.json", "Write disk wait per leaf vdev", "not the native histogram zfs_vdev_disk_wait_seconds", func(p *panel) {
			e := p.Targets[1].Expr
			p.Targets[1].Expr = e[strings.Index(e, " or histogram_quantile(")+len(" or "):]
		}},
		{"mean of the classic form alone", "zfs-benchmark.json", "Pool disk wait", "reads zfs_vdev_disk_wait_seconds_sum but not the native histogram", func(p *panel) {
			e := p.Targets[2].Expr
			p.Targets[2].Expr = e[strings.Index(e, " or sum by")+len(" or "):]
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := decode(t, c.file, generated(t)[c.file])
			if problems := histogramProblems(b); len(problems) > 0 {
				t.Fatalf("%s already has problems: %q", c.file, problems)
			}
			id := 0
			for i := range b.Panels {
				if b.Panels[i].Title == c.panel {
					c.mutate(&b.Panels[i])
					id = b.Panels[i].ID
				}
			}
			if id == 0 {
				t.Fatalf("%s has no panel %q", c.file, c.panel)
			}
			problems := histogramProblems(b)
			for _, p := range problems {
				if strings.Contains(p, c.want) && strings.Contains(p, fmt.Sprintf("panel %d ", id)) {
					return
				}
			}
			t.Errorf("no problem mentions %q for panel %q of %s; got %q", c.want, c.panel, c.file, problems)
		})
	}
}

// latencyFamilies are what the vdev_latency collector exports.
var latencyFamilies = []string{
	"zfs_vdev_total_wait_seconds", "zfs_vdev_disk_wait_seconds", "zfs_vdev_queue_wait_seconds",
	"zfs_vdev_request_size_bytes", "zfs_vdev_queue_pending", "zfs_vdev_queue_active",
}

// readsLatency tells whether an expression reads one of latencyFamilies.
func readsLatency(node parser.Node) bool {
	for _, name := range contract.MetricNames(node) {
		for _, f := range latencyFamilies {
			if name == f || strings.HasPrefix(name, f+"_") {
				return true
			}
		}
	}
	return false
}

// The goldens of the vdev_latency families hold one pool, rz1, but no
// zfs_vdev_info, which the panels join to tell the pool row, the
// top-level vdevs and the leaves apart: rz1's vdev tree comes from a
// golden of the same guest's pools. rz1 is raidz1-0 of virtio-zd07 to
// zd09, the log virtio-zd10 and the cache virtio-zd11 (and a spare,
// virtio-zd12, which has no histograms).
const (
	latencyGolden       = "vdev-latency-openzfs-2.4-rz1.prom"
	latencyDetailGolden = "vdev-latency-openzfs-2.4-rz1-detail.prom"
	treeGolden          = "openzfs-2.4-guest-04-resilvering.prom"
	latencyPool         = "rz1"
)

// vdevLevel is which vdevs a panel's series must be.
type vdevLevel int

const (
	// poolRows: one series per pool (and class or type), without vdev.
	poolRows vdevLevel = iota
	topLevelVdevs
	leafVdevs
)

var levelVdevs = map[vdevLevel][]string{
	topLevelVdevs: {"raidz1-0", "virtio-zd10", "virtio-zd11"},
	leafVdevs:     {"virtio-zd07", "virtio-zd08", "virtio-zd09", "virtio-zd10", "virtio-zd11"},
}

// latencyPanel is a panel that reads the vdev_latency collector: the
// vdevs its series are of, and the exporter flag it needs ("" for what
// the exporter sends by default).
type latencyPanel struct {
	level vdevLevel
	flag  string
}

// latencyPanels are the panels that read the vdev_latency collector, by
// file and title.
var latencyPanels = map[string]latencyPanel{
	"zfs-io.json Read disk wait":                    {poolRows, ""},
	"zfs-io.json Write disk wait":                   {poolRows, ""},
	"zfs-io.json Read total wait":                   {poolRows, ""},
	"zfs-io.json Write total wait":                  {poolRows, ""},
	"zfs-io.json Read wait p99 per top-level vdev":  {topLevelVdevs, ""},
	"zfs-io.json Write wait p99 per top-level vdev": {topLevelVdevs, ""},
	"zfs-io.json Read disk wait per leaf vdev":      {leafVdevs, ""},
	"zfs-io.json Write disk wait per leaf vdev":     {leafVdevs, ""},
	"zfs-io.json Individual request sizes":          {poolRows, "request-sizes"},
	"zfs-io.json Aggregated request sizes":          {poolRows, "request-sizes"},
	"zfs-io.json Mean request size per class":       {poolRows, "request-sizes"},
	"zfs-io.json Queued I/Os per class":             {poolRows, "queue-lengths"},
	"zfs-io.json Active I/Os per class":             {poolRows, "queue-lengths"},
	"zfs-io.json Queue wait p99 per class":          {poolRows, "queue-wait"},
	"zfs-benchmark.json Pool disk wait":             {poolRows, ""},
	"zfs-benchmark.json Pool total wait":            {poolRows, ""},
}

// latencyInput is a golden of the vdev_latency families (latencyGolden,
// what the exporter sends by default, or latencyDetailGolden, every
// family) with rz1's vdev tree, all of one instance, as promtool input
// series.
func latencyInput(t *testing.T, golden string) []map[string]string {
	t.Helper()
	dir := filepath.Dir(contract.GoldenGlob)
	instance := golden
	input := expositionSeries(t, filepath.Join(dir, golden), "zfs", instance)
	tree := 0
	for _, s := range expositionSeries(t, filepath.Join(dir, treeGolden), "zfs", instance) {
		if strings.HasPrefix(s["series"], "zfs_vdev_info{") && strings.Contains(s["series"], fmt.Sprintf("pool=%q", latencyPool)) {
			input = append(input, s)
			tree++
		}
	}
	if tree == 0 {
		t.Fatalf("%s has no zfs_vdev_info of pool %s", treeGolden, latencyPool)
	}
	// The golden's queues are empty; one I/O in each queue of every vdev
	// makes a sum of the pool rows 1 per class, and any other sum more.
	for _, s := range input {
		if queueGauge.MatchString(s["series"]) {
			s["values"] = "1x30"
		}
	}
	return input
}

var queueGauge = regexp.MustCompile(`^zfs_vdev_queue_(?:pending|active)\{`)

// gotSample is one sample of a query's answer in promtool's report.
type gotSample struct {
	labels map[string]string
	value  float64
}

var (
	gotEntry = regexp.MustCompile(`\{([^}]*)\} (\S+?)(?:,|$)`)
	gotLabel = regexp.MustCompile(`(\w+)="((?:[^"\\]|\\.)*)"`)
)

// evaluate runs each expression at 20m over the input series in promtool
// and returns what each gave; a query Prometheus cannot evaluate fails
// the test.
func evaluate(t *testing.T, input []map[string]string, exprs []string) [][]gotSample {
	t.Helper()
	bin := contract.Promtool(t)
	var tests []any
	for i, e := range exprs {
		// Nothing is expected, so that promtool reports what it got.
		tests = append(tests, map[string]any{"expr": fmt.Sprintf("%s # q%d", e, i), "eval_time": "20m", "exp_samples": []any{}})
	}
	out, _ := promtoolExprTests(t, bin, input, tests)

	caseRef := regexp.MustCompile(`# q(\d+)", time: \S+,(?: err: (.*))?$`)
	got := make([][]gotSample, len(exprs))
	current, reported := -1, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if m := caseRef.FindStringSubmatch(line); m != nil {
			current, _ = strconv.Atoi(m[1])
			reported++
			if m[2] != "" {
				t.Errorf("Prometheus cannot evaluate %s: %s", exprs[current], m[2])
			}
			continue
		}
		if current < 0 || !strings.HasPrefix(line, "got:") {
			continue
		}
		for _, e := range gotEntry.FindAllStringSubmatch(line, -1) {
			v, err := strconv.ParseFloat(e[2], 64)
			if err != nil {
				t.Fatalf("promtool sample %q: %v", e[0], err)
			}
			s := gotSample{labels: map[string]string{}, value: v}
			for _, l := range gotLabel.FindAllStringSubmatch(e[1], -1) {
				s.labels[l[1]] = l[2]
			}
			got[current] = append(got[current], s)
		}
	}
	if reported != len(exprs) {
		t.Fatalf("promtool reported %d of %d queries:\n%s", reported, len(exprs), out)
	}
	return got
}

// The panels of the vdev_latency collector give series over its golden,
// each of the vdevs it should: the pool rows, the top-level vdevs or the
// leaves, never a sum over several levels (which would count each I/O
// twice or more). A heatmap gives each bucket of its family once, with
// the pool rows' rate alone. The panels of the default series answer over
// what the exporter sends with its default flags; the others over every
// family, and their description names the flag that turns theirs on.
func TestLatencyPanelsOnLatencyGolden(t *testing.T) {
	vals := map[string]string{"job": ".+", "instance": ".+", "pool": ".+", "__rate_interval": "5m", "__interval": "1m", "__range": "1h"}

	type evalCase struct {
		key, where string
		heatmap    bool
		panel      latencyPanel
		expr       string
	}
	var cases []evalCase
	seen := map[string]bool{}
	for _, b := range decodeAll(t) {
		vars := b.varNames()
		for _, p := range b.flatPanels() {
			key := b.file + " " + p.Title
			for _, tg := range p.Targets {
				node, err := expr{text: tg.Expr}.parse(vars)
				if err != nil || !readsLatency(node) {
					continue
				}
				lp, ok := latencyPanels[key]
				if !ok {
					t.Errorf("%s reads the vdev_latency collector: list it in latencyPanels", where(b, p))
					continue
				}
				if lp.flag != "" && !strings.Contains(p.Description, "--collector.vdev_latency."+lp.flag) {
					t.Errorf("%s: its description does not name --collector.vdev_latency.%s, which it needs", where(b, p), lp.flag)
				}
				seen[key] = true
				cases = append(cases, evalCase{key, where(b, p) + " target " + tg.RefID, p.Type == "heatmap", lp, render.Interpolate(tg.Expr, vals)})
			}
		}
	}
	for key := range latencyPanels {
		if !seen[key] {
			t.Errorf("latencyPanels names %q, which reads no vdev_latency family", key)
		}
	}
	for _, golden := range []string{latencyGolden, latencyDetailGolden} {
		input := latencyInput(t, golden)
		var these []evalCase
		for _, c := range cases {
			if (c.panel.flag == "") == (golden == latencyGolden) {
				these = append(these, c)
			}
		}
		exprs := make([]string, len(these))
		for i, c := range these {
			exprs[i] = c.expr
		}
		got := evaluate(t, input, exprs)
		for i, c := range these {
			if len(got[i]) == 0 {
				t.Errorf("%s: no series from %s", c.where, golden)
				continue
			}
			switch {
			case c.heatmap:
				checkHeatmap(t, c.where, c.expr, input, got[i])
			case c.panel.level == poolRows:
				queues := strings.Contains(c.expr, "zfs_vdev_queue_pending") || strings.Contains(c.expr, "zfs_vdev_queue_active")
				for _, s := range got[i] {
					if s.labels["pool"] != latencyPool || s.labels["vdev"] != "" {
						t.Errorf("%s: series %v, want one per pool without vdev", c.where, s.labels)
					}
					if queues && s.value != 1 {
						t.Errorf("%s: %v is %g I/Os, want 1: the pool row's alone", c.where, s.labels, s.value)
					}
				}
			default:
				vdevs := map[string]bool{}
				for _, s := range got[i] {
					vdevs[s.labels["vdev"]] = true
				}
				var names []string
				for v := range vdevs {
					names = append(names, v)
				}
				sort.Strings(names)
				if want := levelVdevs[c.panel.level]; !slices.Equal(names, want) {
					t.Errorf("%s: series of vdevs %q over %s, want %q", c.where, names, golden, want)
				}
			}
		}
	}
}

// checkHeatmap compares a heatmap query's answer with its buckets in the
// input: every input series grows by one a minute, so that a bucket's
// rate, times 60, is the number of series summed into it, which must be
// the pool rows' (vdev named after the pool) matching the query's
// selector.
func checkHeatmap(t *testing.T, where, text string, input []map[string]string, got []gotSample) {
	t.Helper()
	node, err := promql.ParseExpr(text)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	var sel *parser.VectorSelector
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && strings.HasSuffix(vs.Name, "_bucket") {
			sel = vs
		}
		return nil
	})
	if sel == nil {
		t.Fatalf("%s: no bucket selector in %s", where, text)
	}
	want := map[string]float64{}
	for _, s := range input {
		lbls, err := promql.ParseMetric(s["series"])
		if err != nil {
			t.Fatalf("input series %s: %v", s["series"], err)
		}
		if lbls.Get(labels.MetricName) != sel.Name || lbls.Get("vdev") != lbls.Get("pool") || !matchesAll(sel.LabelMatchers, lbls) {
			continue
		}
		want[lbls.Get("le")]++
	}
	if len(want) == 0 {
		t.Fatalf("%s: the input has no pool row of %s", where, sel)
	}
	gotLe := map[string]float64{}
	for _, s := range got {
		if len(s.labels) != 1 || s.labels["le"] == "" {
			t.Errorf("%s: series %v, want le alone", where, s.labels)
			continue
		}
		gotLe[s.labels["le"]] = s.value * 60
	}
	for le, n := range want {
		g, ok := gotLe[le]
		switch {
		case !ok:
			t.Errorf("%s: no cell for le=%s", where, le)
		case math.Abs(g-n) > 1e-6:
			t.Errorf("%s: le=%s sums %g series, want the %g pool rows", where, le, g, n)
		}
	}
	if len(gotLe) != len(want) {
		t.Errorf("%s: %d buckets, want %d", where, len(gotLe), len(want))
	}
}

func matchesAll(ms []*labels.Matcher, lbls labels.Labels) bool {
	for _, m := range ms {
		if !m.Matches(lbls.Get(m.Name)) {
			return false
		}
	}
	return true
}
