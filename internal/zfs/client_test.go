package zfs

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/budget"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

var testNow = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// countingRunner passes commands to a runner and counts each command line.
type countingRunner struct {
	runner.Runner
	mu    sync.Mutex
	lines map[string]int
}

func (r *countingRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	r.mu.Lock()
	r.lines[cmd.Line()]++
	r.mu.Unlock()
	return r.Runner.Run(ctx, cmd)
}

func (r *countingRunner) runs(line string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lines[line]
}

func replayClient(t *testing.T, dir string, scenarios ...string) (*Client, *countingRunner) {
	t.Helper()
	replay, err := runner.NewReplayWithOptions(dir, runner.ReplayOptions{Scenarios: scenarios})
	if err != nil {
		t.Fatal(err)
	}
	run := &countingRunner{Runner: replay, lines: map[string]int{}}
	return New(Config{Runner: run, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler)), run
}

// zfs-fuse's zpool takes neither -j, -p nor get -H: status is read as
// text, and the properties as the table of the pools status shows, which
// a scrape takes from its own status rather than run zpool status again.
func TestScrapeSharesStatusWithTheTableOfProperties(t *testing.T) {
	client, run := replayClient(t, "../../collector/testdata/replay/zfs-fuse/000")
	ctx := context.Background()
	scrape := client.NewScrape()
	st, err := scrape.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	props, err := scrape.Properties(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pools) != 2 || len(props) == 0 {
		t.Fatalf("%d pools and %d properties, want backup and tank with their properties", len(st.Pools), len(props))
	}
	caps, ok := client.Detected()
	if !ok || caps.StatusFormat != StatusText || caps.GetArgs != nil {
		t.Errorf("capabilities %+v (detected %v), want text status and the table of get all", caps, ok)
	}
	if n := run.runs("zpool status"); n != 1 {
		t.Errorf("zpool status ran %d times in one scrape, want 1", n)
	}
	if n := run.runs("zpool get all backup tank"); n != 1 {
		t.Errorf("zpool get all backup tank ran %d times, want 1", n)
	}
	// Outside a scrape each read runs its command.
	if _, err := client.Properties(ctx); err != nil {
		t.Fatal(err)
	}
	if n := run.runs("zpool status"); n != 2 {
		t.Errorf("the client's Properties ran zpool status %d times in all, want 2", n)
	}
}

// OpenZFS 2.3: JSON status and exact, scripted properties; vdev properties
// are learned from the first pool asked.
func TestCapabilitiesOfOpenZFS23(t *testing.T) {
	client, _ := replayClient(t, "zpool/testdata/openzfs-2.3-guest", "18-trim-initialize")
	ctx := context.Background()
	caps, err := client.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps.StatusFormat != StatusJSON || strings.Join(caps.StatusArgs, " ") != "status -j --json-int -t -i" ||
		len(caps.GetArgs) != 3 || caps.GetArgs[1] != "-Hp" || caps.VdevPropertiesKnown {
		t.Errorf("capabilities %+v, want JSON status with TRIM and initialization, get -Hp, vdev properties not yet known", caps)
	}
	props, ok, err := client.VdevProperties(ctx, "mir", "read_ops", "write_ops")
	if err != nil || !ok || len(props) == 0 {
		t.Fatalf("vdev properties of mir: %d, %v, %v", len(props), ok, err)
	}
	if caps, _ := client.Detected(); !caps.VdevPropertiesKnown || !caps.VdevProperties {
		t.Errorf("capabilities %+v after a pool's vdev properties, want them known and available", caps)
	}
	if st := client.Freshness()[SourceVdevProperties]; !st.Up || !st.LastSuccess.Equal(testNow) {
		t.Errorf("freshness of %s: %+v", SourceVdevProperties, st)
	}
}

