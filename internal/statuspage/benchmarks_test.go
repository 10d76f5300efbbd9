package statuspage

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
)

// The benchmark windows are a table above the pools, in the page and in
// the fragment the script fetches, with a badge for a running one.
func TestBenchmarkWindows(t *testing.T) {
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.Local)
	store := benchwindow.NewStore(benchwindow.Options{Now: func() time.Time { return now }})
	ended, err := store.Start("raidz1 ashift=9", "backup", "dd if=/dev/zero of=/backup/f bs=1M count=512")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(75 * time.Second)
	if _, err := store.End(ended.ID); err != nil {
		t.Fatal(err)
	}
	now = now.Add(5 * time.Second)
	running, err := store.Start("raid10 <ashift=12> lz4", "tank", "")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2*time.Hour + 3*time.Minute)

	page := New(replayRead(t, "../../collector/testdata/replay/zfs-fuse/000"), Options{MetricsPath: "/metrics", Windows: store.List})
	for _, target := range []string{"/", "/?fragment=pools"} {
		code, body := get(t, page, target)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d", target, code)
		}
		doc := parse(t, body)
		sections := findAll(doc, func(n *html.Node) bool {
			return n.Data == "section" && (hasClass(n, "benchmarks") || hasClass(n, "pool"))
		})
		if len(sections) < 2 || !hasClass(sections[0], "benchmarks") {
			t.Fatalf("GET %s: the benchmark windows are not the first section, above the pools", target)
		}
		rows := findAll(sections[0], func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "window") })
		if len(rows) != 2 {
			t.Fatalf("GET %s: %d window rows, want 2", target, len(rows))
		}
		cell := func(row *html.Node, class string) *html.Node {
			c := findAll(row, func(n *html.Node) bool { return n.Data == "td" && hasClass(n, class) })
			if len(c) != 1 {
				t.Fatalf("row %s has %d %s cells", attr(row, "data-window"), len(c), class)
			}
			return c[0]
		}
		// Newest first: the running window, its name escaped, a badge
		// instead of an end, and the time it has run so far.
		r := rows[0]
		if attr(r, "data-window") != running.ID || attr(r, "data-running") != "true" {
			t.Errorf("first row %s (running %s), want the running window %s", attr(r, "data-window"), attr(r, "data-running"), running.ID)
		}
		if got := text(cell(r, "name")); got != "raid10 <ashift=12> lz4" {
			t.Errorf("name %q", got)
		}
		if got := text(cell(r, "pool")); got != "tank" {
			t.Errorf("pool %q", got)
		}
		badge := findAll(cell(r, "ended"), func(n *html.Node) bool { return hasClass(n, "state") && hasClass(n, "window-running") })
		if len(badge) != 1 || text(badge[0]) != "RUNNING" {
			t.Errorf("the running window has no RUNNING badge: %q", text(cell(r, "ended")))
		}
		if got := text(cell(r, "duration")); got != "2h 03m" {
			t.Errorf("running duration %q, want 2h 03m", got)
		}
		startedAt := ended.Start.Local()
		// The ended window: start and end times, machine-readable too.
		r = rows[1]
		if attr(r, "data-window") != ended.ID || attr(r, "data-running") != "false" {
			t.Errorf("second row %s, want the ended window %s", attr(r, "data-window"), ended.ID)
		}
		if got := text(cell(r, "started")); got != startedAt.Format("2006-01-02 15:04:05 MST") {
			t.Errorf("started %q, want %s", got, startedAt.Format("2006-01-02 15:04:05 MST"))
		}
		endTime := findAll(cell(r, "ended"), func(n *html.Node) bool { return n.Data == "time" })
		if len(endTime) != 1 || attr(endTime[0], "datetime") != startedAt.Add(75*time.Second).UTC().Format(time.RFC3339) ||
			text(endTime[0]) != startedAt.Add(75*time.Second).Format("2006-01-02 15:04:05 MST") {
			t.Errorf("end cell %q is not the end time", text(cell(r, "ended")))
		}
		if got := text(cell(r, "duration")); got != "1m 15s" {
			t.Errorf("ended duration %q, want 1m 15s", got)
		}
		if attr(cell(r, "name"), "title") != "dd if=/dev/zero of=/backup/f bs=1M count=512" {
			t.Errorf("the command line is not the name's title: %q", attr(cell(r, "name"), "title"))
		}
	}
}

func TestBenchmarkWindowsOffEmptyAndMany(t *testing.T) {
	read := replayRead(t, "../../collector/testdata/replay/zfs-fuse/000")
	has := func(body string) bool {
		return len(findAll(parse(t, body), func(n *html.Node) bool { return hasClass(n, "benchmarks") })) > 0
	}
	if _, body := get(t, New(read, Options{}), "/"); has(body) {
		t.Error("a benchmark section without the API")
	}

	store := benchwindow.NewStore(benchwindow.Options{})
	_, body := get(t, New(read, Options{Windows: store.List}), "/")
	if !has(body) || !strings.Contains(body, "None yet") || !strings.Contains(body, "POST "+benchwindow.Path) {
		t.Error("the empty section does not say how to start a window")
	}

	for i := range 12 {
		if _, err := store.Start(fmt.Sprint("run ", i), "", ""); err != nil {
			t.Fatal(err)
		}
	}
	_, body = get(t, New(read, Options{Windows: store.List, MaxWindows: 10}), "/?fragment=pools")
	doc := parse(t, body)
	rows := findAll(doc, func(n *html.Node) bool { return n.Data == "tr" && hasClass(n, "window") })
	if len(rows) != 10 || !strings.HasPrefix(text(rows[0]), "run 11") {
		t.Errorf("%d rows, first %q; want the 10 newest, run 11 first", len(rows), text(rows[0]))
	}
	more := findAll(doc, func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == benchwindow.Path })
	if len(more) != 1 || !strings.Contains(text(more[0].Parent), "2 older windows") {
		t.Error("the page does not link to the 2 windows it leaves out")
	}
}
