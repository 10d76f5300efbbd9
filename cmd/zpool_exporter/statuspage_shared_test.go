package main

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// The status page refreshing while Prometheus scrapes: the page and
// /metrics read the collectors through one gather, so that neither finds
// a collector busy with the other's scrape and reports it failed.
func TestStatusPageAndScrapesShareOneGather(t *testing.T) {
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir="+replayDir, "--zpool.iostat-interval=1s")
	get := func(path string) (string, error) {
		resp, err := http.Get(e.URL + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = &statusError{path, resp.Status}
		}
		return string(body), err
	}

	var (
		wg                    sync.WaitGroup
		mu                    sync.Mutex
		failures              []string
		scrapes, pages, pools int
	)
	fail := func(what string) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, what)
	}
	deadline := time.Now().Add(3 * time.Second)
	// Prometheus servers (two of them, as in an HA pair) scraping back to
	// back keep a gather running nearly all the time.
	for range 3 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				text, err := get("/metrics")
				if err != nil {
					t.Error(err)
					return
				}
				parser := expfmt.NewTextParser(model.UTF8Validation)
				m, err := parser.TextToMetricFamilies(strings.NewReader(text))
				if err != nil {
					t.Errorf("parsing /metrics: %v", err)
					return
				}
				ok := 0
				for _, s := range e2e.Metrics(m).Series("zfs_exporter_collector_success", nil) {
					if e2e.Value(s) != 1 {
						fail("/metrics: collector " + e2e.Label(s, "collector") + " failed")
					} else {
						ok++
					}
				}
				mu.Lock()
				scrapes++
				mu.Unlock()
				if ok == 0 {
					fail("/metrics: no collector succeeded")
				}
			}
		})
	}
	// Two tabs on the status page, refreshing faster than the page's own
	// reuse of a reading, so that each reading of the page overlaps scrapes.
	for range 2 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				body, err := get("/?fragment=pools")
				if err != nil {
					t.Error(err)
					return
				}
				if i := strings.Index(body, "Collectors that failed"); i >= 0 {
					fail("status page: " + body[i:min(len(body), i+200)])
				}
				if strings.Contains(body, "zpool status failed") {
					fail("status page: zpool status failed")
				}
				mu.Lock()
				pages++
				if strings.Contains(body, `data-pool="tank"`) {
					pools++
				}
				mu.Unlock()
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	t.Logf("%d scrapes, %d page fragments", scrapes, pages)
	if len(failures) > 0 {
		t.Errorf("%d reads saw failed collectors, e.g. %q", len(failures), failures[:min(5, len(failures))])
	}
	if scrapes < 10 || pages < 10 {
		t.Errorf("only %d scrapes and %d page fragments: the readers hardly overlapped", scrapes, pages)
	}
	if pools != pages {
		t.Errorf("%d of %d page fragments showed pool tank", pools, pages)
	}
}

type statusError struct{ path, status string }

func (e *statusError) Error() string { return "GET " + e.path + ": " + e.status }
