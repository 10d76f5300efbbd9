package history

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/replaytest"
)

// The real collectors over a replay: /metrics scrapes and the history,
// reading at once through one Shared, all get every collector's metrics.
func TestSharedWithRealCollectors(t *testing.T) {
	e := replaytest.Exporter(t, "../../collector/testdata/replay/zfs-fuse", "status", "properties")
	shared := collector.NewShared(e.Gather)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		promhttp.HandlerFor(shared.Gatherer(r.Context()), promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer server.Close()
	w := &windows{active: true}
	rec := NewRecorder(Options{Gather: shared.Metrics, Metrics: []string{"zfs_pool_state", "zfs_exporter_collector_success"}, Activity: w.Activity})

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		failures []string
		scrapes  int
	)
	check := func(who string, families []*dto.MetricFamily) {
		mu.Lock()
		defer mu.Unlock()
		ok, states := 0, 0
		for _, mf := range families {
			switch mf.GetName() {
			case "zfs_exporter_collector_success":
				for _, m := range mf.GetMetric() {
					if m.GetGauge().GetValue() == 1 {
						ok++
					} else {
						failures = append(failures, who+": collector "+m.GetLabel()[0].GetValue()+" failed")
					}
				}
			case "zfs_pool_state":
				states += len(mf.GetMetric())
			}
		}
		if ok != 2 || states == 0 {
			failures = append(failures, who+": incomplete metrics")
		}
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				resp, err := http.Get(server.URL)
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				parser := expfmt.NewTextParser(model.UTF8Validation)
				families, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
				if err != nil {
					t.Error(err)
					return
				}
				var list []*dto.MetricFamily
				for _, mf := range families {
					list = append(list, mf)
				}
				check("/metrics", list)
				mu.Lock()
				scrapes++
				mu.Unlock()
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				r, err := shared.Gather(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				check("history", r.Families())
				rec.SampleOnce(t.Context())
			}
		})
	}
	wg.Wait()
	gathers, joins := shared.Counts()
	t.Logf("%d scrapes; %d gathers, %d joins", scrapes, gathers, joins)
	if len(failures) > 0 {
		t.Errorf("%d incomplete reads, e.g. %v", len(failures), failures[:min(5, len(failures))])
	}
	if joins == 0 {
		t.Error("no reader joined another's gather: the test did not make them overlap")
	}
	for _, s := range rec.Query("zfs_exporter_collector_success", time.Unix(0, 0), time.Now().Add(time.Hour)) {
		for _, p := range s.Samples {
			if p.Value != 1 {
				t.Errorf("the history holds a failed collector %v at %v", s.Labels, p.Time)
			}
		}
	}
	if st := rec.Stats(); st.Readings < 2 {
		t.Errorf("history kept %d readings", st.Readings)
	}
}
