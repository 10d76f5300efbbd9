package history

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/replaytest"
)

// busyExporter behaves like collector.Exporter: a gather that starts while
// another runs finds its collector busy and reports it failed.
type busyExporter struct {
	running atomic.Bool
	gathers atomic.Int32
	hold    time.Duration
}

func (b *busyExporter) gather(ctx context.Context) ([]*dto.MetricFamily, error) {
	b.gathers.Add(1)
	if !b.running.CompareAndSwap(false, true) {
		return []*dto.MetricFamily{family("zfs_exporter_collector_success", dto.MetricType_GAUGE, m{[]string{"collector", "status"}, 0})}, nil
	}
	defer b.running.Store(false)
	select {
	case <-time.After(b.hold):
	case <-ctx.Done():
	}
	return []*dto.MetricFamily{
		family("zfs_exporter_collector_success", dto.MetricType_GAUGE, m{[]string{"collector", "status"}, 1}),
		family("zfs_pool_state", dto.MetricType_GAUGE, m{[]string{"pool", "tank", "state", "online"}, 1}),
	}, nil
}

func complete(families []*dto.MetricFamily) bool {
	for _, mf := range families {
		if mf.GetName() == "zfs_pool_state" {
			return true
		}
	}
	return false
}

// Readers that overlap share one gather and all get complete metrics,
// where gathering each on its own makes all but one miss the collector.
func TestSharedJoinsTheRunningGather(t *testing.T) {
	const readers = 8
	run := func(gather func(ctx context.Context) ([]*dto.MetricFamily, time.Time, error)) (completeReads int, times map[time.Time]bool) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		times = map[time.Time]bool{}
		start := make(chan struct{})
		for range readers {
			wg.Go(func() {
				<-start
				families, at, err := gather(t.Context())
				mu.Lock()
				defer mu.Unlock()
				if err == nil && complete(families) {
					completeReads++
				}
				times[at] = true
			})
		}
		close(start)
		wg.Wait()
		return completeReads, times
	}

	alone := &busyExporter{hold: 50 * time.Millisecond}
	n, _ := run(func(ctx context.Context) ([]*dto.MetricFamily, time.Time, error) {
		f, err := alone.gather(ctx)
		return f, time.Now(), err
	})
	if n != 1 {
		t.Fatalf("control: %d of %d overlapping gathers without sharing were complete, want 1", n, readers)
	}

	shared := &busyExporter{hold: 50 * time.Millisecond}
	s := NewShared(shared.gather, nil)
	n, times := run(s.Gather)
	if n != readers {
		t.Errorf("%d of %d overlapping readers got complete metrics through Shared, want all", n, readers)
	}
	gathers, joins := s.Counts()
	if gathers != uint64(shared.gathers.Load()) || gathers+joins != readers || gathers > 2 || len(times) != int(gathers) {
		t.Errorf("%d gathers, %d joins, %d distinct times for %d readers; want one gather (two at most) shared by all, one time each", gathers, joins, len(times), readers)
	}

	// Once it ended, a result is not reused: the next reader gathers anew.
	s.Gather(t.Context())
	if g, _ := s.Counts(); g != gathers+1 {
		t.Errorf("a reader after the gather ended reused it: %d gathers, want %d", g, gathers+1)
	}
}

// A reader whose context ends stops waiting; the gather goes on for the
// others, under the deadline of the reader that started it but not its
// cancellation.
func TestSharedReaderGivesUp(t *testing.T) {
	release := make(chan struct{})
	var sawDeadline atomic.Bool
	s := NewShared(func(ctx context.Context) ([]*dto.MetricFamily, error) {
		_, ok := ctx.Deadline()
		sawDeadline.Store(ok)
		select {
		case <-release:
			return []*dto.MetricFamily{family("zfs_pool_state", dto.MetricType_GAUGE, m{nil, 1})}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}, nil)
	first, cancel := context.WithTimeout(t.Context(), time.Minute)
	got := make(chan error, 2)
	go func() { _, _, err := s.Gather(first); got <- err }()
	waitFor(t, "the first gather", func() bool { g, _ := s.Counts(); return g == 1 })
	go func() {
		f, _, err := s.Gather(t.Context())
		if err == nil && !complete(f) {
			err = errors.New("incomplete")
		}
		got <- err
	}()
	waitFor(t, "the second reader to join", func() bool { _, j := s.Counts(); return j == 1 })
	cancel()
	if err := <-got; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled reader got %v, want context.Canceled", err)
	}
	close(release)
	if err := <-got; err != nil {
		t.Errorf("the reader that joined got %v after the first gave up, want the metrics", err)
	}
	if !sawDeadline.Load() {
		t.Error("the gather ran without the first reader's deadline")
	}
}

// The real collectors over a replay: /metrics scrapes and the history,
// reading at once through one Shared, all get every collector's metrics.
func TestSharedWithRealCollectors(t *testing.T) {
	e := replaytest.Exporter(t, "../../collector/testdata/replay/zfs-fuse", "status", "properties")
	shared := NewShared(func(ctx context.Context) ([]*dto.MetricFamily, error) {
		reg := prometheus.NewRegistry()
		reg.MustRegister(e.Scraper(ctx))
		return reg.Gather()
	}, nil)
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		promhttp.HandlerFor(shared.Gatherer(r.Context()), promhttp.HandlerOpts{}).ServeHTTP(w, r)
	}))
	defer server.Close()
	w := &windows{active: true}
	rec := NewRecorder(Options{Gather: shared.Gather, Metrics: []string{"zfs_pool_state", "zfs_exporter_collector_success"}, Activity: w.Activity})

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
				families, _, err := shared.Gather(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				check("history", families)
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

// A gather whose collectors hang reports what the others read just after
// the deadline: the reader that started it waits for that, rather than
// answer with no collector at all.
func TestSharedReaderGetsTheResultJustPastItsDeadline(t *testing.T) {
	s := NewShared(func(ctx context.Context) ([]*dto.MetricFamily, error) {
		<-ctx.Done()
		time.Sleep(200 * time.Millisecond) // the collectors' own grace
		return []*dto.MetricFamily{family("zfs_pool_state", dto.MetricType_GAUGE, m{nil, 1})}, nil
	}, nil)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	f, _, err := s.Gather(ctx)
	if err != nil || !complete(f) {
		t.Fatalf("got %v, %v; want the partial result that came 200 ms after the deadline", f, err)
	}

	// Longer than the grace, the reader gives up.
	slow := NewShared(func(ctx context.Context) ([]*dto.MetricFamily, error) {
		<-ctx.Done()
		time.Sleep(budget.ReaderGrace + time.Second)
		return nil, nil
	}, nil)
	ctx2, cancel2 := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel2()
	if _, _, err := slow.Gather(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a gather past the grace: %v, want context.DeadlineExceeded", err)
	}
}
