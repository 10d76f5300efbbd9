package statuspage

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/replaytest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/events"
)

// replayRead reads through real collectors over a replay directory, as
// the exporter's page does but for the gather it shares with /metrics.
func replayRead(t *testing.T, dir string) ReadFunc {
	t.Helper()
	e := replaytest.Exporter(t, dir, "status", "properties")
	return func(ctx context.Context) Reading {
		r := e.Gather(ctx)
		st, err := r.Status(ctx)
		return Reading{Time: r.Time, Families: r.Families(), Status: st, StatusErr: err}
	}
}

func get(t *testing.T, h http.Handler, target string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
	return rec.Code, rec.Body.String()
}

func parse(t *testing.T, body string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, class string) bool {
	return slices.Contains(strings.Fields(attr(n, "class")), class)
}

// findAll returns the elements under n that match, in document order.
func findAll(n *html.Node, match func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	for c := range n.Descendants() {
		if c.Type == html.ElementNode && match(c) {
			out = append(out, c)
		}
	}
	return out
}

func text(n *html.Node) string {
	var b strings.Builder
	for c := range n.Descendants() {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

// configRow is a line of a status config table: a vdev, or a class header
// ("spares") with no state.
type configRow struct {
	pool, name, state string
	depth             int
}

// configRows reads the config tables of a captured `zpool status` on its
// own, by indentation, so that the page is checked against the capture and
// not against the exporter's parser.
func configRows(t *testing.T, file string) []configRow {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []configRow
	pool, inConfig := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "  pool: "):
			pool = strings.TrimPrefix(line, "  pool: ")
		case strings.HasPrefix(line, "config:"):
			inConfig = true
		case inConfig && strings.TrimSpace(line) == "":
			if len(rows) > 0 && rows[len(rows)-1].pool == pool {
				inConfig = false
			}
		case inConfig && strings.HasPrefix(line, "\t"):
			body := strings.TrimPrefix(line, "\t")
			fields := strings.Fields(body)
			if fields[0] == "NAME" {
				continue
			}
			r := configRow{pool: pool, name: fields[0], depth: (len(body) - len(strings.TrimLeft(body, " "))) / 2}
			if len(fields) > 1 && regexp.MustCompile(`^[A-Z]+$`).MatchString(fields[1]) {
				r.state = strings.ToLower(fields[1])
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// pageRows reads the rendered config tables: vdev rows and section rows.
func pageRows(t *testing.T, doc *html.Node) []configRow {
	t.Helper()
	var rows []configRow
	for _, section := range findAll(doc, func(n *html.Node) bool { return n.Data == "section" && hasClass(n, "pool") }) {
		pool := attr(section, "data-pool")
		for _, tr := range findAll(section, func(n *html.Node) bool { return n.Data == "tr" && (hasClass(n, "vdev") || hasClass(n, "section")) }) {
			if hasClass(tr, "section") {
				rows = append(rows, configRow{pool: pool, name: text(tr), depth: 0})
				continue
			}
			name := findAll(tr, func(n *html.Node) bool { return hasClass(n, "name") })[0]
			depth := 0
			for _, c := range strings.Fields(attr(name, "class")) {
				if len(c) == 2 && c[0] == 'd' {
					depth = int(c[1] - '0')
				}
			}
			r := configRow{pool: pool, name: text(name), depth: depth}
			if badges := findAll(tr, func(n *html.Node) bool { return hasClass(n, "state") }); len(badges) > 0 {
				r.state = strings.ToLower(text(badges[0]))
				if !hasClass(badges[0], "state-"+r.state) {
					t.Errorf("%s %s: state %s shown with classes %q", pool, r.name, r.state, attr(badges[0], "class"))
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// Every step of the zfs-fuse replay: the page's trees equal the captured
// `zpool status` line by line (names, depth, states, section headers, order).
func TestTreeShapedLikeZpoolStatus(t *testing.T) {
	steps, _ := filepath.Glob("../../collector/testdata/replay/zfs-fuse/0*")
	if len(steps) < 4 {
		t.Fatalf("replay steps missing: %v", steps)
	}
	for _, dir := range steps {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			page := New(replayRead(t, dir), Options{MetricsPath: "/metrics"})
			code, body := get(t, page, "/")
			if code != http.StatusOK {
				t.Fatalf("GET / = %d", code)
			}
			want := configRows(t, filepath.Join(dir, "zpool_status.txt"))
			got := pageRows(t, parse(t, body))
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("rows differ from the capture\n got: %v\nwant: %v", got, want)
			}
			for _, f := range findAll(parse(t, body), func(n *html.Node) bool { return hasClass(n, "figures") }) {
				if txt := text(f); txt == "" || strings.HasPrefix(txt, "·") || strings.HasSuffix(txt, "·") || strings.Contains(txt, "· ·") {
					t.Errorf("scan figures %q are empty or badly joined", txt)
				}
			}
			// The pool's badge beside its name says the pool's state.
			for _, h2 := range findAll(parse(t, body), func(n *html.Node) bool { return n.Data == "h2" }) {
				pool := strings.Fields(text(h2))[0]
				for _, r := range want {
					if r.pool == pool && r.name == pool && !strings.Contains(text(h2), strings.ToUpper(r.state)) {
						t.Errorf("pool %s header %q lacks its state %s", pool, text(h2), r.state)
					}
				}
			}
		})
	}
}

// The degraded step shows what an operator must see first.
func TestDegradedPoolAndOfflineDisk(t *testing.T) {
	page := New(replayRead(t, "../../collector/testdata/replay/zfs-fuse/001"), Options{MetricsPath: "/metrics"})
	_, body := get(t, page, "/")
	doc := parse(t, body)
	section := findAll(doc, func(n *html.Node) bool { return attr(n, "data-pool") == "backup" })
	if len(section) != 1 {
		t.Fatalf("no section for pool backup")
	}
	badge := findAll(section[0], func(n *html.Node) bool { return n.Data == "h2" })[0]
	if !strings.Contains(text(badge), "DEGRADED") || len(findAll(badge, func(n *html.Node) bool { return hasClass(n, "state-degraded") })) != 1 {
		t.Errorf("pool header %q is not shown degraded", text(badge))
	}
	offline := findAll(section[0], func(n *html.Node) bool { return attr(n, "data-state") == "offline" })
	if len(offline) != 1 || !strings.HasSuffix(attr(offline[0], "data-vdev"), "/b2") {
		t.Errorf("offline rows %v, want the one of b2", len(offline))
	}
	if !strings.Contains(text(section[0]), "status: One or more devices has been taken offline") {
		t.Errorf("the status paragraph is missing: %q", text(section[0]))
	}
}

// A resilver captured running on OpenZFS 2.3: its progress bar, rate and
// time left.
func TestRunningResilver(t *testing.T) {
	dir := t.TempDir()
	src := "../../internal/zfs/zpool/testdata/openzfs-2.3-guest"
	captures, _ := filepath.Glob(filepath.Join(src, "04-resilvering__zpool_*.txt"))
	if len(captures) == 0 {
		t.Fatalf("no captures in %s", src)
	}
	for _, c := range captures {
		copyFile(t, c, filepath.Join(dir, filepath.Base(c)))
	}
	page := New(replayRead(t, dir), Options{MetricsPath: "/metrics"})
	_, body := get(t, page, "/")
	doc := parse(t, body)
	scans := findAll(doc, func(n *html.Node) bool { return hasClass(n, "scan") && attr(n, "data-state") == "scanning" })
	if len(scans) != 1 || attr(scans[0], "data-function") != "resilver" {
		t.Fatalf("want one running resilver, got %d", len(scans))
	}
	fill := findAll(scans[0], func(n *html.Node) bool { return hasClass(n, "fill") })
	if len(fill) != 1 || !regexp.MustCompile(`^width: [1-9][0-9]?\.[0-9]%$`).MatchString(attr(fill[0], "style")) {
		t.Errorf("progress bar filling %v", fill)
	}
	figures := text(scans[0])
	for _, want := range []string{"% done", "issued ", " of ", " at ", "/s", "time left ", "resilvered "} {
		if !strings.Contains(figures, want) {
			t.Errorf("scan figures %q lack %q", figures, want)
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWholePageAndFragment(t *testing.T) {
	page := New(replayRead(t, "../../collector/testdata/replay/zfs-fuse/000"), Options{Name: "nas1", Version: "1.2.3", MetricsPath: "/custom-metrics", Refresh: 2 * time.Second})
	code, body := get(t, page, "/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	doc := parse(t, body)
	for _, c := range []struct {
		what  string
		match func(*html.Node) bool
	}{
		{"a link to the metrics", func(n *html.Node) bool { return n.Data == "a" && attr(n, "href") == "/custom-metrics" }},
		{"a reload for browsers without JavaScript", func(n *html.Node) bool {
			return n.Data == "noscript" && strings.Contains(text(n)+html.UnescapeString(n.FirstChild.Data), `http-equiv="refresh"`)
		}},
		{"the refresh interval for the script", func(n *html.Node) bool { return attr(n, "id") == "pools" && attr(n, "data-refresh-ms") == "2000" }},
		{"the script", func(n *html.Node) bool { return n.Data == "script" && strings.Contains(text(n), "fragment=pools") }},
		{"the host in the title", func(n *html.Node) bool { return n.Data == "title" && strings.Contains(text(n), "nas1") }},
		{"the version", func(n *html.Node) bool { return hasClass(n, "version") && strings.Contains(text(n), "1.2.3") }},
	} {
		if len(findAll(doc, c.match)) == 0 {
			t.Errorf("the page lacks %s", c.what)
		}
	}
	for _, ref := range findAll(doc, func(n *html.Node) bool { return attr(n, "src") != "" || (n.Data == "link" && attr(n, "href") != "") }) {
		t.Errorf("the page loads %s %q: assets must be in the page", ref.Data, attr(ref, "src")+attr(ref, "href"))
	}

	code, fragment := get(t, page, "/?fragment=pools")
	if code != http.StatusOK || strings.Contains(fragment, "<html") || strings.Contains(fragment, "<script") {
		t.Errorf("fragment: %d, not only the pools section:\n%s", code, fragment)
	}
	if got := pageRows(t, parse(t, fragment)); len(got) == 0 || !slices.Equal(got, pageRows(t, doc)) {
		t.Errorf("fragment rows %v differ from the page's", got)
	}
	if code, _ := get(t, page, "/other"); code != http.StatusNotFound {
		t.Errorf("GET /other = %d, want 404", code)
	}
}

// A failed zpool status is said on the page, which still answers.
func TestStatusFailureIsShown(t *testing.T) {
	read := func(context.Context) Reading {
		return Reading{Time: time.Now(), StatusErr: errors.New(`zpool status: signal: killed (deadline 10s)`)}
	}
	code, body := get(t, New(read, Options{MetricsPath: "/metrics"}), "/")
	if code != http.StatusOK {
		t.Fatalf("GET / = %d", code)
	}
	errs := findAll(parse(t, body), func(n *html.Node) bool { return hasClass(n, "error") })
	if len(errs) != 1 || !strings.Contains(text(errs[0]), "signal: killed (deadline 10s)") {
		t.Errorf("the error is not shown: %d error paragraphs", len(errs))
	}
	if strings.Contains(body, "No pools imported") {
		t.Error("a failed status reads as no pools")
	}
}

// Several requests within MinAge share one reading of the host.
func TestReadingsAreShared(t *testing.T) {
	reads, deadlines := 0, 0
	read := func(ctx context.Context) Reading {
		reads++
		if _, ok := ctx.Deadline(); ok {
			deadlines++
		}
		return Reading{Time: time.Now()}
	}
	page := New(read, Options{MinAge: time.Hour, Timeout: time.Second})
	for range 3 {
		if code, _ := get(t, page, "/?fragment=pools"); code != http.StatusOK {
			t.Fatal(code)
		}
	}
	if reads != 1 || deadlines != 1 {
		t.Errorf("%d readings (%d with a deadline) for 3 requests within MinAge, want 1 (1)", reads, deadlines)
	}
	page = New(read, Options{})
	reads = 0
	get(t, page, "/")
	get(t, page, "/")
	if reads != 2 {
		t.Errorf("%d readings for 2 requests without MinAge, want 2", reads)
	}
}

// A pool's last events, captured by the OpenZFS 2.4 guest beside its
// status during a resilver: listed newest first under the pool, each vdev
// named as the tree names it (the events give its GUID), a state change
// with its new state.
func TestLastEvents(t *testing.T) {
	dir := t.TempDir()
	src := "../zfs/events/testdata/openzfs-2.4-guest"
	captures, _ := filepath.Glob(filepath.Join(src, "04-resilvering__zpool_status*.txt"))
	if len(captures) == 0 {
		t.Fatalf("no captures in %s", src)
	}
	for _, c := range captures {
		copyFile(t, c, filepath.Join(dir, filepath.Base(c)))
	}
	capture := sample.MustRead(t, filepath.Join(src, "04-resilvering__zpool_events_-v.txt"))
	evs, err := events.Parse(strings.NewReader(string(capture.Body)))
	if err != nil {
		t.Fatal(err)
	}
	var r10 []events.Event
	for _, ev := range evs {
		if ev.Pool == "r10" && (ev.Class == events.ClassStateChange || strings.HasPrefix(ev.Class, "sysevent.fs.zfs.resilver")) {
			r10 = append(r10, ev)
		}
	}
	if len(r10) < 2 {
		t.Fatalf("the capture holds %d state changes and resilvers of r10", len(r10))
	}
	read := replayRead(t, dir)
	page := New(func(ctx context.Context) Reading {
		r := read(ctx)
		r.Events = map[string][]events.Event{"r10": r10}
		return r
	}, Options{MetricsPath: "/metrics"})
	_, body := get(t, page, "/")
	section := findAll(parse(t, body), func(n *html.Node) bool { return attr(n, "data-pool") == "r10" })
	if len(section) != 1 {
		t.Fatal("no section for pool r10")
	}
	rows := findAll(section[0], func(n *html.Node) bool { return hasClass(n, "event") })
	if len(rows) != len(r10) {
		t.Fatalf("%d events shown, want %d", len(rows), len(r10))
	}
	vdevs := map[string]bool{}
	for _, row := range findAll(section[0], func(n *html.Node) bool { return hasClass(n, "vdev") }) {
		vdevs[attr(row, "data-vdev")] = true
	}
	for i, row := range rows {
		ev := r10[len(r10)-1-i]
		cells := findAll(row, func(n *html.Node) bool { return n.Data == "td" })
		if class := attr(row, "data-class"); "sysevent.fs.zfs."+class != ev.Class && "resource.fs.zfs."+class != ev.Class {
			t.Errorf("row %d: %s, want %s (newest first)", i, class, ev.Class)
		}
		// A disk replaced since is named as zpool named it: its by-id
		// link less the partition zpool made.
		if want := strings.TrimSuffix(path.Base(ev.VdevPath), "-part1"); ev.VdevGUID != 0 && !vdevs[text(cells[2])] && text(cells[2]) != want {
			t.Errorf("row %d: vdev %q is no row of the tree, nor %s", i, text(cells[2]), want)
		}
		if ev.VdevState != "" && !strings.Contains(text(cells[1]), ev.VdevState) {
			t.Errorf("row %d: %q lacks the new state %s", i, text(cells[1]), ev.VdevState)
		}
	}
}
