package benchwindow

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type answer struct {
	code int
	hdr  http.Header
	body string
}

// do sends a request as zpool_bench does: a body as application/json, no
// Origin.
func do(t *testing.T, h http.Handler, method, target, body string) answer {
	t.Helper()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	return serve(t, h, req)
}

func serve(t *testing.T, h http.Handler, req *http.Request) answer {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	method, target := req.Method, req.URL.Path
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", method, target, ct)
	}
	return answer{rec.Code, rec.Header(), rec.Body.String()}
}

// decodeStrict decodes into v and fails on fields v does not have.
func decodeStrict(t *testing.T, body string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
}

// errorOf is the message of a JSON error body; it fails when the body is
// not one.
func errorOf(t *testing.T, a answer) string {
	t.Helper()
	var e ErrorResponse
	decodeStrict(t, a.body, &e)
	if e.Error == "" {
		t.Errorf("error body without a message: %s", a.body)
	}
	return e.Error
}

func TestAPIStartEndList(t *testing.T) {
	c := newClock()
	s := NewStore(Options{Now: c.Now})
	h := Handler(s, nil)

	a := do(t, h, http.MethodPost, Path, `{"name": "raid10 ashift=12 lz4", "pool": "tank", "command": "fio --rw=write"}`)
	if a.code != http.StatusCreated {
		t.Fatalf("POST: %d %s, want 201", a.code, a.body)
	}
	// The exact keys, and nothing more.
	var fields map[string]any
	if err := json.Unmarshal([]byte(a.body), &fields); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "name", "pool", "command", "start", "end", "active", "duration_seconds"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("window lacks %q: %s", k, a.body)
		}
	}
	if len(fields) != 8 || fields["end"] != nil || fields["active"] != true || fields["name"] != "raid10 ashift=12 lz4" || fields["pool"] != "tank" {
		t.Errorf("started window: %s", a.body)
	}
	id := fields["id"].(string)
	if loc := a.hdr.Get("Location"); loc != Path+"/"+id {
		t.Errorf("Location %q, want %s/%s", loc, Path, id)
	}
	if _, err := time.Parse(time.RFC3339, fields["start"].(string)); err != nil {
		t.Errorf("start is not RFC 3339: %v", err)
	}

	c.Advance(42 * time.Second)
	b := do(t, h, http.MethodPost, Path, `{"name": "raidz1"}`)
	if b.code != http.StatusCreated {
		t.Fatalf("POST without pool and command: %d %s", b.code, b.body)
	}

	a = do(t, h, http.MethodGet, Path+"/"+id, "")
	var got Window
	decodeStrict(t, a.body, &got)
	if a.code != http.StatusOK || got.ID != id || !got.Active || got.DurationSeconds != 42 {
		t.Errorf("GET one: %d %s", a.code, a.body)
	}

	a = do(t, h, http.MethodPost, Path+"/"+id+"/end", "")
	decodeStrict(t, a.body, &got)
	if a.code != http.StatusOK || got.Active || got.End.Sub(got.Start) != 42*time.Second || got.DurationSeconds != 42 {
		t.Errorf("POST end: %d %s; want 200, inactive, 42 s long", a.code, a.body)
	}

	a = do(t, h, http.MethodGet, Path, "")
	var list ListResponse
	decodeStrict(t, a.body, &list)
	if a.code != http.StatusOK || len(list.Windows) != 2 || list.Windows[0].Name != "raidz1" || list.Windows[1].ID != id ||
		!list.Windows[0].Active || list.Windows[1].Active {
		t.Errorf("GET list: %d %s; want raidz1 (running) then the ended one", a.code, a.body)
	}

	empty := do(t, Handler(NewStore(Options{}), nil), http.MethodGet, Path+"/", "")
	if empty.code != http.StatusOK || !strings.Contains(empty.body, `"windows": []`) {
		t.Errorf("empty list: %d %s; want an empty array, not null", empty.code, empty.body)
	}
}

