package render

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// formatValue writes v in a Grafana unit with three significant digits,
// the way the panels of the dashboards use them. An unknown unit is
// written after the number, as Grafana does with a custom unit.
func formatValue(unit string, v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	switch unit {
	case "", "none":
		return formatNumber(v)
	case "short":
		return scaled(v, 1000, shortSuffixes, "")
	case "percentunit":
		return formatNumber(v*100) + "%"
	case "percent":
		return formatNumber(v) + "%"
	case "bytes":
		return scaled(v, 1024, iecSuffixes, "B")
	case "decbytes":
		return scaled(v, 1000, siSuffixes, "B")
	case "Bps":
		return scaled(v, 1000, siSuffixes, "B/s")
	case "binBps":
		return scaled(v, 1024, iecSuffixes, "B/s")
	case "iops":
		return scaled(v, 1000, shortSuffixes, "") + " io/s"
	case "ops":
		return scaled(v, 1000, shortSuffixes, "") + " ops/s"
	case "s", "dtdurations":
		return formatDuration(v)
	case "ms":
		return formatDuration(v / 1000)
	case "dateTimeAsIso":
		return time.UnixMilli(int64(v)).UTC().Format("2006-01-02 15:04:05")
	}
	return formatNumber(v) + " " + unit
}

// Suffixes of scaled units; each is 1000 or 1024 times the one before.
var (
	shortSuffixes = []string{"", " K", " Mil", " Bil", " Tri"}
	siSuffixes    = []string{" ", " k", " M", " G", " T", " P", " E"}
	iecSuffixes   = []string{" ", " Ki", " Mi", " Gi", " Ti", " Pi", " Ei"}
)

// scaled divides v by base until it is below base and writes it with the
// matching suffix and the unit after it. The step up is decided on the
// rounded number, so 1023.9 bytes reads 1 KiB rather than 1024 B.
func scaled(v, base float64, suffixes []string, unit string) string {
	i := 0
	for i < len(suffixes)-1 && math.Abs(v) >= base {
		v /= base
		i++
	}
	s := formatNumber(v)
	if n, _ := strconv.ParseFloat(s, 64); math.Abs(n) >= base && i < len(suffixes)-1 {
		v /= base
		i++
		s = formatNumber(v)
	}
	return s + suffixes[i] + unit
}

// formatNumber writes v with three significant digits (at least all of
// its integer digits), without trailing zeros.
func formatNumber(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	decimals := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	decimals = min(max(decimals, 0), 9)
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

// formatDuration writes seconds as a short duration: below a minute in
// one unit (4.2 ms, 12.5 s), above it in its two largest whole units
// (1h 1m, 2d 3h).
func formatDuration(seconds float64) string {
	if seconds < 0 {
		return "-" + formatDuration(-seconds)
	}
	switch {
	case seconds == 0:
		return "0 s"
	case seconds < 1e-6:
		return formatNumber(seconds*1e9) + " ns"
	case seconds < 1e-3:
		return formatNumber(seconds*1e6) + " µs"
	case seconds < 1:
		return formatNumber(seconds*1e3) + " ms"
	case seconds < 59.5:
		return formatNumber(seconds) + " s"
	}
	rest := int64(math.Round(seconds))
	var parts []string
	for _, u := range []struct {
		seconds int64
		name    string
	}{{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}} {
		n := rest / u.seconds
		rest -= n * u.seconds
		if n > 0 || len(parts) > 0 {
			parts = append(parts, strconv.FormatInt(n, 10)+u.name)
		}
		if len(parts) == 2 {
			break
		}
	}
	if len(parts) == 2 && strings.HasPrefix(parts[1], "0") {
		parts = parts[:1]
	}
	return strings.Join(parts, " ")
}
