package collector

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// IostatSampler turns a long-running `zpool iostat -v INTERVAL` into
// per-vdev counters, for zpools without vdev I/O properties (OpenZFS
// before 2.2, FreeBSD's older ZFS, illumos, Solaris, zfs-fuse).
//
// Each report after the first gives operations and bytes per second over
// one interval; rate times interval, summed, is the counter. The first
// report of a stream, and the first report a pool appears in, average
// since import and are skipped. Counters survive restarts of the stream
// and start at 0 when the exporter starts, which Prometheus's rate()
// handles like any counter reset. A restart to pick up a new pool loses
// nothing (see runStream); a stream that ends on its own loses the time
// until the next one has counted an interval.
type IostatSampler struct {
	streamSampler

	zpool   string
	stream  StreamFunc
	runner  runner.Runner
	logger  *slog.Logger
	restart chan struct{} // Expect asks the stream to start again

	// Guarded by mu.
	pools      map[string]*sampledPool
	missing    map[string]time.Time // pools status shows but the stream does not, since when
	generation int                  // of the newest stream
}

type sampledPool struct {
	// rows holds the last report's layout, with cumulative operations and
	// bytes in place of the rates.
	rows []zpool.IostatRow
	// until is the end of the last interval counted, by the stream of
	// generation by.
	until time.Time
	by    int
}

// NewIostatSampler returns a sampler; Run starts it.
func NewIostatSampler(zpoolCmd string, interval time.Duration, stream StreamFunc, run runner.Runner, logger *slog.Logger) *IostatSampler {
	return &IostatSampler{
		streamSampler: newStreamSampler(interval),
		zpool:         zpoolCmd,
		stream:        stream,
		runner:        run,
		logger:        logger,
		pools:         map[string]*sampledPool{},
		missing:       map[string]time.Time{},
		restart:       make(chan struct{}, 1),
	}
}

// Run samples, from the first call of Need until ctx ends, restarting the
// stream with back-off when zpool exits or prints something unreadable.
// Where vdev properties give the counters, nothing calls Need and no zpool
// iostat runs at all. Run returns once the stream's process has been
// killed and reaped, or given up on after the runner's kill grace, so that
// a caller that waits for Run leaves no zpool behind.
func (s *IostatSampler) Run(ctx context.Context) {
	var args []string
	s.supervise(ctx, func(ctx context.Context) error {
		if args == nil {
			args = s.streamArgs(ctx)
		}
		return s.runStream(ctx, args)
	}, func(err error, delay time.Duration) {
		s.logger.Warn("zpool iostat stream ended; restarting", "err", err, "in", delay)
	})
}

// streamArgs returns the arguments of the stream, with exact figures (-p)
// where this zpool has them: human units round to three digits.
func (s *IostatSampler) streamArgs(ctx context.Context) []string {
	args := []string{"iostat", "-v"}
	probe, cancel := context.WithTimeout(ctx, 10*time.Second)
	if _, err := s.runner.Run(probe, runner.Cmd(s.zpool, "iostat", "-v", "-p")); err == nil {
		args = append(args, "-p")
	}
	cancel()
	args = append(args, formatSeconds(s.interval))
	s.logger.Info("sampling per-vdev I/O from a zpool iostat stream", "command", s.zpool+" "+strings.Join(args, " "))
	return args
}

// formatSeconds writes an interval as zpool iostat takes it: seconds,
// with a fraction where there is one ("0.5").
func formatSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

// runStream runs the stream until it ends or ctx does. When Expect asks
// for a restart, the next stream starts beside it, and it ends only once
// the next has counted an interval: a stream's first report averages since
// import and counts nothing, so stopping first would lose the I/O of a
// restart's delay and a whole interval, a short benchmark's all.
func (s *IostatSampler) runStream(ctx context.Context, args []string) error {
	cur, err := s.open(ctx, args)
	if err != nil {
		return err
	}
	s.setRunning(true)
	defer s.setRunning(false)
	var next *zpoolStream
	defer func() {
		s.close(cur)
		s.close(next)
	}()
	for {
		restart, nextCounted, nextEnded := s.restart, (<-chan struct{})(nil), (<-chan struct{})(nil)
		if next != nil {
			restart, nextCounted, nextEnded = nil, next.counted, next.done
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cur.done:
			if next == nil {
				if cur.err != nil {
					return cur.err
				}
				return io.EOF
			}
			s.close(cur)
			cur, next = next, nil
		case <-restart:
			s.logger.Info("starting a second zpool iostat stream to pick up new pools; the first ends once the second has counted an interval")
			if next, err = s.open(ctx, args); err != nil {
				s.logger.Warn("cannot start a second zpool iostat stream; the first goes on", "err", err)
			}
		case <-nextCounted:
			s.close(cur)
			cur, next = next, nil
		case <-nextEnded:
			s.logger.Warn("the second zpool iostat stream ended before it counted an interval; the first goes on", "err", next.err)
			s.close(next)
			next = nil
		}
	}
}

