package history

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Path is where Handler is served:
//
//	GET /api/v1/benchmark/history?metric=NAME[&metric=NAME...]&start=T&end=T
//
// T is Unix seconds with decimals or RFC 3339, as in Prometheus's API. The
// answer is Prometheus's query result, a matrix holding for each series
// the last sample at or before start and every sample up to end:
//
//	{"status":"success","data":{"resultType":"matrix","result":[
//	  {"metric":{"__name__":"...","pool":"tank",...},"values":[[1700000000.123,"42"],...]}]}}
//
// Errors are {"status":"error","errorType":"bad_data","error":"..."} with
// 400 (no metric, a metric the history does not keep, a bad time, start
// after end) or 405 (a method other than GET or HEAD).
const Path = "/api/v1/benchmark/history"

// Response is the body of every answer, as Prometheus writes it.
type Response struct {
	Status    string `json:"status"` // "success" or "error"
	Data      *Data  `json:"data,omitempty"`
	ErrorType string `json:"errorType,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Data is a matrix result.
type Data struct {
	ResultType string         `json:"resultType"` // "matrix"
	Result     []MatrixSeries `json:"result"`
}

// MatrixSeries is one series of a matrix.
type MatrixSeries struct {
	Metric map[string]string `json:"metric"` // with __name__
	Values []Point           `json:"values"`
}

// Point is one sample as Prometheus writes it: [unix seconds, "value"].
type Point struct {
	Time  time.Time
	Value float64
}

// MarshalJSON writes [1700000000.123,"42"].
func (p Point) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	b = strconv.AppendFloat(b, float64(p.Time.UnixMilli())/1000, 'f', -1, 64)
	b = append(b, ',', '"')
	b = strconv.AppendFloat(b, p.Value, 'f', -1, 64)
	return append(b, '"', ']'), nil
}

// UnmarshalJSON reads [1700000000.123,"42"]; the value may be "NaN",
// "+Inf" or "-Inf".
func (p *Point) UnmarshalJSON(data []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || len(raw) != 2 {
		return fmt.Errorf("a sample must be [time, \"value\"], not %s", data)
	}
	var secs float64
	if err := json.Unmarshal(raw[0], &secs); err != nil {
		return fmt.Errorf("sample time %s: %w", raw[0], err)
	}
	var text string
	if err := json.Unmarshal(raw[1], &text); err != nil {
		return fmt.Errorf("sample value %s is not a string: %w", raw[1], err)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return fmt.Errorf("sample value %q: %w", text, err)
	}
	p.Time = time.UnixMilli(int64(math.Round(secs * 1000))).UTC()
	p.Value = v
	return nil
}

// ParseTime reads a time as Prometheus's API does: Unix seconds with
// decimals (to the millisecond), or RFC 3339.
func ParseTime(s string) (time.Time, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e13 {
			return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp", s)
		}
		return time.UnixMilli(int64(math.Round(f * 1000))).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp (Unix seconds such as 1700000000.5, or RFC 3339 such as 2023-11-14T22:13:20Z)", s)
}

// Handler serves r's samples at Path.
func Handler(r *Recorder) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed on %s; use GET", req.Method, Path))
			return
		}
		q := req.URL.Query()
		metrics := q["metric"]
		if len(metrics) == 0 {
			writeError(w, http.StatusBadRequest, "no metric given; add metric=NAME once per family, of: "+strings.Join(r.Metrics(), ", "))
			return
		}
		for _, m := range metrics {
			if !r.Keeps(m) {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("the benchmark history does not keep metric %q; it keeps: %s", m, strings.Join(r.Metrics(), ", ")))
				return
			}
		}
		var times [2]time.Time
		for i, name := range []string{"start", "end"} {
			v := q.Get(name)
			if v == "" {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("parameter %q is required", name))
				return
			}
			t, err := ParseTime(v)
			if err != nil {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid parameter %q: %v", name, err))
				return
			}
			times[i] = t
		}
		start, end := times[0], times[1]
		if end.Before(start) {
			writeError(w, http.StatusBadRequest, "end timestamp must not be before start time")
			return
		}
		data := &Data{ResultType: "matrix", Result: []MatrixSeries{}}
		seen := map[string]bool{}
		for _, m := range metrics {
			if seen[m] {
				continue
			}
			seen[m] = true
			for _, s := range r.Query(m, start, end) {
				labels := make(map[string]string, len(s.Labels)+1)
				for k, v := range s.Labels {
					labels[k] = v
				}
				labels["__name__"] = s.Metric
				values := make([]Point, len(s.Samples))
				for i, p := range s.Samples {
					values[i] = Point(p)
				}
				data.Result = append(data.Result, MatrixSeries{Metric: labels, Values: values})
			}
		}
		writeJSON(w, http.StatusOK, Response{Status: "success", Data: data})
	})
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, Response{Status: "error", ErrorType: "bad_data", Error: msg})
}

func writeJSON(w http.ResponseWriter, code int, v Response) {
	data, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		data, _ = json.Marshal(Response{Status: "error", ErrorType: "internal", Error: "encoding the answer: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