func TestAPIErrors(t *testing.T) {
	s := NewStore(Options{})
	h := Handler(s, nil)
	running := mustStart(t, s, "running", "", "")
	ended := mustStart(t, s, "ended", "", "")
	if _, err := s.End(ended.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, target, body string
		code                 int
		says                 string
	}{
		{http.MethodPost, Path, `{"name": `, http.StatusBadRequest, "JSON object"},
		{http.MethodPost, Path, `["raid10"]`, http.StatusBadRequest, "JSON object"},
		{http.MethodPost, Path, `{"name": "x", "pool_name": "tank"}`, http.StatusBadRequest, "pool_name"},
		{http.MethodPost, Path, `{"name": "x"} {"name": "y"}`, http.StatusBadRequest, "more than one"},
		{http.MethodPost, Path, `{"pool": "tank"}`, http.StatusBadRequest, "name is required"},
		{http.MethodPost, Path, `{"name": "` + strings.Repeat("n", 201) + `"}`, http.StatusBadRequest, "at most 200"},
		{http.MethodPost, Path, `{"name": "` + strings.Repeat("n", maxBody) + `"}`, http.StatusRequestEntityTooLarge, "over 65536 bytes"},
		{http.MethodPost, Path + "/nosuch/end", "", http.StatusNotFound, "nosuch"},
		{http.MethodGet, Path + "/nosuch", "", http.StatusNotFound, "nosuch"},
		{http.MethodPost, Path + "/" + ended.ID + "/end", "", http.StatusConflict, "already ended"},
		{http.MethodDelete, Path, "", http.StatusMethodNotAllowed, "DELETE"},
		{http.MethodPut, Path + "/" + running.ID, "", http.StatusMethodNotAllowed, "PUT"},
		{http.MethodGet, Path + "/" + running.ID + "/end", "", http.StatusMethodNotAllowed, "use POST"},
		{http.MethodGet, Path + "/" + running.ID + "/start", "", http.StatusNotFound, "no such API path"},
		{http.MethodGet, Path + "x", "", http.StatusNotFound, "no such API path"},
		{http.MethodGet, "/api/v1/benchmark/other", "", http.StatusNotFound, Path},
	} {
		a := do(t, h, c.method, c.target, c.body)
		if a.code != c.code {
			t.Errorf("%s %.60s %.40s: %d, want %d (%s)", c.method, c.target, c.body, a.code, c.code, a.body)
			continue
		}
		if msg := errorOf(t, a); !strings.Contains(msg, c.says) {
			t.Errorf("%s %.60s: error %q does not say %q", c.method, c.target, msg, c.says)
		}
		if c.code == http.StatusMethodNotAllowed && a.hdr.Get("Allow") == "" {
			t.Errorf("%s %s: 405 without an Allow header", c.method, c.target)
		}
	}
	// Nothing above changed the store: the running window still runs.
	if w, err := s.Get(running.ID); err != nil || !w.Active || len(s.List()) != 2 {
		t.Errorf("after the refused requests: %+v %v, %d windows", w, err, len(s.List()))
	}
}

func TestNotEnabled(t *testing.T) {
	a := do(t, NotEnabled("turn it on with --flag"), http.MethodPost, Path, `{"name": "x"}`)
	if a.code != http.StatusNotFound || errorOf(t, a) != "turn it on with --flag" {
		t.Errorf("%d %s", a.code, a.body)
	}
}

