package benchwindow

import (
	"errors"
	"testing"
	"time"
)

// OnChange's hook runs once per window started or ended, after the store
// changed and outside its lock (the hook reads the store); failed calls do
// not run it. Activity follows the windows.
func TestOnChangeAndActivity(t *testing.T) {
	c := newClock()
	type seen struct {
		active  bool
		lastEnd time.Time
	}
	var calls []seen
	s := NewStore(Options{Now: c.Now})
	s.OnChange(func() {
		// Would deadlock if called under the lock.
		active, lastEnd := s.Activity()
		calls = append(calls, seen{active, lastEnd})
	})

	if active, lastEnd := s.Activity(); active || !lastEnd.IsZero() {
		t.Fatalf("empty store: Activity() = %v, %v; want false, zero", active, lastEnd)
	}
	a := mustStart(t, s, "a", "tank", "")
	if len(calls) != 1 || !calls[0].active || !calls[0].lastEnd.IsZero() {
		t.Fatalf("after Start, the hook saw %+v; want one call seeing a running window", calls)
	}
	c.Advance(time.Second)
	b := mustStart(t, s, "b", "tank", "")
	c.Advance(time.Second)
	endA, err := s.End(a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 3 || !calls[2].active || !calls[2].lastEnd.Equal(endA.End) {
		t.Fatalf("after ending a with b running, the hook saw %+v; want 3 calls, the last active with end %v", calls, endA.End)
	}

	// Failures change nothing and notify nobody.
	if _, err := s.Start("", "tank", ""); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Start without a name: %v", err)
	}
	if _, err := s.End(a.ID); !errors.Is(err, ErrEnded) {
		t.Fatalf("ending twice: %v", err)
	}
	if _, err := s.End("nosuchid"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ending an unknown window: %v", err)
	}
	if len(calls) != 3 {
		t.Fatalf("failed calls notified: %d calls, want 3", len(calls))
	}

	c.Advance(time.Second)
	endB, err := s.End(b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 4 || calls[3].active || !calls[3].lastEnd.Equal(endB.End) || !endB.End.After(endA.End) {
		t.Fatalf("after ending b, the hook saw %+v; want 4 calls, the last inactive with end %v", calls, endB.End)
	}
	// The last end outlives the window's retention.
	c.Advance(DefaultRetention + time.Hour)
	if len(s.List()) != 0 {
		t.Fatal("windows not pruned after the retention")
	}
	if active, lastEnd := s.Activity(); active || !lastEnd.Equal(endB.End) {
		t.Errorf("after pruning: Activity() = %v, %v; want false, %v", active, lastEnd, endB.End)
	}
}

// A store without an OnChange hook works alike.
func TestWithoutOnChange(t *testing.T) {
	s := NewStore(Options{})
	w := mustStart(t, s, "a", "", "")
	if active, _ := s.Activity(); !active {
		t.Error("a running window is not active")
	}
	if _, err := s.End(w.ID); err != nil {
		t.Fatal(err)
	}
	if active, lastEnd := s.Activity(); active || lastEnd.IsZero() {
		t.Errorf("Activity() = %v, %v after the end", active, lastEnd)
	}
}
