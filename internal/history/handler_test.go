package history

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func serve(t *testing.T, h http.Handler, method, query string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, Path+"?"+query, nil))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, query, ct)
	}
	return rec.Code, rec.Body.String()
}

func recorderWithTwoReadings(t *testing.T) *Recorder {
	c, f, w := &clock{now: t0}, &fakeExporter{vdevs: []string{"tank"}}, &windows{}
	f.clock = c
	r := newTestRecorder(c, f, w, Options{})
	c.Set(time.Unix(1700000000, 123e6))
	r.SampleOnce(t.Context())
	c.Set(time.Unix(1700000001, 0))
	r.SampleOnce(t.Context())
	return r
}

// The answer is Prometheus's matrix, byte for byte as Prometheus writes
// one: times as seconds with milliseconds, values as strings.
func TestHandlerAnswersLikePrometheus(t *testing.T) {
	h := Handler(recorderWithTwoReadings(t))
	q := url.Values{"metric": {"zfs_vdev_write_bytes_total", "zfs_host_cpu_seconds_total", "zfs_vdev_write_bytes_total"},
		"start": {"1700000000.5"}, "end": {"2023-11-14T22:13:21Z"}}
	code, body := serve(t, h, http.MethodGet, q.Encode())
	want := `{"status":"success","data":{"resultType":"matrix","result":[` +
		`{"metric":{"__name__":"zfs_vdev_write_bytes_total","pool":"tank","vdev":"tank"},"values":[[1700000000.123,"1000"],[1700000001,"2000"]]},` +
		`{"metric":{"__name__":"zfs_host_cpu_seconds_total","mode":"user"},"values":[[1700000000.123,"0.5"],[1700000001,"1"]]}]}}` + "\n"
	if code != http.StatusOK || body != want {
		t.Errorf("GET: %d\n%s\nwant 200\n%s", code, body, want)
	}
	// Round trip through the client's types.
	var resp Response
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatal(err)
	}
	if p := resp.Data.Result[0].Values[0]; !p.Time.Equal(time.Unix(1700000000, 123e6)) || p.Value != 1000 {
		t.Errorf("decoded first point %v %v", p.Time, p.Value)
	}

	// Nothing in range: an empty result, not null.
	code, body = serve(t, h, http.MethodGet, "metric=zfs_pool_state&start=1600000000&end=1600000001")
	if code != http.StatusOK || !strings.Contains(body, `"result":[]`) {
		t.Errorf("empty range: %d %s", code, body)
	}
	// Only the end bounds the samples: start at the newest gives it alone.
	code, body = serve(t, h, http.MethodGet, "metric=zfs_host_cpu_seconds_total&start=1800000000&end=1800000000")
	if code != http.StatusOK || !strings.Contains(body, `"values":[[1700000001,"1"]]`) {
		t.Errorf("start after the newest sample: %d %s; want the newest sample", code, body)
	}
	if code, _ := serve(t, h, http.MethodHead, q.Encode()); code != http.StatusOK {
		t.Errorf("HEAD: %d", code)
	}
}

func TestHandlerErrors(t *testing.T) {
	h := Handler(recorderWithTwoReadings(t))
	for _, tc := range []struct {
		method, query string
		code          int
		says          string
	}{
		{"GET", "start=1&end=2", 400, "no metric given; add metric=NAME once per family, of: zfs_host_cpu_seconds_total, "},
		{"GET", "metric=zfs_pool_size_bytes&start=1&end=2", 400, `does not keep metric \"zfs_pool_size_bytes\"; it keeps: zfs_host_cpu_seconds_total`},
		{"GET", "metric=zfs_pool_state&end=2", 400, `parameter \"start\" is required`},
		{"GET", "metric=zfs_pool_state&start=1", 400, `parameter \"end\" is required`},
		{"GET", "metric=zfs_pool_state&start=yesterday&end=2", 400, `invalid parameter \"start\": cannot parse \"yesterday\" to a valid timestamp`},
		{"GET", "metric=zfs_pool_state&start=1&end=NaN", 400, `invalid parameter \"end\"`},
		{"GET", "metric=zfs_pool_state&start=3&end=2", 400, "end timestamp must not be before start time"},
		{"POST", "metric=zfs_pool_state&start=1&end=2", 405, "method POST not allowed"},
		{"DELETE", "", 405, "use GET"},
	} {
		code, body := serve(t, h, tc.method, tc.query)
		var resp Response
		if err := json.Unmarshal([]byte(body), &resp); err != nil {
			t.Errorf("%s ?%s: not JSON: %s", tc.method, tc.query, body)
			continue
		}
		if code != tc.code || resp.Status != "error" || resp.ErrorType != "bad_data" || resp.Data != nil || !strings.Contains(body, tc.says) {
			t.Errorf("%s ?%s: %d %s\nwant %d, a bad_data error saying %s", tc.method, tc.query, code, body, tc.code, tc.says)
		}
	}
}

func TestParseTime(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1700000000":                     time.Unix(1700000000, 0),
		"1700000000.5":                   time.Unix(1700000000, 5e8),
		"1700000000.1234":                time.Unix(1700000000, 123e6),
		"2023-11-14T22:13:20Z":           time.Unix(1700000000, 0),
		"2023-11-14T23:13:20.25+01:00":   time.Unix(1700000000, 25e7),
		"2023-11-14T22:13:20.123456789Z": time.Unix(1700000000, 123456789),
	} {
		got, err := ParseTime(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "now", "Inf", "1e300", "2023-11-14 22:13:20"} {
		if _, err := ParseTime(in); err == nil {
			t.Errorf("ParseTime(%q) accepted", in)
		}
	}
}
