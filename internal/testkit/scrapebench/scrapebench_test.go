package scrapebench

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	// The command name may hold spaces and parentheses.
	stat := "4242 (zpool (x) y) S 1 4242 4242 0 -1 4194560 1630 0 0 0 123 45 6 7 20 0 9 0 100 0 0"
	got, err := parseStatCPU(stat)
	if want := 1680 * time.Millisecond; err != nil || got != want {
		t.Errorf("parseStatCPU = %v, %v; want %v", got, err, want)
	}
	if _, err := parseStatCPU("4242 (zpool) S 1"); err == nil {
		t.Error("a short stat line was read")
	}
}

func TestReadUsageOfItself(t *testing.T) {
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if u.RSS == 0 || u.HWM < u.RSS {
		t.Errorf("RSS %d, HWM %d", u.RSS, u.HWM)
	}
}

func TestPercentileAndMedian(t *testing.T) {
	var samples []time.Duration
	for i := 20; i >= 1; i-- {
		samples = append(samples, time.Duration(i)*time.Millisecond)
	}
	if p50, p99 := percentile(samples, 50), percentile(samples, 99); p50 != 10*time.Millisecond || p99 != 20*time.Millisecond {
		t.Errorf("p50 %v, p99 %v", p50, p99)
	}
	rounds := []round{{cpu: 3}, {cpu: 1}, {cpu: 2}}
	if m := median(rounds, func(r round) time.Duration { return r.cpu }); m != 2 {
		t.Errorf("median %v", m)
	}
}

func TestScrape(t *testing.T) {
	s := Scrape{Body: []byte(`# HELP zfs_exporter_collector_success ...
# TYPE zfs_exporter_collector_success gauge
zfs_exporter_collector_success{collector="disk"} 1
zfs_exporter_collector_success{collector="vdev_io"} 0
zfs_exporter_command_runs_total{command="zpool get -Hp all"} 4
zfs_exporter_command_runs_total{command="zpool status -j --json-int"} 3
go_goroutines 12
`)}
	if n := s.Series(); n != 5 {
		t.Errorf("%d series", n)
	}
	if sum, ok := s.Sum("zfs_exporter_command_runs_total"); !ok || sum != 7 {
		t.Errorf("runs %v %v", sum, ok)
	}
	if _, ok := s.Sum("zfs_vdev_read_bytes_total"); ok {
		t.Error("a missing family has a sum")
	}
	if failed := s.Failed("zfs_exporter_collector_success"); !slices.Equal(failed, []string{"vdev_io"}) {
		t.Errorf("failed %v", failed)
	}
}

func TestHosts(t *testing.T) {
	hosts, err := ParseHosts("small 1x1000, 10x100 1x8:10000d:100000s", "2.3")
	if err != nil || len(hosts) != 4 {
		t.Fatalf("%v %v", hosts, err)
	}
	if h := hosts[1]; h.Leaves() != 1000 || h.Label != "1 × 1,000 leaves (1,501 vdevs)" {
		t.Errorf("%+v", h)
	}
	if _, err := ParseHosts("1x3", "2.3"); err == nil {
		t.Error("a pool of 3 leaves in mirrors was accepted")
	}
	slow := Launch{Delay: 150 * time.Millisecond}
	datasets := Launch{SnapshotDelay: time.Minute, SnapshotInterval: 90 * time.Second}
	var vias []string
	for _, l := range hosts[0].launches(true, slow, datasets) {
		vias = append(vias, l.Exporter+" "+l.Via())
	}
	want := []string{"zpool_exporter replay", "zpool_exporter stand-in", "pdf/zfs_exporter stand-in",
		"zpool_exporter stand-in, 150 ms per answer", "pdf/zfs_exporter stand-in, 150 ms per answer"}
	if !slices.Equal(vias, want) {
		t.Errorf("the small host's exporters: %q", vias)
	}
	if n := len(hosts[1].launches(false, slow, datasets)); n != 2 {
		t.Errorf("%d exporters over a generated host without the peer", n)
	}
	if h := hosts[3]; h.Label != "1 × 8 leaves (13 vdevs), 10,000 datasets, 100,000 snapshots" {
		t.Errorf("label %q", h.Label)
	}
	vias = nil
	for _, l := range hosts[3].launches(true, slow, datasets) {
		vias = append(vias, l.Exporter+" "+l.Via())
	}
	want = []string{
		"zpool_exporter stand-ins zpool and zfs (snapshots in 1m0s); the first 2,000 datasets, snapshots listed every 1m30s",
		"zpool_exporter stand-ins zpool and zfs (snapshots in 1m0s); every dataset, snapshots listed every 1m30s",
		"pdf/zfs_exporter stand-ins zpool and zfs (snapshots in 1m0s); filesystems and volumes, its default",
		"pdf/zfs_exporter stand-ins zpool and zfs (snapshots in 1m0s); filesystems, volumes and snapshots",
	}
	if !slices.Equal(vias, want) {
		t.Errorf("the exporters of a host with datasets: %q", vias)
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	WriteTable(&b, []Row{
		{Host: "1 × 1,000 leaves", Exporter: Ours, Via: "replay", CPU: 242 * time.Millisecond, Runs: 3,
			P50: 178 * time.Millisecond, P99: 1310 * time.Millisecond, RSS: 70 << 20, HWM: 84 << 20, Series: 25131},
		{Host: "1 × 10 leaves", Exporter: Peer, Via: "stand-in", CPU: 5200 * time.Microsecond, Runs: -1, Notes: []string{"a", "b"}},
		{Host: "10 × 10,000 leaves", Skipped: "too large"},
	})
	for _, want := range []string{
		"| 1 × 1,000 leaves | zpool_exporter | replay | 242 ms | 3 | 178 ms | 1,310 ms | 70.0 | 84.0 | 25,131 |  |",
		"| 5.20 ms | ? |", "| a; b |", "| 10 × 10,000 leaves |  | | | | | | | | | skipped: too large |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// A scrape that outlasts the plan's timeout is late, at the timeout, and
// does not end the measurement; without a timeout, the client's own ends
// it as an error.
func TestScrapeWithin(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("slow") {
			time.Sleep(300 * time.Millisecond)
		}
		io.WriteString(w, "up 1\n")
	}))
	defer srv.Close()
	client := &http.Client{Timeout: 100 * time.Millisecond}
	s, late, err := scrapeWithin(client, srv.URL, 100*time.Millisecond)
	if err != nil || late || s.Series() != 1 {
		t.Errorf("a quick scrape: %+v late %v: %v", s, late, err)
	}
	s, late, err = scrapeWithin(client, srv.URL+"?slow", 100*time.Millisecond)
	if err != nil || !late || s.Latency != 100*time.Millisecond {
		t.Errorf("a slow scrape: %+v late %v: %v", s, late, err)
	}
	if _, _, err := scrapeWithin(client, srv.URL+"?slow", 0); err == nil {
		t.Error("a slow scrape without a plan's timeout is no error")
	}
}
