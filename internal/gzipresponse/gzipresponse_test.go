package gzipresponse

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"gzip":                   true,
		"GZip":                   true,
		"x-gzip":                 true,
		"deflate, gzip;q=0.5":    true,
		"br ; q=1, gzip ; q=0.1": true,
		"*":                      true,
		"br, *;q=0.1":            true,
		"":                       false,
		"identity":               false,
		"gzip;q=0":               false,
		"gzip;q=0.0, *":          false, // gzip named and refused: * does not bring it back
		"*;q=0":                  false,
		"gzip;q=x":               false,
		"gzipped":                false,
	} {
		if got := AcceptsGzip(header); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

// body is what the handler under test serves: long enough to span several
// of gzip's blocks, and different for each request.
func body(r *http.Request) string {
	return strings.Repeat(fmt.Sprintf("zfs_vdev_state{pool=%q,vdev=\"sda\",state=\"online\"} 1\n", r.URL.Query().Get("pool")), 5000)
}

func serve(t *testing.T, h http.Handler, acceptEncoding, pool string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics?pool="+pool, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	data := rec.Body.Bytes()
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if data, err = io.ReadAll(zr); err != nil {
			t.Fatalf("the compressed body does not read back: %v", err)
		}
	}
	return resp, string(data)
}

func testHandler() *Handler {
	return New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, body(r))
	}), 2)
}

// A client that asks for gzip gets the body compressed, and one that does
// not gets it as it is; both are told that the answer depends on what
// they accept.
func TestCompressesWhenAsked(t *testing.T) {
	h := testHandler()
	for _, tc := range []struct {
		accept string
		gzip   bool
	}{{"gzip", true}, {"", false}, {"gzip;q=0", false}} {
		resp, got := serve(t, h, tc.accept, "tank")
		if enc := resp.Header.Get("Content-Encoding"); (enc == "gzip") != tc.gzip {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", tc.accept, enc)
		}
		if resp.Header.Get("Vary") != "Accept-Encoding" || resp.Header.Get("Content-Type") != "text/plain" {
			t.Errorf("Accept-Encoding %q: headers %v", tc.accept, resp.Header)
		}
		if want := body(httptest.NewRequest(http.MethodGet, "/?pool=tank", nil)); got != want {
			t.Errorf("Accept-Encoding %q: body of %d bytes, want %d", tc.accept, len(got), len(want))
		}
	}
}

// Writers are kept between responses, up to the number asked, and a
// writer in use is never another response's: each concurrent response
// reads back whole as its own.
func TestWritersAreKeptAndNotShared(t *testing.T) {
	h := testHandler()
	serve(t, h, "gzip", "a")
	if n := len(h.writers); n != 1 {
		t.Fatalf("%d idle writers after a response, want 1", n)
	}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			pool := fmt.Sprintf("p%d", i)
			if _, got := serve(t, h, "gzip", pool); got != body(httptest.NewRequest(http.MethodGet, "/?pool="+pool, nil)) {
				t.Errorf("response %d is not its own body", i)
			}
		})
	}
	wg.Wait()
	if n := len(h.writers); n != 2 {
		t.Errorf("%d idle writers after concurrent responses, want the 2 kept", n)
	}
}

// A HEAD request has no body to compress.
func TestHeadIsNotCompressed(t *testing.T) {
	req := httptest.NewRequest(http.MethodHead, "/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	rec := httptest.NewRecorder()
	testHandler().ServeHTTP(rec, req)
	if enc := rec.Result().Header.Get("Content-Encoding"); enc != "" {
		t.Errorf("HEAD answered with Content-Encoding %q", enc)
	}
}
