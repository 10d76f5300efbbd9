package collector

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

func newTestSampler(interval time.Duration) *IostatSampler {
	s := NewIostatSampler("zpool", interval, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	s.now = func() time.Time { return testNow }
	return s
}

// consume integrates a stream as the newest stream would, and returns
// when it ends.
func (s *IostatSampler) consume(out io.Reader) error {
	return s.integrate(out, s.generation, nil)
}

func leafWrite(t *testing.T, s *IostatSampler, pool, leaf string) float64 {
	t.Helper()
	rows, ok := s.Counters(pool)
	if !ok {
		t.Fatalf("no counters for pool %s", pool)
	}
	for _, r := range rows {
		if r.Name == leaf {
			return r.WriteBytes
		}
	}
	t.Fatalf("no row %s in pool %s", leaf, pool)
	return 0
}

// A real zfs-fuse stream of three one-second reports while data was
// written: the first (since import) is skipped, the next two integrated.
func TestSamplerIntegratesRates(t *testing.T) {
	f := sample.MustRead(t, "../internal/zfs/zpool/testdata/zfs-fuse/interval__iostat-v-1-3.txt")
	s := newTestSampler(time.Second)
	if err := s.consume(strings.NewReader(string(f.Body))); err != nil {
		t.Fatal(err)
	}
	const leaf = "/var/tmp/zfs-fuse-capture/m1"
	// Reports 2 and 3 print 12.4M and 10.5M per second for m1.
	want := (12.4 + 10.5) * (1 << 20)
	if got := leafWrite(t, s, "cmirror", leaf); math.Abs(got-want) > 1 {
		t.Errorf("m1 write bytes = %v, want %v", got, want)
	}
	// A restarted stream adds to the same counters; its first report is
	// skipped again.
	if err := s.consume(strings.NewReader(string(f.Body))); err != nil {
		t.Fatal(err)
	}
	if got := leafWrite(t, s, "cmirror", leaf); math.Abs(got-2*want) > 1 {
		t.Errorf("after a restart m1 write bytes = %v, want %v", got, 2*want)
	}
}

func TestSamplerKeepsCountersAcrossLayoutChangeAndForgetsGonePools(t *testing.T) {
	mirror := sample.MustRead(t, "../internal/zfs/zpool/testdata/zfs-fuse/interval__iostat-v-1-3.txt")
	s := newTestSampler(2 * time.Second)
	if err := s.consume(strings.NewReader(string(mirror.Body))); err != nil {
		t.Fatal(err)
	}
	const leaf = "/var/tmp/zfs-fuse-capture/m1"
	if got, want := leafWrite(t, s, "cmirror", leaf), 2*(12.4+10.5)*(1<<20); math.Abs(got-want) > 1 {
		t.Errorf("with a 2 s interval m1 write bytes = %v, want %v", got, want)
	}
	poolBefore := leafWrite(t, s, "cmirror", "cmirror")
	// The same pool with m2 replaced by m3: m1, the mirror and the pool
	// keep counting; m3 starts at 0.
	other := strings.ReplaceAll(string(mirror.Body), "m2", "m3")
	if err := s.consume(strings.NewReader(other)); err != nil {
		t.Fatal(err)
	}
	if got, want := leafWrite(t, s, "cmirror", leaf), 4*(12.4+10.5)*(1<<20); math.Abs(got-want) > 1 {
		t.Errorf("after a layout change m1 write bytes = %v, want %v (carried over)", got, want)
	}
	if got := leafWrite(t, s, "cmirror", "cmirror"); math.Abs(got-2*poolBefore) > 1 {
		t.Errorf("after a layout change the pool's write bytes = %v, want %v (carried over)", got, 2*poolBefore)
	}
	if got, want := leafWrite(t, s, "cmirror", "/var/tmp/zfs-fuse-capture/m3"), leafWrite(t, s, "cmirror", leaf)/2; math.Abs(got-want) > 1e6 {
		t.Errorf("the new leaf m3 write bytes = %v, want about %v (counted from 0)", got, want)
	}
	// A report without the pool (destroyed) forgets it.
	two, err := os.ReadFile("../internal/zfs/zpool/testdata/zfs-fuse/two-pools__iostat-v.txt")
	if err != nil {
		t.Fatal(err)
	}
	body := string(two)[strings.Index(string(two), "# ---\n")+6:]
	ctwoOnly := body[:strings.Index(body, "cmirror")] + body[strings.Index(body, "ctwo"):]
	if err := s.consume(strings.NewReader(ctwoOnly)); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Counters("cmirror"); ok {
		t.Errorf("counters of a pool that left the stream are still served")
	}
	if _, ok := s.Counters("ctwo"); !ok {
		t.Errorf("no counters for ctwo")
	}
}

// zpool iostat sleeps its interval after each report: in a slow guest the
// reports of `zpool iostat -v 1` came every 1.2 s or more, and their
// rates were over that time. The counters take the time between reports.
func TestSamplerTakesTheStreamsPeriod(t *testing.T) {
	f := sample.MustRead(t, "../internal/zfs/zpool/testdata/zfs-fuse/interval__iostat-v-1-3.txt")
	s := newTestSampler(time.Second)
	at := testNow
	s.now = func() time.Time { at = at.Add(1200 * time.Millisecond); return at }
	if err := s.consume(strings.NewReader(string(f.Body))); err != nil {
		t.Fatal(err)
	}
	const leaf = "/var/tmp/zfs-fuse-capture/m1"
	want := (12.4 + 10.5) * (1 << 20) * 1.2
	if got := leafWrite(t, s, "cmirror", leaf); math.Abs(got-want) > 1 {
		t.Errorf("m1 write bytes = %v, want %v", got, want)
	}
	if last, _ := s.LastReport(); !last.Equal(at) {
		t.Errorf("last report at %v, want the third report's %v", last, at)
	}

	// A report held up in the kernel covers the longer time.
	s = newTestSampler(time.Second)
	arrivals := []time.Duration{1200 * time.Millisecond, 3500 * time.Millisecond, 4700 * time.Millisecond}
	s.now = func() time.Time { at, arrivals = testNow.Add(arrivals[0]), arrivals[1:]; return at }
	if err := s.consume(strings.NewReader(string(f.Body))); err != nil {
		t.Fatal(err)
	}
	if got, want := leafWrite(t, s, "cmirror", leaf), (12.4*2.3+10.5*1.2)*(1<<20); math.Abs(got-want) > 1 {
		t.Errorf("with the second report 2.3 s after the first, m1 write bytes = %v, want %v", got, want)
	}
}

// unreapedStream is a stream whose killed process cannot be reaped (stuck
// in the kernel): reading ends with ctx, and Close says what it could not
// end, as the runner's streams do.
type unreapedStream struct {
	ctx    context.Context
	line   string
	closed atomic.Bool
}

func (s *unreapedStream) Read([]byte) (int, error) {
	<-s.ctx.Done()
	return 0, s.ctx.Err()
}

func (s *unreapedStream) Close() error {
	s.closed.Store(true)
	return &runner.Error{Command: s.line, ExitCode: -1, Err: errors.New("stopped: context canceled; killed process group 42, which has not exited 1s later")}
}

// unreapedStreams is a StreamFunc of unreapedStreams, which it hands out
// on the channel as they start.
func unreapedStreams() (StreamFunc, <-chan *unreapedStream) {
	started := make(chan *unreapedStream, 1)
	return func(ctx context.Context, cmd runner.Command) (io.ReadCloser, error) {
		s := &unreapedStream{ctx: ctx, line: cmd.Line()}
		started <- s
		return s, nil
	}, started
}

// runUntilCanceled runs a sampler until its stream started, cancels it,
// and returns the stream once Run has returned.
func runUntilCanceled(t *testing.T, s interface {
	Run(context.Context)
	Need()
}, started <-chan *unreapedStream) *unreapedStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	s.Need()
	var stream *unreapedStream
	select {
	case stream = <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not start")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return when ctx ended")
	}
	return stream
}

