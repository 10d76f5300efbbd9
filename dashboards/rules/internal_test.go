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
