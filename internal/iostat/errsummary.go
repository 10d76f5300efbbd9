package iostat

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ErrorSummary is one device of the illumos and Solaris `iostat -E`
// report: error counts since boot and the device's inventory.
type ErrorSummary struct {
	Device    string
	Soft      uint64 // Soft Errors
	Hard      uint64 // Hard Errors
	Transport uint64 // Transport Errors

	Vendor, Product, Revision, SerialNo string  `json:",omitempty"`
	SizeBytes                           *uint64 `json:",omitempty"` // from "Size: 0.00GB <0 bytes>"

	// Counts holds the other error counters by label: Media Error,
	// Device Not Ready, No Device, Recoverable, Illegal Request,
	// Predictive Failure Analysis.
	Counts map[string]uint64 `json:",omitempty"`
}

// errorSummaryKeys are the labels `iostat -E` prints, each followed by a
// colon. The driver decides which appear; values may be empty or contain
// spaces, so a value runs up to the next known label.
var errorSummaryKeys = []string{
	"Soft Errors", "Hard Errors", "Transport Errors",
	"Vendor", "Product", "Revision", "Serial No", "Device Id", "Size",
	"Media Error", "Device Not Ready", "No Device", "Recoverable",
	"Illegal Request", "Predictive Failure Analysis",
}

// ParseErrorSummary reads `iostat -E` or `iostat -En` output. Each device
// block starts with "<device> Soft Errors: N Hard Errors: N Transport
// Errors: N"; the lines after it, up to the next such line, describe the
// same device.
func ParseErrorSummary(r io.Reader) ([]ErrorSummary, error) {
	var out []ErrorSummary
	lines := bufio.NewScanner(r)
	lines.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; lines.Scan(); n++ {
		line := lines.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		pairs := labelledValues(line)
		if len(pairs) == 0 {
			return nil, parse.Errorf(n, "no iostat -E label in %q", parse.Clip(line))
		}
		if pairs[0].key == "Soft Errors" {
			name := strings.TrimSpace(line[:pairs[0].at])
			if name == "" || strings.ContainsAny(name, " \t") {
				return nil, parse.Errorf(n, "cannot find the device name before \"Soft Errors:\"")
			}
			out = append(out, ErrorSummary{Device: name})
		} else if strings.TrimSpace(line[:pairs[0].at]) != "" {
			return nil, parse.Errorf(n, "unexpected %q before %q", parse.Clip(line[:pairs[0].at]), pairs[0].key)
		}
		if len(out) == 0 {
			return nil, parse.Errorf(n, "%q before the first device", pairs[0].key)
		}
		for _, p := range pairs {
			if err := out[len(out)-1].set(p.key, p.value); err != nil {
				return nil, parse.Errorf(n, "device %s: %w", out[len(out)-1].Device, err)
			}
		}
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

type labelled struct {
	key   string
	value string
	at    int // offset of the label in the line
}

// labelledValues splits a line at the known labels.
func labelledValues(line string) []labelled {
	var found []labelled
	for _, key := range errorSummaryKeys {
		label := key + ":"
		for from := 0; ; {
			i := strings.Index(line[from:], label)
			if i < 0 {
				break
			}
			at := from + i
			if at == 0 || line[at-1] == ' ' || line[at-1] == '\t' {
				found = append(found, labelled{key: key, at: at})
			}
			from = at + len(label)
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].at < found[j].at })
	for i := range found {
		end := len(line)
		if i+1 < len(found) {
			end = found[i+1].at
		}
		start := found[i].at + len(found[i].key) + 1
		if start > end {
			start = end
		}
		found[i].value = strings.TrimSpace(line[start:end])
	}
	return found
}

func (e *ErrorSummary) set(key, value string) error {
	switch key {
	case "Vendor":
		e.Vendor = value
	case "Product":
		e.Product = value
	case "Revision":
		e.Revision = value
	case "Serial No", "Device Id":
		e.SerialNo = value
	case "Size":
		size, err := sizeBytes(value)
		if err != nil {
			return err
		}
		e.SizeBytes = &size
	default:
		count, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return fmt.Errorf("cannot parse %s %q", key, value)
		}
		switch key {
		case "Soft Errors":
			e.Soft = count
		case "Hard Errors":
			e.Hard = count
		case "Transport Errors":
			e.Transport = count
		default:
			if e.Counts == nil {
				e.Counts = make(map[string]uint64)
			}
			e.Counts[key] = count
		}
	}
	return nil
}

// sizeBytes reads the exact size from "0.00GB <0 bytes>".
func sizeBytes(value string) (uint64, error) {
	_, exact, ok := strings.Cut(value, "<")
	exact, ok2 := strings.CutSuffix(strings.TrimSpace(exact), "bytes>")
	if !ok || !ok2 {
		return 0, fmt.Errorf("cannot find the byte count in Size %q", value)
	}
	size, err := strconv.ParseUint(strings.TrimSpace(exact), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("cannot parse Size %q", value)
	}
	return size, nil
}
