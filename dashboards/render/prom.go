package render

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// series is one labelled series of a query's answer. An instant query
// gives one point per series.
type series struct {
	labels map[string]string
	points []point
}

type point struct {
	// ms is the sample's time in Unix milliseconds.
	ms    int64
	value float64
}

// prometheus asks a Prometheus server's HTTP API.
type prometheus struct {
	base string
	// client is nil for the api package's default.
	client *http.Client
}

// api is a client of the server's v1 API. Making one per query is cheap:
// the HTTP client, and with it the connections, are shared.
func (p prometheus) api() (v1.API, error) {
	c, err := api.NewClient(api.Config{Address: p.base, Client: p.client})
	if err != nil {
		return nil, err
	}
	return v1.NewAPI(errorEnvelope{c}), nil
}

// queryRange evaluates expr over [from, to] every step.
func (p prometheus) queryRange(ctx context.Context, expr string, from, to time.Time, step time.Duration) ([]series, error) {
	a, err := p.api()
	if err != nil {
		return nil, err
	}
	v, _, _, err := a.QueryRange(ctx, expr, v1.Range{Start: from, End: to, Step: step})
	if err != nil {
		return nil, err
	}
	return toSeries(v)
}

// query evaluates expr at one instant.
func (p prometheus) query(ctx context.Context, expr string, at time.Time) ([]series, error) {
	a, err := p.api()
	if err != nil {
		return nil, err
	}
	v, _, _, err := a.Query(ctx, expr, at)
	if err != nil {
		return nil, err
	}
	return toSeries(v)
}

// errorEnvelope reads the API's error whatever the HTTP status. The v1
// client reads it only from a 400 or a 422, yet Prometheus answers a
// timeout with 503 and an internal error with 500 in the same envelope,
// whose type and message say more than the status. An answer that is not
// the API's (a proxy's error page) is named by its status and opening.
type errorEnvelope struct{ api.Client }

func (c errorEnvelope) Do(ctx context.Context, req *http.Request) (*http.Response, []byte, error) {
	resp, body, err := c.Client.Do(ctx, req)
	if err != nil || resp.StatusCode/100 == 2 && json.Valid(body) {
		return resp, body, err
	}
	var e struct {
		Status    string       `json:"status"`
		ErrorType v1.ErrorType `json:"errorType"`
		Error     string       `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Status != "error" {
		return resp, body, fmt.Errorf("%s: HTTP %d: %.200s", req.URL.Path, resp.StatusCode, body)
	}
	return resp, body, &v1.Error{Type: e.ErrorType, Msg: e.Error}
}

// toSeries turns an answer into series. Native histogram samples have no
// float value and are left out.
func toSeries(v model.Value) ([]series, error) {
	switch v := v.(type) {
	case model.Matrix:
		out := make([]series, 0, len(v))
		for _, ss := range v {
			s := series{labels: labelMap(ss.Metric)}
			for _, sp := range ss.Values {
				s.points = append(s.points, point{ms: int64(sp.Timestamp), value: float64(sp.Value)})
			}
			out = append(out, s)
		}
		return out, nil
	case model.Vector:
		out := make([]series, 0, len(v))
		for _, sm := range v {
			s := series{labels: labelMap(sm.Metric)}
			if sm.Histogram == nil {
				s.points = []point{{ms: int64(sm.Timestamp), value: float64(sm.Value)}}
			}
			out = append(out, s)
		}
		return out, nil
	case *model.Scalar:
		return []series{{labels: map[string]string{}, points: []point{{ms: int64(v.Timestamp), value: float64(v.Value)}}}}, nil
	case nil:
		return nil, errors.New("the answer holds no result")
	}
	return nil, fmt.Errorf("result type %q is not drawn", v.Type())
}

func labelMap(m model.Metric) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[string(k)] = string(v)
	}
	return out
}