// zpoolStream is one running `zpool iostat -v INTERVAL` and the
// goroutine that integrates its reports.
type zpoolStream struct {
	generation int
	cancel     context.CancelFunc
	out        io.ReadCloser
	counted    chan struct{} // closed once the stream has counted an interval
	done       chan struct{} // closed when the integration ends, err set
	err        error
}

// open starts a stream and integrates its reports in the background.
func (s *IostatSampler) open(ctx context.Context, args []string) (*zpoolStream, error) {
	s.mu.Lock()
	generation := s.generation + 1
	s.mu.Unlock()
	if generation%2 == 0 {
		// The runner starts one process per command line: every other
		// stream asks for a count of reports that no run reaches, so that
		// it may run beside the one before.
		args = append(slices.Clip(args), neverReached)
	}
	ctx, cancel := context.WithCancel(ctx)
	out, err := s.stream(ctx, runner.Cmd(s.zpool, args...))
	if err != nil {
		cancel()
		return nil, err
	}
	s.mu.Lock()
	s.generation = generation
	s.mu.Unlock()
	st := &zpoolStream{generation: generation, cancel: cancel, out: out, counted: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		st.err = s.integrate(out, st.generation, st.counted)
	}()
	return st, nil
}

// neverReached is a count of reports, 68 years at one a second, that every
// zpool reads as a number.
const neverReached = "2147483647"

// close ends a stream's process and waits for its integration to end.
func (s *IostatSampler) close(st *zpoolStream) {
	if st == nil {
		return
	}
	st.cancel()
	if err := st.out.Close(); err != nil {
		s.logger.Warn("zpool iostat was killed but has not exited (stuck in the kernel on a suspended pool?); no stream starts again until it does", "err", err)
	}
	<-st.done
}

// integrate adds the reports of the stream of the given generation to the
// counters until it ends, and closes counted after its second report, the
// first that counts.
func (s *IostatSampler) integrate(out io.Reader, generation int, counted chan<- struct{}) error {
	seen := map[string]bool{}
	sc := zpool.NewIostatScanner(out)
	var prev time.Time
	for reports := 1; sc.Scan(); reports++ {
		now := s.now()
		s.add(sc.Report(), generation, seen, now, s.covered(prev, now))
		prev = now
		if reports == 2 && counted != nil {
			close(counted)
		}
	}
	return sc.Err()
}

// covered is the time a report's rates cover: the time since the last
// report of the stream. zpool iostat sleeps the interval after each
// report, and a report waits while zpool is held up in the kernel (a
// transaction group syncing), so reports come further apart than the
// interval, and its rates are over that time: rates times the interval
// alone counted 15 to 20 % short in an emulated guest, where one report in
// a few came 2.3 s after the last. A reader held up once sees two reports
// at once, one late and one early: their times still add up. Without a
// last report, or with a clock that does not move, it is the interval.
func (s *IostatSampler) covered(prev, now time.Time) float64 {
	if d := now.Sub(prev); !prev.IsZero() && d > 0 {
		return d.Seconds()
	}
	return s.interval.Seconds()
}

