package workload

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseDDFixtures(t *testing.T) {
	for name, want := range map[string][]exp{
		// 268435456 bytes (268 MB, 256 MiB) copied, 0.206733 s, 1.3 GB/s
		"dd-gnu91-write-fdatasync": {{Name: "copied", Run: 1, Printed: "1.3 GB/s",
			Figs: figs{"Bytes": 268435456, "Seconds": 0.206733, "BytesPerSecond": 1.3e9}}},
		// 268435456 bytes (268 MB, 256 MiB) copied, 0.0230751 s, 11.6 GB/s
		"dd-gnu91-read": {{Name: "copied", Run: 1, Printed: "11.6 GB/s",
			Figs: figs{"Bytes": 268435456, "Seconds": 0.0230751, "BytesPerSecond": 11.6e9}}},
		// 512 bytes copied, 8.9801e-05 s, 5.7 MB/s
		"dd-gnu91-512-bytes": {{Name: "copied", Run: 1, Printed: "5.7 MB/s",
			Figs: figs{"Bytes": 512, "Seconds": 8.9801e-05, "BytesPerSecond": 5.7e6}}},
		// 1 byte copied, 8.0473e-05 s, 12.4 kB/s
		"dd-gnu91-1-byte": {{Name: "copied", Run: 1, Printed: "12.4 kB/s",
			Figs: figs{"Bytes": 1, "Seconds": 8.0473e-05, "BytesPerSecond": 12.4e3}}},
		// The progress reports before the records lines are not results.
		"dd-gnu91-status-progress": {{Name: "copied", Run: 1, Printed: "455 MB/s",
			Figs: figs{"Bytes": 1258291200, "Seconds": 2.76747, "BytesPerSecond": 455e6}}},
		"dd-gnu91-sigint": {{Name: "copied", Run: 1, Printed: "68.5 GB/s",
			Figs: figs{"Bytes": 68156391424, "Seconds": 0.99567, "BytesPerSecond": 68.5e9}}},
		// SIGUSR1: an intermediate report, then the final one.
		"dd-gnu91-sigusr1": {
			{Name: "copied", Run: 1, Printed: "65.4 GB/s", Figs: figs{"Bytes": 32810991616, "Seconds": 0.501643, "BytesPerSecond": 65.4e9}},
			{Name: "copied", Run: 2, Printed: "65.9 GB/s", Figs: figs{"Bytes": 209715200000, "Seconds": 3.18368, "BytesPerSecond": 65.9e9}},
		},
		// A printed zero is a zero, not a missing figure.
		"dd-gnu91-error-dev-full": {{Name: "copied", Run: 1, Printed: "0.0 kB/s",
			Figs: figs{"Bytes": 0, "Seconds": 0.000155655, "BytesPerSecond": 0}}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := ParseDD(bytes.NewReader(fixture(t, name).Body))
			if err != nil {
				t.Fatal(err)
			}
			checkResults(t, s.Results, want)
			if s.Tool != DD || s.Headline != want[len(want)-1].Printed {
				t.Errorf("tool %q, headline %q", s.Tool, s.Headline)
			}
			golden(t, name, s)
		})
	}
}

func TestParseDDMessages(t *testing.T) {
	s, err := ParseDD(bytes.NewReader(fixture(t, "dd-gnu91-error-dev-full").Body))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 1 || s.Messages[0] != "dd: error writing '/dev/full': No space left on device" {
		t.Errorf("messages %q", s.Messages)
	}
}

// status=none prints nothing: an error that says there is no summary.
func TestParseDDStatusNone(t *testing.T) {
	s, err := ParseDD(bytes.NewReader(fixture(t, "dd-gnu91-status-none").Body))
	if !errors.Is(err, ErrNoSummary) || !strings.Contains(err.Error(), "output is empty") || s.Results != nil {
		t.Errorf("got %+v, %v", s, err)
	}
}

