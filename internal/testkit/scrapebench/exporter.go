package scrapebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
)

// Exporters under measurement.
const (
	Ours = "zpool_exporter"
	Peer = "pdf/zfs_exporter"
)

// Launch is one exporter to start over a host.
type Launch struct {
	Exporter string        // Ours or Peer
	Replay   bool          // Ours reads the host as a replay rather than through the stand-in zpool
	Delay    time.Duration // how long the stand-in takes per answer
	// Datasets runs the stand-in zfs beside the stand-in zpool, whose
	// snapshot listings take SnapshotDelay, and the exporter's dataset
	// collectors: ours with its snapshot listing every SnapshotInterval
	// and its cap of datasets unless AllDatasets, the peer with its
	// snapshot collector when Snapshots.
	Datasets         bool
	SnapshotDelay    time.Duration
	SnapshotInterval time.Duration
	AllDatasets      bool
	Snapshots        bool
}

// Via says how the exporter reads the host, for the table.
func (l Launch) Via() string {
	switch {
	case l.Replay:
		return "replay"
	case l.Delay > 0:
		return fmt.Sprintf("stand-in, %d ms per answer", l.Delay.Milliseconds())
	case l.Datasets && l.Exporter == Ours:
		cap := "the first 2,000 datasets"
		if l.AllDatasets {
			cap = "every dataset"
		}
		return fmt.Sprintf("stand-ins zpool and zfs (snapshots in %v); %s, snapshots listed every %v", l.SnapshotDelay, cap, l.SnapshotInterval)
	case l.Datasets && l.Snapshots:
		return fmt.Sprintf("stand-ins zpool and zfs (snapshots in %v); filesystems, volumes and snapshots", l.SnapshotDelay)
	case l.Datasets:
		return fmt.Sprintf("stand-ins zpool and zfs (snapshots in %v); filesystems and volumes, its default", l.SnapshotDelay)
	}
	return "stand-in"
}

// Binaries are the programs a measurement starts.
type Binaries struct {
	Ours    string // zpool_exporter
	Peer    string // pdf/zfs_exporter; "" when absent
	StandIn string // the stand-in zpool of internal/testkit/hostgen/cmd/zpool
	ZFS     string // the stand-in zfs of internal/testkit/hostgen/cmd/zfs, for hosts with datasets
}

// running is a started exporter.
type running struct {
	Launch
	cmd     *exec.Cmd
	url     string
	runsLog string // the stand-in's log of runs; "" for a replay
	exited  chan error
}

// start starts an exporter over the host in dir, with its files (the
// stand-in's copy and settings, its log) in work.
func start(l Launch, bin Binaries, host, work string) (*running, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	addr, err := freeAddress()
	if err != nil {
		return nil, err
	}
	r := &running{Launch: l, url: "http://" + addr + "/metrics", exited: make(chan error, 1)}
	var args, env []string
	standIn := filepath.Join(work, "zpool")
	standInZFS := filepath.Join(work, "zfs")
	if !l.Replay {
		r.runsLog = filepath.Join(work, "runs.log")
		settings := hostgen.StandIn{Host: host, Delay: l.Delay, Log: r.runsLog, SnapshotDelay: l.SnapshotDelay}
		if err := hostgen.WriteStandIn(work, settings); err != nil {
			return nil, err
		}
		if err := copyFile(bin.StandIn, standIn); err != nil {
			return nil, err
		}
		if l.Datasets {
			if bin.ZFS == "" {
				return nil, errors.New("a host with datasets needs the stand-in zfs (-zfs-standin)")
			}
			if err := copyFile(bin.ZFS, standInZFS); err != nil {
				return nil, err
			}
		}
	}
	switch {
	case l.Exporter == Peer:
		// It finds zpool, and zfs, in PATH; without datasets it has no zfs
		// to run.
		args = []string{bin.Peer, "--web.listen-address=" + addr}
		if !l.Datasets {
			args = append(args, "--no-collector.dataset-filesystem", "--no-collector.dataset-volume")
		}
		if l.Snapshots {
			args = append(args, "--collector.dataset-snapshot")
		}
		env = append(os.Environ(), "PATH="+work+string(os.PathListSeparator)+os.Getenv("PATH"))
	case l.Replay:
		args = []string{bin.Ours, "--web.listen-address=" + addr, "--zpool.replay-dir=" + host}
	default:
		args = []string{bin.Ours, "--web.listen-address=" + addr, "--zpool.command=" + standIn,
			"--kstat.path=" + filepath.Join(host, "kstat")}
		if l.Datasets {
			args = append(args, "--zfs.command="+standInZFS,
				"--collector.dataset.snapshot-interval="+l.SnapshotInterval.String())
			if l.AllDatasets {
				args = append(args, "--collector.dataset.max=0")
			}
		} else {
			// As the peer's: a host without datasets has no zfs to run.
			args = append(args, "--no-collector.dataset")
		}
	}
	log, err := os.Create(filepath.Join(work, "exporter.log"))
	if err != nil {
		return nil, err
	}
	r.cmd = exec.Command(args[0], args[1:]...)
	r.cmd.Env = env
	r.cmd.Stdout, r.cmd.Stderr = log, log
	if err := r.cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	go func() {
		r.exited <- r.cmd.Wait()
		log.Close()
	}()
	if err := r.waitListening(addr, 30*time.Second); err != nil {
		r.stop()
		return nil, fmt.Errorf("%s (%s): %w; see %s", l.Exporter, l.Via(), err, log.Name())
	}
	return r, nil
}

// waitListening waits until the exporter accepts connections: a request
// to it would start a scrape, which the measurement counts.
func (r *running) waitListening(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			return c.Close()
		}
		select {
		case err := <-r.exited:
			return fmt.Errorf("exited before listening: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, timeout)
		}
	}
}

func (r *running) pid() int { return r.cmd.Process.Pid }

// runs counts the zpool and zfs runs so far: the stand-ins' log lines,
// or for a replay the exporter's own count in the last scrape. ok is false
// when neither tells.
func (r *running) runs(last Scrape) (n float64, ok bool) {
	if r.runsLog == "" {
		return last.Sum("zfs_exporter_command_runs_total")
	}
	data, err := os.ReadFile(r.runsLog)
	if err != nil {
		return 0, errors.Is(err, os.ErrNotExist)
	}
	return float64(strings.Count(string(data), "\n")), true
}

// unanswered lists the command lines the stand-in had no output for.
func (r *running) unanswered() []string {
	data, _ := os.ReadFile(r.runsLog)
	var lines []string
	for line := range strings.Lines(string(data)) {
		if l, ok := strings.CutPrefix(strings.TrimSpace(line), "unanswered: "); ok && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	return lines
}

// stop ends the exporter, and kills it when it takes more than a few
// seconds.
func (r *running) stop() {
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(10 * time.Second):
		r.cmd.Process.Kill()
		<-r.exited
	}
}

// freeAddress returns a loopback address no one listens on now.
func freeAddress() (string, error) {
	var lc net.ListenConfig
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
