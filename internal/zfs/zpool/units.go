package zpool

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseSize reads a byte or count figure as zpool prints it: exact ("1024"),
// human-readable with a binary suffix ("1.94K", "98.3M", "0B", "1.2T"), or
// with a trailing "/s" for rates. "-" and "" are not numbers: ok is false.
func ParseSize(s string) (v float64, ok bool, err error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/s")
	if s == "" || s == "-" || s == "none" {
		return 0, false, nil
	}
	mult := 1.0
	switch suffix := s[len(s)-1]; suffix {
	case 'B', 'b':
		s = s[:len(s)-1]
		if s == "" {
			return 0, false, fmt.Errorf("invalid size %q", "B")
		}
	}
	if n := len(s); n > 0 {
		if m, isUnit := unitMultiplier[s[n-1]|0x20]; isUnit {
			mult = m
			s = s[:n-1]
		}
	}
	// Some locales print a decimal comma.
	s = strings.Replace(s, ",", ".", 1)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, fmt.Errorf("invalid size %q", s)
	}
	return f * mult, true, nil
}

var unitMultiplier = map[byte]float64{
	'k': 1 << 10,
	'm': 1 << 20,
	'g': 1 << 30,
	't': 1 << 40,
	'p': 1 << 50,
	'e': 1 << 60,
}
