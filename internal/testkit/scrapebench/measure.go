package scrapebench

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"time"
)

// Plan is how many scrapes a measurement takes.
type Plan struct {
	Warmup  int // scrapes of each exporter before the first round, not counted
	Rounds  int // rounds, whose medians are reported
	Scrapes int // scrapes of each exporter per round
	// Every paces the scrapes: each exporter's next scrape starts no
	// sooner than this after its last began. Zero scrapes back to back.
	Every time.Duration
	// Timeout is how long a scrape may take, as Prometheus's
	// scrape_timeout: one that takes longer counts as timed out, at this
	// latency, and the measurement goes on. Zero waits two minutes, and
	// a scrape that takes longer ends the measurement.
	Timeout time.Duration
}

// Row is one exporter's figures on one host, medians of the rounds.
type Row struct {
	Host     string
	Exporter string
	Via      string
	CPU      time.Duration // own CPU time per scrape, children excluded
	Runs     float64       // zpool runs per scrape; negative when unknown
	P50, P99 time.Duration // scrape latency
	RSS, HWM uint64        // resident memory after the last round, and its peak
	Series   int           // samples in the last scrape that answered
	TimedOut int           // scrapes of the rounds that took longer than the plan's timeout
	Notes    []string      // what did not work: collectors that failed, commands without an answer
	Skipped  string        // why the host was not measured; the figures are empty
}

// round is one round's figures of one exporter.
type round struct {
	cpu, p50, p99 time.Duration
	runs          float64
	rss           uint64
}

// measure starts the exporters over a host together, scrapes them in
// turn and returns a row for each, in the order given. Every exporter is
// stopped before it returns.
func measure(host string, launches []Launch, bin Binaries, hostDir, work string, plan Plan) ([]Row, error) {
	var started []*running
	defer func() {
		for _, r := range started {
			r.stop()
		}
	}()
	for i, l := range launches {
		r, err := start(l, bin, hostDir, fmt.Sprintf("%s/%d", work, i))
		if err != nil {
			return nil, err
		}
		started = append(started, r)
	}
	client := &http.Client{Timeout: 2 * time.Minute}
	if plan.Timeout > 0 {
		client.Timeout = plan.Timeout
	}
	last := make([]Scrape, len(started))
	timedOut := make([]int, len(started))
	scrapeAll := func(latencies [][]time.Duration) error {
		for i, r := range started {
			s, late, err := scrapeWithin(client, r.url, plan.Timeout)
			if err != nil {
				return fmt.Errorf("%s (%s): %w", r.Exporter, r.Via(), err)
			}
			if !late {
				last[i] = s
			} else if latencies != nil {
				timedOut[i]++
			}
			if latencies != nil {
				latencies[i] = append(latencies[i], s.Latency)
			}
		}
		return nil
	}
	for range plan.Warmup {
		if err := scrapeAll(nil); err != nil {
			return nil, err
		}
	}
	rounds := make([][]round, len(started))
	for range plan.Rounds {
		before := make([]Usage, len(started))
		runsBefore := make([]float64, len(started))
		for i, r := range started {
			u, err := ReadUsage(r.pid())
			if err != nil {
				return nil, err
			}
			before[i] = u
			runsBefore[i], _ = r.runs(last[i])
		}
		latencies := make([][]time.Duration, len(started))
		for range plan.Scrapes {
			began := time.Now()
			if err := scrapeAll(latencies); err != nil {
				return nil, err
			}
			time.Sleep(plan.Every - time.Since(began))
		}
		for i, r := range started {
			u, err := ReadUsage(r.pid())
			if err != nil {
				return nil, err
			}
			n := time.Duration(plan.Scrapes)
			rd := round{cpu: (u.CPU - before[i].CPU) / n, rss: u.RSS, runs: -1,
				p50: percentile(latencies[i], 50), p99: percentile(latencies[i], 99)}
			if after, ok := r.runs(last[i]); ok {
				rd.runs = (after - runsBefore[i]) / float64(plan.Scrapes)
			}
			rounds[i] = append(rounds[i], rd)
		}
	}
	rows := make([]Row, len(started))
	for i, r := range started {
		u, err := ReadUsage(r.pid())
		if err != nil {
			return nil, err
		}
		rs := rounds[i]
		rows[i] = Row{
			Host: host, Exporter: r.Exporter, Via: r.Via(),
			CPU:      median(rs, func(r round) time.Duration { return r.cpu }),
			Runs:     median(rs, func(r round) float64 { return r.runs }),
			P50:      median(rs, func(r round) time.Duration { return r.p50 }),
			P99:      median(rs, func(r round) time.Duration { return r.p99 }),
			RSS:      median(rs, func(r round) uint64 { return r.rss }),
			HWM:      u.HWM,
			Series:   last[i].Series(),
			TimedOut: timedOut[i],
			Notes:    notes(r, last[i]),
		}
		if n := timedOut[i]; n > 0 {
			rows[i].Notes = append(rows[i].Notes, fmt.Sprintf("%d of %d scrapes took longer than %v", n, plan.Rounds*plan.Scrapes, plan.Timeout))
		}
	}
	return rows, nil
}

// scrapeWithin scrapes url with a client whose timeout is timeout, when
// set: a scrape that runs out of it is late, at that latency, and not an
// error.
func scrapeWithin(client *http.Client, url string, timeout time.Duration) (s Scrape, late bool, err error) {
	s, err = scrape(client, url)
	var netErr net.Error
	if timeout > 0 && errors.As(err, &netErr) && netErr.Timeout() {
		return Scrape{Latency: timeout}, true, nil
	}
	return s, false, err
}

// notes says what did not work in an exporter's last scrape: its failed
// collectors, a zpool_exporter without vdev I/O counters, and the
// commands the stand-in had no output for.
func notes(r *running, last Scrape) []string {
	var n []string
	if r.Exporter == Ours {
		for _, c := range last.Failed("zfs_exporter_collector_success") {
			n = append(n, "collector "+c+" failed")
		}
		if _, ok := last.Sum("zfs_vdev_read_bytes_total"); !ok {
			n = append(n, "no vdev I/O counters")
		}
	}
	for _, line := range r.unanswered() {
		n = append(n, "no answer to `"+line+"`")
	}
	return n
}

// percentile is the nearest-rank percentile p of the samples.
func percentile(samples []time.Duration, p int) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	return s[max(rank, 1)-1]
}

// median is the median of a figure over the rounds (the lower of the two
// middle ones for an even count).
func median[T uint64 | float64 | time.Duration](rounds []round, figure func(round) T) T {
	if len(rounds) == 0 {
		return 0
	}
	v := make([]T, len(rounds))
	for i, r := range rounds {
		v[i] = figure(r)
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}
