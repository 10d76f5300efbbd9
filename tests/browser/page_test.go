// Package browser loads the exporter's status page in headless Chromium:
// from a replay of a degraded pool and from a real zfs-fuse pool under
// writes, checking what a person sees (state colours, live figures) and
// saving screenshots.
package browser

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// exporterBin is the binary under test, built once by TestMain.
var exporterBin string

func TestMain(m *testing.M) { e2e.MainWithExporter(m, "../..", &exporterBin) }

// stateColours are the badge colours a person must see, as the browser
// computes them.
var stateColours = map[string]string{
	"ONLINE":   "rgb(26, 127, 55)",
	"DEGRADED": "rgb(191, 135, 0)",
	"OFFLINE":  "rgb(110, 119, 129)",
	"FAULTED":  "rgb(207, 34, 46)",
	"AVAIL":    "rgb(9, 105, 218)",
	"INUSE":    "rgb(130, 80, 223)",
}

// browser starts headless Chromium for one test.
func browser(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("headless Chromium test; skipped with -short")
	}
	path, err := exec.LookPath("chromium")
	if err != nil {
		e2e.SkipOrFail(t, "Chromium is not installed (Debian package chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // root in CI
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// badge is a state badge as rendered: its text, colour and where it is.
type badge struct {
	Pool, Vdev, Text, Background string
}

// badges reads every state badge of the page, with the colour the browser
// computed for it.
const badgesJS = `Array.from(document.querySelectorAll(".state")).map(function (el) {
  var section = el.closest("section.pool"), row = el.closest("tr");
  return {
    Pool: section ? section.getAttribute("data-pool") : "",
    Vdev: row ? row.getAttribute("data-vdev") : "",
    Text: el.textContent.trim(),
    Background: getComputedStyle(el).backgroundColor
  };
})`

func readBadges(t *testing.T, ctx context.Context) []badge {
	t.Helper()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[[]badge](badgesJS))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkColours fails for any badge not in its state's colour.
func checkColours(t *testing.T, badges []badge) {
	t.Helper()
	for _, b := range badges {
		if want, ok := stateColours[b.Text]; ok && b.Background != want {
			t.Errorf("%s %s: %s shown in %s, want %s", b.Pool, b.Vdev, b.Text, b.Background, want)
		}
	}
}

// find returns the badge of a pool's header (vdev "") or of a vdev row.
func find(badges []badge, pool, vdev string) (badge, bool) {
	for _, b := range badges {
		if b.Pool == pool && b.Vdev == vdev {
			return b, true
		}
	}
	return badge{}, false
}

// screenshot saves the page as PNG into $ZPE_PICTURES (make pictures sets
// it to docs/), or into the test's temporary directory.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("ZPE_PICTURES")
	if dir == "" {
		dir = t.TempDir()
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Errorf("screenshot %s is not a PNG (%d bytes)", path, len(png))
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// waitFor polls the page until cond holds on its badges.
func waitFor(t *testing.T, ctx context.Context, what string, timeout time.Duration, cond func([]badge) bool) []badge {
	t.Helper()
	var last []badge
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if last = readBadges(t, ctx); cond(last) {
			return last
		}
	}
	t.Fatalf("%s: not seen within %s; badges %v", what, timeout, last)
	return nil
}

// The degraded step of the replay recorded from zfs-fuse: the pool
// DEGRADED, its raidz DEGRADED, one disk OFFLINE, the spare AVAIL.
func TestDegradedReplay(t *testing.T) {
	ctx := browser(t)
	e := e2e.Start(t, exporterBin, nil, "--zpool.replay-dir=../../collector/testdata/replay/zfs-fuse/001")
	if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`section[data-pool="backup"]`))); err != nil {
		t.Fatal(err)
	}
	badges := readBadges(t, ctx)
	checkColours(t, badges)
	for _, want := range []badge{
		{Pool: "backup", Vdev: "", Text: "DEGRADED"},
		{Pool: "backup", Vdev: "raidz1-0", Text: "DEGRADED"},
		{Pool: "backup", Vdev: "/var/tmp/zfs-fuse-replay/b2", Text: "OFFLINE"},
		{Pool: "tank", Vdev: "", Text: "ONLINE"},
	} {
		if got, ok := find(badges, want.Pool, want.Vdev); !ok || got.Text != want.Text {
			t.Errorf("%s %s: badge %+v, want %s", want.Pool, want.Vdev, got, want.Text)
		}
	}
	// The script takes over: its refresh works, and says so.
	if err := chromedp.Do(ctx, chromedp.Sleep(2500*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	live, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#live")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(live, "Live: refreshed every 1 s") {
		t.Errorf("live indicator %q after two refreshes", live)
	}
	checkColours(t, readBadges(t, ctx))
	screenshot(t, ctx, "status-page-degraded.png")
}

