package prometheus3

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/prom3"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

var tmpRoot string

func TestMain(m *testing.M) { repotest.Main(m, "zpool-exporter-prometheus3-", &tmpRoot) }

// prometheusBinary is Prometheus 3.16, built once into the user's cache.
func prometheusBinary(t *testing.T) string { return prom3.Binary(t, tmpRoot) }

// everySecond is a Prometheus configuration that scrapes and evaluates
// the rules of rules/ every second, with the scrape jobs given (YAML list
// items under scrape_configs).
func everySecond(jobs string) string {
	return `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [rules/*.yaml]
scrape_configs:
` + jobs
}

// binaries are Prometheus 3.16 and the exporter, built for a test that
// skips in -short mode, as they take minutes to build the first time.
func binaries(t *testing.T) (prom, exporter string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds Prometheus 3.16 (minutes the first time)")
	}
	prom = prometheusBinary(t)
	exporter, err := e2e.BuildExporter(repotest.Root, filepath.Join(tmpRoot, "bin"))
	if err != nil {
		t.Fatal(err)
	}
	return prom, exporter
}

// prometheus is a running Prometheus server.
type prometheus struct{ url string }

// startPrometheus runs bin over config on 127.0.0.1 until the test ends,
// and waits until it is ready.
func startPrometheus(t *testing.T, bin, config string) *prometheus {
	t.Helper()
	return startPrometheusIn(t, bin, config, "")
}

// startPrometheusIn is startPrometheus with the rule files of rules, when
// not empty, in rules/ beside the configuration.
func startPrometheusIn(t *testing.T, bin, config, rules string) *prometheus {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	if rules != "" {
		if err := os.CopyFS(filepath.Join(dir, "rules"), os.DirFS(rules)); err != nil {
			t.Fatal(err)
		}
	}
	addr := e2e.FreeAddress(t)
	cmd := exec.Command(bin, "--config.file="+path, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr)
	cmd.Dir = dir
	p := &prometheus{url: "http://" + addr}
	e2e.StartServer(t, "Prometheus", cmd, p.url)
	return p
}

// sample is one element of an instant query's vector: a float or a
// histogram.
type sample struct {
	Metric    map[string]string `json:"metric"`
	Value     *[2]any           `json:"value"`
	Histogram *[2]json.RawMessage
}

// histogram is a histogram sample of the query API: each bucket is
// [boundary rule, lower, upper, count].
type histogram struct {
	Count   string   `json:"count"`
	Buckets [][4]any `json:"buckets"`
}

func (s sample) float() float64 {
	if s.Value == nil {
		return 0
	}
	str, _ := s.Value[1].(string)
	v, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return 0
	}
	return v
}

func (s sample) histogram() (histogram, error) {
	var h histogram
	if s.Histogram == nil {
		return h, errors.New("not a histogram sample")
	}
	err := json.Unmarshal(s.Histogram[1], &h)
	return h, err
}

// query evaluates expr now.
func (p *prometheus) query(expr string) ([]sample, error) { return p.queryAt(expr, time.Time{}) }

// queryAt evaluates expr at a given time, or now for the zero time.
func (p *prometheus) queryAt(expr string, at time.Time) ([]sample, error) {
	params := url.Values{"query": {expr}}
	if !at.IsZero() {
		params.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64))
	}
	resp, err := http.Get(p.url + "/api/v1/query?" + params.Encode())
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric    map[string]string   `json:"metric"`
				Value     *[2]any             `json:"value"`
				Histogram *[2]json.RawMessage `json:"histogram"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, fmt.Errorf("%s: %s: %v", expr, resp.Status, err)
	}
	if body.Status != "success" {
		return nil, fmt.Errorf("%s: %s", expr, body.Error)
	}
	out := make([]sample, len(body.Data.Result))
	for i, r := range body.Data.Result {
		out[i] = sample{Metric: r.Metric, Value: r.Value, Histogram: r.Histogram}
	}
	return out, nil
}

func (p *prometheus) mustQuery(t *testing.T, expr string) []sample {
	t.Helper()
	s, err := p.query(expr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
