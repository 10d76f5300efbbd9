// Package benchwindow keeps benchmark windows: the time spans during which
// a benchmark (bonnie++, fio, dd...) ran against a pool, each with the name
// of the run, so that dashboards and reports can tell which part of the
// pool's metrics belongs to which run.
//
// A runner starts a window before the benchmark and ends it after, through
// the JSON API of Handler; Collector exports the windows as
// zfs_benchmark_window_* metrics. Windows live in memory only: ended ones
// are dropped after a retention, and the store holds a bounded number.
package benchwindow

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of what a window may carry, in bytes.
const (
	MaxNameLength    = 200
	MaxPoolLength    = 256
	MaxCommandLength = 4096
)

// Defaults of a Store's Options.
const (
	DefaultRetention  = 7 * 24 * time.Hour
	DefaultMaxWindows = 1000
)

// Errors of Start and End. Start's validation errors wrap ErrInvalid.
var (
	ErrInvalid  = errors.New("invalid window")
	ErrNotFound = errors.New("no such benchmark window")
	ErrEnded    = errors.New("benchmark window already ended")
)

// Window is one benchmark run's time span, as the store had it when it was
// read: Active and DurationSeconds are as of that moment.
type Window struct {
	ID      string    // unique among the windows the store holds; 8 hex digits
	Name    string    // what ran, e.g. "raid10 ashift=12 lz4"
	Pool    string    // the pool benchmarked; may be empty
	Command string    // the benchmark's command line; may be empty
	Start   time.Time // UTC, to the millisecond
	End     time.Time // UTC, to the millisecond; zero while the window is running
	Active  bool      // End is zero
	// Expired is true when the store ended the window itself, at
	// Options.MaxDuration, because its runner never did.
	Expired bool
	// DurationSeconds is End - Start, or the time run so far while active.
	DurationSeconds float64
}

// wire is a Window as the API writes it. The field names are part of the
// API: start and end are RFC 3339 in UTC, end is null while running.
type wire struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	Pool            string  `json:"pool"`
	Command         string  `json:"command"`
	Start           string  `json:"start"`
	End             *string `json:"end"`
	Active          bool    `json:"active"`
	Expired         bool    `json:"expired,omitempty"`
	DurationSeconds float64 `json:"duration_seconds"`
}