// What a web page can make the operator's browser send, and what a
// runner sends. httptest.NewRequest's Host is example.com.
var crossSiteCases = []struct {
	what        string
	path        string // under Path
	contentType string
	body        string
	header      map[string]string
	code        int
	says        string
}{
	{"a text/plain form whose one field makes the body JSON", "", "text/plain", `{"name": "x", "pool": "="}`, nil, http.StatusUnsupportedMediaType, `"text/plain" is not accepted`},
	{"a url-encoded form", "", "application/x-www-form-urlencoded", `{"name": "x"}`, nil, http.StatusUnsupportedMediaType, "application/x-www-form-urlencoded"},
	{"a multipart form", "", "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n--b--\r\n", nil, http.StatusUnsupportedMediaType, "multipart/form-data"},
	{"a body without a Content-Type", "", "", `{"name": "x"}`, nil, http.StatusUnsupportedMediaType, "no Content-Type"},
	{"an end as a form", "/{id}/end", "application/x-www-form-urlencoded", "", nil, http.StatusUnsupportedMediaType, "application/json"},
	{"JSON from a foreign Origin", "", "application/json", `{"name": "x"}`, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden, "cross-origin"},
	{"an end from a foreign Origin", "/{id}/end", "", "", map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden, "cross-origin"},
	{"Sec-Fetch-Site: cross-site", "", "application/json", `{"name": "x"}`, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, "Sec-Fetch-Site"},
	{"Sec-Fetch-Site: same-site", "/{id}/end", "", "", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://grafana.example.com"}, http.StatusForbidden, "cross-origin"},

	{"the exporter's own page", "", "application/json; charset=utf-8", `{"name": "x"}`, map[string]string{"Origin": "http://example.com", "Sec-Fetch-Site": "same-origin"}, http.StatusCreated, ""},
	{"an Origin equal to Host", "", "application/json", `{"name": "x"}`, map[string]string{"Origin": "http://example.com"}, http.StatusCreated, ""},
	{"no Origin (curl, zpool_bench)", "", "application/json", `{"name": "x"}`, nil, http.StatusCreated, ""},
	{"curl -X POST .../end", "/{id}/end", "", "", nil, http.StatusOK, ""},
	{"zpool_bench's end", "/{id}/end", "application/json", "", nil, http.StatusOK, ""},
}

// A page on another site can post a form (text/plain, url-encoded,
// multipart) without a CORS preflight, and the browser sends the
// exporter's basic authentication along: such requests must not write
// windows. Reading stays open to all.
func TestAPIRefusesCrossSiteWrites(t *testing.T) {
	for _, c := range crossSiteCases {
		s := NewStore(Options{})
		h := Handler(s, nil)
		running := mustStart(t, s, "running", "", "")
		req := httptest.NewRequest(http.MethodPost, Path+strings.ReplaceAll(c.path, "{id}", running.ID), strings.NewReader(c.body))
		if c.body == "" {
			req = httptest.NewRequest(http.MethodPost, Path+strings.ReplaceAll(c.path, "{id}", running.ID), nil)
		}
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		a := serve(t, h, req)
		if a.code != c.code {
			t.Errorf("%s: %d %s, want %d", c.what, a.code, strings.Join(strings.Fields(a.body), " "), c.code)
			continue
		}
		if c.code >= 400 {
			if msg := errorOf(t, a); !strings.Contains(msg, c.says) {
				t.Errorf("%s: error %q does not say %q", c.what, msg, c.says)
			}
			if w, err := s.Get(running.ID); err != nil || !w.Active || len(s.List()) != 1 {
				t.Errorf("%s: refused, yet the store changed: %d windows, the running one %+v", c.what, len(s.List()), w)
			}
		}
		if c.code == http.StatusUnsupportedMediaType && a.hdr.Get("Accept-Post") != "application/json" {
			t.Errorf("%s: 415 without Accept-Post: application/json", c.what)
		}
	}

	// Reading is not a write: any origin may, as before.
	req := httptest.NewRequest(http.MethodGet, Path, nil)
	req.Header.Set("Origin", "http://evil.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if a := serve(t, Handler(NewStore(Options{}), nil), req); a.code != http.StatusOK {
		t.Errorf("GET from another origin: %d %s, want 200", a.code, a.body)
	}
}

// The mux works out a 405's Allow header and answers what it cannot route,
// both in plain text of its own: the API says them in JSON, and keeps the
// methods the mux listed.
func TestAPIRoutingAnswersInJSON(t *testing.T) {
	s := NewStore(Options{})
	h := Handler(s, nil)
	id := mustStart(t, s, "running", "", "").ID
	for _, c := range []struct {
		method, target string
		allow          string
	}{
		{http.MethodDelete, Path, "GET, HEAD, POST"},
		{http.MethodPatch, Path + "/", "GET, HEAD, POST"},
		{http.MethodPost, Path + "/" + id, "GET, HEAD"},
		{http.MethodHead, Path + "/" + id + "/end", "POST"},
	} {
		a := do(t, h, c.method, c.target, "")
		if a.code != http.StatusMethodNotAllowed || a.hdr.Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", c.method, c.target, a.code, a.hdr.Get("Allow"), c.allow)
			continue
		}
		if msg := errorOf(t, a); !strings.Contains(msg, c.method) || !strings.Contains(msg, c.allow) {
			t.Errorf("%s %s: error %q does not name the method and %s", c.method, c.target, msg, c.allow)
		}
	}
	for _, target := range []string{Path + "/" + id + "/stop", Path + "/" + id + "/end/now", "/api/v1/benchmark/", "/api/v1/benchmark/windowsx/1"} {
		a := do(t, h, http.MethodGet, target, "")
		if a.code != http.StatusNotFound || a.hdr.Get("Allow") != "" {
			t.Errorf("GET %s: %d, Allow %q; want 404 and no Allow", target, a.code, a.hdr.Get("Allow"))
			continue
		}
		if msg := errorOf(t, a); !strings.Contains(msg, "no such API path") || !strings.Contains(msg, Path) {
			t.Errorf("GET %s: error %q does not point to %s", target, msg, Path)
		}
	}
}
