package boards_test

import (
	"fmt"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"
	"github.com/zpool-exporter/zpool_exporter/dashboards/render"
)

// eventAnnotationNames are the annotations of the kernel's events that
// the pools, scans and benchmark boards carry alike.
var eventAnnotationNames = []string{"Vdev state changes", "Resilver events", "Scrub events"}

// eventAnnotations returns the expressions of the event annotations, by
// name, after checking that each board that should carries all of them,
// enabled and the same.
func eventAnnotations(t *testing.T) map[string]string {
	t.Helper()
	want := map[string]bool{"zfs-pools.json": true, "zfs-scans.json": true, "zfs-benchmark.json": true}
	exprs := map[string]string{}
	for _, b := range decodeAll(t) {
		found := map[string]bool{}
		for _, a := range b.Annotations.List {
			for _, name := range eventAnnotationNames {
				if a.Name != name {
					continue
				}
				found[name] = true
				if !want[b.file] {
					t.Errorf("%s: an event annotation on a board that is not meant to carry them", annotationWhere(b, a))
				}
				if !a.Enable {
					t.Errorf("%s: not enabled", annotationWhere(b, a))
				}
				if other, ok := exprs[name]; ok && other != a.Expr {
					t.Errorf("%s differs from the same annotation of another board:\n\t%s\n\t%s", annotationWhere(b, a), a.Expr, other)
				}
				exprs[name] = a.Expr
			}
		}
		if want[b.file] && len(found) != len(eventAnnotationNames) {
			t.Errorf("%s: event annotations %v, want %v", b.file, found, eventAnnotationNames)
		}
	}
	if len(exprs) != len(eventAnnotationNames) {
		t.Fatalf("event annotations found: %v", exprs)
	}
	return exprs
}

// The event annotations mark each event once, at the first step after it,
// with the short name of its class, for the chosen pools only: scraped
// every 15 s and drawn every minute (the annotations' step), with
// $__rate_interval as Grafana makes it of those, 75 s. tank's vdev
// changes state between the scrapes at 60 s and 75 s, across the edge of
// the first step's window; its scrub starts between 90 s and 105 s.
// backup, which the pool variable leaves out, has a state change too.
func TestEventAnnotationsMarkEachEvent(t *testing.T) {
	bin := contract.Promtool(t)
	exprs := eventAnnotations(t)
	labels := func(pool, class string) string {
		return fmt.Sprintf(`job="zfs", instance="nas:9134", pool=%q, class=%q`, pool, class)
	}
	series := func(pool, class, values string) map[string]string {
		return map[string]string{"series": "zfs_pool_events_total{" + labels(pool, class) + "}", "values": values}
	}
	const (
		stateChange = "resource.fs.zfs.statechange"
		scrubStart  = "sysevent.fs.zfs.scrub_start"
		scrubFinish = "sysevent.fs.zfs.scrub_finish"
		resilver    = "sysevent.fs.zfs.resilver_start"
	)
	input := []map[string]string{
		series("tank", stateChange, "1x4 2x12"),
		series("tank", scrubStart, "0x6 1x9"),
		series("tank", scrubFinish, "3x16"),
		series("tank", resilver, "1x16"),
		series("backup", stateChange, "0x4 1x12"),
	}
	mark := func(pool, class, event string) map[string]any {
		return map[string]any{"labels": "{" + labels(pool, class) + fmt.Sprintf(", event=%q}", event), "value": 1}
	}
	vals := map[string]string{"job": ".+", "instance": ".+", "pool": "tank", "__rate_interval": "75s"}
	var cases []any
	for _, c := range []struct {
		annotation, at string
		marks          []map[string]any
	}{
		{"Vdev state changes", "1m", nil},
		{"Vdev state changes", "2m", []map[string]any{mark("tank", stateChange, "statechange")}},
		{"Vdev state changes", "3m", nil},
		{"Scrub events", "1m", nil},
		{"Scrub events", "2m", []map[string]any{mark("tank", scrubStart, "scrub_start")}},
		{"Scrub events", "3m", nil},
		{"Resilver events", "2m", nil},
	} {
		samples := []any{}
		for _, m := range c.marks {
			samples = append(samples, m)
		}
		cases = append(cases, map[string]any{
			"expr":        render.Interpolate(exprs[c.annotation], vals),
			"eval_time":   c.at,
			"exp_samples": samples,
		})
	}
	if out, err := promtoolExprTestsEvery(t, bin, "15s", input, cases); err != nil {
		t.Errorf("the event annotations over events scraped every 15 s: %v\n%s", err, out)
	}
}
