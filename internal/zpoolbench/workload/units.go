package workload

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// number reads a figure as the tools print it: "885", "45.4845",
// "8.0473e-05", or with a decimal comma ("63,8") in locales that use one.
// Signs, infinities, NaN and figures beyond 10^30 (no benchmark moves
// that much, and scaling them must stay finite) are refused.
func number(s string) (float64, error) {
	if s == "" || s[0] < '0' || s[0] > '9' || strings.Trim(s, "0123456789.,eE+-") != "" {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) || v > 1e30 {
		return 0, fmt.Errorf("%q is not a number in range", s)
	}
	return v, nil
}

// prefixPower is the power of 1000 or 1024 of a unit prefix.
var prefixPower = map[byte]int{'k': 1, 'K': 1, 'm': 2, 'M': 2, 'g': 3, 'G': 3, 't': 4, 'T': 4, 'p': 5, 'P': 5, 'e': 6, 'E': 6, 'z': 7, 'Z': 7, 'y': 8, 'Y': 8}

// byteUnit returns the bytes in one unit: "B", "kB", "MB", "GiB", "bytes",
// "Mibit" (an eighth of a MiB)... An "i" after the prefix makes it binary
// (1024); without one it is SI (1000), unless legacyBinary is set (fio
// 2.x, whose "KB" is 1024 bytes). An empty unit is one byte.
func byteUnit(unit string, legacyBinary bool) (float64, error) {
	u := unit
	scale := 1.0
	switch {
	case strings.HasSuffix(u, "bit"):
		u, scale = strings.TrimSuffix(u, "bit"), 1.0/8
	case u == "bytes" || u == "byte":
		u = ""
	default:
		u = strings.TrimSuffix(u, "B")
	}
	if u == "" {
		return scale, nil
	}
	pow, ok := prefixPower[u[0]]
	base := 1000.0
	switch {
	case !ok:
	case len(u) == 1:
		if legacyBinary {
			base = 1024
		}
	case len(u) == 2 && u[1] == 'i':
		base = 1024
	default:
		ok = false
	}
	if !ok {
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	return scale * math.Pow(base, float64(pow)), nil
}

// bytesOf reads a figure and its byte unit ("1792", "MiB").
func bytesOf(num, unit string, legacyBinary bool) (float64, error) {
	v, err := number(num)
	if err != nil {
		return 0, err
	}
	m, err := byteUnit(unit, legacyBinary)
	if err != nil {
		return 0, err
	}
	return v * m, nil
}

// count reads a count with an optional SI suffix, as fio prints IOPS and
// nanosecond latencies: "6243", "14.3k", "1.2M".
func count(s string) (float64, error) {
	mult := 1.0
	if n := len(s); n > 1 {
		if p, ok := prefixPower[s[n-1]]; ok {
			mult = math.Pow(1000, float64(p))
			s = s[:n-1]
		}
	}
	v, err := number(s)
	return v * mult, err
}

// timeUnit returns the seconds in one time unit.
var timeUnit = map[string]float64{
	"nsec": 1e-9, "ns": 1e-9,
	"usec": 1e-6, "us": 1e-6,
	"msec": 1e-3, "ms": 1e-3,
	"sec": 1, "s": 1, "secs": 1, "seconds": 1,
}

// seconds reads a figure in a time unit ("8188", "msec").
func seconds(num, unit string) (float64, error) {
	m, ok := timeUnit[unit]
	if !ok {
		return 0, fmt.Errorf("unknown time unit %q", unit)
	}
	v, err := number(num)
	return v * m, err
}

// duration reads a figure with its time unit attached: "21103us",
// "801ms", "2s" (bonnie++ latencies).
func duration(s string) (float64, error) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i <= 0 {
		return 0, fmt.Errorf("%q is not a duration", s)
	}
	return seconds(s[:i], s[i:])
}
