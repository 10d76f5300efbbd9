package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/poolconfig"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// Where the pool's configuration is read from (--pool.config-from).
const (
	configAuto     = "auto"
	configZpool    = "zpool"
	configExporter = "exporter"
)

var configSources = []string{configAuto, configZpool, configExporter}

// poolConfigReader reads the configuration of the pool a run is on.
type poolConfigReader struct {
	from        string // one of configSources
	zpool, zfs  string // the commands, for configZpool
	zdb         string
	exporterURL string // for configExporter
	warn        func(format string, args ...any)
}

// read reads the configuration of pool, or of the only pool when pool is
// empty: with zpool here, or from the exporter's metrics on a machine
// without it (auto), or as asked.
func (r poolConfigReader) read(ctx context.Context, pool string) (poolconfig.Config, error) {
	if r.from != configExporter {
		cfg, err := poolconfig.Read(ctx, poolconfig.Reader{Zpool: r.zpool, Zfs: r.zfs, Zdb: r.zdb}, pool)
		if err == nil || r.from == configZpool || !errors.Is(err, runner.ErrNotFound) {
			return cfg, err
		}
		r.warn("%s is not installed here: the pool's configuration comes from the exporter's metrics at %s", r.zpool, r.exporterURL)
	}
	fams, err := exporterMetrics(ctx, r.exporterURL)
	if err != nil {
		return poolconfig.Config{}, fmt.Errorf("reading the pool's configuration from the exporter: %w", err)
	}
	return poolconfig.FromMetrics(fams, pool)
}

// exporterMetrics scrapes the exporter's /metrics once.
func exporterMetrics(ctx context.Context, baseURL string) (map[string]*dto.MetricFamily, error) {
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("exporter URL %q is not an http(s) URL like http://localhost:9134", baseURL)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	target := base.JoinPath("metrics")
	target.User = nil
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	if u := base.User; u != nil {
		password, _ := u.Password()
		req.SetBasicAuth(u.Username(), password)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET %s: %s: %s", target, resp.Status, strings.TrimSpace(string(body)))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", target, err)
	}
	return fams, nil
}
