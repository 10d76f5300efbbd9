package benchsource

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Exporter is an exporter's /metrics, scraped as Prometheus scrapes it:
// for the pool's configuration where zpool_bench runs without zpool, and
// by a Sampler for a run's samples.
type Exporter struct {
	base   string
	client *http.Client
}

// NewExporter scrapes the exporter at baseURL (e.g. http://localhost:9134).
// client is http.DefaultClient when nil; give one with TLS settings when
// the exporter's --web.config.file asks for them. User and password in
// baseURL are sent as basic authentication.
func NewExporter(baseURL string, client *http.Client) *Exporter {
	return &Exporter{base: strings.TrimRight(baseURL, "/"), client: clientOrDefault(client)}
}

// String is "exporter URL", without the URL's password.
func (e *Exporter) String() string { return "exporter " + redact(e.base) }

// maxBody bounds a scrape: tens of thousands of series.
const maxBody = 256 << 20

// Metrics scrapes /metrics once and returns its families by name. A
// deadline of ctx is sent as Prometheus sends its scrape timeout, so that
// the exporter answers in time with what its collectors have rather than
// not at all.
func (e *Exporter) Metrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	fail := func(err error) error { return fmt.Errorf("scraping the exporter at %s: %w", redact(e.base), err) }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/metrics", nil)
	if err != nil {
		return nil, fail(err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	if deadline, ok := ctx.Deadline(); ok {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.FormatFloat(time.Until(deadline).Seconds(), 'f', 3, 64))
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, fail(fmt.Errorf("HTTP %s: %s", resp.Status, strings.TrimSpace(string(body))))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fail(err)
	}
	return fams, nil
}
