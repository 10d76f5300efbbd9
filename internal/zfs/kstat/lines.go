package kstat

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// maxLine bounds one line: dbgmsg messages and raw tables can be long, but
// nothing the kernel prints comes near this.
const maxLine = 1 << 20

// readLines returns the lines of r without their line ends (and without a
// carriage return left by a copy through another system).
func readLines(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	// The buffer starts small and grows with the longest line: most
	// kstats are a few hundred bytes, and a scrape reads dozens of them.
	sc.Buffer(nil, maxLine)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSuffix(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", len(lines)+1, err)
	}
	return lines, nil
}

// Kstat types, the second field of a kstat header (KSTAT_TYPE_*).
const (
	KstatRaw   = 0
	KstatNamed = 1
	KstatIntr  = 2
	KstatIO    = 3
	KstatTimer = 4
	// KstatTxg is the type old SPL releases (ZFS on Linux 0.6.3 and
	// earlier) gave the per-pool txg history.
	KstatTxg = 5
)

// Header is the line the SPL prints before a kstat's data on Linux:
// "kid type flags ndata data_size crtime snaptime", for example
// "18 1 0x01 147 39984 22172830860 370871886280". Kstats created with
// KSTAT_FLAG_NO_HEADERS (state, txgs and the other history lists since
// OpenZFS 0.8) have none.
type Header struct {
	KID      int64 `json:"kid"`       // kstat id, unique since boot
	Type     int   `json:"type"`      // one of the Kstat* constants
	Flags    uint8 `json:"flags"`     // KSTAT_FLAG_* bits
	NData    int64 `json:"ndata"`     // entries that follow (-1 for some raw kstats)
	DataSize int64 `json:"data_size"` // bytes of kernel data
	// Crtime and Snaptime are nanoseconds since boot: when the kstat was
	// created and when this snapshot of it was taken.
	Crtime   int64 `json:"crtime"`
	Snaptime int64 `json:"snaptime"`
}

// parseHeader reads a kstat header line; ok is false when line is not one.
func parseHeader(line string) (h *Header, ok bool) {
	f := strings.Fields(line)
	if len(f) != 7 || !strings.HasPrefix(f[2], "0x") {
		return nil, false
	}
	ints := make([]int64, 0, 6)
	for i, s := range f {
		if i == 2 {
			continue
		}
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}
		ints = append(ints, v)
	}
	flags, err := strconv.ParseUint(f[2][2:], 16, 8)
	if err != nil || ints[1] < 0 || ints[1] > 255 {
		return nil, false
	}
	return &Header{
		KID:      ints[0],
		Type:     int(ints[1]),
		Flags:    uint8(flags),
		NData:    ints[2],
		DataSize: ints[3],
		Crtime:   ints[4],
		Snaptime: ints[5],
	}, true
}

// isDecimal reports whether s is a plain decimal number, optionally
// negative and with a fraction: what the kernel and kstat(1M) print. It
// rejects what strconv.ParseFloat would also accept ("NaN", "Inf", "0x1p3").
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot && digits > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// parseNumber reads a decimal number; ok is false for anything else.
func parseNumber(s string) (v float64, ok bool) {
	if !isDecimal(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// fieldSpan is the position of one whitespace-separated field of a line.
type fieldSpan struct{ start, end int }

// fieldSpans splits line at spaces and tabs, keeping where each field is so
// that a last column can take the rest of the line verbatim.
func fieldSpans(line string) []fieldSpan {
	var spans []fieldSpan
	start := -1
	for i := 0; i < len(line); i++ {
		blank := line[i] == ' ' || line[i] == '\t'
		switch {
		case !blank && start < 0:
			start = i
		case blank && start >= 0:
			spans = append(spans, fieldSpan{start, i})
			start = -1
		}
	}
	if start >= 0 {
		spans = append(spans, fieldSpan{start, len(line)})
	}
	return spans
}
