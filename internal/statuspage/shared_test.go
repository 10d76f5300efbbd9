package statuspage

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"golang.org/x/net/html"

	"github.com/zpool-exporter/zpool_exporter/internal/history"
	"github.com/zpool-exporter/zpool_exporter/internal/replaytest"
)

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A page request that comes while /metrics gathers joins that gather: the
// collectors run once, and the page shows the pools of the `zpool status`
// they read and no failed collector.
func TestPageJoinsTheSharedGather(t *testing.T) {
	e := replaytest.Exporter(t, "../../collector/testdata/replay/zfs-fuse/001", "status", "properties")
	gather := Gather(e)
	release := make(chan struct{})
	shared := history.NewSharedWith(func(ctx context.Context) ([]*dto.MetricFamily, any, error) {
		<-release
		return gather(ctx)
	}, nil)

	scraped := make(chan []*dto.MetricFamily, 1)
	go func() {
		families, _, _ := shared.Gather(t.Context())
		scraped <- families
	}()
	waitFor(t, "the scrape's gather", func() bool { g, _ := shared.Counts(); return g == 1 })
	page := New(FromShared(shared), Options{MetricsPath: "/metrics", Timeout: 10 * time.Second})
	type answer struct {
		code int
		body string
	}
	answered := make(chan answer, 1)
	go func() {
		code, body := get(t, page, "/?fragment=pools")
		answered <- answer{code, body}
	}()
	waitFor(t, "the page to join the gather", func() bool { _, j := shared.Counts(); return j == 1 })
	close(release)
	a := <-answered
	<-scraped

	if gathers, joins := shared.Counts(); gathers != 1 || joins != 1 {
		t.Errorf("%d gathers and %d joins for a scrape and a page request, want 1 and 1", gathers, joins)
	}
	if a.code != http.StatusOK {
		t.Fatalf("GET /?fragment=pools = %d", a.code)
	}
	doc := parse(t, a.body)
	if rows := pageRows(t, doc); len(rows) == 0 {
		t.Errorf("the page shows no pool tree:\n%s", a.body)
	}
	if findAll(doc, func(n *html.Node) bool { return attr(n, "data-state") == "offline" }) == nil {
		t.Error("the page lacks the offline disk of the replay's `zpool status`")
	}
	if strings.Contains(a.body, "Collectors that failed") || strings.Contains(a.body, "zpool status failed") {
		t.Errorf("the page reports failures:\n%s", a.body)
	}
}

// When the page cannot have the gather's `zpool status`, it says why rather
// than showing no pools.
func TestSharedReadingWithoutStatus(t *testing.T) {
	for _, c := range []struct {
		name, want string
		shared     *history.Shared
	}{
		{"the reading's deadline passes", "context deadline exceeded", history.NewSharedWith(func(ctx context.Context) ([]*dto.MetricFamily, any, error) {
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond) // the gather ends after its reader gave up
			return nil, nil, ctx.Err()
		}, nil)},
		{"a gather returning no scrape", "not the scrape", history.NewShared(func(context.Context) ([]*dto.MetricFamily, error) {
			return nil, nil
		}, nil)},
	} {
		t.Run(c.name, func(t *testing.T) {
			page := New(FromShared(c.shared), Options{MetricsPath: "/metrics", Timeout: 50 * time.Millisecond})
			code, body := get(t, page, "/?fragment=pools")
			if code != http.StatusOK {
				t.Fatalf("GET /?fragment=pools = %d", code)
			}
			errs := findAll(parse(t, body), func(n *html.Node) bool { return hasClass(n, "error") })
			if len(errs) != 1 || !strings.Contains(text(errs[0]), c.want) {
				t.Errorf("want one error paragraph saying %q:\n%s", c.want, body)
			}
			if strings.Contains(body, "No pools imported") {
				t.Error("a reading without status reads as no pools")
			}
		})
	}
}
