package runner

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// defaultPath is used when the exporter itself runs without PATH.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// maxSweepPoll bounds the pause between two looks at what a process left
// behind that has not gone yet.
const maxSweepPoll = time.Second

// devNull is the children's stdin, opened once and never closed: exec
// opens /dev/null anew for every child that has none, and closes it after.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// process is one started child, leader of its own process group, with
// what it brings along: the rest of its group, and processes outside the
// group that hold its output pipes (a grandchild that called setsid, or
// sudo's command in a session of its own). Its command line stays taken
// until all of it is gone.
type process struct {
	cmd     *exec.Cmd
	pid     int
	outputs [2]*output    // stdout, stderr
	exited  chan struct{} // closed once the leader is reaped
	err     error         // from Wait; read only after exited is closed
	gone    chan struct{} // closed once nothing of the process is left

	mu      sync.Mutex
	sweeper sweeper      // guarded by mu
	left    atomic.Value // string: what is left once the leader exited
}

// startProcess starts name in a new process group with the C locale,
// copying its stdout and stderr to the writers. The binary is looked up in
// PATH now, not when the Exec was made, so a test can put a stand-in zpool
// first on PATH. wait reaps the child; tests swap it to delay reaping.
func startProcess(name string, args []string, env []string, stdout, stderr io.Writer, wait func(*exec.Cmd) error) (*process, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if null, err := devNull(); err == nil {
		cmd.Stdin = null // else exec opens /dev/null itself, or fails to
	}
	setProcessGroup(cmd)
	// Pipes of our own rather than exec's: exec's Wait waits for whoever
	// holds them, while here the leader's exit and the pipes' end are told
	// apart, and the pipes tell who still holds them.
	var outputs [2]*output
	var writeEnds [2]*os.File
	for i := range outputs {
		r, w, err := os.Pipe()
		if err != nil {
			for _, o := range outputs[:i] {
				o.r.Close()
			}
			for _, w := range writeEnds[:i] {
				w.Close()
			}
			return nil, err
		}
		outputs[i] = &output{r: r, ino: pipeInode(r), ended: make(chan struct{}), eof: make(chan struct{})}
		writeEnds[i] = w
	}
	cmd.Stdout, cmd.Stderr = writeEnds[0], writeEnds[1]
	err := cmd.Start()
	for _, w := range writeEnds {
		w.Close() // the child holds its own copies
	}
	if err != nil {
		for _, o := range outputs {
			o.r.Close()
		}
		return nil, startError(err)
	}
	p := &process{
		cmd:     cmd,
		pid:     cmd.Process.Pid,
		outputs: outputs,
		exited:  make(chan struct{}),
		gone:    make(chan struct{}),
	}
	go outputs[0].copy(stdout)
	go outputs[1].copy(stderr)
	go p.reap(wait)
	return p, nil
}

// reap waits for the leader, then kills and waits out what it left
// behind. That is killed at once: the output is whole once the leader has
// exited, and a child it left running would otherwise outlive every run,
// or keep the pipes open past the end.
func (p *process) reap(wait func(*exec.Cmd) error) {
	awaitExit(p.pid)
	err := wait(p.cmd)
	p.mu.Lock()
	p.err = err
	left := p.sweepLocked(false)
	p.mu.Unlock()
	for _, o := range p.outputs {
		o.leaderExited()
	}
	close(p.exited)
	for poll := time.Millisecond; left != ""; poll = min(2*poll, maxSweepPoll) {
		p.pause(poll)
		p.mu.Lock()
		left = p.sweepLocked(true)
		p.mu.Unlock()
	}
	close(p.gone)
}

// sweepLocked kills what is left of the process after its leader exited
// and records what that is: "" once nothing is. Looking for the processes
// holding its pipes costs a walk of /proc; the first sweep, right after the
// leader's exit, leaves that out, since the pipes usually close a moment
// later. Called with p.mu held.
func (p *process) sweepLocked(findHolders bool) string {
	left := p.sweeper.sweep(p.pid, p.openPipes(), findHolders)
	p.left.Store(left)
	return left
}

// pause waits for d, or less if an output pipe closes meanwhile.
func (p *process) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	var eofs [2]<-chan struct{}
	for i, o := range p.outputs {
		if !isClosed(o.eof) {
			eofs[i] = o.eof
		}
	}
	select {
	case <-t.C:
	case <-eofs[0]:
	case <-eofs[1]:
	}
}

func (p *process) hasExited() bool { return isClosed(p.exited) }

// kill sends SIGKILL to the whole process group, so that children the
// command forked die with it, and to the processes outside it that hold
// its output. Once the leader is reaped its pid may be reused, so the group
// is then left to reap, which kills what is left of it.
func (p *process) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.hasExited() && !killProcessGroup(p.pid) {
		_ = p.cmd.Process.Kill() // no group here; make sure the child dies
	}
	p.sweeper.killHolders(p.openPipes())
}

// openPipes lists the inodes of the output pipes that a process still
// holds. The copy may not have read to the end of a pipe that none holds:
// what is left in it is output, not a process to look for.
func (p *process) openPipes() []uint64 {
	var open []uint64
	for _, o := range p.outputs {
		if !isClosed(o.eof) && hasWriter(o.r) {
			open = append(open, o.ino)
		}
	}
	return open
}

// waitOutput waits until the outputs have ended: at their end, or once the
// leader has exited and nothing more is there to read.
func (p *process) waitOutput() {
	for _, o := range p.outputs {
		<-o.ended
	}
}

