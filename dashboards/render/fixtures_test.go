package render

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The range every test draws: ten minutes at a 30 s step.
var (
	testFrom = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	testTo   = testFrom.Add(10 * time.Minute)
	testStep = 30 * time.Second
)

// fakePrometheus answers /api/v1/query and /api/v1/query_range with
// whatever answer returns for the query, and records the queries.
type fakePrometheus struct {
	*httptest.Server
	mu      sync.Mutex
	queries []string
}

// answerFunc returns the HTTP status and the body for a query.
type answerFunc func(expr string, instant bool) (int, string)

func newFakePrometheus(t *testing.T, answer answerFunc) *fakePrometheus {
	t.Helper()
	f := &fakePrometheus{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		instant := r.URL.Path == "/api/v1/query"
		if !instant && r.URL.Path != "/api/v1/query_range" {
			http.NotFound(w, r)
			return
		}
		expr := r.FormValue("query")
		f.mu.Lock()
		f.queries = append(f.queries, expr)
		f.mu.Unlock()
		status, body := answer(expr, instant)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakePrometheus) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.queries...)
}

// testSeries is one series of a canned answer: its labels and its value
// at the i-th step of the test range.
type testSeries struct {
	labels map[string]string
	value  func(i int) float64
}

func constant(v float64) func(int) float64 { return func(int) float64 { return v } }

// matrix is a query_range answer over the test range.
func matrix(series ...testSeries) string {
	type item struct {
		Metric map[string]string `json:"metric"`
		Values [][2]any          `json:"values"`
	}
	items := []item{}
	for _, s := range series {
		it := item{Metric: s.labels, Values: [][2]any{}}
		for i, t := 0, testFrom; !t.After(testTo); i, t = i+1, t.Add(testStep) {
			v := s.value(i)
			if math.IsNaN(v) { // no sample at this step
				continue
			}
			it.Values = append(it.Values, [2]any{float64(t.Unix()), strconv.FormatFloat(v, 'f', -1, 64)})
		}
		items = append(items, it)
	}
	return success("matrix", items)
}

// vector is a query answer at the end of the test range.
func vector(series ...testSeries) string {
	type item struct {
		Metric map[string]string `json:"metric"`
		Value  [2]any            `json:"value"`
	}
	items := []item{}
	for _, s := range series {
		items = append(items, item{s.labels, [2]any{float64(testTo.Unix()), strconv.FormatFloat(s.value(0), 'f', -1, 64)}})
	}
	return success("vector", items)
}

func success(kind string, result any) string {
	b, _ := json.Marshal(map[string]any{"status": "success", "data": map[string]any{"resultType": kind, "result": result}})
	return string(b)
}

func apiError(kind, msg string) string {
	b, _ := json.Marshal(map[string]any{"status": "error", "errorType": kind, "error": msg})
	return string(b)
}

func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// smallAnswers are the answers for testdata/small.json. reversed lists
// the series of each answer in the opposite order.
func smallAnswers(reversed bool) answerFunc {
	return func(expr string, instant bool) (int, string) {
		var s []testSeries
		kind := matrix
		if instant {
			kind = vector
		}
		switch {
		case strings.Count(expr, "(") != strings.Count(expr, ")"):
			return http.StatusBadRequest, apiError("bad_data", `1:46: parse error: unclosed left parenthesis`)
		case strings.Contains(expr, "zfs_vdev_read_bytes_total"):
			s = []testSeries{
				{labels("pool", "tank", "vdev", "b1"), func(i int) float64 { return 1000 * float64(i) }},
				{labels("pool", "tank", "vdev", "b2"), func(i int) float64 { return 20000 - 500*float64(i) }},
				{labels("pool", "tank", "vdev", "b3"), constant(5000)},
			}
		case strings.Contains(expr, "zfs_vdev_read_operations_total"):
			s = []testSeries{{labels("pool", "tank"), constant(100)}}
		case strings.Contains(expr, "zfs_vdev_write_operations_total"):
			s = []testSeries{{labels("pool", "tank"), constant(50)}}
		case strings.Contains(expr, "zfs_pool_allocated_bytes"):
			// Beyond the panel's maximum of 1 half way through.
			s = []testSeries{{labels("pool", "tank"), func(i int) float64 { return 0.5 + 0.1*float64(i%7) }}}
		case strings.Contains(expr, "zfs_scan_start_time_seconds"):
			s = []testSeries{{labels("pool", "tank", "function", "scrub"), func(i int) float64 {
				if i == 10 {
					return 1
				}
				return math.NaN()
			}}}
		case strings.Contains(expr, `state!="online"`):
			s = []testSeries{{labels(), constant(2)}}
		case strings.HasPrefix(expr, "up{"):
			s = []testSeries{{labels("__name__", "up", "instance", "host:9134", "job", "zfs"), constant(1)}}
		case strings.HasPrefix(expr, "zfs_pool_state"):
			s = []testSeries{
				{labels("__name__", "zfs_pool_state", "instance", "host:9134", "pool", "tank", "state", "online"), constant(1)},
				{labels("__name__", "zfs_pool_state", "instance", "host:9134", "pool", "backup", "state", "degraded"), constant(1)},
			}
		case strings.Contains(expr, "zfs_pool_size_bytes"):
			s = []testSeries{
				{labels("instance", "host:9134", "pool", "tank"), constant(1536)},
				{labels("instance", "host:9134", "pool", "backup"), constant(1 << 40)},
			}
		}
		if reversed {
			for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
				s[i], s[j] = s[j], s[i]
			}
		}
		return http.StatusOK, kind(s...)
	}
}

