package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/collector"
	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/replaytest"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A page reading that comes while /metrics gathers joins that gather: the
// collectors run once, and the page gets the `zpool status` they read and
// no failed collector.
func TestPageReadingJoinsTheSharedGather(t *testing.T) {
	e := replaytest.Exporter(t, "../../collector/testdata/replay/zfs-fuse/001", "status", "properties")
	release := make(chan struct{})
	shared := collector.NewShared(func(ctx context.Context) collector.Reading {
		<-release
		return e.Gather(ctx)
	})
	scraped := make(chan error, 1)
	go func() {
		_, err := shared.Gather(t.Context())
		scraped <- err
	}()
	waitFor(t, "the scrape's gather", func() bool { g, _ := shared.Counts(); return g == 1 })
	read := make(chan time.Time, 1)
	var got struct {
		status    *zpool.Status
		statusErr error
		failed    []string
	}
	go func() {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		r := pageReading(shared, &notInstalled{}, nil)(ctx)
		got.status, got.statusErr = r.Status, r.StatusErr
		for _, mf := range r.Families {
			if mf.GetName() != "zfs_exporter_collector_success" {
				continue
			}
			for _, m := range mf.GetMetric() {
				if m.GetGauge().GetValue() != 1 {
					got.failed = append(got.failed, m.GetLabel()[0].GetValue())
				}
			}
		}
		read <- r.Time
	}()
	waitFor(t, "the page to join the gather", func() bool { _, j := shared.Counts(); return j == 1 })
	close(release)
	<-read
	if err := <-scraped; err != nil {
		t.Fatal(err)
	}

	if gathers, joins := shared.Counts(); gathers != 1 || joins != 1 {
		t.Errorf("%d gathers and %d joins for a scrape and a page reading, want 1 and 1", gathers, joins)
	}
	if got.statusErr != nil || got.status == nil {
		t.Fatalf("the page's status: %v, %v", got.status, got.statusErr)
	}
	offline := false
	for _, p := range got.status.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) { offline = offline || v.State == "offline" })
		}
	}
	if !offline {
		t.Error("the page's status lacks the offline disk of the replay's `zpool status`")
	}
	if len(got.failed) > 0 {
		t.Errorf("collectors failed: %v", got.failed)
	}
}

// When the page's deadline comes before the gather's end, its reading says
// why it has no `zpool status`, rather than show no pools.
func TestPageReadingPastItsDeadline(t *testing.T) {
	shared := collector.NewShared(func(ctx context.Context) collector.Reading {
		<-ctx.Done()
		time.Sleep(budget.ReaderGrace + 100*time.Millisecond) // the gather ends after its reader gave up
		return collector.Reading{Time: time.Now()}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	r := pageReading(shared, &notInstalled{}, nil)(ctx)
	if r.Status != nil || r.StatusErr == nil || !strings.Contains(r.StatusErr.Error(), "context deadline exceeded") {
		t.Errorf("reading past its deadline: status %v, error %v; want no status and the deadline named", r.Status, r.StatusErr)
	}
	if r.Time.IsZero() {
		t.Error("a reading without a gather has no time")
	}
}
