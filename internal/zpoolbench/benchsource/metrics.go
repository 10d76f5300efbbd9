package benchsource

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics scrapes the exporter's /metrics once, by family name: where
// zpool_bench runs on a client machine, without zpool, the pool's
// configuration is read from there.
func (s *ExporterSource) Metrics(ctx context.Context) (map[string]*dto.MetricFamily, error) {
	fail := func(err error) error { return fmt.Errorf("scraping the exporter at %s: %w", redact(s.base), err) }
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/metrics", nil)
	if err != nil {
		return nil, fail(err)
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fail(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, fail(&httpError{status: resp.Status, code: resp.StatusCode, msg: strings.TrimSpace(string(body))})
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fail(err)
	}
	return fams, nil
}
