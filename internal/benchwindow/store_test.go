package benchwindow

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a fake clock that tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func mustStart(t *testing.T, s *Store, name, pool, command string) Window {
	t.Helper()
	w, err := s.Start(name, pool, command)
	if err != nil {
		t.Fatalf("Start(%q): %v", name, err)
	}
	return w
}

func names(ws []Window) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Name)
	}
	return out
}

func TestStartEndList(t *testing.T) {
	c := newClock()
	s := NewStore(Options{Now: c.Now})
	t0 := c.Now()
	a := mustStart(t, s, "  raid10 ashift=12 lz4 ", " tank ", "fio --name=seq --rw=write")
	if a.Name != "raid10 ashift=12 lz4" || a.Pool != "tank" || a.Command != "fio --name=seq --rw=write" {
		t.Errorf("started %+v: name and pool not trimmed, or fields lost", a)
	}
	if !a.Active || !a.End.IsZero() || !a.Start.Equal(t0) || a.DurationSeconds != 0 {
		t.Errorf("new window %+v: want active, no end, start %v, duration 0", a, t0)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(a.ID) {
		t.Errorf("id %q is not 8 hex digits", a.ID)
	}
	c.Advance(90 * time.Second)
	b := mustStart(t, s, "raidz1 ashift=9", "", "")
	c.Advance(30 * time.Second)

	list := s.List()
	if got := names(list); !slices.Equal(got, []string{"raidz1 ashift=9", "raid10 ashift=12 lz4"}) {
		t.Fatalf("List = %v, want newest first", got)
	}
	if list[1].DurationSeconds != 120 || list[0].DurationSeconds != 30 {
		t.Errorf("running durations %v and %v, want 120 and 30 (time so far)", list[1].DurationSeconds, list[0].DurationSeconds)
	}

	ended, err := s.End(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Active || !ended.End.Equal(t0.Add(120*time.Second)) || ended.DurationSeconds != 120 {
		t.Errorf("ended %+v: want inactive, end at start+120s, duration 120", ended)
	}
	c.Advance(time.Hour)
	got, err := s.Get(a.ID)
	if err != nil || got.DurationSeconds != 120 || !got.End.Equal(ended.End) {
		t.Errorf("an hour after its end: %+v, %v; its duration must stay 120", got, err)
	}
	if got, _ := s.Get(b.ID); !got.Active || got.DurationSeconds != 3630 {
		t.Errorf("the other window %+v: want still running for 3630 s", got)
	}
	if s.Started() != 2 {
		t.Errorf("Started = %d, want 2", s.Started())
	}
}

func TestErrors(t *testing.T) {
	s := NewStore(Options{})
	for _, c := range []struct {
		name, pool, command string
		want                string
	}{
		{"", "tank", "", "name is required"},
		{" \t ", "tank", "", "name is required"},
		{strings.Repeat("x", MaxNameLength+1), "", "", "name is 201 bytes long, at most 200"},
		{"two\nlines", "", "", "name holds a control character"},
		{"ok", strings.Repeat("p", MaxPoolLength+1), "", "pool is 257 bytes long"},
		{"ok", "", strings.Repeat("c", MaxCommandLength+1), "command is 4097 bytes long"},
		{"bad \xff utf-8", "", "", "not valid UTF-8"},
	} {
		_, err := s.Start(c.name, c.pool, c.command)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Start(%.20q, %.20q, %.20q) = %v, want ErrInvalid saying %q", c.name, c.pool, c.command, err, c.want)
		}
	}
	if n := len(s.List()); n != 0 || s.Started() != 0 {
		t.Errorf("refused starts left %d windows, %d started", n, s.Started())
	}
	// The longest allowed name, and a tab in a command line, are fine.
	w := mustStart(t, s, strings.Repeat("x", MaxNameLength), "", "dd\tif=/dev/zero")
	if _, err := s.End("nonexistent"); !errors.Is(err, ErrNotFound) {
		t.Errorf("End(unknown) = %v, want ErrNotFound", err)
	}
	if _, err := s.End(w.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.End(w.ID); !errors.Is(err, ErrEnded) || !strings.Contains(err.Error(), w.ID) {
		t.Errorf("End twice = %v, want ErrEnded naming the window", err)
	}
}

func TestRetention(t *testing.T) {
	c := newClock()
	s := NewStore(Options{Now: c.Now, Retention: time.Hour})
	old := mustStart(t, s, "old", "", "")
	running := mustStart(t, s, "still running", "", "")
	if _, err := s.End(old.ID); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Hour)
	if got := names(s.List()); !slices.Equal(got, []string{"still running", "old"}) {
		t.Errorf("exactly the retention after its end: %v, want both kept", got)
	}
	c.Advance(time.Millisecond)
	if got := names(s.List()); !slices.Equal(got, []string{"still running"}) {
		t.Errorf("past the retention: %v, want the ended window dropped and the running one kept", got)
	}
	if _, err := s.End(old.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("ending a dropped window: %v, want ErrNotFound", err)
	}
	// A running window is kept however long it runs.
	c.Advance(30 * 24 * time.Hour)
	if w, err := s.End(running.ID); err != nil || w.DurationSeconds != (30*24*time.Hour+time.Hour+time.Millisecond).Seconds() {
		t.Errorf("ending a month-long window: %+v, %v", w, err)
	}
	if s.Retention() != time.Hour || NewStore(Options{}).Retention() != DefaultRetention {
		t.Errorf("Retention = %v, default %v", s.Retention(), NewStore(Options{}).Retention())
	}
}

func TestBound(t *testing.T) {
	c := newClock()
	s := NewStore(Options{Now: c.Now, MaxWindows: 3})
	var ws []Window
	for i := range 3 {
		ws = append(ws, mustStart(t, s, fmt.Sprint("w", i), "", ""))
		c.Advance(time.Second)
	}
	// w1 ended, w0 still running: the ended one goes first.
	if _, err := s.End(ws[1].ID); err != nil {
		t.Fatal(err)
	}
	mustStart(t, s, "w3", "", "")
	if got := names(s.List()); !slices.Equal(got, []string{"w3", "w2", "w0"}) {
		t.Errorf("after a 4th start with w1 ended: %v, want w1 dropped", got)
	}
	// None ended: the oldest running one goes.
	mustStart(t, s, "w4", "", "")
	if got := names(s.List()); !slices.Equal(got, []string{"w4", "w3", "w2"}) {
		t.Errorf("after a 5th start with none ended: %v, want w0 dropped", got)
	}
	if s.Started() != 5 {
		t.Errorf("Started = %d, want 5: dropped windows still count", s.Started())
	}
	if d := NewStore(Options{}); d.opts.MaxWindows != DefaultMaxWindows {
		t.Errorf("default bound %d", d.opts.MaxWindows)
	}
}

func TestBoundHoldsUnderLoad(t *testing.T) {
	s := NewStore(Options{MaxWindows: 50})
	var wg sync.WaitGroup
	ids := make(chan string, 800)
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				w, err := s.Start(fmt.Sprintf("g%d-%d", g, i), "tank", "")
				if err != nil {
					t.Error(err)
					return
				}
				ids <- w.ID
				if i%2 == 0 {
					// Dropped windows give ErrNotFound; both are fine here.
					if _, err := s.End(w.ID); err != nil && !errors.Is(err, ErrNotFound) {
						t.Error(err)
					}
				}
				_ = s.List()
			}
		})
	}
	wg.Wait()
	close(ids)
	if n := len(s.List()); n != 50 {
		t.Errorf("%d windows held, want the bound of 50", n)
	}
	if s.Started() != 800 {
		t.Errorf("Started = %d, want 800", s.Started())
	}
	seen := map[string]bool{}
	for _, w := range s.List() {
		if seen[w.ID] {
			t.Errorf("id %s held twice", w.ID)
		}
		seen[w.ID] = true
	}
}

