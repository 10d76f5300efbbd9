package workload

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// corpusFiles reads the shared corpus's benchmark outputs matching
// pattern; the test is skipped when the corpus is missing outside CI.
func corpusFiles(t *testing.T, pattern string) []sample.File {
	t.Helper()
	return sample.Glob(t, sample.Dir(t, "corpus/bench"), pattern)
}

// corpusTool is the tool of a corpus sample, from its name.
func corpusTool(name string) Tool {
	prefix, _, _ := strings.Cut(name, "-")
	if prefix == "bonnie" {
		return Bonnie
	}
	return Tool(prefix)
}

// corpusCase is what a corpus sample must give, read off its text.
type corpusCase struct {
	version, headline string
	results           []exp
	// byName: results holds some of the results, looked up by name, and
	// count is how many there are.
	byName bool
	count  int
	err    string // the intended error, for samples without a summary
}

// kiB is a bonnie++ rate in K/sec.
func kiB(v float64) float64 { return v * KiB }

var corpus = map[string]corpusCase{
	"bonnie-1.03-text-csv-no-latency.txt": {version: "1.03", headline: "block write 28554 K/sec, block read 50313 K/sec, seeks 185.9/sec", results: []exp{
		// proliant 2G 30641 71 28554 8 16580 3 29447 61 50313 5 185.9 0
		{Name: "Sequential Output Per Chr", Job: "proliant", Dir: Write, Printed: "30641 K/sec", Figs: figs{"BytesPerSecond": kiB(30641), "CPURatio": 0.71}},
		{Name: "Sequential Output Block", Job: "proliant", Dir: Write, Figs: figs{"BytesPerSecond": kiB(28554), "CPURatio": 0.08}},
		{Name: "Sequential Output Rewrite", Job: "proliant", Dir: Mixed, Figs: figs{"BytesPerSecond": kiB(16580), "CPURatio": 0.03}},
		{Name: "Sequential Input Per Chr", Job: "proliant", Dir: Read, Figs: figs{"BytesPerSecond": kiB(29447), "CPURatio": 0.61}},
		{Name: "Sequential Input Block", Job: "proliant", Dir: Read, Figs: figs{"BytesPerSecond": kiB(50313), "CPURatio": 0.05}},
		{Name: "Random Seeks", Job: "proliant", Dir: Mixed, Printed: "185.9/sec", Figs: figs{"OperationsPerSecond": 185.9, "CPURatio": 0}},
		// 16 28156 100 +++++ +++ 25285 99 24020 93 +++++ +++ 22937 99
		{Name: "Sequential Create Create", Job: "proliant", Dir: Metadata, Printed: "28156/sec", Figs: figs{"OperationsPerSecond": 28156, "CPURatio": 1}},
		{Name: "Sequential Create Read", Job: "proliant", Dir: Metadata, Printed: "+++++"},
		{Name: "Sequential Create Delete", Job: "proliant", Dir: Metadata, Figs: figs{"OperationsPerSecond": 25285, "CPURatio": 0.99}},
		{Name: "Random Create Create", Job: "proliant", Dir: Metadata, Figs: figs{"OperationsPerSecond": 24020, "CPURatio": 0.93}},
		{Name: "Random Create Read", Job: "proliant", Dir: Metadata, Printed: "+++++"},
		{Name: "Random Create Delete", Job: "proliant", Dir: Metadata, Figs: figs{"OperationsPerSecond": 22937, "CPURatio": 0.99}},
	}},
	// -f: no per-char figures; latencies ",512ms,670ms,,44660us,200ms" and "3747us,1759us,1643us,33518us,192us,839us".
	"bonnie-1.96-csv-only.txt": {version: "1.96", headline: "block write 72853 K/sec, block read 156821 K/sec, seeks 537.7/sec", results: []exp{
		{Name: "Sequential Output Block", Job: "perfkit-7b22f510-0", Dir: Write, Printed: "72853 K/sec", Figs: figs{"BytesPerSecond": kiB(72853), "CPURatio": 0.15, "MaxLatencySeconds": 0.512}},
		{Name: "Sequential Output Rewrite", Job: "perfkit-7b22f510-0", Dir: Mixed, Figs: figs{"BytesPerSecond": kiB(47358), "CPURatio": 0.05, "MaxLatencySeconds": 0.670}},
		{Name: "Sequential Input Block", Job: "perfkit-7b22f510-0", Dir: Read, Figs: figs{"BytesPerSecond": kiB(156821), "CPURatio": 0.07, "MaxLatencySeconds": 0.04466}},
		{Name: "Random Seeks", Job: "perfkit-7b22f510-0", Dir: Mixed, Figs: figs{"OperationsPerSecond": 537.7, "CPURatio": 0.10, "MaxLatencySeconds": 0.200}},
		{Name: "Sequential Create Create", Job: "perfkit-7b22f510-0", Dir: Metadata, Figs: figs{"OperationsPerSecond": 49223, "CPURatio": 0.58, "MaxLatencySeconds": 0.003747}},
		{Name: "Sequential Create Read", Job: "perfkit-7b22f510-0", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 0.001759}},
		{Name: "Sequential Create Delete", Job: "perfkit-7b22f510-0", Dir: Metadata, Figs: figs{"OperationsPerSecond": 54405, "CPURatio": 0.53, "MaxLatencySeconds": 0.001643}},
		{Name: "Random Create Create", Job: "perfkit-7b22f510-0", Dir: Metadata, Figs: figs{"OperationsPerSecond": 2898, "CPURatio": 0.97, "MaxLatencySeconds": 0.033518}},
		{Name: "Random Create Read", Job: "perfkit-7b22f510-0", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 0.000192}},
		{Name: "Random Create Delete", Job: "perfkit-7b22f510-0", Dir: Metadata, Figs: figs{"OperationsPerSecond": 59089, "CPURatio": 0.60, "MaxLatencySeconds": 0.000839}},
	}},
	"bonnie-1.97-progress-text-csv.txt": {version: "1.97", headline: "block write 78993 K/sec, block read 271440 K/sec, seeks 6863/sec", results: []exp{
		// nfs-worker1 2G 1113 97 78993 7 75546 11 2102 92 271440 13 6863 53
		// Latency 21103us 801ms 1565ms 19930us 21978us 9956us
		{Name: "Sequential Output Per Chr", Job: "nfs-worker1", Dir: Write, Printed: "1113 K/sec", Figs: figs{"BytesPerSecond": kiB(1113), "CPURatio": 0.97, "MaxLatencySeconds": 0.021103}},
		{Name: "Sequential Output Block", Job: "nfs-worker1", Dir: Write, Figs: figs{"BytesPerSecond": kiB(78993), "CPURatio": 0.07, "MaxLatencySeconds": 0.801}},
		{Name: "Sequential Output Rewrite", Job: "nfs-worker1", Dir: Mixed, Figs: figs{"BytesPerSecond": kiB(75546), "CPURatio": 0.11, "MaxLatencySeconds": 1.565}},
		{Name: "Sequential Input Per Chr", Job: "nfs-worker1", Dir: Read, Figs: figs{"BytesPerSecond": kiB(2102), "CPURatio": 0.92, "MaxLatencySeconds": 0.01993}},
		{Name: "Sequential Input Block", Job: "nfs-worker1", Dir: Read, Printed: "271440 K/sec", Figs: figs{"BytesPerSecond": kiB(271440), "CPURatio": 0.13, "MaxLatencySeconds": 0.021978}},
		{Name: "Random Seeks", Job: "nfs-worker1", Dir: Mixed, Figs: figs{"OperationsPerSecond": 6863, "CPURatio": 0.53, "MaxLatencySeconds": 0.009956}},
		// 16 407 7 +++++ +++ 1328 12 526 6 +++++ +++ 1704 13
		// Latency 65891us 18799us 81134us 31558us 3596us 10771us
		{Name: "Sequential Create Create", Job: "nfs-worker1", Dir: Metadata, Figs: figs{"OperationsPerSecond": 407, "CPURatio": 0.07, "MaxLatencySeconds": 0.065891}},
		{Name: "Sequential Create Read", Job: "nfs-worker1", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 0.018799}},
		{Name: "Sequential Create Delete", Job: "nfs-worker1", Dir: Metadata, Figs: figs{"OperationsPerSecond": 1328, "CPURatio": 0.12, "MaxLatencySeconds": 0.081134}},
		{Name: "Random Create Create", Job: "nfs-worker1", Dir: Metadata, Figs: figs{"OperationsPerSecond": 526, "CPURatio": 0.06, "MaxLatencySeconds": 0.031558}},
		{Name: "Random Create Read", Job: "nfs-worker1", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 0.003596}},
		{Name: "Random Create Delete", Job: "nfs-worker1", Dir: Metadata, Figs: figs{"OperationsPerSecond": 1704, "CPURatio": 0.13, "MaxLatencySeconds": 0.010771}},
	}},
	"bonnie-1.97-text-csv-all-plus-latency.txt": {version: "1.97", headline: "block write 86208 K/sec, block read 104162 K/sec, seeks 889.7/sec", results: []exp{
		// ceph-admin 8196M 646 97 86208 12 44422 5 2027 97 104162 5 889.7 8
		// Latency 12279us 1920ms 2462ms 4228us 41355us 43431us
		{Name: "Sequential Output Per Chr", Job: "ceph-admin", Dir: Write, Figs: figs{"BytesPerSecond": kiB(646), "CPURatio": 0.97, "MaxLatencySeconds": 0.012279}},
		{Name: "Sequential Output Block", Job: "ceph-admin", Dir: Write, Figs: figs{"BytesPerSecond": kiB(86208), "CPURatio": 0.12, "MaxLatencySeconds": 1.920}},
		{Name: "Sequential Output Rewrite", Job: "ceph-admin", Dir: Mixed, Figs: figs{"BytesPerSecond": kiB(44422), "CPURatio": 0.05, "MaxLatencySeconds": 2.462}},
		{Name: "Sequential Input Per Chr", Job: "ceph-admin", Dir: Read, Figs: figs{"BytesPerSecond": kiB(2027), "CPURatio": 0.97, "MaxLatencySeconds": 0.004228}},
		{Name: "Sequential Input Block", Job: "ceph-admin", Dir: Read, Figs: figs{"BytesPerSecond": kiB(104162), "CPURatio": 0.05, "MaxLatencySeconds": 0.041355}},
		{Name: "Random Seeks", Job: "ceph-admin", Dir: Mixed, Figs: figs{"OperationsPerSecond": 889.7, "CPURatio": 0.08, "MaxLatencySeconds": 0.043431}},
		// 16 20285 28 +++++ +++ +++++ +++ 30720 69 +++++ +++ +++++ +++
		// Latency 727us 406us 431us 121us 35us 61us
		{Name: "Sequential Create Create", Job: "ceph-admin", Dir: Metadata, Figs: figs{"OperationsPerSecond": 20285, "CPURatio": 0.28, "MaxLatencySeconds": 727e-6}},
		{Name: "Sequential Create Read", Job: "ceph-admin", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 406e-6}},
		{Name: "Sequential Create Delete", Job: "ceph-admin", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 431e-6}},
		{Name: "Random Create Create", Job: "ceph-admin", Dir: Metadata, Figs: figs{"OperationsPerSecond": 30720, "CPURatio": 0.69, "MaxLatencySeconds": 121e-6}},
		{Name: "Random Create Read", Job: "ceph-admin", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 35e-6}},
		{Name: "Random Create Delete", Job: "ceph-admin", Dir: Metadata, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 61e-6}},
	}},
	// Text only, human-readable units; the create columns read 20480
	// (-n 20: 20*1024 files) and are not rates.
	"bonnie-2.00a-human-units-files-max-min.txt": {version: "2.00a", headline: "block write 1.4g/sec, block read 2.5g/sec, seeks +++++", results: []exp{
		// debian0 7501M 376k 99 1.4g 96 117m 14 1510k 99 2.5g 95 +++++ +++
		// Latency 35068us 24976us 2944ms 30725us 71770us 26152us
		{Name: "Sequential Output Per Chr", Job: "debian0", Dir: Write, Printed: "376k/sec", Figs: figs{"BytesPerSecond": 376 * KiB, "CPURatio": 0.99, "MaxLatencySeconds": 0.035068}},
		{Name: "Sequential Output Block", Job: "debian0", Dir: Write, Printed: "1.4g/sec", Figs: figs{"BytesPerSecond": 1.4 * GiB, "CPURatio": 0.96, "MaxLatencySeconds": 0.024976}},
		{Name: "Sequential Output Rewrite", Job: "debian0", Dir: Mixed, Printed: "117m/sec", Figs: figs{"BytesPerSecond": 117 * MiB, "CPURatio": 0.14, "MaxLatencySeconds": 2.944}},
		{Name: "Sequential Input Per Chr", Job: "debian0", Dir: Read, Figs: figs{"BytesPerSecond": 1510 * KiB, "CPURatio": 0.99, "MaxLatencySeconds": 0.030725}},
		{Name: "Sequential Input Block", Job: "debian0", Dir: Read, Figs: figs{"BytesPerSecond": 2.5 * GiB, "CPURatio": 0.95, "MaxLatencySeconds": 0.07177}},
		{Name: "Random Seeks", Job: "debian0", Dir: Mixed, Printed: "+++++", Figs: figs{"MaxLatencySeconds": 0.026152}},
		// 20:384100:384100/20 20480 32 20480 58 20480 48 20480 39 20480 56 20480 61
		// Latency 411ms 11914us 119ms 617ms 10296us 110ms
		{Name: "Sequential Create Create", Job: "debian0", Dir: Metadata, Figs: figs{"CPURatio": 0.32, "MaxLatencySeconds": 0.411}},
		{Name: "Sequential Create Read", Job: "debian0", Dir: Metadata, Figs: figs{"CPURatio": 0.58, "MaxLatencySeconds": 0.011914}},
		{Name: "Sequential Create Delete", Job: "debian0", Dir: Metadata, Figs: figs{"CPURatio": 0.48, "MaxLatencySeconds": 0.119}},
		{Name: "Random Create Create", Job: "debian0", Dir: Metadata, Figs: figs{"CPURatio": 0.39, "MaxLatencySeconds": 0.617}},
		{Name: "Random Create Read", Job: "debian0", Dir: Metadata, Figs: figs{"CPURatio": 0.56, "MaxLatencySeconds": 0.010296}},
		{Name: "Random Create Delete", Job: "debian0", Dir: Metadata, Figs: figs{"CPURatio": 0.61, "MaxLatencySeconds": 0.110}},
	}},
	"dbench-4.00-full-run-ellipsis.txt": {version: "4.00", headline: "492.324 MB/sec", byName: true, count: 17, results: []exp{
		{Name: "WriteX", Dir: Write, Figs: figs{"Operations": 468874, "LatencySeconds": 0.049e-3, "MaxLatencySeconds": 15.948e-3}},
		{Name: "ReadX", Dir: Read, Figs: figs{"Operations": 1474053, "LatencySeconds": 0.007e-3, "MaxLatencySeconds": 9.585e-3}},
		{Name: "Deltree", Dir: Metadata, Figs: figs{"Operations": 24, "LatencySeconds": 6.234e-3, "MaxLatencySeconds": 13.473e-3}},
		{Name: "Flush", Figs: figs{"Operations": 65918, "LatencySeconds": 1.681e-3, "MaxLatencySeconds": 35.923e-3}},
		// Throughput 492.324 MB/sec  4 clients  4 procs  max_latency=35.936 ms; "Running for 60 seconds"
		{Name: "Throughput", Dir: Mixed, Printed: "492.324 MB/sec", Figs: figs{"BytesPerSecond": 492.324e6, "MaxLatencySeconds": 0.035936, "Seconds": 60}},
	}},
	"dbench-4.00-progress-read-failed-truncated.txt": {err: `no "Throughput" line: the run did not finish (output ends at line 20: "[1075] read failed on handle 10094 (No such file or directory)")`},
	"dbench-sync-open-throughput.txt": {headline: "225.11 MB/sec (sync open)", byName: true, count: 17, results: []exp{
		{Name: "WriteX", Dir: Write, Figs: figs{"Operations": 214235, "LatencySeconds": 0.978e-3, "MaxLatencySeconds": 86.843e-3}},
		{Name: "ReadX", Dir: Read, Figs: figs{"Operations": 675557, "LatencySeconds": 0.004e-3, "MaxLatencySeconds": 0.061e-3}},
		{Name: "Flush", Figs: figs{"Operations": 30182, "LatencySeconds": 0.013e-3, "MaxLatencySeconds": 3.074e-3}},
		// Only the result part was pasted: no "Running for N seconds".
		{Name: "Throughput", Dir: Mixed, Figs: figs{"BytesPerSecond": 225.11e6, "MaxLatencySeconds": 0.086861}},
	}},
	// 209715200 bytes transferred in 62.992162 secs (3329227 bytes/sec)
	"dd-bsd-bytes-transferred.txt": {headline: "3329227 bytes/sec", results: []exp{
		{Name: "transferred", Printed: "3329227 bytes/sec", Figs: figs{"Bytes": 209715200, "Seconds": 62.992162, "BytesPerSecond": 3329227}},
	}},
	// Its first block parses (see TestCorpusDDFirstBlock); the second
	// holds two processes' summaries on one line.
	"dd-gnu-old-coreutils-interrupted.txt": {err: `line 9: two dd summaries run together, so the figures cannot be told apart: "9140817408 bytes (9.1 GB) copied9140815872`},
	// 4430673920 bytes (4.4 GB, 4.1 GiB) copied, 69.4666 s, 63.8 MB/s
	"dd-gnu-status-progress-new-coreutils.txt": {headline: "63.8 MB/s", results: []exp{
		{Name: "copied", Printed: "63.8 MB/s", Figs: figs{"Bytes": 4430673920, "Seconds": 69.4666, "BytesPerSecond": 63.8e6}},
	}},
	"filebench-io-summary-two-runs.txt": {headline: "373.188 ops/s, 0.0mb/s, 0.0ms/op", results: []exp{
		// closefile1 13804ops 46ops/s 0.0mb/s 0.0ms/op [0.00ms - 0.38ms]
		{Name: "closefile1", Run: 1, Printed: "46ops/s 0.0mb/s", Figs: figs{"Operations": 13804, "OperationsPerSecond": 46, "BytesPerSecond": 0, "LatencySeconds": 0, "MaxLatencySeconds": 0.38e-3}},
		{Name: "createfile1", Run: 1, Figs: figs{"Operations": 13804, "OperationsPerSecond": 46, "BytesPerSecond": 0, "LatencySeconds": 0.3476, "MaxLatencySeconds": 5.26188}},
		// Run took 300 seconds; IO Summary: 27608 ops 92.019 ops/s 0/0 rd/wr 0.0mb/s 0.0ms/op
		{Name: "IO Summary", Run: 1, Dir: Metadata, Printed: "92.019 ops/s, 0.0mb/s, 0.0ms/op", Figs: figs{
			"Operations": 27608, "OperationsPerSecond": 92.019, "BytesPerSecond": 0, "LatencySeconds": 0, "Seconds": 300}},
		{Name: "closefile1", Run: 2, Figs: figs{"Operations": 49601, "OperationsPerSecond": 186, "BytesPerSecond": 0, "LatencySeconds": 0, "MaxLatencySeconds": 6e-3}},
		{Name: "createfile1", Run: 2, Figs: figs{"Operations": 49675, "OperationsPerSecond": 187, "BytesPerSecond": 0, "LatencySeconds": 2.1298, "MaxLatencySeconds": 12.85615}},
		{Name: "IO Summary", Run: 2, Dir: Metadata, Figs: figs{
			"Operations": 99276, "OperationsPerSecond": 373.188, "BytesPerSecond": 0, "LatencySeconds": 0, "Seconds": 266}},
	}},
	// write: io=10240KB, bw=1250.7KB/s, iops=1250, runt=  8188msec; lat (usec): max=24379, avg=792.63.
	// fio 2.x's KB is 1024 bytes.
	"fio-2.x-old-format-illumos.txt": {headline: "write: bw=1250.7KB/s, iops=1250", results: []exp{
		{Name: "write", Job: "panic", Dir: Write, Printed: "bw=1250.7KB/s, iops=1250", Figs: figs{
			"Bytes": 10240 * KiB, "BytesPerSecond": 1250.7 * KiB, "OperationsPerSecond": 1250, "Seconds": 8.188,
			"LatencySeconds": 792.63e-6, "MaxLatencySeconds": 24379e-6}},
	}},
	// write: IOPS=14.3k, BW=1792MiB/s (1879MB/s)(8745MiB/4880msec); lat (usec): max=938354, avg=729.98
	"fio-3.36-job-block-clat-percentiles.txt": {version: "fio-3.36", headline: "write: IOPS=14.3k, BW=1792MiB/s (1879MB/s)", results: []exp{
		{Name: "write", Job: "dirty-writers-thoughput", Dir: Write, Figs: figs{
			"OperationsPerSecond": 14.3e3, "BytesPerSecond": 1792 * MiB, "Bytes": 8745 * MiB, "Seconds": 4.88,
			"LatencySeconds": 729.98e-6, "MaxLatencySeconds": 938354e-6}},
	}},
	// WRITE: bw=1586MiB/s (1663MB/s), ..., io=19.5GiB (21.0GB), run=12611-12611msec
	"fio-3.36-run-status-group-summary-tail.txt": {headline: "WRITE: bw=1586MiB/s (1663MB/s)", results: []exp{
		{Name: "WRITE", Dir: Write, Printed: "bw=1586MiB/s (1663MB/s)", Figs: figs{"BytesPerSecond": 1586 * MiB, "Bytes": 19.5 * GiB, "Seconds": 12.611}},
	}},
	// Padded with trailing spaces; cut before any latency line but slat.
	"fio-3.7-trailing-padding-zol08.txt": {version: "fio-3.7", headline: "write: IOPS=202, BW=202MiB/s (212MB/s)", results: []exp{
		{Name: "write", Job: "seq-write", Dir: Write, Figs: figs{
			"OperationsPerSecond": 202, "BytesPerSecond": 202 * MiB, "Bytes": 32 * GiB, "Seconds": 161.967}},
	}},
}