// Summaries in the layouts of other dd versions: lines posted publicly,
// and lines written after the tools' source (a run too short to time
// prints "Infinity B/s"; some locales print a decimal comma; BSD dd
// prints swab and truncation counts between records and summary).
func TestParseDDLayouts(t *testing.T) {
	for _, c := range []struct {
		in   string
		want exp
	}{
		{"2+0 records in\n2+0 records out\n2097152 bytes (2.1 MB) copied, 0.00315 seconds, 666 MB/s\n",
			exp{Name: "copied", Printed: "666 MB/s", Figs: figs{"Bytes": 2097152, "Seconds": 0.00315, "BytesPerSecond": 666e6}}},
		{"0+0 records in\n0+0 records out\n0 bytes (0 B) copied, 0 s, Infinity B/s\n",
			exp{Name: "copied", Printed: "Infinity B/s", Figs: figs{"Bytes": 0, "Seconds": 0}}},
		{"1056+1 records in\n1056+1 records out\n4430673920 bytes (4,4 GB, 4,1 GiB) copied, 69,4666 s, 63,8 MB/s\n",
			exp{Name: "copied", Printed: "63,8 MB/s", Figs: figs{"Bytes": 4430673920, "Seconds": 69.4666, "BytesPerSecond": 63.8e6}}},
		// BusyBox, as posted in two public reports: its units are binary
		// (10432512 bytes are 9.9 MiB, and 844.4 MiB/s after 0.011782 s).
		{"10+0 records in\n9+0 records out\n10432512 bytes (9.9MB) copied, 0.011782 seconds, 844.4MB/s\n",
			exp{Name: "copied", Printed: "844.4MB/s", Figs: figs{"Bytes": 10432512, "Seconds": 0.011782, "BytesPerSecond": 844.4 * MiB}}},
		{"32+0 records in\n32+0 records out\n33554432 bytes (32.0MB) copied, 0.015512 seconds, 2.0GB/s\n",
			exp{Name: "copied", Printed: "2.0GB/s", Figs: figs{"Bytes": 33554432, "Seconds": 0.015512, "BytesPerSecond": 2 * GiB}}},
		// coreutils 6 and 7, as posted: SI units with a space.
		{"2000+0 records in\n2000+0 records out\n1024000 bytes (1.0 MB) copied, 0.0792119 seconds, 12.9 MB/s\n",
			exp{Name: "copied", Printed: "12.9 MB/s", Figs: figs{"Bytes": 1024000, "Seconds": 0.0792119, "BytesPerSecond": 12.9e6}}},
		{"3+1 records in\n3+1 records out\n1 odd length swab block\n1 truncated block\n3583 bytes transferred in 0.000214 secs (16743022 bytes/sec)\n",
			exp{Name: "transferred", Printed: "16743022 bytes/sec", Figs: figs{"Bytes": 3583, "Seconds": 0.000214, "BytesPerSecond": 16743022}}},
	} {
		s, err := ParseDD(strings.NewReader(c.in))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		checkResults(t, s.Results, []exp{c.want})
	}
}

func TestParseDDErrors(t *testing.T) {
	for in, want := range map[string]string{
		// status=noxfer: records, no summary.
		"100+0 records in\n100+0 records out\n": "ends at line 2",
		// A progress line only: dd did not finish.
		"  1048576 bytes (1049 kB, 1024 KiB) transferred 1.001s, 1047 kB/s":    "no \"bytes ... copied\"",
		"1+0 records in\n1+0 records out\n512 bytes copied, 0.1 s, 5.1 QB/s\n": "line 3: dd summary: unknown unit \"QB\"",
	} {
		s, err := ParseDD(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) || s.Results != nil {
			t.Errorf("%q: %+v, %v; want an error with %q", in, s, err, want)
		}
	}
}

func TestDDDirection(t *testing.T) {
	for want, cases := range map[Direction][][]string{
		Read:  {{"if=/dev/zvol/tank/v", "of=/dev/null", "bs=1M"}, {"if=/tank/f"}, {"if=/tank/f", "of=/dev/../dev/null"}},
		Write: {{"if=/dev/zero", "of=/tank/f", "bs=1M", "count=1024"}, {"of=/tank/f"}, {"if=/dev/urandom", "of=/tank/f"}},
		Mixed: {{"if=/tank/a", "of=/tank/b"}},
		"":    {{"if=/dev/zero", "of=/dev/null"}, {"bs=1M"}, nil},
	} {
		for _, args := range cases {
			if got := DDDirection(args); got != want {
				t.Errorf("DDDirection(%q) = %q, want %q", args, got, want)
			}
		}
	}
}