// The status form is the best this zpool answers: with each leaf's TRIM
// and initialization (-t -i) where it takes them, without where it does
// not (a replay captured before the exporter asked for them), and the
// text with them where JSON is missing (OpenZFS 2.1).
func TestStatusFormWithTrimAndInitialize(t *testing.T) {
	for _, c := range []struct{ dir, scenario, want string }{
		{"zpool/testdata/openzfs-2.3-guest", "18-trim-initialize", "status -j --json-int -t -i"},
		{"zpool/testdata/openzfs-2.3-guest", "01-created", "status -j --json-int"},
		{"zpool/testdata/openzfs-2.4-guest", "18-trim-initialize", "status -j --json-int -t -i"},
		{"zpool/testdata/openzfs-2.1-guest", "18-trim-initialize", "status -s -p -t -i"},
		{"zpool/testdata/openzfs-2.1-guest", "01-created", "status -s -p"},
	} {
		t.Run(c.dir+"/"+c.scenario, func(t *testing.T) {
			client, _ := replayClient(t, c.dir, c.scenario)
			caps, err := client.Capabilities(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(caps.StatusArgs, " "); got != c.want {
				t.Errorf("status read by %q, want %q", got, c.want)
			}
			if _, err := client.Status(context.Background()); err != nil {
				t.Errorf("status in that form: %v", err)
			}
		})
	}
}

// failingRunner fails every command, as a missing zpool does.
type failingRunner struct{}

func (failingRunner) Run(context.Context, runner.Command) ([]byte, error) {
	return nil, os.ErrNotExist
}

// A source is down from its first failed read, and stays without a time
// of success until it answers.
func TestFreshnessOfAFailedStatus(t *testing.T) {
	client := New(Config{Runner: failingRunner{}, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	if _, err := client.Status(context.Background()); err == nil {
		t.Fatal("zpool status read without zpool")
	}
	got := client.Freshness()
	if st, ok := got[SourceStatus]; !ok || st.Up || !st.LastSuccess.IsZero() {
		t.Errorf("freshness of %s: %+v (present %v), want down, never successful", SourceStatus, st, ok)
	}
	if len(got) != 1 {
		t.Errorf("freshness of %d sources, want zpool_status alone: %v", len(got), got)
	}
}

// A scrape given its status runs no zpool status, and hands out the status
// or the error it was given.
func TestScrapeWithStatus(t *testing.T) {
	client, run := replayClient(t, "../../collector/testdata/replay/zfs-fuse/000")
	given := &zpool.Status{Pools: []*zpool.Pool{{Name: "tank", State: "online"}}}
	if st, err := client.NewScrapeWithStatus(given, nil).Status(context.Background()); st != given || err != nil {
		t.Errorf("got %v, %v; want the status given", st, err)
	}
	failed := errors.New("zpool status hung")
	if _, err := client.NewScrapeWithStatus(nil, failed).Status(context.Background()); !errors.Is(err, failed) {
		t.Errorf("got error %v, want the one given", err)
	}
	if n := run.runs("zpool status"); n != 0 {
		t.Errorf("zpool status ran %d times", n)
	}
}

// overlapRunner notes whether two command lines ran at the same time: each
// waits a while for the other once armed.
type overlapRunner struct {
	runner.Runner
	lines [2]string

	mu      sync.Mutex
	armed   bool
	running map[string]bool
	overlap bool
	both    chan struct{}
}

func (r *overlapRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	line := cmd.Line()
	r.mu.Lock()
	watched := r.armed && (line == r.lines[0] || line == r.lines[1])
	if watched {
		r.running[line] = true
		if r.running[r.lines[0]] && r.running[r.lines[1]] && !r.overlap {
			r.overlap = true
			close(r.both)
		}
	}
	r.mu.Unlock()
	if watched {
		select {
		case <-r.both:
		case <-time.After(2 * time.Second):
		}
		defer func() { r.mu.Lock(); delete(r.running, line); r.mu.Unlock() }()
	}
	return r.Runner.Run(ctx, cmd)
}

// OpenZFS 2.3.2's JSON lacks the dRAID vdev's state, which the text status
// gives: once a scrape has found that, the next ones read both at once.
func TestTextStatusBesideJSONOnceNeeded(t *testing.T) {
	replay, err := runner.NewReplayWithOptions("zpool/testdata/openzfs-2.3-guest", runner.ReplayOptions{Scenarios: []string{"01-created"}})
	if err != nil {
		t.Fatal(err)
	}
	run := &overlapRunner{Runner: replay, lines: [2]string{"zpool status -j --json-int", "zpool status -p"}, running: map[string]bool{}, both: make(chan struct{})}
	client := New(Config{Runner: run, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	draidState := func() string {
		t.Helper()
		st, err := client.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		state := "none"
		for _, p := range st.Pools {
			p.Root.Walk(func(v *zpool.Vdev, _ string) {
				if strings.HasPrefix(v.Name, "draid") && strings.Contains(v.Name, ":") { // not its distributed spare
					state = v.State
				}
			})
		}
		return state
	}
	if s := draidState(); s != "online" {
		t.Fatalf("first scrape: dRAID vdev state %q, want online", s)
	}
	run.mu.Lock()
	run.armed = true
	run.mu.Unlock()
	if s := draidState(); s != "online" || !run.overlap {
		t.Errorf("second scrape: dRAID vdev state %q, JSON and text at once %v; want online, true", s, run.overlap)
	}
}

// slowToGoRunner passes commands to a runner until hang is set; then each
// command runs to its deadline and takes late more to return, as a killed
// zpool that is slow to go does.
type slowToGoRunner struct {
	runner.Runner
	hang atomic.Bool
	late time.Duration
}

func (r *slowToGoRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	if !r.hang.Load() {
		return r.Runner.Run(ctx, cmd)
	}
	<-ctx.Done()
	time.Sleep(r.late)
	return nil, &runner.Error{Command: cmd.Line(), ExitCode: -1, Err: runner.ErrTimeout}
}

// A scrape's readers of zpool status stop waiting for it at the time the
// scrape keeps for the kstat fallback, even when the killed zpool takes
// longer to return, and the freshness says at once that status is down.
func TestStatusGivenUpAtTheFallbackTime(t *testing.T) {
	replay, err := runner.NewReplayWithOptions("zpool/testdata/openzfs-2.3-guest", runner.ReplayOptions{Scenarios: []string{"01-created"}})
	if err != nil {
		t.Fatal(err)
	}
	run := &slowToGoRunner{Runner: replay, late: 2 * time.Second}
	client := New(Config{Runner: run, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	if _, err := client.NewScrape().Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	run.hang.Store(true)
	const timeout = 3 * time.Second // 200 ms of it for the fallback
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	scrape := client.NewScrape()
	began := time.Now()
	var wg sync.WaitGroup
	for range 3 { // the collectors that read the status
		wg.Go(func() {
			if _, err := scrape.Status(ctx); !errors.Is(err, runner.ErrTimeout) {
				t.Errorf("status over a hung zpool: %v, want a timeout", err)
			}
		})
	}
	wg.Wait()
	want := timeout - budget.FallbackReserve(timeout) + budget.ReapWait
	if took := time.Since(began); took < want-50*time.Millisecond || took >= timeout {
		t.Errorf("readers gave up after %s, want about %s, before the deadline", took.Round(time.Millisecond), want)
	}
	if st := client.Freshness()[SourceStatus]; st.Up {
		t.Errorf("freshness of %s: %+v once given up, want down", SourceStatus, st)
	}
}

// At shutdown (ctx canceled) readers wait for the read, which ends once
// its zpool is killed: the exporter must not exit before that.
func TestStatusReadersWaitForTheReadWhenCanceled(t *testing.T) {
	const late = 300 * time.Millisecond // the killed zpool takes this long to go
	run := &slowToGoRunner{Runner: failingRunner{}, late: late}
	run.hang.Store(true)
	client := New(Config{Runner: run, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	began := time.Now()
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := client.NewScrape().Status(ctx); err == nil {
		t.Fatal("status read over a zpool that hangs")
	}
	// Without waiting, the reader returns at the cancel, 100 ms in.
	if took := time.Since(began); took < late {
		t.Errorf("the reader returned %s after the start, before the killed zpool went (%s after the cancel)", took.Round(time.Millisecond), late)
	}
}

// refusingRunner is a zpool of OpenZFS 2.3 asked for a property of 2.4:
// a `zpool get` naming it fails as zpool does.
type refusingRunner struct {
	runner.Runner
	property string
}

func (r refusingRunner) Run(ctx context.Context, cmd runner.Command) ([]byte, error) {
	if len(cmd.Args) > 3 && cmd.Args[0] == "get" && slices.Contains(strings.Split(cmd.Args[3], ","), r.property) {
		return nil, &runner.Error{Command: cmd.Line(), ExitCode: 2, Err: errors.New("exit status 2"),
			Stderr: "bad property list: invalid property '" + r.property + "'\nusage:\n"}
	}
	return r.Runner.Run(ctx, cmd)
}

// A vdev property this zpool does not know (2.4's sit_out on 2.3) is left
// out, once and for good, and does not make the others unavailable.
func TestVdevPropertyRefused(t *testing.T) {
	_, run := replayClient(t, "zpool/testdata/openzfs-2.3-guest", "01-created")
	refusing := &countingRunner{Runner: refusingRunner{run, "sit_out"}, lines: map[string]int{}}
	client := New(Config{Runner: refusing, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	if _, err := client.Capabilities(ctx); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		props, ok, err := client.VdevProperties(ctx, "mir", "read_ops", "sit_out", "write_ops")
		if err != nil || !ok {
			t.Fatalf("vdev properties of mir: %v, %v", ok, err)
		}
		got := map[string]bool{}
		for _, p := range props {
			got[p.Property] = true
		}
		if !got["read_ops"] || !got["write_ops"] || got["sit_out"] {
			t.Errorf("properties read: %v, want read_ops and write_ops", got)
		}
	}
	if caps, _ := client.Detected(); !caps.VdevProperties {
		t.Errorf("a refused property made vdev properties unavailable: %+v", caps)
	}
	if n := refusing.runs("zpool get -Hp -- read_ops,sit_out,write_ops mir all-vdevs"); n != 1 {
		t.Errorf("asked for sit_out %d times, want once", n)
	}
}

// The only scrape (--once), which detects the capabilities, takes its
// status and its properties from what the probes printed rather than run
// the same commands again a moment later; a server's scrape that detects
// runs its own.
func TestOnlyScrapeReadsWhatTheProbesPrinted(t *testing.T) {
	for _, c := range []struct {
		name string
		new  func(*Client) *Scrape
		runs int // of each command in the scrape
	}{
		{"only scrape", (*Client).NewOnlyScrape, 1},
		{"scrape", (*Client).NewScrape, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, run := replayClient(t, "zpool/testdata/openzfs-2.3-guest", "18-trim-initialize")
			scrape := c.new(client)
			ctx := context.Background()
			st, err := scrape.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			props, err := scrape.Properties(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Pools) == 0 || len(props) == 0 {
				t.Fatalf("%d pools and %d properties", len(st.Pools), len(props))
			}
			for _, line := range []string{"zpool status -j --json-int -t -i", "zpool get -Hp all"} {
				if n := run.runs(line); n != c.runs {
					t.Errorf("%s ran %d times, want %d", line, n, c.runs)
				}
			}
		})
	}
}