// Run returns only once it has closed its stream, which waits for the
// process: shutdown waits for Run so that no zpool iostat outlives the
// exporter. A process that could not be ended is logged.
func TestSamplerRunEndsItsStream(t *testing.T) {
	refuse := runnerFunc(func(ctx context.Context, name string, args ...string) ([]byte, error) {
		return nil, &runner.Error{Command: runner.CommandLine(name, args...), ExitCode: 2, Err: errors.New("exit status 2")}
	})
	stream, started := unreapedStreams()
	var log bytes.Buffer
	s := NewIostatSampler("zpool", time.Second, stream, refuse, slog.New(slog.NewTextHandler(&log, nil)))
	st := runUntilCanceled(t, s, started)
	if !st.closed.Load() {
		t.Errorf("Run returned without closing its stream")
	}
	if st.line != "zpool iostat -v 1" {
		t.Errorf("stream %q, want zpool iostat -v 1", st.line)
	}
	if !strings.Contains(log.String(), "has not exited") || !strings.Contains(log.String(), "process group 42") {
		t.Errorf("log does not tell of the process that could not be ended:\n%s", &log)
	}
}

// pipeStreams is a StreamFunc whose streams the test writes, handed out on
// the channel as they start; a stream's pipe breaks when its process would
// be killed.
func pipeStreams() (StreamFunc, <-chan *pipeStream) {
	started := make(chan *pipeStream, 2)
	return func(ctx context.Context, cmd runner.Command) (io.ReadCloser, error) {
		pr, pw := io.Pipe()
		go func() {
			<-ctx.Done()
			pw.CloseWithError(ctx.Err())
		}()
		started <- &pipeStream{ctx: ctx, w: pw, line: cmd.Line()}
		return pr, nil
	}, started
}

