package statuspage

import (
	"math"
	"testing"
	"time"
)

func TestRateBetweenTheLastTwoSamples(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type obs struct {
		at    float64 // seconds after t0, the source's sample time
		value float64
	}
	for _, c := range []struct {
		name   string
		obs    []obs
		now    float64
		want   float64
		wantOK bool
	}{
		{"one sample has no rate", []obs{{0, 100}}, 1, 0, false},
		{"two samples", []obs{{0, 100}, {2, 300}}, 2.5, 100, true},
		// The page refreshes faster than the source reports: the same
		// sample read again changes nothing.
		{"refreshes between reports", []obs{{0, 0}, {10, 1000}, {10, 1000}, {10, 1000}}, 12, 100, true},
		{"an older sample is ignored", []obs{{0, 0}, {10, 1000}, {5, 400}}, 11, 100, true},
		// The counters were read just before a report landed, and its time
		// just after: the next reading of that sample keeps the newer value.
		{"counter read before its report's time", []obs{{0, 0}, {10, 800}, {10, 1000}}, 11, 100, true},
		{"idle pool", []obs{{0, 500}, {1, 500}}, 1.5, 0, true},
		{"counter went back (pool imported again)", []obs{{0, 500}, {1, 20}}, 1.5, 0, false},
		// No report for three intervals and 5 s: the stream stopped.
		{"stale after 5 s at 1 s interval", []obs{{0, 0}, {1, 100}}, 6.5, 0, false},
		{"fresh within 5 s at 1 s interval", []obs{{0, 0}, {1, 100}}, 5.5, 100, true},
		{"stale after three 10 s intervals", []obs{{0, 0}, {10, 100}}, 41, 0, false},
		{"fresh within three 10 s intervals", []obs{{0, 0}, {10, 100}}, 39, 10, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRateTracker()
			for _, o := range c.obs {
				r.observe("k", at(o.at), o.value)
			}
			got, ok := r.rate("k", at(c.now))
			if ok != c.wantOK || math.Abs(got-c.want) > 1e-9 {
				t.Errorf("rate = %v, %v; want %v, %v", got, ok, c.want, c.wantOK)
			}
		})
	}
}

func TestRatesForgetCountersThatWentAway(t *testing.T) {
	r := newRateTracker()
	now := time.Now()
	r.observe("tank/mirror-0", now, 1)
	r.observe("gone/mirror-0", now, 1)
	r.forgetUnseen()
	r.observe("tank/mirror-0", now.Add(time.Second), 2)
	r.forgetUnseen()
	if _, ok := r.samples["gone/mirror-0"]; ok {
		t.Error("a counter not seen in the last update is still tracked")
	}
	if got, ok := r.rate("tank/mirror-0", now.Add(time.Second)); !ok || got != 1 {
		t.Errorf("the counter still seen lost its samples: rate %v, %v", got, ok)
	}
	if _, ok := r.rate("unknown", now); ok {
		t.Error("a counter never seen has a rate")
	}
}

func TestFormatTimeLeft(t *testing.T) {
	for _, c := range []struct {
		seconds *float64
		want    string
	}{
		{nil, "–"},
		{new(0.0), "under a minute"},
		{new(0.4), "under a minute"},
		{new(40.0), "40s"},
		{new(float64(3*3600 + 65)), "3h 01m"},
	} {
		if got := formatTimeLeft(c.seconds); got != c.want {
			t.Errorf("formatTimeLeft(%v) = %q, want %q", c.seconds, got, c.want)
		}
	}
}
