package config

import (
	"testing"
	"time"
)

func TestProse(t *testing.T) {
	for d, want := range map[time.Duration]string{
		35 * 24 * time.Hour: "35 days",
		24 * time.Hour:      "1 day",
		time.Hour:           "1 hour",
		90 * time.Minute:    "90 minutes",
		5 * time.Minute:     "5 minutes",
		90 * time.Second:    "1m30s",
	} {
		if got := Prose(d); got != want {
			t.Errorf("Prose(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestPercent(t *testing.T) {
	for r, want := range map[float64]string{0.9: "90%", 0.8: "80%", 0.955: "95.5%", 1: "100%"} {
		if got := Percent(r); got != want {
			t.Errorf("Percent(%v) = %q, want %q", r, got, want)
		}
	}
}

// The slow-disk alert compares a disk with the least p90 of its parent's
// disks, itself among them, which only leaves it out with a factor above
// 1; and a sit-out ends after 10 minutes by default, so a longer wait
// would never see one.
func TestDefaultSlowDiskThresholds(t *testing.T) {
	c := Default()
	if c.SlowDiskFactor <= 1 {
		t.Errorf("SlowDiskFactor %v, want more than 1", c.SlowDiskFactor)
	}
	if c.SlowDiskMinLatency <= 0 || c.SlowDiskMinOps <= 0 {
		t.Errorf("SlowDiskMinLatency %v and SlowDiskMinOps %v, want both above 0", c.SlowDiskMinLatency, c.SlowDiskMinOps)
	}
	// Two scrapes a minute apart at least, for a rate.
	if c.SlowDiskWindow < 2*time.Minute {
		t.Errorf("SlowDiskWindow %v, want 2 minutes or more", c.SlowDiskWindow)
	}
	if c.SlowDiskSitOutFor <= 0 || c.SlowDiskSitOutFor >= 10*time.Minute {
		t.Errorf("SlowDiskSitOutFor %v, want above 0 and under the 10 minutes of a sit-out", c.SlowDiskSitOutFor)
	}
}
