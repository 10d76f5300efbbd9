// Package statuspage serves the exporter's own web page: every pool as a
// tree shaped like `zpool status`, states in colour, per-vdev bandwidth and
// operations refreshed every second like `zpool iostat -v 1`, the progress
// of scrubs, resilvers, vdev removals and RAID-Z expansions, a pool's
// checkpoint, and each leaf's TRIM and initialization. The page is
// rendered on the server, so that the tree and the states read without
// JavaScript; a small script only fetches the pools section again every
// second.
package statuspage

import (
	"bytes"
	"context"
	_ "embed"
	"html/template"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/benchwindow"
)

// ReadFunc takes one reading of the host under ctx's deadline. The
// exporter's reads through the gather /metrics reads (collector.Shared):
// the page then joins a gather running for a scrape, rather than run the
// collectors beside it, where they would refuse to start and be reported
// as failed.
type ReadFunc func(ctx context.Context) Reading

// Options configure a Page.
type Options struct {
	Name        string        // shown in the title, e.g. the host name
	Version     string        // the exporter's version line
	MetricsPath string        // linked from the page
	Refresh     time.Duration // how often the script fetches the pools again
	Timeout     time.Duration // deadline of one reading
	// MinAge is how long a reading is reused: several tabs open on the
	// page share one zpool run per MinAge.
	MinAge time.Duration
	Logger *slog.Logger
	// Windows lists the benchmark windows, newest first, when the
	// benchmark window API is on; nil when it is off, and the page then
	// has no benchmark section.
	Windows func() []benchwindow.Window
	// MaxWindows is how many of them the page shows; 10 when not positive.
	MaxWindows int
}

// Page is the status page's handler.
type Page struct {
	read ReadFunc
	opts Options

	mu     sync.Mutex // held during a reading, so that requests share it
	rates  *rateTracker
	view   View
	viewAt time.Time
}

// New returns the page over read.
func New(read ReadFunc, opts Options) *Page {
	if opts.Refresh <= 0 {
		opts.Refresh = time.Second
	}
	if opts.MaxWindows <= 0 {
		opts.MaxWindows = 10
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Page{read: read, opts: opts, rates: newRateTracker()}
}

// current returns a view no older than MinAge, reading the host when needed.
func (p *Page) current(ctx context.Context) View {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.viewAt.IsZero() && time.Since(p.viewAt) < p.opts.MinAge {
		return p.view
	}
	if p.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.opts.Timeout)
		defer cancel()
	}
	r := p.read(ctx)
	p.view, p.viewAt = build(r, p.rates), time.Now()
	if r.StatusErr != nil {
		// The page shows it; the collectors log and count their own
		// failures, so a reader refreshing the page adds no warnings.
		p.opts.Logger.Debug("status page: zpool status failed", "err", r.StatusErr)
	}
	return p.view
}

//go:embed page.html.tmpl
var pageSource string

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"bytes":    formatBytes,
	"rate":     formatRate,
	"ops":      formatOps,
	"count":    formatCount,
	"percent":  formatPercent,
	"barWidth": barWidth,
	"duration": formatDuration,
	"clock":    formatClock,
	"state":    stateClass,
	"upper":    upperState,
	"indent":   indent,
	"millis":   func(d time.Duration) int64 { return d.Milliseconds() },
	"rfc3339":  func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(pageSource))

type pageData struct {
	Options
	View
	Benchmarks *BenchmarkView // nil when the API is off
}

// ServeHTTP serves the whole page at its path, and only the pools section
// with ?fragment=pools, which is what the script fetches.
func (p *Page) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	name := "page"
	if r.URL.Query().Get("fragment") == "pools" {
		name = "pools"
	}
	data := pageData{Options: p.opts, View: p.current(r.Context())}
	if p.opts.Windows != nil {
		data.Benchmarks = benchmarks(p.opts.Windows(), p.opts.MaxWindows)
	}
	var buf bytes.Buffer
	if err := pageTemplate.ExecuteTemplate(&buf, name, data); err != nil {
		p.opts.Logger.Error("status page: rendering failed", "err", err)
		http.Error(w, "rendering the status page failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}