func TestCorpus(t *testing.T) {
	files := corpusFiles(t, "*.txt")
	if len(files) != len(corpus) {
		t.Errorf("%d benchmark samples in the corpus, want the %d this test knows", len(files), len(corpus))
	}
	var parsed, refused int
	for _, f := range files {
		name := filepath.Base(f.Path)
		t.Run(name, func(t *testing.T) {
			c, ok := corpus[name]
			if !ok {
				t.Fatalf("no expectation for %s: add one", name)
			}
			tool := corpusTool(name)
			if got, err := Detect(bytes.NewReader(f.Body)); err != nil || got != tool {
				t.Errorf("Detect = %q, %v; want %q", got, err, tool)
			}
			s, err := Parse(tool, bytes.NewReader(f.Body))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || s.Results != nil {
					t.Fatalf("got %+v, %v; want the error %q", s, err, c.err)
				}
				refused++
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Tool != tool || s.Version != c.version || s.Headline != c.headline {
				t.Errorf("tool %q version %q headline %q; want %q %q %q", s.Tool, s.Version, s.Headline, tool, c.version, c.headline)
			}
			if c.byName {
				if len(s.Results) != c.count {
					t.Errorf("%d results, want %d", len(s.Results), c.count)
				}
				for _, e := range c.results {
					found := false
					for _, r := range s.Results {
						if r.Name == e.Name {
							checkResult(t, r, e)
							found = true
						}
					}
					if !found {
						t.Errorf("no %s result", e.Name)
					}
				}
			} else {
				checkResults(t, s.Results, c.results)
			}
			golden(t, "corpus-"+strings.TrimSuffix(name, ".txt"), s)
			parsed++
		})
	}
	t.Logf("benchmark corpus: %d samples parse with the figures they print; %d without a summary give the intended error", parsed, refused)
}

