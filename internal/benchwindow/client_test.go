package benchwindow

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClientStartsAndEndsWindows(t *testing.T) {
	store := NewStore(Options{})
	srv := httptest.NewServer(Handler(store, nil))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL + "/"}
	ctx := context.Background()

	w, err := c.Start(ctx, StartRequest{Name: "mirror ashift=12", Pool: "tank", Command: "dd if=/dev/zero"})
	if err != nil {
		t.Fatal(err)
	}
	if !w.Active || w.Name != "mirror ashift=12" || w.Pool != "tank" {
		t.Errorf("started window %+v", w)
	}
	if got, err := store.Get(w.ID); err != nil || !got.Active {
		t.Fatalf("store has %+v, %v", got, err)
	}
	ended, err := c.End(ctx, w.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Active || ended.End.Before(ended.Start) || ended.ID != w.ID {
		t.Errorf("ended window %+v", ended)
	}
	// The exporter's own error reaches the caller.
	if _, err := c.End(ctx, w.ID); err == nil || !strings.Contains(err.Error(), "409") || !strings.Contains(err.Error(), "already ended") {
		t.Errorf("ending twice: %v", err)
	}
	if _, err := c.Start(ctx, StartRequest{}); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("start without a name: %v", err)
	}
}

func TestClientErrorsSayWhatIsWrong(t *testing.T) {
	off := httptest.NewServer(NotEnabled("start zpool_exporter with --web.enable-benchmark-api"))
	defer off.Close()
	other := httptest.NewServer(http.NotFoundHandler())
	defer other.Close()
	auth := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "bench" || p != "secret" {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		Handler(NewStore(Options{}), nil).ServeHTTP(w, r)
	}))
	defer auth.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	ctx := context.Background()
	for _, tc := range []struct {
		url  string
		want []string
	}{
		{off.URL, []string{"404", "--web.enable-benchmark-api"}},
		{other.URL, []string{"404", "is this a zpool_exporter?"}},
		{closed.URL, []string{"cannot reach the exporter"}},
		{"localhost:9134", []string{"not an http(s) URL"}},
		{strings.Replace(auth.URL, "http://", "http://bench:wrong@", 1), []string{"401", "xxxxx"}},
	} {
		_, err := (&Client{BaseURL: tc.url}).Start(ctx, StartRequest{Name: "x"})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to contain %q", tc.url, err, w)
			}
		}
		if err != nil && strings.Contains(err.Error(), "wrong") {
			t.Errorf("%s: the password leaks into %v", tc.url, err)
		}
	}
	if _, err := (&Client{BaseURL: strings.Replace(auth.URL, "http://", "http://bench:secret@", 1)}).Start(ctx, StartRequest{Name: "x"}); err != nil {
		t.Errorf("with the right credentials: %v", err)
	}
}
