package diskstats

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/prometheus/procfs/blockdevice"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// procfsParse reads data with procfs's own reader, the reference.
func procfsParse(t testing.TB, data []byte) ([]blockdevice.Diskstats, error) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "diskstats"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	fs, err := blockdevice.NewFS(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	return fs.ProcDiskstats()
}

// ownInputs are the project's diskstats: a fixture of a Linux host and a
// generated host of leaves disks in mirrors.
func ownInputs(t testing.TB, leaves int) map[string][]byte {
	t.Helper()
	fixture, err := os.ReadFile("../../collector/testdata/disk-linux/proc/diskstats")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "host")
	if err := hostgen.Write(dir, hostgen.Spec{Pools: 1, Leaves: leaves, Version: "2.3"}); err != nil {
		t.Fatal(err)
	}
	generated, err := os.ReadFile(filepath.Join(dir, "proc", "diskstats"))
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{"disk-linux": fixture, "generated": generated}
}

// The same entries as procfs reads, from every kernel's line lengths.
func TestParseAsProcfs(t *testing.T) {
	inputs := ownInputs(t, 100)
	for _, f := range sample.Seeds(t, "captures/openzfs-2.3", "*proc-diskstats.txt") {
		inputs[filepath.Base(f.Path)] = f.Body
	}
	// Linux before 4.18 (11 counters), up to 5.4 (15), and a line too short.
	inputs["old kernels"] = []byte("   8       0 sda 1 2 3 4 5 6 7 8 9 10 11\n   8  16 sdb 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n 8 32 sdc 1 2 3\n")
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			want, err := procfsParse(t, data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parse(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				t.Fatal("no entries")
			}
			if d := firstDifference(want, got); d != "" {
				t.Error(d)
			}
		})
	}
}

// firstDifference says where Parse's entries first differ from procfs's.
func firstDifference(want, got []blockdevice.Diskstats) string {
	for i := range min(len(want), len(got)) {
		if !reflect.DeepEqual(want[i], got[i]) {
			return fmt.Sprintf("entry %d: procfs %+v, Parse %+v", i, want[i], got[i])
		}
	}
	if len(want) != len(got) {
		return fmt.Sprintf("%d entries, procfs %d", len(got), len(want))
	}
	return ""
}

// A line that is not numbers and a name stops the read with a parse error
// at that line, which says what was there.
func TestParseErrorNamesTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, data, want string
		line, before     int // the line, and the entries read before it
	}{
		{"counter", "8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n8 1 sda1 1 2 x 4 5 6 7 8 9 10 11\n", `line 2: sda1's counter 3 "x"`, 2, 1},
		{"device number", "8 0 sda 1 2 3 4 5 6 7 8 9 10 11\n\n8 -1 sda1 1 2 3 4 5 6 7 8 9 10 11\n", `line 3: device number "-1"`, 3, 1},
		{"overflow", "8 0 sda 1 2 3 4 5 6 7 8 9 10 18446744073709551616\n", `line 1: sda's counter 11 "18446744073709551616": out of range`, 1, 0},
		{"major past 32 bits", "4294967296 0 sda 1 2 3 4 5 6 7 8 9 10 11\n", `line 1: device number "4294967296": out of range`, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(strings.NewReader(tc.data))
			var pe *parse.Error
			if !errors.Is(err, parse.ErrUnexpected) || !errors.As(err, &pe) || pe.Line != tc.line || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want a parse error at line %d with %q", err, tc.line, tc.want)
			}
			if _, refErr := procfsParse(t, []byte(tc.data)); refErr == nil {
				t.Errorf("procfs reads it without an error")
			}
			if len(got) != tc.before {
				t.Errorf("%d entries before the error, want %d", len(got), tc.before)
			}
		})
	}
}

func seeds(t testing.TB) [][]byte {
	var bodies [][]byte
	for _, data := range ownInputs(t, 10) {
		bodies = append(bodies, data)
	}
	return append(bodies, sample.Bodies(sample.Seeds(t, "captures/openzfs-2.3", "*proc-diskstats.txt"))...)
}

func TestFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, map[string]func(testing.TB) [][]byte{"FuzzParse": seeds})
}

// Whatever the file holds, Parse does not panic, and where it is made of
// the digits, letters and blanks that diskstats prints, it agrees with
// procfs.
func FuzzParse(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(bytes.NewReader(data))
		if err != nil && !errors.Is(err, parse.ErrUnexpected) && !errors.Is(err, bufio.ErrTooLong) {
			t.Fatalf("error %v is neither a parse error nor a line too long", err)
		}
		if !plain(data) {
			return
		}
		want, refErr := procfsParse(t, data)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("error %v, procfs's %v", err, refErr)
		}
		if err == nil {
			if d := firstDifference(want, got); d != "" {
				t.Error(d)
			}
		}
	})
}

// plain says whether data holds only lowercase letters, digits, spaces and
// newlines, where procfs's scanning and ours mean the same.
func plain(data []byte) bool {
	for _, c := range data {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ' ' || c == '\n') {
			return false
		}
	}
	return true
}

// The diskstats of a host of a thousand disks in mirrors, with their
// partitions, read by procfs and by Parse.
func BenchmarkParse(b *testing.B) {
	data := ownInputs(b, 1000)["generated"]
	b.Run("procfs", func(b *testing.B) {
		dir := b.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "diskstats"), data, 0o644); err != nil {
			b.Fatal(err)
		}
		fs, err := blockdevice.NewFS(dir, dir)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := fs.ProcDiskstats(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ours", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Parse(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
