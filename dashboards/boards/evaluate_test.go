package boards_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"
	"github.com/zpool-exporter/zpool_exporter/dashboards/render"
	"github.com/zpool-exporter/zpool_exporter/dashboards/rules"
)

var sample = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$`)

// goldenSeries turns the golden expositions into promtool input series of
// the job, each file its own instance: gauges keep their value, counters
// and histograms grow by one a minute so that rates are not zero.
func goldenSeries(t *testing.T, job string) []map[string]string {
	t.Helper()
	paths, err := filepath.Glob(contract.GoldenGlob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden expositions match %s (%v)", contract.GoldenGlob, err)
	}
	var series []map[string]string
	for _, path := range paths {
		series = append(series, expositionSeries(t, path, job, filepath.Base(path))...)
	}
	return series
}

// expositionSeries turns one golden exposition into promtool input
// series of the given job and instance, as goldenSeries does for each file.
func expositionSeries(t *testing.T, path, job, instance string) []map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var series []map[string]string
	types := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if f := strings.Fields(line); len(f) == 4 && f[0] == "#" && f[1] == "TYPE" {
			types[f[2]] = f[3]
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := sample.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("%s: cannot read %q", path, line)
		}
		name, lbls, value := m[1], m[2], m[3]
		kind := types[name]
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base := strings.TrimSuffix(name, suffix); base != name && types[base] != "" {
				kind = types[base]
			}
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, line, err)
		}
		inst := fmt.Sprintf(`job=%q, instance=%q`, job, instance)
		if lbls != "" {
			inst = lbls + ", " + inst
		}
		values := fmt.Sprintf("%gx30", v)
		if kind == "counter" || kind == "histogram" || kind == "summary" {
			values = fmt.Sprintf("%g+1x30", v)
		}
		series = append(series, map[string]string{"series": name + "{" + inst + "}", "values": values})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return series
}

// mustReturn are queries that the golden expositions (and the benchmark
// windows below) have data for: an empty answer means a join or filter is
// wrong, not that data is missing.
var mustReturn = map[string]bool{
	"zfs-pools.json Pools A":                          true,
	"zfs-pools.json Vdevs A":                          true,
	"zfs-pools.json Spares A":                         true,
	"zfs-pools.json Capacity used A":                  true,
	"zfs-pools.json Since last finished scrub A":      true,
	"zfs-pools.json Vdevs not online A":               true,
	"zfs-io.json Read bandwidth per top-level vdev A": true,
	"zfs-io.json Write operations per leaf vdev A":    true,
	"zfs-io.json Disk service time A":                 true,
	"zfs-benchmark.json Pool bandwidth B":             true,
	"zfs-benchmark.json Vdev bandwidth B":             true,
	"zfs-benchmark.json Host CPU busy A":              true,
	"zfs-benchmark.json ZFS engine CPU A":             true,
	"zfs-benchmark.json ARC hit ratio A":              true,
	"zfs-benchmark.json Txg sync time A":              true,
	"zfs-benchmark.json Write throttle A":             true,
	"zfs-scans.json Scans A":                          true,
	"zfs-scans.json Resilvered per vdev A":            true,
	"zfs-scans.json Repaired per vdev A":              true,
	// Expansions, removals, checkpoints, TRIM and initialization: the
	// status-* goldens.
	"zfs-scans.json Scans G":                   true,
	"zfs-scans.json Checkpoint space A":        true,
	"zfs-scans.json Removal mapping memory A":  true,
	"zfs-scans.json TRIM and initialization A": true,
	"zfs-scans.json TRIM and initialization B": true,
	"zfs-benchmark.json Benchmark runs A":      true,
	"zfs-benchmark.json Benchmark runs B":      true,
	"zfs-benchmark.json Benchmark runs C":      true,
	// The dataset goldens: a quota and a refquota, compression, the cap,
	// the listing of datasets.
	"zfs-datasets.json Datasets A":                  true,
	"zfs-datasets.json Datasets G":                  true,
	"zfs-datasets.json Datasets I":                  true,
	"zfs-datasets.json Used, top 10 A":              true,
	"zfs-datasets.json Growth per day, top 10 A":    true,
	"zfs-datasets.json Quota use A":                 true,
	"zfs-datasets.json Quota use B":                 true,
	"zfs-datasets.json Compression B":               true,
	"zfs-datasets.json Held by snapshots, top 10 A": true,
	"zfs-datasets.json Listings A":                  true,
	"zfs-datasets.json Listings C":                  true,
	"zfs-datasets.json Datasets left out A":         true,
	// Snapshots of zfs-fuse, one by one too.
	"zfs-datasets.json Snapshots by dataset A":            true,
	"zfs-datasets.json Snapshots by dataset D":            true,
	"zfs-datasets.json Snapshots by dataset F":            true,
	"zfs-datasets.json Snapshot count, top 10 A":          true,
	"zfs-datasets.json Newest snapshot age, stalest 10 A": true,
	"zfs-datasets.json Largest snapshots A":               true,
	"zfs-datasets.json Largest snapshots B":               true,
	"zfs-datasets.json Largest snapshots C":               true,
	// The ARC and L2ARC of the kstat goldens. No golden has counters of a
	// cache device, and their gauges are flat, so that no pool's free
	// space shrinks: TestTimeUntilFull feeds the time until full series
	// of its own.
	"zfs-arc.json ARC size now A":                true,
	"zfs-arc.json ARC size of c_max A":           true,
	"zfs-arc.json ARC hit ratio now A":           true,
	"zfs-arc.json ARC compression ratio A":       true,
	"zfs-arc.json L2ARC size now A":              true,
	"zfs-arc.json L2ARC hit ratio now A":         true,
	"zfs-arc.json ARC size, target and limits A": true,
	"zfs-arc.json ARC size, target and limits B": true,
	"zfs-arc.json ARC size, target and limits C": true,
	"zfs-arc.json ARC size, target and limits D": true,
	"zfs-arc.json MRU and MFU A":                 true,
	"zfs-arc.json MRU and MFU B":                 true,
	"zfs-arc.json Data and metadata A":           true,
	"zfs-arc.json Data and metadata B":           true,
	"zfs-arc.json Compressed and uncompressed A": true,
	"zfs-arc.json Compressed and uncompressed B": true,
	"zfs-arc.json ARC buffers (ABD) A":           true,
	"zfs-arc.json ARC buffers (ABD) B":           true,
	"zfs-arc.json ARC buffers (ABD) C":           true,
	"zfs-arc.json ARC hit ratio A":               true,
	"zfs-arc.json ARC hit ratio B":               true,
	"zfs-arc.json ARC hits and misses A":         true,
	"zfs-arc.json ARC hits and misses B":         true,
	"zfs-arc.json ARC misses by kind A":          true,
	"zfs-arc.json Prefetch stream hit ratio A":   true,
	"zfs-arc.json L2ARC hit ratio A":             true,
	"zfs-arc.json L2ARC size A":                  true,
	"zfs-arc.json L2ARC hits and misses A":       true,
	"zfs-arc.json L2ARC hits and misses B":       true,
	"zfs-arc.json L2ARC read and write A":        true,
	"zfs-arc.json L2ARC read and write B":        true,
	"zfs-pools.json Vdev capacity used A":        true,
	"zfs-pools.json Vdev capacity A":             true,
	"zfs-pools.json Vdev capacity B":             true,
	"zfs-pools.json Vdev capacity C":             true,
	"zfs-pools.json Vdev capacity D":             true,
	"zfs-pools.json Vdev capacity E":             true,
	"zfs-pools.json Vdev capacity F":             true,
	// The events golden: every leaf's ereports, the pools' events, the
	// events dropped.
	"zfs-pools.json Vdev ereports A": true,
	"zfs-pools.json Pool events A":   true,
	"zfs-pools.json Pool events B":   true,
}

// benchInstance is the instance of the benchmark windows' input series.
const benchInstance = "bench:9134"

// benchmarkWindows are input series of two benchmark windows of the job,
// which the golden expositions lack (the exporter serves them only with
// its benchmark API): "dd" on tank ran from 100 s to 160 s, "fio" names no
// pool and has been running since 900 s.
func benchmarkWindows(job string) []map[string]string {
	l := func(name, labels string) string {
		return fmt.Sprintf(`%s{job=%q, instance=%q, %s}`, name, job, benchInstance, labels)
	}
	dd, fio := `window="1", name="dd", pool="tank"`, `window="2", name="fio"`
	return []map[string]string{
		{"series": l("zfs_benchmark_window_active", dd), "values": "0x30"},
		{"series": l("zfs_benchmark_window_start_time_seconds", dd), "values": "100x30"},
		{"series": l("zfs_benchmark_window_end_time_seconds", dd), "values": "160x30"},
		{"series": l("zfs_benchmark_window_active", fio), "values": "1x30"},
		{"series": l("zfs_benchmark_window_start_time_seconds", fio), "values": "900x30"},
	}
}

// Every panel and annotation query runs in Prometheus (promtool's
// engine) over the golden expositions without an error, such as a join
// that is many-to-many on real vdev trees, and the queries listed in
// mustReturn give series: scraped as job "zfs" with the shipped rules, and
// as job "zpool" with the rules made for it, the boards unchanged (their
// job variable lists every job).
func TestQueriesEvaluateOnGoldenSeries(t *testing.T) {
	for _, job := range []string{"zfs", "zpool"} {
		t.Run("job="+job, func(t *testing.T) { evaluateBoards(t, job, recordingRuleFilesFor(t, job)) })
	}
}

func evaluateBoards(t *testing.T, job string, ruleFiles []string) {
	bin := contract.Promtool(t)
	vals := map[string]string{"job": ".+", "instance": ".+", "pool": ".+", "dataset": ".+", "__rate_interval": "5m", "__interval": "1m", "__range": "1h"}

	type evalCase struct{ where, key string }
	var cases []evalCase
	var exprTests []map[string]any
	add := func(where, key, text string) {
		// A comment names the case in promtool's report.
		exprTests = append(exprTests, map[string]any{
			"expr":        fmt.Sprintf("%s # q%d", render.Interpolate(text, vals), len(cases)),
			"eval_time":   "20m",
			"exp_samples": []any{},
		})
		cases = append(cases, evalCase{where, key})
	}
	for _, b := range decodeAll(t) {
		for _, p := range b.flatPanels() {
			for _, tg := range p.Targets {
				add(where(b, p)+" target "+tg.RefID, b.file+" "+p.Title+" "+tg.RefID, tg.Expr)
			}
		}
		// Grafana's own annotations (tag queries) are not Prometheus'
		// to answer: annotationExprs leaves them out, and lists every
		// other annotation, which must then have an expression.
		for _, e := range annotationExprs(b) {
			if strings.TrimSpace(e.text) == "" {
				t.Errorf("%s: a Prometheus annotation without an expression", e.where)
				continue
			}
			add(e.where, "", e.text)
		}
	}
	for key := range mustReturn {
		found := false
		for _, c := range cases {
			found = found || c.key == key
		}
		if !found {
			t.Errorf("mustReturn names %q, which no dashboard has", key)
		}
	}

	// JSON is YAML, and keeps the quotes of label values intact.
	spec, err := json.Marshal(map[string]any{
		"rule_files":          ruleFiles,
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":         "1m",
			"input_series":     append(goldenSeries(t, job), benchmarkWindows(job)...),
			"promql_expr_test": exprTests,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "queries.yml")
	if err := os.WriteFile(file, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every case fails on purpose (nothing is expected), so that promtool
	// prints what each query gave: an error, series, or nothing at all.
	out, _ := exec.Command(bin, "test", "rules", file).CombinedOutput()

	caseRef := regexp.MustCompile(`# q(\d+)", time: \S+,(?: err: (.*))?$`)
	gotSeries := map[int]bool{}
	current, reported := -1, 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := caseRef.FindStringSubmatch(line); m != nil {
			current, _ = strconv.Atoi(m[1])
			reported++
			if m[2] != "" {
				t.Errorf("%s: Prometheus cannot evaluate it: %s", cases[current].where, m[2])
			}
			continue
		}
		if current >= 0 && strings.HasPrefix(strings.TrimSpace(line), "got:") {
			gotSeries[current] = true
		}
	}
	if reported == 0 {
		t.Fatalf("promtool reported no query:\n%s", out)
	}
	for i, c := range cases {
		if mustReturn[c.key] && !gotSeries[i] {
			t.Errorf("%s: no series from the golden expositions and benchmark windows", c.where)
		}
	}
}