// The 2.00a text report's file-creation columns are not rates: no figure,
// and a note with what was printed.
func TestCorpusBonnie200Creates(t *testing.T) {
	f := sample.MustRead(t, filepath.Join(sample.Dir(t, "corpus/bench"), "bonnie-2.00a-human-units-files-max-min.txt"))
	s, err := ParseBonnie(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	creates := 0
	for _, r := range s.Results {
		if r.Direction == Metadata {
			creates++
			if r.OperationsPerSecond != nil || r.Printed != "" || !strings.Contains(r.Note, "(here 20480;") {
				t.Errorf("%s: %v ops/s, printed %q, note %q", r.Name, r.OperationsPerSecond, r.Printed, r.Note)
			}
		}
	}
	if creates != 6 {
		t.Errorf("%d file-creation results, want 6", creates)
	}
}

// The first block of the mangled dd sample is a complete interrupted run:
// "^C" before the records, a trailing space after the summary.
func TestCorpusDDFirstBlock(t *testing.T) {
	f := sample.MustRead(t, filepath.Join(sample.Dir(t, "corpus/bench"), "dd-gnu-old-coreutils-interrupted.txt"))
	first, _, ok := bytes.Cut(f.Body, []byte("\n\n"))
	if !ok {
		t.Fatal("no blank line after the first block")
	}
	s, err := ParseDD(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	// 40264646656 bytes (40 GB) copied, 45.4845 s, 885 MB/s
	checkResults(t, s.Results, []exp{{Name: "copied", Run: 1, Printed: "885 MB/s",
		Figs: figs{"Bytes": 40264646656, "Seconds": 45.4845, "BytesPerSecond": 885e6}}})
	if s.Headline != "885 MB/s" {
		t.Errorf("headline %q", s.Headline)
	}
}

// The dbench sample cut by read errors: the error carries dbench's own
// message.
func TestCorpusDbenchMessage(t *testing.T) {
	f := sample.MustRead(t, filepath.Join(sample.Dir(t, "corpus/bench"), "dbench-4.00-progress-read-failed-truncated.txt"))
	_, err := ParseDbench(bytes.NewReader(f.Body))
	if !errors.Is(err, ErrNoSummary) || !strings.Contains(err.Error(), `it said "[1075] read failed on handle 10094`) {
		t.Errorf("got %v", err)
	}
}
