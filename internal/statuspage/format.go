package statuspage

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"
)

// Figures are printed in binary units, as zpool prints them, with a unit
// name that says so.
var binaryUnits = []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

func formatBytes(b *float64) string {
	if b == nil {
		return "–"
	}
	return scaled(*b)
}

func scaled(x float64) string {
	i := 0
	for math.Abs(x) >= 1024 && i < len(binaryUnits)-1 {
		x /= 1024
		i++
	}
	switch {
	case i == 0:
		return fmt.Sprintf("%.0f %s", x, binaryUnits[i])
	case math.Abs(x) < 10:
		return fmt.Sprintf("%.2f %s", x, binaryUnits[i])
	case math.Abs(x) < 100:
		return fmt.Sprintf("%.1f %s", x, binaryUnits[i])
	default:
		return fmt.Sprintf("%.0f %s", x, binaryUnits[i])
	}
}

func formatRate(r *float64) string {
	if r == nil {
		return "–"
	}
	if *r == 0 {
		return "0"
	}
	return scaled(*r) + "/s"
}

func formatOps(r *float64) string {
	switch {
	case r == nil:
		return "–"
	case *r == 0:
		return "0"
	case *r < 10:
		return fmt.Sprintf("%.1f/s", *r)
	default:
		return fmt.Sprintf("%.0f/s", *r)
	}
}

func formatCount(x any) string {
	switch v := x.(type) {
	case float64:
		return fmt.Sprintf("%.0f", v)
	case *float64:
		if v == nil {
			return "–"
		}
		return fmt.Sprintf("%.0f", *v)
	}
	return fmt.Sprint(x)
}

func formatPercent(ratio *float64) string {
	if ratio == nil {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", *ratio*100)
}

// barWidth is the style of a progress bar's filling: zpool's progress may
// pass 100 %, a bar may not.
func barWidth(ratio *float64) template.CSS {
	w := 0.0
	if ratio != nil {
		w = math.Max(0, math.Min(1, *ratio)) * 100
	}
	return template.CSS(fmt.Sprintf("width: %.1f%%", w))
}

// formatDuration prints the two largest units, as people read a time left.
func formatDuration(seconds *float64) string {
	if seconds == nil {
		return "–"
	}
	d := time.Duration(*seconds * float64(time.Second)).Round(time.Second)
	days := int(d / (24 * time.Hour))
	h := int(d/time.Hour) % 24
	m := int(d/time.Minute) % 60
	s := int(d/time.Second) % 60
	switch {
	case days > 0:
		return fmt.Sprintf("%dd %02dh", days, h)
	case h > 0:
		return fmt.Sprintf("%dh %02dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %02ds", m, s)
	default:
		return fmt.Sprintf("%ds", s)
	}
}

// formatTimeLeft is formatDuration for the time a running operation has
// left. zpool's text prints it to the minute, so a running one near its
// end reads "0h0m to go": that is under a minute, not nothing.
func formatTimeLeft(seconds *float64) string {
	if seconds != nil && *seconds < 1 {
		return "under a minute"
	}
	return formatDuration(seconds)
}

func formatClock(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	// JSON times are read as UTC and text times in the zone zpool printed
	// them in: one zone, named, keeps the page's times comparable.
	return t.Local().Format("2006-01-02 15:04:05 MST")
}

func upperState(s string) string { return strings.ToUpper(s) }

// indent is the class of a tree row's depth; deeper rows share the last.
func indent(depth int) string {
	return fmt.Sprintf("d%d", min(depth, 5))
}
