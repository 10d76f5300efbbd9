package grafana

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// grafanaStub answers like Grafana's annotation API and records requests.
type grafanaStub struct {
	method, path, auth, contentType string
	body                            map[string]any
}

func (g *grafanaStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.method, g.path, g.auth, g.contentType = r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type")
	data, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(data, &g.body)
	if g.auth != "Bearer glsa_test" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"message":"invalid API key"}`)
		return
	}
	_, _ = io.WriteString(w, `{"message":"Annotation added","id":42}`)
}

func TestCreatePostsARegion(t *testing.T) {
	stub := &grafanaStub{}
	srv := httptest.NewServer(stub)
	defer srv.Close()
	start := time.Date(2026, 11, 30, 19, 0, 0, 123e6, time.UTC)
	end := start.Add(95*time.Second + 456*time.Millisecond)
	c := &Client{URL: srv.URL + "/grafana/", Token: "glsa_test"}
	id, err := c.Create(context.Background(), Annotation{Time: start, TimeEnd: end,
		Tags: []string{"zpool-bench", "pool:tank"}, Text: "raidz1 dd"})
	if err != nil {
		t.Fatal(err)
	}
	if id != 42 {
		t.Errorf("id %d, want 42", id)
	}
	if stub.method != http.MethodPost || stub.path != "/grafana/api/annotations" {
		t.Errorf("request %s %s, want POST /grafana/api/annotations", stub.method, stub.path)
	}
	if stub.contentType != "application/json" {
		t.Errorf("content type %q", stub.contentType)
	}
	from, to := stub.body["time"].(float64), stub.body["timeEnd"].(float64)
	if int64(from) != start.UnixMilli() || int64(to) != end.UnixMilli() || !(from < to) {
		t.Errorf("time %v, timeEnd %v; want %d < %d (Unix ms)", from, to, start.UnixMilli(), end.UnixMilli())
	}
	var tags []string
	for _, v := range stub.body["tags"].([]any) {
		tags = append(tags, v.(string))
	}
	if !slices.Equal(tags, []string{"zpool-bench", "pool:tank"}) || stub.body["text"] != "raidz1 dd" {
		t.Errorf("tags %v, text %v", tags, stub.body["text"])
	}
	if _, ok := stub.body["dashboardUID"]; ok {
		t.Error("dashboardUID sent though none was given")
	}
}

func TestCreateErrors(t *testing.T) {
	srv := httptest.NewServer(&grafanaStub{})
	defer srv.Close()
	start := time.Now()
	_, err := (&Client{URL: srv.URL, Token: "wrong"}).Create(context.Background(), Annotation{Time: start, TimeEnd: start.Add(time.Second)})
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "invalid API key") || !strings.Contains(err.Error(), "annotations:create") {
		t.Errorf("bad token: %v", err)
	}
	if _, err := (&Client{URL: srv.URL, Token: "glsa_test"}).Create(context.Background(), Annotation{Time: start, TimeEnd: start}); err == nil {
		t.Error("an empty region was posted")
	}
	if _, err := (&Client{URL: "grafana:3000"}).Create(context.Background(), Annotation{Time: start, TimeEnd: start.Add(time.Second)}); err == nil || !strings.Contains(err.Error(), "not an http(s) URL") {
		t.Errorf("URL without scheme: %v", err)
	}
}
