package zpool

import (
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParseSize reads a byte or count figure as zpool prints it: exact ("1024"),
// human-readable with a binary suffix ("1.94K", "98.3M", "0B", "1.2T"), or
// with a trailing "/s" for rates. "-" and "" are not numbers: ok is false.
func ParseSize(s string) (v float64, ok bool, err error) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/s")
	if s == "" || s == "-" || s == "none" {
		return 0, false, nil
	}
	if len(s) <= 15 && isDigits(s) {
		// Most figures are small counts, exact as ParseFloat would read
		// them, without its cost.
		n, _ := strconv.Atoi(s)
		return float64(n), true, nil
	}
	mult := 1.0
	switch suffix := s[len(s)-1]; suffix {
	case 'B', 'b':
		s = s[:len(s)-1]
		if s == "" {
			return 0, false, parse.Errorf(0, "invalid size %q", "B")
		}
	}
	if n := len(s); n > 0 {
		if m, isUnit := unitMultiplier(s[n-1] | 0x20); isUnit {
			mult = m
			s = s[:n-1]
		}
	}
	// Some locales print a decimal comma.
	s = strings.Replace(s, ",", ".", 1)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false, parse.Errorf(0, "invalid size %q", s)
	}
	return f * mult, true, nil
}

// unitMultiplier returns the multiplier of a lowercase unit suffix; a
// switch rather than a map, as every figure of a large pool comes here.
func unitMultiplier(c byte) (float64, bool) {
	switch c {
	case 'k':
		return 1 << 10, true
	case 'm':
		return 1 << 20, true
	case 'g':
		return 1 << 30, true
	case 't':
		return 1 << 40, true
	case 'p':
		return 1 << 50, true
	case 'e':
		return 1 << 60, true
	}
	return 0, false
}
