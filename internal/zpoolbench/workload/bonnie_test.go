package workload

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

const tooFast = "too fast to measure"

// plus is a test bonnie++ printed as "+++++": a result without figures
// but its latency.
func plus(name string, dir Direction, latency float64) exp {
	return exp{Name: name, Dir: dir, Printed: "+++++", Figs: figs{"MaxLatencySeconds": latency}}
}

func TestParseBonnieFixtures(t *testing.T) {
	for name, c := range map[string]struct {
		headline string
		want     []exp
	}{
		// vm 512M 623k 95 712m 43 694m 55 624k 90 +++++ +++ +++++ +++, then
		// 1.98,2.00a,vm,1,...,512M,,8192,5,623,95,729062,43,710356,55,624,90,+++++,+++,+++++,+++,1,...
		"bonnie-200a-text-csv": {"block write 712m/sec, block read +++++, seeks +++++", []exp{
			{Name: "Sequential Output Per Chr", Job: "vm", Dir: Write, Printed: "623k/sec", Figs: figs{"BytesPerSecond": 623 * KiB, "CPURatio": 0.95, "MaxLatencySeconds": 0.048112}},
			{Name: "Sequential Output Block", Job: "vm", Dir: Write, Printed: "712m/sec", Figs: figs{"BytesPerSecond": 729062 * KiB, "CPURatio": 0.43, "MaxLatencySeconds": 0.025868}},
			{Name: "Sequential Output Rewrite", Job: "vm", Dir: Mixed, Printed: "694m/sec", Figs: figs{"BytesPerSecond": 710356 * KiB, "CPURatio": 0.55, "MaxLatencySeconds": 0.001274}},
			{Name: "Sequential Input Per Chr", Job: "vm", Dir: Read, Printed: "624k/sec", Figs: figs{"BytesPerSecond": 624 * KiB, "CPURatio": 0.90, "MaxLatencySeconds": 0.083776}},
			withJob(plus("Sequential Input Block", Read, 607e-6), "vm"),
			withJob(plus("Random Seeks", Mixed, 0.016623), "vm"),
			withJob(plus("Sequential Create Create", Metadata, 0.002784), "vm"),
			withJob(plus("Sequential Create Read", Metadata, 180e-6), "vm"),
			withJob(plus("Sequential Create Delete", Metadata, 585e-6), "vm"),
			withJob(plus("Random Create Create", Metadata, 763e-6), "vm"),
			withJob(plus("Random Create Read", Metadata, 523e-6), "vm"),
			withJob(plus("Random Create Delete", Metadata, 594e-6), "vm"),
		}},
		// -f: no per-char tests. The text's last create column reads 2048
		// (-n 2: 2*1024 files), the CSV's 3091: the CSV is right.
		"bonnie-200a-quiet-fast": {"block write 253m/sec, block read +++++, seeks +++++", []exp{
			{Name: "Sequential Output Block", Job: "bench-host", Dir: Write, Printed: "253m/sec", Figs: figs{"BytesPerSecond": 259532 * KiB, "CPURatio": 0.64, "MaxLatencySeconds": 0.161}},
			{Name: "Sequential Output Rewrite", Job: "bench-host", Dir: Mixed, Printed: "691m/sec", Figs: figs{"BytesPerSecond": 707693 * KiB, "CPURatio": 0.52, "MaxLatencySeconds": 0.073157}},
			withJob(plus("Sequential Input Block", Read, 460e-6), "bench-host"),
			withJob(plus("Random Seeks", Mixed, 0.026891), "bench-host"),
			withJob(plus("Sequential Create Create", Metadata, 0.054021), "bench-host"),
			withJob(plus("Sequential Create Read", Metadata, 0.048149), "bench-host"),
			withJob(plus("Sequential Create Delete", Metadata, 0.013677), "bench-host"),
			withJob(plus("Random Create Create", Metadata, 716e-6), "bench-host"),
			withJob(plus("Random Create Read", Metadata, 111e-6), "bench-host"),
			{Name: "Random Create Delete", Job: "bench-host", Dir: Metadata, Printed: "3091/sec", Figs: figs{"OperationsPerSecond": 3091, "CPURatio": 0.07, "MaxLatencySeconds": 0.029726}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			s, err := ParseBonnie(bytes.NewReader(fixture(t, name).Body))
			if err != nil {
				t.Fatal(err)
			}
			checkResults(t, s.Results, c.want)
			if s.Version != "2.00a" || s.Headline != c.headline {
				t.Errorf("version %q, headline %q; want %q", s.Version, s.Headline, c.headline)
			}
			for _, r := range s.Results {
				if (r.Printed == "+++++") != (r.Note == tooFast) {
					t.Errorf("%s: printed %q, note %q", r.Name, r.Printed, r.Note)
				}
			}
			golden(t, name, s)
		})
	}
}

func withJob(e exp, job string) exp {
	e.Job = job
	return e
}

// splitBonnie separates an output's CSV line from the rest.
func splitBonnie(body []byte) (text, csv []byte) {
	for _, l := range bytes.SplitAfter(body, []byte("\n")) {
		if bytes.Count(l, []byte(",")) >= 26 {
			csv = append(csv, l...)
		} else {
			text = append(text, l...)
		}
	}
	return text, csv
}

// The text report alone and the CSV line alone say the same: exactly in
// 1.x, where both are in KiB/s, and within the rounding of the k/m/g
// figures of 2.00a, which checks that they are binary (an SI "m" would
// be 5% off). The 2.00a text's file-creation rates are not rates: they
// must have no figure, where the CSV has one or "+++++".
func TestBonnieTextMatchesCSV(t *testing.T) {
	t.Run("fixtures", func(t *testing.T) {
		for _, name := range []string{"bonnie-200a-text-csv", "bonnie-200a-quiet-fast"} {
			compareTextCSV(t, name, fixture(t, name).Body)
		}
	})
	t.Run("corpus", func(t *testing.T) {
		compared := 0
		for _, f := range corpusFiles(t, "bonnie-*.txt") {
			if compareTextCSV(t, filepath.Base(f.Path), f.Body) {
				compared++
			}
		}
		if compared != 3 {
			t.Errorf("compared %d corpus samples, want the 3 with a text report and a CSV line", compared)
		}
	})
}

// compareTextCSV compares the figures of the text report and the CSV
// line of an output; it reports whether the output has both.
func compareTextCSV(t *testing.T, name string, body []byte) bool {
	t.Helper()
	text, csv := splitBonnie(body)
	if len(csv) == 0 || !bytes.Contains(text, []byte("Version")) {
		return false
	}
	fromText, err := ParseBonnie(bytes.NewReader(text))
	if err != nil {
		t.Fatalf("%s text: %v", name, err)
	}
	fromCSV, err := ParseBonnie(bytes.NewReader(csv))
	if err != nil {
		t.Fatalf("%s CSV: %v", name, err)
	}
	if len(fromText.Results) != len(fromCSV.Results) {
		t.Fatalf("%s: %d results from the text, %d from the CSV", name, len(fromText.Results), len(fromCSV.Results))
	}
	rounded := versionAtLeast(fromText.Version, 1.98)
	for i, tr := range fromText.Results {
		cr := fromCSV.Results[i]
		if tr.Name != cr.Name || tr.Job != cr.Job {
			t.Errorf("%s: result %d is %s/%s in the text, %s/%s in the CSV", name, i, tr.Name, tr.Job, cr.Name, cr.Job)
			continue
		}
		for k, tv := range figures(tr) {
			cv := figures(cr)[k]
			switch {
			case tr.Note != "" && tr.Note != tooFast:
				if tv != nil && k != "CPURatio" && k != "MaxLatencySeconds" {
					t.Errorf("%s %s: %s = %v from a wrong text figure", name, tr.Name, k, *tv)
				}
			case (tv == nil) != (cv == nil):
				t.Errorf("%s %s: %s is %v in the text, %v in the CSV", name, tr.Name, k, tv, cv)
			case tv == nil:
			case rounded && k == "BytesPerSecond":
				if r := *tv / *cv; r < 0.99 || r > 1.01 {
					t.Errorf("%s %s: %v B/s from the text, %v from the CSV", name, tr.Name, *tv, *cv)
				}
			case !near(*tv, *cv):
				t.Errorf("%s %s: %s = %v in the text, %v in the CSV", name, tr.Name, k, *tv, *cv)
			}
		}
	}
	return true
}

// A row with blank cells and a too wide figure keeps every figure under
// its column (1.0x -f style, and 2.00's -s with a chunk size).
func TestBonnieColumns(t *testing.T) {
	in := "Version  2.00       ------Sequential Output------ --Sequential Input- --Random-\n" +
		"                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n" +
		"Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n" +
		"64G:4k::65536                 15.8m  19 60.5m  26            218m  31 279.1  13\n" +
		"Latency                         659ms     517ms             61146us    3052ms\n"
	s, err := ParseBonnie(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, s.Results, []exp{
		{Name: "Sequential Output Block", Dir: Write, Printed: "15.8m/sec", Figs: figs{"BytesPerSecond": 15.8 * MiB, "CPURatio": 0.19, "MaxLatencySeconds": 0.659}},
		{Name: "Sequential Output Rewrite", Dir: Mixed, Figs: figs{"BytesPerSecond": 60.5 * MiB, "CPURatio": 0.26, "MaxLatencySeconds": 0.517}},
		{Name: "Sequential Input Block", Dir: Read, Figs: figs{"BytesPerSecond": 218 * MiB, "CPURatio": 0.31, "MaxLatencySeconds": 0.061146}},
		{Name: "Random Seeks", Dir: Mixed, Printed: "279.1/sec", Figs: figs{"OperationsPerSecond": 279.1, "CPURatio": 0.13, "MaxLatencySeconds": 3.052}},
	})
	if s.Headline != "block write 15.8m/sec, block read 218m/sec, seeks 279.1/sec" {
		t.Errorf("headline %q", s.Headline)
	}
}

func TestParseBonnieErrors(t *testing.T) {
	header := "Version  1.97       ------Sequential Output------ --Sequential Input- --Random-\n" +
		"Concurrency   1     -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n" +
		"Machine        Size K/sec %CP K/sec %CP K/sec %CP K/sec %CP K/sec %CP  /sec %CP\n"
	for in, want := range map[string]string{
		header + "host             2G  1113  97 7x993   7 75546  11  2102  92 271440  13  6863  53\n":          `line 4: bonnie++ rate of Sequential Output Block: "7x993"`,
		header + "host             2G  1113  97 78993   7 75546  11  2102  92 271440  13  6863  53  1  2  3\n": "line 4: bonnie++ row has more figures than columns",
		header + "Latency             21103us     801ms\n":                                                     "line 4: bonnie++ Latency row without a row",
		"1.97,1.97,host,1,1545782353,2G,,1113,97\n" + strings.Repeat(",", 30) + "\n":                           "line 2: not a bonnie++ CSV line: 31 fields",
		"Using uid:0, gid:0.\nWriting a byte at a time...Can't write block.: No space left on device\n":        "no text report and no CSV line",
	} {
		s, err := ParseBonnie(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) || s.Results != nil {
			t.Errorf("%q:\n got %+v, %v\nwant an error with %q", in, s, err, want)
		}
	}
	_, err := ParseBonnie(strings.NewReader("Writing intelligently...Can't write block.: No space left on device\n"))
	if !errors.Is(err, ErrNoSummary) || !strings.Contains(err.Error(), "Can't write block") {
		t.Errorf("message not in the error: %v", err)
	}
}

// Several runs (bonnie++ -x 2 prints a CSV line per run): numbered, the
// headline is the last one's.
func TestParseBonnieRuns(t *testing.T) {
	f := fixture(t, "bonnie-200a-quiet-fast")
	_, csv := splitBonnie(f.Body)
	second := bytes.Replace(csv, []byte(",259532,64,"), []byte(",300000,70,"), 1)
	s, err := ParseBonnie(bytes.NewReader(append(append([]byte{}, csv...), second...)))
	if err != nil {
		t.Fatal(err)
	}
	final := s.Final()
	if len(s.Results) != 20 || len(final) != 10 || final[0].Run != 2 {
		t.Fatalf("%d results, %d in the last run", len(s.Results), len(final))
	}
	if want := "block write 300000 K/sec, block read +++++, seeks +++++"; s.Headline != want {
		t.Errorf("headline %q, want %q", s.Headline, want)
	}
}
