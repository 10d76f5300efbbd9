package scrapebench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options is a whole run of hosts.
type Options struct {
	Bin   Binaries
	Hosts []Host
	// PeerMissing says why pdf/zfs_exporter is not measured; its rows are
	// then listed as skipped.
	PeerMissing string
	Work        string   // hosts, the stand-ins' copies, the exporters' logs
	CaptureDirs []string // the guest's captures the small host is made of
	// MaxLeaves bounds the hosts measured: larger ones are listed as
	// skipped, since a scrape of them would outlast the scrape timeout.
	MaxLeaves int
	// Plan is for hosts of up to CheapLeaves leaves, Large for larger ones,
	// whose rounds take minutes.
	Plan, Large Plan
	CheapLeaves int
	Slow        time.Duration // the stand-in's delay per answer in the small host's slow variant
	// Datasets is how the exporters read a host with datasets (its
	// snapshot delay and interval), and DatasetPlan how it is measured:
	// over minutes, for the snapshot listings to run and end.
	Datasets    Launch
	DatasetPlan Plan
	Progress    io.Writer
}

// Run measures every host in turn and returns the table's rows.
func Run(o Options) ([]Row, error) {
	var rows []Row
	for _, h := range o.Hosts {
		if h.Leaves() > o.MaxLeaves {
			rows = append(rows, Row{Host: h.Label, Skipped: fmt.Sprintf(
				"%s leaves in all, more than %s: a scrape would outlast the exporters' scrape timeouts", thousands(h.Leaves()), thousands(o.MaxLeaves))})
			continue
		}
		began := time.Now()
		dir := h.dir(o.Work)
		if err := os.RemoveAll(dir); err != nil {
			return rows, err
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return rows, err
		}
		if err := h.write(dir, o.CaptureDirs); err != nil {
			return rows, fmt.Errorf("writing host %s: %w", h.Name, err)
		}
		written := time.Since(began)
		plan := o.Plan
		switch {
		case h.Spec.Datasets > 0:
			plan = o.DatasetPlan
		case h.Leaves() > o.CheapLeaves:
			plan = o.Large
		}
		// The stand-ins' logs of an earlier run would count in this one's.
		runs := h.runs(o.Work)
		if err := os.RemoveAll(runs); err != nil {
			return rows, err
		}
		measured, err := measure(h.Label, h.launches(o.PeerMissing == "", Launch{Delay: o.Slow}, o.Datasets), o.Bin, dir, runs, plan)
		if err != nil {
			return rows, fmt.Errorf("host %s: %w", h.Name, err)
		}
		rows = append(rows, measured...)
		if o.PeerMissing != "" {
			rows = append(rows, Row{Host: h.Label, Exporter: Peer, Skipped: o.PeerMissing})
		}
		fmt.Fprintf(o.Progress, "host %s: written in %v, measured in %v (%d warm-up, then %d × %d scrapes of each exporter)\n",
			h.Name, written.Round(time.Millisecond), (time.Since(began) - written).Round(time.Second), plan.Warmup, plan.Rounds, plan.Scrapes)
		// A host of 10,000 leaves takes hundreds of MB in small files.
		if err := os.RemoveAll(dir); err != nil {
			return rows, err
		}
	}
	return rows, nil
}
