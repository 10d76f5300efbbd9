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

func do(t *testing.T, h http.Handler, method, target, body string) answer {
	t.Helper()
	rec := httptest.NewRecorder()
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, target, strings.NewReader(body))
	} else {
		req = httptest.NewRequest(method, target, nil)
	}
	h.ServeHTTP(rec, req)
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
