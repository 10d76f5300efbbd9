package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
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
	base   string
	client *http.Client
}

// queryRange evaluates expr over [from, to] every step.
func (p prometheus) queryRange(ctx context.Context, expr string, from, to time.Time, step time.Duration) ([]series, error) {
	return p.ask(ctx, "/api/v1/query_range", url.Values{
		"query": {expr},
		"start": {unixString(from)},
		"end":   {unixString(to)},
		"step":  {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)},
	})
}

// query evaluates expr at one instant.
func (p prometheus) query(ctx context.Context, expr string, at time.Time) ([]series, error) {
	return p.ask(ctx, "/api/v1/query", url.Values{"query": {expr}, "time": {unixString(at)}})
}

func unixString(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', -1, 64)
}

// apiResponse is the envelope of every answer of the HTTP API.
type apiResponse struct {
	Status    string
	ErrorType string `json:"errorType"`
	Error     string
	Data      struct {
		ResultType string `json:"resultType"`
		Result     json.RawMessage
	}
}

// The API's answer is read whatever the HTTP status: errors come as
// 400 or 422 with an error message in the same envelope.
func (p prometheus) ask(ctx context.Context, path string, form url.Values) ([]series, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(p.base, "/")+path, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	client := p.client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r apiResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d: %.200s", path, resp.StatusCode, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	return decodeResult(r.Data.ResultType, r.Data.Result)
}

// sample is a [time, "value"] pair as the API writes it.
type sample [2]any

func (s sample) point() (point, error) {
	ts, ok := s[0].(float64)
	str, ok2 := s[1].(string)
	if !ok || !ok2 {
		return point{}, fmt.Errorf("malformed sample %v", s)
	}
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return point{}, err
	}
	return point{ms: int64(math.Round(ts * 1000)), value: v}, nil
}

func decodeResult(kind string, raw json.RawMessage) ([]series, error) {
	switch kind {
	case "matrix", "vector":
		var items []struct {
			Metric map[string]string
			Values []sample
			Value  *sample
		}
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		out := make([]series, 0, len(items))
		for _, it := range items {
			samples := it.Values
			if it.Value != nil {
				samples = []sample{*it.Value}
			}
			s := series{labels: it.Metric}
			if s.labels == nil {
				s.labels = map[string]string{}
			}
			for _, sm := range samples {
				pt, err := sm.point()
				if err != nil {
					return nil, err
				}
				s.points = append(s.points, pt)
			}
			out = append(out, s)
		}
		return out, nil
	case "scalar":
		var sm sample
		if err := json.Unmarshal(raw, &sm); err != nil {
			return nil, err
		}
		pt, err := sm.point()
		if err != nil {
			return nil, err
		}
		return []series{{labels: map[string]string{}, points: []point{pt}}}, nil
	}
	return nil, fmt.Errorf("result type %q is not drawn", kind)
}
