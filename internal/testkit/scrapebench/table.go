package scrapebench

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// WriteTable writes the rows as one Markdown table.
func WriteTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| host | exporter | reads zpool by | own CPU / scrape | zpool and zfs runs / scrape | p50 | p99 | RSS MiB | HWM MiB | series | notes |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|")
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %s | %s | | | | | | | | | skipped: %s |\n", r.Host, r.Exporter, r.Skipped)
			continue
		}
		runs := "?"
		if r.Runs >= 0 {
			runs = strconv.FormatFloat(r.Runs, 'f', -1, 64)
			if r.Runs != float64(int(r.Runs)) {
				runs = fmt.Sprintf("%.1f", r.Runs)
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | %s | %s |\n",
			r.Host, r.Exporter, r.Via, milliseconds(r.CPU), runs, milliseconds(r.P50), milliseconds(r.P99),
			mebibytes(r.RSS), mebibytes(r.HWM), thousands(r.Series), strings.Join(r.Notes, "; "))
	}
}

// milliseconds prints a duration in ms with three significant digits or
// more: "4.25 ms", "24.2 ms", "242 ms", "1,310 ms".
func milliseconds(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 100:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return thousands(int(ms+0.5)) + " ms"
}

func mebibytes(b uint64) float64 { return float64(b) / (1 << 20) }

// thousands prints n with commas between thousands: 25,131.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