// The benchmark runs table shows each window's start and end in
// milliseconds (Grafana's dateTimeAsIso), 0 for the end of a running one
// (mapped to "running"), and how long it ran or has run so far.
func TestBenchmarkRunsTable(t *testing.T) {
	bin := contract.Promtool(t)
	var targets []target
	for _, b := range decodeAll(t) {
		for _, p := range b.flatPanels() {
			if b.file == "zfs-benchmark.json" && p.Title == "Benchmark runs" {
				targets = p.Targets
			}
		}
	}
	labels := func(window, name, pool string) string {
		l := fmt.Sprintf(`{job="zfs", instance=%q, window=%q, name=%q`, benchInstance, window, name)
		if pool != "" {
			l += fmt.Sprintf(", pool=%q", pool)
		}
		return l + "}"
	}
	dd, fio := labels("1", "dd", "tank"), labels("2", "fio", "")
	// At 20m, time() is 1200: fio has run for 300 s.
	want := map[string][2]float64{
		"A": {100e3, 900e3},
		"B": {160e3, 0},
		"C": {60, 300},
	}
	vals := map[string]string{"job": ".+", "instance": ".+", "pool": ".+"}
	var exprTests []any
	for _, tg := range targets {
		w, ok := want[tg.RefID]
		if !ok {
			t.Errorf("target %s: no expected values", tg.RefID)
			continue
		}
		delete(want, tg.RefID)
		exprTests = append(exprTests, map[string]any{
			"expr":      render.Interpolate(tg.Expr, vals),
			"eval_time": "20m",
			"exp_samples": []any{
				map[string]any{"labels": dd, "value": w[0]},
				map[string]any{"labels": fio, "value": w[1]},
			},
		})
	}
	for ref := range want {
		t.Errorf("the Benchmark runs panel has no target %s", ref)
	}
	if out, err := promtoolExprTests(t, bin, benchmarkWindows("zfs"), exprTests); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}

