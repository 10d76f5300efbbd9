// Command scrapebench measures zpool_exporter, and pdf/zfs_exporter beside
// it when there, on the guest's captures and on generated hosts of up to
// 10,000 leaves, and prints one Markdown table (make bench runs it):
//
//	scrapebench -exporter bin/zpool_exporter -standin bin/zpool \
//	    -peer ../shared/peers/pdf_zfs_exporter -hosts 'small 1x1000' -work /tmp/bench
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/scrapebench"
)

func main() {
	var (
		o                             scrapebench.Options
		hosts, version, out, revision string
		captures                      = "internal/zfs/zpool/testdata/openzfs-2.3-guest collector/testdata/openzfs-2.4-guest"
		defaultHosts                  = "small 1x10 1x100 1x1000 1x5000 1x10000 10x10 10x100 10x1000 10x5000 10x10000 1x8:10000d:100000s"
	)
	flag.StringVar(&o.Bin.Ours, "exporter", "zpool_exporter", "zpool_exporter's binary")
	flag.StringVar(&o.Bin.StandIn, "standin", "", "the stand-in zpool, built from ./internal/testkit/hostgen/cmd/zpool")
	flag.StringVar(&o.Bin.ZFS, "zfs-standin", "", "the stand-in zfs, built from ./internal/testkit/hostgen/cmd/zfs; needed by hosts with datasets")
	flag.StringVar(&o.Bin.Peer, "peer", "../shared/peers/pdf_zfs_exporter", "pdf/zfs_exporter's binary; its rows are skipped when it is missing")
	flag.StringVar(&hosts, "hosts", defaultHosts, "hosts to measure: small (the guest's captures) and POOLSxLEAVES[:Nd][:Ns] (LEAVES per pool, in 2-way mirrors; N datasets and N snapshots)")
	flag.StringVar(&version, "openzfs", "2.3", "the OpenZFS release of the generated hosts' outputs: 2.3 or 2.4")
	flag.StringVar(&captures, "captures", captures, "directories of the guest's captures the small host is made of (zpool outputs, then kstats)")
	flag.StringVar(&o.Work, "work", os.TempDir()+"/zpool-exporter-bench", "directory for the hosts, the stand-ins and the exporters' logs")
	flag.StringVar(&out, "out", "", "also write the table (and what it was measured on) to this file")
	flag.StringVar(&revision, "revision", "", "what zpool_exporter was built from, for the table's heading")
	flag.IntVar(&o.MaxLeaves, "max-leaves", 20000, "hosts with more leaves in all are listed as skipped")
	flag.IntVar(&o.CheapLeaves, "cheap-leaves", 2000, "hosts with more leaves in all get one round of half the scrapes after one warm-up")
	flag.IntVar(&o.Plan.Scrapes, "scrapes", 20, "scrapes of each exporter per round")
	flag.IntVar(&o.Plan.Warmup, "warmup", 3, "scrapes of each exporter before the rounds, not counted")
	flag.IntVar(&o.Plan.Rounds, "rounds", 3, "rounds, whose medians are reported")
	flag.DurationVar(&o.Slow, "slow", 150*time.Millisecond, "how long the stand-in takes per answer in the small host's slow variant; 0 leaves it out")
	flag.DurationVar(&o.Datasets.SnapshotDelay, "snapshot-delay", time.Minute, "how long the stand-in zfs takes to list snapshots")
	flag.DurationVar(&o.Datasets.SnapshotInterval, "snapshot-interval", 90*time.Second, "zpool_exporter's --collector.dataset.snapshot-interval on hosts with datasets")
	flag.IntVar(&o.DatasetPlan.Scrapes, "dataset-scrapes", 20, "scrapes of each exporter on a host with datasets, in one round after one warm-up")
	flag.DurationVar(&o.DatasetPlan.Every, "dataset-every", 5*time.Second, "time between the scrapes on a host with datasets")
	flag.DurationVar(&o.DatasetPlan.Timeout, "dataset-timeout", 10*time.Second, "scrape timeout on a host with datasets, as Prometheus's default: a longer scrape counts as timed out")
	flag.Parse()
	o.DatasetPlan.Warmup, o.DatasetPlan.Rounds = 1, 1
	o.Large = scrapebench.Plan{Warmup: 1, Rounds: 1, Scrapes: max(1, o.Plan.Scrapes/2)}
	o.CaptureDirs = strings.Fields(captures)
	o.Progress = os.Stderr
	var err error
	if o.Hosts, err = scrapebench.ParseHosts(hosts, version); err != nil {
		fail(err)
	}
	if o.Bin.StandIn == "" {
		fail(fmt.Errorf("-standin is required"))
	}
	if _, err := os.Stat(o.Bin.Peer); err != nil {
		o.PeerMissing = fmt.Sprintf("%s is not there (%v); see ../shared/peers/README.md", o.Bin.Peer, err)
		o.Bin.Peer = ""
		fmt.Fprintln(os.Stderr, "pdf/zfs_exporter's rows are skipped:", o.PeerMissing)
	}
	heading := machine(revision, version)
	began := time.Now()
	rows, err := scrapebench.Run(o)
	var table bytes.Buffer
	fmt.Fprintf(&table, "%s\n\n", heading)
	scrapebench.WriteTable(&table, rows)
	fmt.Fprintf(&table, "\nMeasured in %v.\n", time.Since(began).Round(time.Second))
	os.Stdout.Write(table.Bytes())
	if out != "" {
		if werr := os.WriteFile(out, table.Bytes(), 0o644); werr != nil && err == nil {
			err = werr
		}
	}
	if err != nil {
		fail(err)
	}
}

// machine says what the table was measured on and when: the date, the
// CPU and its cores, and the load before the run (whether it was idle).
func machine(revision, version string) string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(data)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	load := "unknown"
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(data)); len(f) >= 3 {
			load = strings.Join(f[:3], " ")
		}
	}
	s := fmt.Sprintf("Measured %s on %d cores (%s), load average %s before the run; generated hosts as OpenZFS %s prints them",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), runtime.NumCPU(), model, load, version)
	if revision != "" {
		s += "; zpool_exporter " + revision
	}
	return s + "."
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "scrapebench:", err)
	os.Exit(1)
}