// waitGone waits at most d for all of the process to go and reports
// whether it has. A process stuck in the kernel (D state) cannot die even
// after SIGKILL, and callers must not hang with it.
func (p *process) waitGone(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.gone:
		return true
	case <-t.C:
		return false
	}
}

// leftover says what of the process is still there, for errors and stats:
// "pid 1240 (stat, state D) of its process group". It does not wait for a
// sweep under way.
func (p *process) leftover() string {
	if !p.hasExited() {
		return describeProcess(p.pid)
	}
	if left, _ := p.left.Load().(string); left != "" {
		return left
	}
	return "nothing" // it has just gone
}

// errPipeEmpty is readPipe's word for an empty pipe that is the end.
var errPipeEmpty = errors.New("pipe empty")

// output is one of a child's output pipes, copied to a writer. It ends at
// EOF, or once the leader has exited and the pipe is empty: what the
// leader wrote is all there, and a process stuck in the kernel with the
// pipe open must not hold up the result. Its copy goes on reading to EOF,
// which says that no process holds the pipe any more.
type output struct {
	r          *os.File
	ino        uint64        // the pipe's inode, to find who holds it
	leaderGone atomic.Bool   // the leader exited: an empty pipe is the end
	ended      chan struct{} // closed at the end of what is copied
	eof        chan struct{} // closed once no process holds the pipe
	endOnce    sync.Once
}

func (o *output) copy(w io.Writer) {
	defer close(o.eof)
	defer o.end()
	defer o.r.Close()
	bp := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(bp)
	buf := *bp
	for {
		n, err := readPipe(o.r, buf, o.emptyEnds)
		if n > 0 && w != nil && !isClosed(o.ended) {
			if _, werr := w.Write(buf[:n]); werr != nil {
				w = nil // the reader has gone; drain the pipe
			}
		}
		switch {
		case errors.Is(err, errPipeEmpty):
			o.end()
		case err != nil:
			return // EOF, or the pipe failed
		}
	}
}

// copyBuffers holds the buffers that outputs are read into, 32 KiB each:
// a run would otherwise allocate two, and the garbage collector reclaim
// them, for every command.
var copyBuffers = sync.Pool{New: func() any {
	b := make([]byte, 32<<10)
	return &b
}}

// emptyEnds says whether an empty pipe is the end of the output.
func (o *output) emptyEnds() bool { return o.leaderGone.Load() && !isClosed(o.ended) }

func (o *output) end() { o.endOnce.Do(func() { close(o.ended) }) }

// leaderExited tells the copy that an empty pipe is now the end, and wakes
// it if it waits for data.
func (o *output) leaderExited() {
	o.leaderGone.Store(true)
	_ = o.r.SetReadDeadline(time.Unix(1, 0)) // fails once the copy has closed the pipe
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// childEnv is the child's environment: the C locale, so that numbers, dates
// and messages are the ones the parsers know, and little else from ours.
// PATH finds the tools, TZ keeps dates in the exporter's local time, and
// ZPOOL_VDEV_NAME_* keep vdev names as the administrator's zpool prints
// them. extra (KEY=VALUE) comes from the configuration; it cannot change the
// locale.
func childEnv(extra []string) []string {
	env := []string{"LC_ALL=C"}
	path := os.Getenv("PATH")
	if path == "" {
		path = defaultPath
	}
	env = append(env, "PATH="+path)
	if tz, ok := os.LookupEnv("TZ"); ok {
		env = append(env, "TZ="+tz)
	}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ZPOOL_VDEV_NAME_") {
			env = append(env, kv)
		}
	}
	for _, kv := range extra {
		if !isLocaleVar(kv) {
			env = append(env, kv)
		}
	}
	return env
}

func isLocaleVar(kv string) bool {
	key, _, _ := strings.Cut(kv, "=")
	return key == "LANG" || key == "LANGUAGE" || strings.HasPrefix(key, "LC_")
}

// limitedBuffer keeps at most limit bytes. Past the limit it either signals
// full (stdout: the run fails) or silently drops the rest (stderr: the
// start explains the failure). It keeps accepting writes, so the child is
// never blocked on a full pipe while it is being killed.
type limitedBuffer struct {
	mu       sync.Mutex
	buf      []byte
	limit    int
	truncate bool          // drop the excess instead of signalling full
	full     chan struct{} // closed when more than limit bytes arrived
	fullOnce sync.Once
}

func newLimitedBuffer(limit int, truncate bool) *limitedBuffer {
	return &limitedBuffer{limit: limit, truncate: truncate, full: make(chan struct{})}
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.limit - len(b.buf)
	if len(p) <= room {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		b.buf = append(b.buf, p[:room]...)
	}
	if !b.truncate {
		b.fullOnce.Do(func() { close(b.full) })
	}
	return len(p), nil
}

// grow makes room for n bytes at once: an output expected to be large
// then takes no copies as it comes.
func (b *limitedBuffer) grow(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > cap(b.buf)-len(b.buf) {
		b.buf = append(make([]byte, 0, len(b.buf)+n), b.buf...)
	}
}

// Bytes returns what was written so far. The slice is the buffer's own,
// not a copy: a caller reads it once the writers are done, and the cap
// keeps an append by the caller from writing into the buffer.
func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf[:len(b.buf):len(b.buf)]
}

func (b *limitedBuffer) String() string { return string(b.Bytes()) }
