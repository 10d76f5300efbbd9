package statuspage

import "time"

// rateTracker turns the exporter's per-vdev counters into per-second rates
// between the last two samples of their source. Counters fed by the
// `zpool iostat` stream move once per report, not once per request, so a
// rate taken between two page refreshes would swing between zero and a
// multiple of the truth; taken between two reports it is what zpool printed.
type rateTracker struct {
	samples map[string]*counterSamples
}

type counterSamples struct {
	prevAt, lastAt time.Time
	prev, last     float64
	seen           bool // touched by the current update
}

func newRateTracker() *rateTracker {
	return &rateTracker{samples: map[string]*counterSamples{}}
}

// observe records value as the counter's reading at the source's sample
// time at; a sample time seen before is ignored.
func (t *rateTracker) observe(key string, at time.Time, value float64) {
	s := t.samples[key]
	if s == nil {
		s = &counterSamples{lastAt: at, last: value}
		t.samples[key] = s
	}
	s.seen = true
	if at.Equal(s.lastAt) {
		// A report that landed between the read of the counters and
		// the read of their source's time: keep the newer reading.
		s.last = max(s.last, value)
		return
	}
	if at.Before(s.lastAt) {
		return
	}
	s.prevAt, s.prev = s.lastAt, s.last
	s.lastAt, s.last = at, value
}

// rate is the counter's rate between its last two samples, or false when
// there are not two yet, the counter went back (a pool re-imported), or the
// last sample is stale (no report for three of its intervals and 5 s).
func (t *rateTracker) rate(key string, now time.Time) (float64, bool) {
	s := t.samples[key]
	if s == nil || s.prevAt.IsZero() || s.last < s.prev {
		return 0, false
	}
	interval := s.lastAt.Sub(s.prevAt)
	if now.Sub(s.lastAt) > max(3*interval, 5*time.Second) {
		return 0, false
	}
	return (s.last - s.prev) / interval.Seconds(), true
}

// forgetUnseen drops counters that the last update did not touch (a pool
// exported, a vdev removed), so that the tracker does not grow for ever.
func (t *rateTracker) forgetUnseen() {
	for key, s := range t.samples {
		if !s.seen {
			delete(t.samples, key)
			continue
		}
		s.seen = false
	}
}
