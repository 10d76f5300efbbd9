package render

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestPrometheusAnswers(t *testing.T) {
	prom := newFakePrometheus(t, func(expr string, instant bool) (int, string) {
		switch expr {
		case "scalar":
			return http.StatusOK, `{"status":"success","data":{"resultType":"scalar","result":[1735689600.5,"42"]}}`
		case "proxy":
			return http.StatusBadGateway, "<html>bad gateway</html>"
		case "slow":
			return http.StatusServiceUnavailable, apiError("timeout", "query timed out in expression evaluation")
		}
		return http.StatusOK, `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[1735689600,"1.5"],[1735689630,"NaN"]]}]}}`
	})
	p := prometheus{base: prom.URL + "/"}
	ctx := context.Background()

	s, err := p.query(ctx, "scalar", testTo)
	if err != nil {
		t.Fatal(err)
	}
	if want := []series{{labels: map[string]string{}, points: []point{{1735689600500, 42}}}}; !reflect.DeepEqual(s, want) {
		t.Errorf("scalar: %+v", s)
	}
	s, err = p.queryRange(ctx, "matrix", testFrom, testTo, testStep)
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || len(s[0].points) != 2 || s[0].points[0] != (point{1735689600000, 1.5}) || s[0].points[1].value == s[0].points[1].value {
		t.Errorf("matrix: %+v", s)
	}
	if _, err := p.query(ctx, "proxy", testTo); err == nil || !strings.Contains(err.Error(), "HTTP 502") {
		t.Errorf("a non-API answer gave %v", err)
	}
	if _, err := p.query(ctx, "slow", testTo); err == nil || err.Error() != "timeout: query timed out in expression evaluation" {
		t.Errorf("an API error gave %v", err)
	}
}

func TestLegend(t *testing.T) {
	l := map[string]string{"__name__": "zfs_pool_state", "pool": "tank", "state": "online"}
	for _, c := range []struct{ format, want string }{
		{"{{pool}} {{state}}", "tank online"},
		{"{{ pool }}/{{missing}}", "tank/"},
		{"", `zfs_pool_state{pool="tank", state="online"}`},
		{"__auto", `zfs_pool_state{pool="tank", state="online"}`},
	} {
		if got := legend(c.format, l, "expr"); got != c.want {
			t.Errorf("legend(%q) = %q, want %q", c.format, got, c.want)
		}
	}
	if got := legend("", map[string]string{}, "vector(1)"); got != "vector(1)" {
		t.Errorf("a series without labels is named %q", got)
	}
}
