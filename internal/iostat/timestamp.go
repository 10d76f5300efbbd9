package iostat

import (
	"strconv"
	"strings"
	"time"
)

// timestampLayouts are the report timestamps the tools print:
// illumos -T d prints ctime(3); sysstat -t prints the locale's date and
// time (C, en_US) or ISO 8601 with S_TIME_FORMAT=ISO.
var timestampLayouts = []string{
	time.ANSIC,    // Mon Nov 24 14:58:36 2003
	time.UnixDate, // Mon Nov 24 14:58:36 UTC 2003
	"01/02/2006 03:04:05 PM",
	"01/02/06 03:04:05 PM",
	"01/02/2006 15:04:05",
	"01/02/06 15:04:05",
	"2006-01-02T15:04:05-0700",
	"2006-01-02T15:04:05",
}

// parseTimestamp recognises a timestamp line. A lone integer is a Unix
// time (illumos -T u).
func parseTimestamp(fields []string) (time.Time, bool) {
	if len(fields) > 6 {
		return time.Time{}, false
	}
	if len(fields) == 1 {
		if sec, err := strconv.ParseInt(fields[0], 10, 64); err == nil && sec > 0 && sec < 1<<40 {
			return time.Unix(sec, 0).UTC(), true
		}
	}
	line := strings.Join(fields, " ")
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, line); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
