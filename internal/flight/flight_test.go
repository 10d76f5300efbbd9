package flight

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWaitTakesTheResult(t *testing.T) {
	errRead := errors.New("read failed")
	c := Go(func() (int, error) { return 7, errRead })
	v, ended, err := c.Wait(time.Time{}, nil)
	if v != 7 || !ended || err != errRead {
		t.Errorf("Wait = %d, %v, %v; want 7, true, the work's error", v, ended, err)
	}
	if v, err := c.Result(); v != 7 || err != errRead {
		t.Errorf("Result = %d, %v after Wait", v, err)
	}
}

func TestEachCallerGivesUpAtItsOwnTime(t *testing.T) {
	c, end := New[string]()
	began := time.Now()
	if _, ended, _ := c.Wait(began.Add(50*time.Millisecond), nil); ended {
		t.Fatal("a call that has not ended was waited for to its end")
	}
	if waited := time.Since(began); waited < 50*time.Millisecond {
		t.Errorf("gave up after %s, before the give-up time", waited)
	}
	stop := make(chan struct{})
	close(stop)
	if _, ended, _ := c.Wait(time.Time{}, stop); ended {
		t.Error("a stopped caller got a result that was not there")
	}
	later := make(chan string)
	go func() {
		v, _, _ := c.Wait(time.Now().Add(time.Minute), nil)
		later <- v
	}()
	end("status", nil)
	if v := <-later; v != "status" {
		t.Errorf("a caller still waiting got %q", v)
	}
}

// A caller that gives up when the result is there takes it: the work
// ended in time.
func TestAResultThereAtTheGiveUpIsTaken(t *testing.T) {
	c := Ended("ready", nil)
	stop := make(chan struct{})
	close(stop)
	for range 100 {
		if v, ended, _ := c.Wait(time.Now().Add(-time.Second), stop); !ended || v != "ready" {
			t.Fatalf("Wait = %q, %v; want the result that was there", v, ended)
		}
	}
}

func TestDetachKeepsTheDeadlineNotTheCancellation(t *testing.T) {
	deadline := time.Now().Add(time.Hour)
	parent, cancel := context.WithDeadline(context.Background(), deadline)
	detached, stop := Detach(parent)
	defer stop()
	cancel()
	if err := detached.Err(); err != nil {
		t.Errorf("the detached context ended with its parent: %v", err)
	}
	if d, ok := detached.Deadline(); !ok || !d.Equal(deadline) {
		t.Errorf("deadline %v %v, want the parent's", d, ok)
	}
	stop()
	if detached.Err() == nil {
		t.Error("the detached context's own cancel did not end it")
	}
}