type pipeStream struct {
	ctx  context.Context
	w    *io.PipeWriter
	line string
}

// When a new pool makes the sampler start its stream again, the I/O of
// the switch still counts: the old stream goes on until the new one has
// counted an interval, and each counts only the time the other has not.
// Stopping the old one first lost a restart's delay and a whole interval,
// all of a short benchmark's writes.
func TestSamplerHandsOverToTheNextStreamWithoutLosingTime(t *testing.T) {
	f := sample.MustRead(t, "../internal/zfs/zpool/testdata/zfs-fuse/interval__iostat-v-1-3.txt")
	blocks := strings.SplitAfter(string(f.Body), "-----\n\n")
	report := blocks[1] // m1 writes 12.4M a second
	const leaf = "/var/tmp/zfs-fuse-capture/m1"
	refuse := runnerFunc(func(ctx context.Context, name string, args ...string) ([]byte, error) {
		return nil, &runner.Error{Command: runner.CommandLine(name, args...), ExitCode: 2, Err: errors.New("exit status 2")}
	})
	stream, started := pipeStreams()
	s := NewIostatSampler("zpool", time.Second, stream, refuse, slog.New(slog.NewTextHandler(io.Discard, nil)))
	var clock atomic.Int64
	s.now = func() time.Time { return testNow.Add(time.Duration(clock.Load())) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	s.Need()
	next := func() *pipeStream {
		t.Helper()
		select {
		case st := <-started:
			return st
		case <-time.After(5 * time.Second):
			t.Fatal("no stream started")
			return nil
		}
	}
	// write prints a report at the given second and waits until it is
	// integrated; a stream already ended takes nothing.
	write := func(st *pipeStream, at float64) {
		t.Helper()
		clock.Store(int64(at * float64(time.Second)))
		if _, err := io.WriteString(st.w, report); err != nil {
			t.Logf("the report at %.1f s found its stream ended: %v", at, err)
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for last, _ := s.LastReport(); !last.Equal(s.now()); last, _ = s.LastReport() {
			if time.Now().After(deadline) {
				t.Fatalf("the report at %.1f s was not integrated", at)
			}
			time.Sleep(time.Millisecond)
		}
	}

	first := next()
	write(first, 0) // since import: counts nothing
	write(first, 1)
	s.Expect([]string{"cmirror", "cnew"}) // cnew is missing from the stream
	write(first, 2)
	write(first, 3)
	clock.Store(int64(4500 * time.Millisecond))
	s.Expect([]string{"cmirror", "cnew"}) // missing for more than three intervals
	second := next()
	// The runner starts one process per command line.
	if first.line == second.line || !strings.HasPrefix(second.line, "zpool iostat -v 1") {
		t.Errorf("streams %q and %q: want two lines of zpool iostat -v 1", first.line, second.line)
	}
	write(second, 4.6) // since import: counts nothing
	write(first, 5)
	write(second, 5.6) // counts 5 s to 5.6 s, the part the first has not
	select {
	case <-first.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first stream was not ended once the second had counted an interval")
	}
	write(second, 6.6)
	if got, want := leafWrite(t, s, "cmirror", leaf), 12.4*(1<<20)*6.6; math.Abs(got-want) > 1 {
		t.Errorf("m1 write bytes = %.0f, want %.0f: 6.6 s at 12.4M/s; %.2f s were lost or counted twice", got, want, (want-got)/(12.4*(1<<20)))
	}
}