// The benchmark windows' annotation marks a run shorter than its minute
// step, scraped active once between two steps, and keeps to the pool
// variable: the windows of the chosen pool and those that name none.
func TestBenchmarkWindowAnnotationShowsShortRuns(t *testing.T) {
	bin := contract.Promtool(t)
	var expr string
	for _, b := range decodeAll(t) {
		for _, a := range b.Annotations.List {
			if b.file == "zfs-benchmark.json" && a.Name == "Benchmark windows" {
				expr = a.Expr
			}
		}
	}
	if expr == "" {
		t.Fatal("the benchmark board has no Benchmark windows annotation")
	}
	// Scrapes every 15 s: each run is active at one scrape only, at 45 s.
	series := func(name, pool string) map[string]string {
		l := fmt.Sprintf(`zfs_benchmark_window_active{job="zfs", instance=%q, window=%q, name=%q`, benchInstance, name, name)
		if pool != "" {
			l += fmt.Sprintf(", pool=%q", pool)
		}
		return map[string]string{"series": l + "}", "values": "0 0 0 1 0 0 0 0 0"}
	}
	input := []map[string]string{series("short", "tank"), series("nameless", ""), series("elsewhere", "backup")}
	label := func(name, pool string) string {
		l := fmt.Sprintf(`{job="zfs", instance=%q, window=%q, name=%q`, benchInstance, name, name)
		if pool != "" {
			l += fmt.Sprintf(", pool=%q", pool)
		}
		return l + "}"
	}
	vals := map[string]string{"job": ".+", "instance": ".+", "pool": "tank"}
	cases := []any{map[string]any{
		// The annotation's first step after the run.
		"expr":      render.Interpolate(expr, vals),
		"eval_time": "1m",
		"exp_samples": []any{
			map[string]any{"labels": label("short", "tank"), "value": 1},
			map[string]any{"labels": label("nameless", ""), "value": 1},
		},
	}}
	if out, err := promtoolExprTestsEvery(t, bin, "15s", input, cases); err != nil {
		t.Errorf("the Benchmark windows annotation over a run of one scrape: %v\n%s", err, out)
	}
}