// add integrates one report of the stream of the given generation, whose
// rates cover secs seconds and which arrived at at. seen tells which pools
// this stream has already printed: a pool's first report averages since
// import. While two streams run, each counts only the part of its interval
// after the other's last report of the pool, and only the newer forgets
// pools it does not print.
func (s *IostatSampler) add(r zpool.IostatReport, generation int, seen map[string]bool, at time.Time, secs float64) {
	byPool := map[string][]zpool.IostatRow{}
	var order []string
	for _, row := range r.Rows {
		if _, ok := byPool[row.Pool]; !ok {
			order = append(order, row.Pool)
		}
		byPool[row.Pool] = append(byPool[row.Pool], row)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastReport = at
	for name := range s.pools {
		if _, ok := byPool[name]; !ok && generation == s.generation {
			delete(s.pools, name) // exported or destroyed
		}
	}
	for _, name := range order {
		rows := byPool[name]
		delete(s.missing, name)
		p, known := s.pools[name]
		switch {
		case !known:
			p = &sampledPool{rows: zeroed(rows)}
			s.pools[name] = p
		case !sameLayout(p.rows, rows):
			// A disk replaced, a log added: the vdevs still in their place
			// keep counting, new ones start at 0.
			p = &sampledPool{rows: carryOver(p.rows, rows), until: p.until, by: p.by}
			s.pools[name] = p
		}
		if !seen[name] {
			seen[name] = true
			continue
		}
		span := secs
		if p.by != generation && !p.until.IsZero() {
			span = min(secs, max(0, at.Sub(p.until).Seconds()))
		}
		for i, row := range rows {
			acc := &p.rows[i]
			acc.ReadOps += row.ReadOps * span
			acc.WriteOps += row.WriteOps * span
			acc.ReadBytes += row.ReadBytes * span
			acc.WriteBytes += row.WriteBytes * span
			acc.Alloc, acc.Free = row.Alloc, row.Free
		}
		if at.After(p.until) {
			p.until = at
		}
		p.by = generation
	}
}

func sameLayout(a, b []zpool.IostatRow) bool {
	return slices.EqualFunc(a, b, func(x, y zpool.IostatRow) bool {
		return x.Name == y.Name && x.Depth == y.Depth && x.Class == y.Class
	})
}

// carryOver returns the rows of a new layout at 0, but for those at the
// same place in the old one (the same names down from the pool), which
// keep their counters.
func carryOver(old, rows []zpool.IostatRow) []zpool.IostatRow {
	out := zeroed(rows)
	before := rowPaths(old)
	for path, i := range rowPaths(rows) {
		if j, ok := before[path]; ok {
			out[i].ReadOps, out[i].WriteOps = old[j].ReadOps, old[j].WriteOps
			out[i].ReadBytes, out[i].WriteBytes = old[j].ReadBytes, old[j].WriteBytes
		}
	}
	return out
}

// rowPaths names each row by the rows above it, class included:
// "tank/normal:raidz1-0/normal:sda". A path printed twice (old zpool's
// bare "mirror") is left out, and so is every row when depths are unknown.
func rowPaths(rows []zpool.IostatRow) map[string]int {
	paths := map[string]int{}
	twice := map[string]bool{}
	var stack []string
	for i, r := range rows {
		if r.Depth < 0 || r.Depth > len(stack) {
			return nil
		}
		stack = append(stack[:r.Depth], r.Class+":"+r.Name)
		path := strings.Join(stack, "/")
		if _, ok := paths[path]; ok {
			twice[path] = true
		}
		paths[path] = i
	}
	for path := range twice {
		delete(paths, path)
	}
	return paths
}

func zeroed(rows []zpool.IostatRow) []zpool.IostatRow {
	out := make([]zpool.IostatRow, len(rows))
	for i, r := range rows {
		out[i] = zpool.IostatRow{Pool: r.Pool, Name: r.Name, Depth: r.Depth, Class: r.Class, Alloc: r.Alloc, Free: r.Free}
	}
	return out
}

// Counters returns a pool's rows with cumulative operations and bytes in
// place of rates, or false when the stream has not reported the pool.
func (s *IostatSampler) Counters(pool string) ([]zpool.IostatRow, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pools[pool]
	if !ok {
		return nil, false
	}
	return slices.Clone(p.rows), true
}

// Expect tells the sampler which pools exist. Some zpool versions do not
// add pools created after the stream started: when a pool stays missing
// for three intervals, the stream is restarted.
func (s *IostatSampler) Expect(pools []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.running {
		return
	}
	now := s.now()
	for _, name := range pools {
		if _, ok := s.pools[name]; ok {
			continue
		}
		since, ok := s.missing[name]
		if !ok {
			s.missing[name] = now
			continue
		}
		if now.Sub(since) > 3*s.interval {
			delete(s.missing, name)
			select {
			case s.restart <- struct{}{}:
			default:
			}
		}
	}
}
