package rules

import (
	"testing"
	"time"
)

func TestPromDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		35 * 24 * time.Hour:     "35d",
		36 * time.Hour:          "36h",
		30 * time.Minute:        "30m",
		90 * time.Second:        "90s",
		1500 * time.Millisecond: "1500ms",
	} {
		if got := promDuration(d); got != want {
			t.Errorf("promDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestProse(t *testing.T) {
	for d, want := range map[time.Duration]string{
		35 * 24 * time.Hour: "35 days",
		24 * time.Hour:      "1 day",
		time.Hour:           "1 hour",
		90 * time.Minute:    "90 minutes",
		5 * time.Minute:     "5 minutes",
		90 * time.Second:    "1m30s",
	} {
		if got := prose(d); got != want {
			t.Errorf("prose(%v) = %q, want %q", d, got, want)
		}
	}
}