// promtoolExprTests runs promql_expr_test cases over input series a
// minute apart in promtool, and returns what it printed.
func promtoolExprTests(t *testing.T, bin string, input []map[string]string, cases []any) ([]byte, error) {
	t.Helper()
	return promtoolExprTestsEvery(t, bin, "1m", input, cases)
}

// promtoolExprTestsEvery is promtoolExprTests with samples interval apart.
func promtoolExprTestsEvery(t *testing.T, bin, interval string, input []map[string]string, cases []any) ([]byte, error) {
	t.Helper()
	spec, err := json.Marshal(map[string]any{
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":         interval,
			"input_series":     input,
			"promql_expr_test": cases,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tests.yml")
	if err := os.WriteFile(file, spec, 0o644); err != nil {
		t.Fatal(err)
	}
	return exec.Command(bin, "test", "rules", file).CombinedOutput()
}

// rulesGlob are the generated rule files: the recorded series some panels
// read are evaluated from them.
const rulesGlob = "../out/rules/*.yaml"

var recordRule = regexp.MustCompile(`(?m)^\s*-?\s*record:\s*(\S+)\s*$`)

// recordingRuleFilesFor lists the rule files that record series for a
// job: the shipped ones for "zfs", the default, and for another job the
// rules generated with its selector, as `go run ./cmd/mixin` would.
func recordingRuleFilesFor(t *testing.T, job string) []string {
	t.Helper()
	cfg := config.Default()
	sel := fmt.Sprintf("job=%q", job)
	if sel == cfg.Selector {
		return recordingRuleFiles(t)
	}
	cfg.Selector = sel
	files, err := rules.Files(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var paths []string
	for name, data := range files {
		if !recordRule.Match(data) {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if len(paths) == 0 {
		t.Fatal("the rules generated for job " + job + " record nothing")
	}
	return paths
}

// recordingRuleFiles lists the rule files that record series, as
// absolute paths for promtool.
func recordingRuleFiles(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob(rulesGlob)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !recordRule.Match(data) {
			continue
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, abs)
	}
	return files
}

// recordedByRules lists the series the generated rules record.
func recordedByRules(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, path := range recordingRuleFiles(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range recordRule.FindAllSubmatch(data, -1) {
			names[string(m[1])] = true
		}
	}
	return names
}
