package boards_test

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"
	"github.com/zpool-exporter/zpool_exporter/dashboards/render"
)

// alertsFile holds the generated alerts, ZFSPoolFillingUp among them.
const alertsFile = "../out/rules/zfs-alerts.yaml"

// fillAlert finds each ZFSPoolFillingUp rule's deriv window of the free
// space and the horizon (seconds) it compares the time until full with.
var fillAlert = regexp.MustCompile(`deriv\(zfs_pool_free_bytes\{[^}]*\}\[(\w+)\]\) < 0\)\s*< (\d+)`)

// fillWindow finds the deriv window of the free space in a panel query.
var fillWindow = regexp.MustCompile(`deriv\(zfs_pool_free_bytes\{[^}]*\}\[(\w+)\]\)`)

// untilFullTargets are the pools dashboard's queries of the time until a
// pool is full: the Pools table's columns and the graph.
func untilFullTargets(t *testing.T) map[string][]target {
	t.Helper()
	out := map[string][]target{}
	for _, b := range decodeAll(t) {
		if b.file != "zfs-pools.json" {
			continue
		}
		for _, p := range b.flatPanels() {
			for _, tg := range p.Targets {
				if fillWindow.MatchString(tg.Expr) {
					out[p.Title] = append(out[p.Title], tg)
				}
			}
		}
	}
	for _, title := range []string{"Pools", "Time until full"} {
		if len(out[title]) == 0 {
			t.Errorf("zfs-pools.json: panel %q has no time until full", title)
		}
	}
	return out
}

// The time until full reads the trend of the windows the alerts read, and
// the graph marks their horizons: what the dashboard shows red or orange
// is what pages or warns.
func TestTimeUntilFullMatchesAlerts(t *testing.T) {
	data, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	horizons := map[string]float64{}
	for _, m := range fillAlert.FindAllStringSubmatch(string(data), -1) {
		h, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		horizons[m[1]] = h
	}
	if len(horizons) == 0 {
		t.Fatalf("%s: no ZFSPoolFillingUp rule found", alertsFile)
	}
	var want []string
	for w := range horizons {
		want = append(want, w)
	}
	sort.Strings(want)

	for title, targets := range untilFullTargets(t) {
		var got []string
		for _, tg := range targets {
			got = append(got, fillWindow.FindStringSubmatch(tg.Expr)[1])
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("zfs-pools.json panel %q: trend windows %q, the alerts' %q", title, got, want)
		}
	}

	// The graph's threshold lines sit at the alerts' horizons.
	var raw struct {
		Panels []struct {
			Title       string `json:"title"`
			FieldConfig struct {
				Defaults struct {
					Thresholds struct {
						Steps []struct {
							Value *float64 `json:"value"`
						} `json:"steps"`
					} `json:"thresholds"`
				} `json:"defaults"`
			} `json:"fieldConfig"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(generated(t)["zfs-pools.json"], &raw); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range raw.Panels {
		if p.Title != "Time until full" {
			continue
		}
		found = true
		var steps []float64
		for _, s := range p.FieldConfig.Defaults.Thresholds.Steps {
			if s.Value != nil {
				steps = append(steps, *s.Value)
			}
		}
		for w, h := range horizons {
			if !slices.Contains(steps, h) {
				t.Errorf("Time until full: no threshold at %gs, the horizon of the %s alert (steps %v)", h, w, steps)
			}
		}
	}
	if !found {
		t.Error("zfs-pools.json has no panel \"Time until full\"")
	}
}

// The time until full is the free space over the rate it shrinks at, and
// has no value for a pool whose free space stays or grows. The golden
// expositions are flat, so the series are made up: "shrinking" loses
// 600 kB a minute from 1 GB.
func TestTimeUntilFull(t *testing.T) {
	bin := contract.Promtool(t)
	const instance = "fill:9134"
	labels := func(pool string) string {
		return fmt.Sprintf(`{job="zfs", instance=%q, pool=%q}`, instance, pool)
	}
	input := []map[string]string{
		{"series": "zfs_pool_free_bytes" + labels("shrinking"), "values": "1000000000-600000x30"},
		{"series": "zfs_pool_free_bytes" + labels("growing"), "values": "1000000000+600000x30"},
		{"series": "zfs_pool_free_bytes" + labels("flat"), "values": "1000000000x30"},
	}
	// At 20m, 988 MB are left, going at 10 kB a second: 98,800 seconds.
	const want = 98800
	vals := map[string]string{"job": ".+", "instance": ".+", "pool": ".+"}
	var exprTests []any
	for title, targets := range untilFullTargets(t) {
		for _, tg := range targets {
			exprTests = append(exprTests, map[string]any{
				"expr":        render.Interpolate(tg.Expr, vals) + " # " + strings.ReplaceAll(title, " ", "_") + "_" + tg.RefID,
				"eval_time":   "20m",
				"exp_samples": []any{map[string]any{"labels": labels("shrinking"), "value": want}},
			})
		}
	}
	if out, err := promtoolExprTests(t, bin, input, exprTests); err != nil {
		t.Errorf("promtool test rules: %v\n%s", err, out)
	}
}