// A real zfs-fuse mirror: while dd writes, the pool's write bandwidth
// changes on the open page without a reload; a leaf taken offline turns
// the pool DEGRADED and the leaf OFFLINE, in colour.
func TestLiveZFSFusePool(t *testing.T) {
	ctx := browser(t)
	z := e2e.RequireZFSFuse(t)
	a, b := z.Disk("a", 256), z.Disk("b", 256)
	pool, mnt := z.Create("page", "mirror", a, b)
	e := e2e.Start(t, exporterBin, nil, "--zpool.iostat-interval=1s")
	if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+"/"), chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`section[data-pool=%q]`, pool)))); err != nil {
		t.Fatal(err)
	}

	writing, stop := context.WithCancel(context.Background())
	var writeErr error // read after done is closed
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; writing.Err() == nil; i++ {
			out, err := exec.CommandContext(writing, "dd", "if=/dev/urandom", "of="+filepath.Join(mnt, fmt.Sprint("f", i%4)), "bs=1M", "count=16", "conv=fsync", "status=none").CombinedOutput()
			if err != nil && writing.Err() == nil {
				writeErr = fmt.Errorf("dd: %v: %s", err, out)
				return
			}
		}
	}()
	stopWriting := func() {
		stop()
		<-done
		if writeErr != nil {
			t.Errorf("writing to the pool failed: %v", writeErr)
		}
	}
	defer stopWriting()

	cell := fmt.Sprintf(`document.querySelector('section[data-pool=%q] tr[data-vdev=%q] .bw-write').textContent`, pool, pool)
	var figures []string
	distinct := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && len(distinct) < 3; time.Sleep(500 * time.Millisecond) {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](cell))
		if err != nil {
			t.Fatal(err)
		}
		figures = append(figures, got)
		if strings.HasSuffix(got, "/s") {
			distinct[got] = true
		}
	}
	if len(distinct) < 3 {
		t.Errorf("the pool's write bandwidth did not keep changing while dd wrote: %q", figures)
	}
	t.Logf("write bandwidth seen on the page: %q", figures)

	e2e.Zpool(t, "offline", pool, b)
	badges := waitFor(t, ctx, "pool DEGRADED and leaf OFFLINE on the open page", 15*time.Second, func(bs []badge) bool {
		p, _ := find(bs, pool, "")
		l, _ := find(bs, pool, b)
		return p.Text == "DEGRADED" && l.Text == "OFFLINE"
	})
	checkColours(t, badges)
	screenshot(t, ctx, "status-page-zfs-fuse.png")
}

// The demo (--demo), recorded from a real zfs-fuse pool: stepping through
// it, the page shows the pool degraded and then its resilver running, with
// a progress bar, its rate and the time left.
func TestDemoReplay(t *testing.T) {
	ctx := browser(t)
	e := e2e.Start(t, exporterBin, nil, "--demo", "--zpool.replay-step=5s")
	if err := chromedp.Do(ctx, chromedp.Navigate(e.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`section.pool`))); err != nil {
		t.Fatal(err)
	}
	const scanJS = `Array.from(document.querySelectorAll(".scan[data-state=scanning]")).map(function (el) {
  return el.getAttribute("data-function") + "|" + (el.querySelector(".fill") ? el.querySelector(".fill").style.width : "") + "|" + el.querySelector(".figures").textContent;
})`
	// The pool row's bandwidth: the screenshot waits for figures in it.
	const poolRateJS = `Array.from(document.querySelectorAll("section.pool tr.vdev:first-child .bw-read, section.pool tr.vdev:first-child .bw-write")).some(function (el) { return /\/s$/.test(el.textContent); })`
	var degraded, resilvering bool
	for deadline := time.Now().Add(120 * time.Second); time.Now().Before(deadline) && !(degraded && resilvering); time.Sleep(300 * time.Millisecond) {
		badges := readBadges(t, ctx)
		checkColours(t, badges)
		for _, b := range badges {
			if b.Vdev == "" && b.Text == "DEGRADED" {
				degraded = true
			}
		}
		scans, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](scanJS))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range scans {
			parts := strings.SplitN(s, "|", 3)
			if parts[0] != "resilver" || parts[1] == "" || !strings.Contains(parts[2], "time left") {
				continue
			}
			moving, err := chromedp.Run(ctx, chromedp.Evaluate[bool](poolRateJS))
			if err != nil {
				t.Fatal(err)
			}
			if !resilvering && moving {
				resilvering = true
				t.Logf("resilver on the page: bar %s, %s", parts[1], parts[2])
				screenshot(t, ctx, "status-page.png")
			}
		}
	}
	if !degraded || !resilvering {
		t.Errorf("stepping through the demo: pool degraded seen %v, resilver running with the pool's bandwidth seen %v", degraded, resilvering)
	}
}
