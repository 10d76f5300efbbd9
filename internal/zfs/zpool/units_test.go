package zpool

import "testing"

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0", 0, true},
		{"0B", 0, true},
		{"1024", 1024, true},
		{"1.94K", 1.94 * 1024, true},
		{"98.3M", 98.3 * 1024 * 1024, true},
		{"1.2T", 1.2 * (1 << 40), true},
		{"5.67G/s", 5.67 * (1 << 30), true},
		{"1/s", 1, true},
		{"6,62M", 6.62 * (1 << 20), true},
		{"-", 0, false},
		{"", 0, false},
	} {
		got, ok, err := ParseSize(tc.in)
		if err != nil || ok != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %v, %v, %v; want %v, %v, nil", tc.in, got, ok, err, tc.want, tc.ok)
		}
	}
	for _, bad := range []string{"B", "x12", "1.2.3K", "K"} {
		if _, _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q): want an error", bad)
		}
	}
}
