package render

import (
	"math"
	"testing"
)

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		unit string
		v    float64
		want string
	}{
		{"bytes", 0, "0 B"},
		{"bytes", 512, "512 B"},
		{"bytes", 1536, "1.5 KiB"},
		{"bytes", 1023.9, "1 KiB"},
		{"bytes", 3 << 30, "3 GiB"},
		{"bytes", 123456789012, "115 GiB"},
		{"Bps", 1536, "1.54 kB/s"},
		{"Bps", 2.5e6, "2.5 MB/s"},
		{"binBps", 2048, "2 KiB/s"},
		{"decbytes", 1e9, "1 GB"},
		{"percentunit", 0.25, "25%"},
		{"percentunit", 0.123456, "12.3%"},
		{"percentunit", 1, "100%"},
		{"percent", 99.5, "99.5%"},
		{"short", 999, "999"},
		{"short", 1500, "1.5 K"},
		{"short", 2e6, "2 Mil"},
		{"short", 0.00123, "0.00123"},
		{"short", -42, "-42"},
		{"iops", 120, "120 io/s"},
		{"iops", 12345, "12.3 K io/s"},
		{"ops", 3, "3 ops/s"},
		{"s", 0, "0 s"},
		{"s", 0.0042, "4.2 ms"},
		{"s", 0.000015, "15 µs"},
		{"s", 12.5, "12.5 s"},
		{"s", 59.7, "1m"},
		{"s", 90, "1m 30s"},
		{"s", 3600, "1h"},
		{"s", 3661, "1h 1m"},
		{"s", 2*86400 + 3*3600 + 59, "2d 3h"},
		{"s", -90, "-1m 30s"},
		{"dtdurations", 7200, "2h"},
		{"ms", 250, "250 ms"},
		{"dateTimeAsIso", 1735689600000, "2025-01-01 00:00:00"},
		{"", 3.14159, "3.14"},
		{"none", 1234567, "1234567"},
		{"widgets", 7, "7 widgets"},
		{"bytes", math.NaN(), "NaN"},
		{"short", math.Inf(1), "+Inf"},
	} {
		if got := formatValue(c.unit, c.v); got != c.want {
			t.Errorf("formatValue(%q, %v) = %q, want %q", c.unit, c.v, got, c.want)
		}
	}
}

func TestFormatNumber(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 1: "1", 1.005: "1", 12.34: "12.3", 123.4: "123", 12345.6: "12346",
		0.5: "0.5", 0.012345: "0.0123", -0.0001: "-0.0001", 1e-12: "0",
	} {
		if got := formatNumber(v); got != want {
			t.Errorf("formatNumber(%v) = %q, want %q", v, got, want)
		}
	}
}