// timeFormat is RFC 3339 with milliseconds.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON writes the window in the API's form.
func (w Window) MarshalJSON() ([]byte, error) {
	out := wire{ID: w.ID, Name: w.Name, Pool: w.Pool, Command: w.Command,
		Start: w.Start.UTC().Format(timeFormat), Active: w.Active, Expired: w.Expired, DurationSeconds: w.DurationSeconds}
	if !w.End.IsZero() {
		end := w.End.UTC().Format(timeFormat)
		out.End = &end
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads the API's form, for clients of the API.
func (w *Window) UnmarshalJSON(data []byte) error {
	var in wire
	if err := json.Unmarshal(data, &in); err != nil {
		return err
	}
	start, err := time.Parse(time.RFC3339, in.Start)
	if err != nil {
		return fmt.Errorf("window start: %w", err)
	}
	var end time.Time
	if in.End != nil {
		if end, err = time.Parse(time.RFC3339, *in.End); err != nil {
			return fmt.Errorf("window end: %w", err)
		}
	}
	*w = Window{ID: in.ID, Name: in.Name, Pool: in.Pool, Command: in.Command, Start: start, End: end,
		Active: in.Active, Expired: in.Expired, DurationSeconds: in.DurationSeconds}
	return nil
}

// Options configure a Store.
type Options struct {
	// Retention is how long ended windows are kept; DefaultRetention
	// when not positive. Running windows are kept until they end.
	Retention time.Duration
	// MaxDuration ends a window that has run this long: its runner died
	// without ending it (killed, or its host rebooted). It ends at
	// Start+MaxDuration, marked Expired. Zero keeps running windows until
	// they end.
	MaxDuration time.Duration
	// MaxWindows bounds the windows held; DefaultMaxWindows when not
	// positive. When full, a new window drops the oldest ended one, or,
	// when none has ended, the oldest running one.
	MaxWindows int
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Store holds benchmark windows in memory. It is safe for concurrent use.
type Store struct {
	opts Options

	mu      sync.Mutex
	windows []*Window // in start order, oldest first
	started uint64    // windows started since the store was made
}

// NewStore returns an empty store.
func NewStore(opts Options) *Store {
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.MaxWindows <= 0 {
		opts.MaxWindows = DefaultMaxWindows
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Store{opts: opts}
}

// Retention is how long the store keeps ended windows.
func (s *Store) Retention() time.Duration { return s.opts.Retention }

// validate checks a field: valid UTF-8, no control characters (except tabs
// in a command line), at most max bytes.
func validate(field, value string, max int, allowTab bool) error {
	if len(value) > max {
		return fmt.Errorf("%w: %s is %d bytes long, at most %d allowed", ErrInvalid, field, len(value), max)
	}
	if !utf8.ValidString(value) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalid, field)
	}
	if i := strings.IndexFunc(value, func(r rune) bool { return unicode.IsControl(r) && !(allowTab && r == '\t') }); i >= 0 {
		return fmt.Errorf("%w: %s holds a control character at byte %d", ErrInvalid, field, i)
	}
	return nil
}

// Start opens a window named name (required; surrounding spaces are
// trimmed) on pool, for the benchmark command line command (both optional).
func (s *Store) Start(name, pool, command string) (Window, error) {
	name, pool = strings.TrimSpace(name), strings.TrimSpace(pool)
	if name == "" {
		return Window{}, fmt.Errorf("%w: name is required (what runs, e.g. \"raid10 ashift=12 lz4\")", ErrInvalid)
	}
	if err := validate("name", name, MaxNameLength, false); err != nil {
		return Window{}, err
	}
	if err := validate("pool", pool, MaxPoolLength, false); err != nil {
		return Window{}, err
	}
	if err := validate("command", command, MaxCommandLength, true); err != nil {
		return Window{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.prune(now)
	if len(s.windows) >= s.opts.MaxWindows {
		s.dropOne()
	}
	w := &Window{ID: s.newID(), Name: name, Pool: pool, Command: command, Start: now}
	s.windows = append(s.windows, w)
	s.started++
	return snapshot(w, now), nil
}

// End closes the running window id.
func (s *Store) End(id string) (Window, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, now, err := s.lookup(id)
	if err != nil {
		return Window{}, err
	}
	if w.Expired {
		return snapshot(w, now), fmt.Errorf("%w: %q ran longer than the longest window of %v and was ended at %s", ErrEnded, id, s.opts.MaxDuration, w.End.Format(time.RFC3339))
	}
	if !w.End.IsZero() {
		return snapshot(w, now), fmt.Errorf("%w: %q ended at %s", ErrEnded, id, w.End.Format(time.RFC3339))
	}
	// A clock that went back must not give a window a negative length.
	w.End = now
	if w.End.Before(w.Start) {
		w.End = w.Start
	}
	return snapshot(w, now), nil
}

// Get returns the window id.
func (s *Store) Get(id string) (Window, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, now, err := s.lookup(id)
	if err != nil {
		return Window{}, err
	}
	return snapshot(w, now), nil
}

// lookup drops what the retention let go and finds id; s.mu is held.
func (s *Store) lookup(id string) (*Window, time.Time, error) {
	now := s.now()
	s.prune(now)
	if w := s.find(id); w != nil {
		return w, now, nil
	}
	return nil, now, fmt.Errorf("%w: %q (unknown, or ended longer ago than the retention of %v)", ErrNotFound, id, s.opts.Retention)
}

// List returns the windows held, newest first.
func (s *Store) List() []Window {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.prune(now)
	out := make([]Window, 0, len(s.windows))
	for _, w := range slices.Backward(s.windows) {
		out = append(out, snapshot(w, now))
	}
	return out
}

// Started is the number of windows started since the store was made,
// including those dropped since.
func (s *Store) Started() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// now is the clock's time in UTC, to the millisecond, as the API and the
// metrics give it.
func (s *Store) now() time.Time { return s.opts.Now().UTC().Truncate(time.Millisecond) }

func (s *Store) find(id string) *Window {
	for _, w := range s.windows {
		if w.ID == id {
			return w
		}
	}
	return nil
}

// prune ends the windows that ran longer than MaxDuration, and drops
// those that ended longer than the retention ago.
func (s *Store) prune(now time.Time) {
	if s.opts.MaxDuration > 0 {
		for _, w := range s.windows {
			if w.End.IsZero() && now.Sub(w.Start) > s.opts.MaxDuration {
				w.End, w.Expired = w.Start.Add(s.opts.MaxDuration), true
			}
		}
	}
	s.windows = slices.DeleteFunc(s.windows, func(w *Window) bool {
		return !w.End.IsZero() && now.Sub(w.End) > s.opts.Retention
	})
}

// dropOne makes room: the oldest ended window goes, or the oldest running
// one when none has ended (a runner that never ended its windows).
func (s *Store) dropOne() {
	i := slices.IndexFunc(s.windows, func(w *Window) bool { return !w.End.IsZero() })
	if i < 0 {
		i = 0
	}
	s.windows = slices.Delete(s.windows, i, i+1)
}

// newID returns 8 random hex digits that no window held has.
func (s *Store) newID() string {
	for {
		var b [4]byte
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
		id := hex.EncodeToString(b[:])
		if s.find(id) == nil {
			return id
		}
	}
}

func snapshot(w *Window, now time.Time) Window {
	out := *w
	end := w.End
	out.Active = end.IsZero()
	if out.Active {
		end = now
	}
	out.DurationSeconds = max(0, end.Sub(w.Start).Seconds())
	return out
}