func loadDashboard(t *testing.T, path string) *Dashboard {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func testOptions(url string) Options {
	return Options{Prometheus: url, From: testFrom, To: testTo, Step: testStep}
}

// renderSmall draws testdata/small.json from the canned answers.
func renderSmall(t *testing.T, reversed bool) ([]byte, Report, *fakePrometheus) {
	t.Helper()
	prom := newFakePrometheus(t, smallAnswers(reversed))
	svg, report, err := Render(context.Background(), loadDashboard(t, "testdata/small.json"), testOptions(prom.URL))
	if err != nil {
		t.Fatal(err)
	}
	return svg, report, prom
}

// node is an element of a parsed SVG.
type node struct {
	name     string
	attr     map[string]string
	children []*node
	text     string
}

func parseSVG(t *testing.T, data []byte) *node {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	root := &node{name: "document"}
	stack := []*node{root}
	for {
		tok, err := dec.Token()
		if err != nil {
			if err.Error() == "EOF" {
				break
			}
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attr: map[string]string{}}
			for _, a := range tok.Attr {
				n.attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			stack[len(stack)-1].text += string(tok)
		}
	}
	if len(stack) != 1 || len(root.children) != 1 || root.children[0].name != "svg" {
		t.Fatalf("want one svg root element, got %d elements", len(root.children))
	}
	return root.children[0]
}

// all returns the elements under n (n included) that keep says to keep.
func (n *node) all(keep func(*node) bool) []*node {
	var out []*node
	if keep(n) {
		out = append(out, n)
	}
	for _, c := range n.children {
		out = append(out, c.all(keep)...)
	}
	return out
}

func (n *node) hasClass(class string) bool {
	for _, c := range strings.Fields(n.attr["class"]) {
		if c == class {
			return true
		}
	}
	return false
}

func withClass(class string) func(*node) bool {
	return func(n *node) bool { return n.hasClass(class) }
}

// texts are the texts of the elements of a class under n.
func (n *node) texts(class string) []string {
	var out []string
	for _, e := range n.all(withClass(class)) {
		out = append(out, e.text)
	}
	return out
}

// panelNamed finds the group of the panel titled title.
func panelNamed(t *testing.T, root *node, title string) *node {
	t.Helper()
	for _, g := range root.all(withClass("panel")) {
		for _, c := range g.children {
			if c.hasClass("panel-title") && c.text == title {
				return g
			}
		}
	}
	t.Fatalf("no panel titled %q", title)
	return nil
}

// rectOf reads the box of a rect element.
func rectOf(t *testing.T, n *node) box {
	t.Helper()
	var v [4]float64
	for i, k := range []string{"x", "y", "width", "height"} {
		f, err := strconv.ParseFloat(n.attr[k], 64)
		if err != nil {
			t.Fatalf("rect %s: %v", k, err)
		}
		v[i] = f
	}
	return box{v[0], v[1], v[2], v[3]}
}

var pathPoint = regexp.MustCompile(`[ML](-?[0-9.]+) (-?[0-9.]+)`)

// pathPoints reads the points of a path's d attribute.
func pathPoints(t *testing.T, d string) [][2]float64 {
	t.Helper()
	var pts [][2]float64
	for _, m := range pathPoint.FindAllStringSubmatch(d, -1) {
		x, err1 := strconv.ParseFloat(m[1], 64)
		y, err2 := strconv.ParseFloat(m[2], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad point in %q", d)
		}
		pts = append(pts, [2]float64{x, y})
	}
	return pts
}

func describe(b box) string { return fmt.Sprintf("[%g,%g %gx%g]", b.x, b.y, b.w, b.h) }
