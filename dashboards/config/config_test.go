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