func TestJSONForm(t *testing.T) {
	c := newClock()
	s := NewStore(Options{Now: c.Now})
	w := mustStart(t, s, "mirror lz4", "tank", "bonnie++ -d /tank/b")
	c.Advance(1500*time.Millisecond + 123456) // times are kept to the millisecond
	running, _ := s.Get(w.ID)
	data, err := json.Marshal(running)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"` + w.ID + `","name":"mirror lz4","pool":"tank","command":"bonnie++ -d /tank/b","start":"2025-03-14T09:26:53.000Z","end":null,"active":true,"duration_seconds":1.5}`
	if string(data) != want {
		t.Errorf("running window as JSON:\n got %s\nwant %s", data, want)
	}
	c.Advance(time.Second)
	ended, _ := s.End(w.ID)
	data, _ = json.Marshal(ended)
	if !strings.Contains(string(data), `"end":"2025-03-14T09:26:55.500Z","active":false,"duration_seconds":2.5}`) {
		t.Errorf("ended window as JSON: %s", data)
	}
	var back Window
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != ended.ID || back.Name != ended.Name || back.Pool != ended.Pool || back.Command != ended.Command ||
		!back.Start.Equal(ended.Start) || !back.End.Equal(ended.End) || back.Active || back.DurationSeconds != 2.5 {
		t.Errorf("round trip: %+v, want %+v", back, ended)
	}
	if err := json.Unmarshal([]byte(`{"id":"x","start":"yesterday"}`), &back); err == nil {
		t.Error("a start that is not RFC 3339 was accepted")
	}
}

// A window whose runner never ends it is ended at MaxDuration, and says
// so; the others run on.
func TestRunningWindowExpires(t *testing.T) {
	c := newClock()
	s := NewStore(Options{Now: c.Now, MaxDuration: time.Hour})
	abandoned := mustStart(t, s, "killed runner", "tank", "")
	c.Advance(30 * time.Minute)
	later := mustStart(t, s, "still running", "tank", "")
	c.Advance(31 * time.Minute)

	got, err := s.Get(abandoned.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Active || !got.Expired || !got.End.Equal(abandoned.Start.Add(time.Hour)) || got.DurationSeconds != 3600 {
		t.Errorf("abandoned window %+v, want ended and expired one hour after its start", got)
	}
	if w, _ := s.Get(later.ID); !w.Active || w.Expired {
		t.Errorf("a window 31 minutes old: %+v", w)
	}
	if _, err := s.End(abandoned.ID); !errors.Is(err, ErrEnded) || !strings.Contains(err.Error(), "longest window of 1h0m0s") {
		t.Errorf("ending the expired window: %v", err)
	}
	data, _ := json.Marshal(got)
	if !strings.Contains(string(data), `"expired":true`) {
		t.Errorf("the API does not say the window expired: %s", data)
	}
	c.Advance(time.Hour)
	if w, _ := s.Get(later.ID); w.Active || !w.Expired {
		t.Errorf("a window two hours old still runs: %+v", w)
	}
}
