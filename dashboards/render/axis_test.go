package render

import (
	"reflect"
	"testing"
	"time"
)

func TestValueTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
		unit   string
		want   []string
	}{
		{0, 100, 4, "short", []string{"0", "25", "50", "75", "100"}},
		{0, 1, 2, "percentunit", []string{"0%", "50%", "100%"}},
		{0, 3 << 30, 3, "bytes", []string{"0 B", "1 GiB", "2 GiB", "3 GiB"}},
		{0, 1 << 30, 2, "bytes", []string{"0 B", "512 MiB", "1 GiB"}},
		{0, 7200, 2, "s", []string{"0 s", "1h", "2h"}},
		{-10, 10, 2, "short", []string{"-10", "0", "10"}},
	} {
		var got []string
		for _, v := range valueTicks(c.lo, c.hi, c.n, c.unit) {
			got = append(got, formatValue(c.unit, v))
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ticks of [%g, %g] in %s: %q, want %q", c.lo, c.hi, c.unit, got, c.want)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	from := time.Date(2025, 1, 1, 10, 3, 0, 0, time.UTC)
	ticks, layout := timeTicks(from, from.Add(time.Hour), 6)
	var got []string
	for _, tk := range ticks {
		got = append(got, tk.Format(layout))
	}
	want := []string{"10:10", "10:20", "10:30", "10:40", "10:50", "11:00"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ticks %q, want %q", got, want)
	}
	if _, layout := timeTicks(from, from.Add(2*time.Minute), 8); layout != "15:04:05" {
		t.Errorf("short ranges want seconds, got layout %s", layout)
	}
}
