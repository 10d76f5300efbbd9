package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Replay serves captured outputs from a directory (or any fs.FS, such as
// captures embedded in the binary) instead of running commands, for tests,
// demos and offline analysis. It is safe for concurrent use.
//
// A capture is a file NAME.txt holding one command's stdout. The command
// line it answers is given by an optional header, which is authoritative:
//
//	# command: zpool status -p
//	# exit: 2
//	# stderr: invalid option 'p'
//	# ---
//
// The header is "# key: value" lines ended by "# ---"; other keys (such as
// "scenario", "source" or "notes", found in the project's sample files) are
// ignored, "stderr" may repeat, and the output starts after "# ---".
// Without a command header the command line is the file name decoded as
// CaptureFileName encodes it: "_" is a space and %XX a byte, so
// zpool_status_-p.txt answers "zpool status -p". Unless the header says
// otherwise, NAME.exit holds the exit status and NAME.stderr.txt the stderr.
// A line with "--" ahead of a pool's name is also answered by a capture of
// the line without it. A command without a capture fails with
// ErrNoCapture, as a command that does not exist would, so capability
// detection falls back.
//
// Steps replay a scenario over time. When the directory holds numbered
// subdirectories (000, 001, ...), each is a step; Advance, or
// ReplayOptions.StepEvery, moves to the next. Captures in the directory
// itself serve every step that lacks its own.
type Replay struct {
	fsys  fs.FS
	dir   string // what messages call fsys: the directory it comes from
	steps []replayStep
	base  map[string]capture // the directory's own captures, when steps are subdirectories
	opts  ReplayOptions
	began time.Time

	mu       sync.Mutex
	advanced int             // Advance calls
	told     map[string]bool // streams replayed from another interval, logged
	stats    statsTable
}

// ReplayOptions configures a Replay made by NewReplayWithOptions.
type ReplayOptions struct {
	// Scenarios makes steps of a flat directory laid out like the testbed
	// captures, "<scenario>__<anything>.txt": one step per scenario, in the
	// order given. It replaces the numbered subdirectories.
	Scenarios []string
	// StepEvery, if set, moves to the next step every StepEvery from the
	// moment the Replay is made, on top of Advance.
	StepEvery time.Duration
	// Loop makes the step after the last the first one again, instead of
	// staying at the last.
	Loop bool
	// StreamEvery, if set, makes a stream write the current step's capture
	// again every StreamEvery, as a sampler writes one report per interval.
	// Otherwise a stream writes a step's capture once, when the step begins.
	StreamEvery time.Duration
	// Logger hears, once per command line, of a stream replayed from a
	// capture at another interval; nil discards.
	Logger *slog.Logger
	// Now replaces the clock in tests.
	Now func() time.Time
}

type replayStep struct {
	dir      string             // in fsys: "." or a step's subdirectory
	captures map[string]capture // by command line
}

type capture struct {
	file   string // as messages name it
	stdout []byte
	stderr string
	exit   int
}

// NewReplay loads the captures under dir.
func NewReplay(dir string) (*Replay, error) {
	return NewReplayWithOptions(dir, ReplayOptions{})
}

// NewReplayWithOptions loads the captures under dir. It fails on unreadable
// files, malformed headers and two captures of one command line in a step.
func NewReplayWithOptions(dir string, opts ReplayOptions) (*Replay, error) {
	return NewReplayFS(os.DirFS(dir), dir, opts)
}

// NewReplayFS loads the captures of fsys, laid out as a replay directory
// is. dir names fsys in errors and in the log, as the directory its files
// come from.
func NewReplayFS(fsys fs.FS, dir string, opts ReplayOptions) (*Replay, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Replay{fsys: fsys, dir: dir, opts: opts, began: opts.Now(), told: map[string]bool{}}
	var err error
	if len(opts.Scenarios) > 0 {
		err = r.loadScenarios()
	} else {
		err = r.loadSteps()
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// where is how messages name a path of fsys.
func (r *Replay) where(name string) string {
	return filepath.Join(r.dir, filepath.FromSlash(name))
}

func (r *Replay) loadScenarios() error {
	for _, sc := range r.opts.Scenarios {
		caps, err := r.loadCaptures(".", sc+"__")
		if err != nil {
			return err
		}
		if len(caps) == 0 {
			return fmt.Errorf("replay: no captures of scenario %q in %s", sc, r.dir)
		}
		r.steps = append(r.steps, replayStep{dir: ".", captures: caps})
	}
	return nil
}

func (r *Replay) loadSteps() error {
	own, err := r.loadCaptures(".", "")
	if err != nil {
		return err
	}
	subdirs, err := r.numberedSubdirs()
	if err != nil {
		return err
	}
	if len(subdirs) == 0 {
		if len(own) == 0 {
			return fmt.Errorf("replay: no captures in %s", r.dir)
		}
		r.steps = []replayStep{{dir: ".", captures: own}}
		return nil
	}
	r.base = own
	for _, sub := range subdirs {
		caps, err := r.loadCaptures(sub, "")
		if err != nil {
			return err
		}
		r.steps = append(r.steps, replayStep{dir: sub, captures: caps})
	}
	return nil
}

// numberedSubdirs lists the subdirectories of fsys named by a number, in
// order.
func (r *Replay) numberedSubdirs() ([]string, error) {
	entries, err := fs.ReadDir(r.fsys, ".")
	if err != nil {
		return nil, r.readError(err)
	}
	type numbered struct {
		n    int
		path string
	}
	var subs []numbered
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err == nil && n >= 0 && e.IsDir() {
			subs = append(subs, numbered{n, e.Name()})
		}
	}
	sort.Slice(subs, func(i, j int) bool { return subs[i].n < subs[j].n })
	paths := make([]string, len(subs))
	for i, s := range subs {
		paths[i] = s.path
	}
	return paths, nil
}

// readError names the file of a failed read as the replay's messages do:
// an fs.FS knows only its own paths.
func (r *Replay) readError(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return fmt.Errorf("replay: %s %s: %w", pe.Op, r.where(pe.Path), pe.Err)
	}
	return fmt.Errorf("replay: %w", err)
}

// loadCaptures reads the captures in dir, a directory of fsys, whose names
// start with prefix.
func (r *Replay) loadCaptures(dir, prefix string) (map[string]capture, error) {
	entries, err := fs.ReadDir(r.fsys, dir)
	if err != nil {
		return nil, r.readError(err)
	}
	caps := map[string]capture{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".txt") || strings.HasSuffix(name, ".stderr.txt") {
			continue
		}
		line, c, err := r.readCapture(dir, name, prefix)
		if err != nil {
			return nil, err
		}
		if prev, dup := caps[line]; dup {
			return nil, fmt.Errorf("replay: %s and %s both capture %q", prev.file, c.file, line)
		}
		caps[line] = c
	}
	return caps, nil
}

// readCapture reads one capture and its NAME.exit and NAME.stderr.txt.
func (r *Replay) readCapture(dir, name, prefix string) (string, capture, error) {
	file := path.Join(dir, name)
	data, err := fs.ReadFile(r.fsys, file)
	if err != nil {
		return "", capture{}, r.readError(err)
	}
	h, body, err := splitHeader(data)
	if err != nil {
		return "", capture{}, fmt.Errorf("replay: %s: %w", r.where(file), err)
	}
	stem := strings.TrimSuffix(name, ".txt")
	c := capture{file: r.where(file), stdout: body}

	line := h.command
	if line == "" {
		if line, err = commandFromFileName(strings.TrimPrefix(stem, prefix)); err != nil {
			return "", capture{}, fmt.Errorf("replay: %s: %w", r.where(file), err)
		}
	}
	if h.exit != nil {
		c.exit = *h.exit
	} else if c.exit, err = r.readExitFile(path.Join(dir, stem+".exit")); err != nil {
		return "", capture{}, err
	}
	if h.stderr != nil {
		c.stderr = strings.Join(h.stderr, "\n")
	} else if errData, err := fs.ReadFile(r.fsys, path.Join(dir, stem+".stderr.txt")); err == nil {
		_, errBody, _ := splitHeader(errData)
		c.stderr = string(errBody)
	}
	return line, c, nil
}

func (r *Replay) readExitFile(file string) (int, error) {
	data, err := fs.ReadFile(r.fsys, file)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, r.readError(err)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("replay: %s: exit status %q is not a number", r.where(file), strings.TrimSpace(string(data)))
	}
	return code, nil
}

// captureHeader holds the keys of a capture header that Replay uses.
type captureHeader struct {
	command string
	exit    *int
	stderr  []string
}

// splitHeader separates an optional "# key: value" ... "# ---" header from
// the output. Data that does not start with such a header is all output.
func splitHeader(data []byte) (captureHeader, []byte, error) {
	var h captureHeader
	if !bytes.HasPrefix(data, []byte("# ")) {
		return h, data, nil
	}
	rest := data
	for n := 1; len(rest) > 0; n++ {
		raw, after, _ := bytes.Cut(rest, []byte("\n"))
		line := string(bytes.TrimRight(raw, "\r"))
		rest = after
		if line == "# ---" {
			return h, rest, nil
		}
		if !strings.HasPrefix(line, "# ") {
			return captureHeader{}, data, nil // a comment-like first line, not a header
		}
		key, rawValue, _ := strings.Cut(line[2:], ":")
		value := strings.TrimSpace(rawValue)
		switch strings.TrimSpace(key) {
		case "command":
			h.command = value
		case "exit":
			code, err := strconv.Atoi(value)
			if err != nil {
				return captureHeader{}, nil, fmt.Errorf("line %d: exit status %q is not a number", n, value)
			}
			h.exit = &code
		case "stderr":
			h.stderr = append(h.stderr, strings.TrimPrefix(rawValue, " ")) // keep the line's own indent
		}
	}
	return captureHeader{}, data, nil // no "# ---": not a header
}

// CaptureFileName is the capture file name that answers a command line
// without a header: a space becomes "_", and every byte other than a letter,
// a digit or one of "-.,:=+@" becomes %XX, so "/" is %2F and "_" is %5F.
// "zpool status -p" gives "zpool_status_-p.txt".
func CaptureFileName(line string) string {
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ':
			b.WriteByte('_')
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-.,:=+@", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String() + ".txt"
}

// commandFromFileName reverses CaptureFileName for a name without ".txt".
func commandFromFileName(stem string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(stem); i++ {
		switch c := stem[i]; c {
		case '_':
			b.WriteByte(' ')
		case '%':
			if i+2 >= len(stem) {
				return "", fmt.Errorf("file name %q: %% must be followed by two hex digits", stem)
			}
			v, err := strconv.ParseUint(stem[i+1:i+3], 16, 8)
			if err != nil {
				return "", fmt.Errorf("file name %q: %% must be followed by two hex digits", stem)
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// NumSteps is the number of steps; 1 without step subdirectories.
func (r *Replay) NumSteps() int { return len(r.steps) }

// Step is the index of the step being served.
func (r *Replay) Step() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stepLocked()
}

func (r *Replay) stepLocked() int {
	n := r.advanced
	if r.opts.StepEvery > 0 {
		n += int(r.opts.Now().Sub(r.began) / r.opts.StepEvery)
	}
	if r.opts.Loop {
		return n % len(r.steps)
	}
	return min(n, len(r.steps)-1)
}

// Dir returns a directory of the replay that is not a capture, such as the
// kstats ("kstat"), as the step being served has it: the step's own
// subdirectory of that name, else the replay directory's, so that a replay
// can show kstats that move from step to step. ok is false when neither
// the steps nor the replay directory hold one.
func (r *Replay) Dir(name string) (fsys fs.FS, ok bool) {
	d := &stepDir{r: r, name: name, own: make([]bool, len(r.steps))}
	for i, st := range r.steps {
		if st.dir != "." {
			d.own[i] = r.isDir(path.Join(st.dir, name))
			ok = ok || d.own[i]
		}
	}
	return d, ok || r.isDir(name)
}

func (r *Replay) isDir(name string) bool {
	info, err := fs.Stat(r.fsys, name)
	return err == nil && info.IsDir()
}

// stepDir is the fs.FS of Replay.Dir.
type stepDir struct {
	r    *Replay
	name string
	own  []bool // by step: whether the step has a directory of its own
}

func (d *stepDir) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	root := d.name
	if step := d.r.Step(); d.own[step] {
		root = path.Join(d.r.steps[step].dir, d.name)
	}
	return d.r.fsys.Open(path.Join(root, name))
}

// Advance moves to the next step. It reports false, and stays, at the last
// step unless the Replay loops.
func (r *Replay) Advance() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.opts.Loop && r.stepLocked() == len(r.steps)-1 {
		return false
	}
	r.advanced++
	return true
}

// eventsCapture is the form of `zpool events` that captures keep: every
// other form (-H, a stream under -f) replays it, as the events parser
// reads them all.
const eventsCapture = "zpool events -vH"

// IsEventsLine tells whether a command line reads the kernel's events
// (`zpool events ...`), which replays and stand-ins answer from one
// capture of their queue.
func IsEventsLine(line string) bool { return strings.HasPrefix(line, "zpool events ") }

// lookup finds the capture answering line in a step: the step's own, else
// the directory's. A line whose options end with "--" is also answered by
// a capture of the same line without it, so that recordings made without
// the "--" keep replaying. A `zpool get` of a list of properties is also
// answered by a capture of the same line with "all", keeping their rows.
// A `zpool events` line is also answered by eventsCapture.
func (r *Replay) lookup(step int, line string) (capture, error) {
	st := r.steps[step]
	forms := []string{line}
	if bare, ok := withoutOptionsEnd(line); ok {
		forms = append(forms, bare)
	}
	for _, caps := range []map[string]capture{st.captures, r.base} {
		for _, l := range forms {
			if c, ok := caps[l]; ok {
				return c, nil
			}
		}
	}
	if all, properties, ok := GetAllLine(line); ok {
		if c, err := r.lookup(step, all); err == nil {
			c.stdout = KeepProperties(c.stdout, properties)
			return c, nil
		}
	}
	if IsEventsLine(line) && line != eventsCapture {
		if c, err := r.lookup(step, eventsCapture); err == nil {
			return c, nil
		}
	}
	return capture{}, &Error{Command: line, ExitCode: -1, Err: fmt.Errorf("%w in replay directory %s", ErrNoCapture, r.where(st.dir))}
}

// lookupStream finds the capture a stream of line replays, and the line it
// was captured as. Without a capture of line itself, one of the same
// command at another interval (its last argument) serves, the nearest
// interval first: a replay writes a stream's reports at its own pace
// (ReplayOptions.StreamEvery) whatever interval they were recorded at, and
// a demo should not need its captures recorded at the interval the
// exporter happens to ask for.
func (r *Replay) lookupStream(step int, line string) (capture, string, error) {
	c, err := r.lookup(step, line)
	if err == nil {
		return c, line, nil
	}
	cmd, interval, ok := splitInterval(line)
	if !ok {
		return capture{}, "", err
	}
	for _, caps := range []map[string]capture{r.steps[step].captures, r.base} {
		best, bestGap := "", math.Inf(1)
		for l := range caps {
			other, at, ok := splitInterval(l)
			if gap := math.Abs(at - interval); ok && other == cmd && (gap < bestGap || gap == bestGap && l < best) {
				best, bestGap = l, gap
			}
		}
		if best != "" {
			return caps[best], best, nil
		}
	}
	return capture{}, "", err
}

// splitInterval splits a streamed command line into the command and its
// interval in seconds, the last argument ("zpool iostat -v 10", "iostat
// -x -w 0.5").
func splitInterval(line string) (cmd string, seconds float64, ok bool) {
	i := strings.LastIndexByte(line, ' ')
	if i < 0 || strings.Trim(line[i+1:], "0123456789.") != "" {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(line[i+1:], 64)
	if err != nil || v <= 0 {
		return "", 0, false
	}
	return line[:i], v, true
}

// tellStream logs, once per line, that a stream replays a capture of
// another command line.
func (r *Replay) tellStream(line, served string, c capture) {
	if served == line {
		return
	}
	r.mu.Lock()
	told := r.told[line]
	r.told[line] = true
	r.mu.Unlock()
	if !told {
		r.opts.Logger.Info("replaying a stream from the capture of the same command at another interval; its reports go out at the stream's own pace",
			"command", line, "capture", served, "file", c.file)
	}
}

// withoutOptionsEnd returns line without its first "--" argument.
func withoutOptionsEnd(line string) (string, bool) {
	args := strings.Split(line, " ")
	i := slices.Index(args, "--")
	if i < 0 {
		return "", false
	}
	return strings.Join(slices.Delete(args, i, i+1), " "), true
}

// result is what running a capture gives: its output, and an error like
// exec's when its exit status is not zero.
func (c capture) result(line string) ([]byte, error) {
	out := bytes.Clone(c.stdout)
	if c.exit != 0 {
		return out, &Error{Command: line, ExitCode: c.exit, Stderr: c.stderr, Err: fmt.Errorf("exit status %d", c.exit)}
	}
	return out, nil
}

// Run returns the capture of the command line in the current step.
func (r *Replay) Run(ctx context.Context, cmd Command) ([]byte, error) {
	line := cmd.Line()
	if err := ctx.Err(); err != nil {
		return nil, &Error{Command: line, ExitCode: -1, Err: err}
	}
	counted := cmd.counted(line)
	r.stats.started(counted)
	c, err := r.lookup(r.Step(), line)
	var out []byte
	if err == nil {
		out, err = c.result(line)
	}
	r.stats.finished(counted, 0, err)
	return out, err
}

// Holds reports whether the replay holds a capture of any command line of
// program, in any step: a replay of zpool's outputs alone cannot answer
// zfs, and the exporter leaves out what would only fail.
func (r *Replay) Holds(program string) bool {
	holds := func(caps map[string]capture) bool {
		for line := range caps {
			if strings.HasPrefix(line, program+" ") {
				return true
			}
		}
		return false
	}
	if holds(r.base) {
		return true
	}
	return slices.ContainsFunc(r.steps, func(st replayStep) bool { return holds(st.captures) })
}

// Stats counts the commands replayed so far.
func (r *Replay) Stats() map[string]CommandStats { return r.stats.snapshot() }

// replayPoll is how often a replay stream looks for a new step.
const replayPoll = 20 * time.Millisecond

// StartStream streams the capture of the command line: the current step's
// at once, then each new step's when the step begins (and again every
// ReplayOptions.StreamEvery). Without a capture of the line, one of the
// same command at another interval serves. The stream stays open until ctx
// ends or it is closed, as a sampler's would, and ends with the capture's
// error when its exit status is not zero or a step has no capture of the
// command.
func (r *Replay) StartStream(ctx context.Context, cmd Command) (io.ReadCloser, error) {
	line := cmd.Line()
	if err := ctx.Err(); err != nil {
		return nil, &Error{Command: line, ExitCode: -1, Err: err}
	}
	counted := cmd.counted(line)
	if _, _, err := r.lookupStream(r.Step(), line); err != nil {
		r.stats.started(counted)
		r.stats.finished(counted, 0, err)
		return nil, err
	}
	r.stats.started(counted)
	pr, pw := io.Pipe()
	s := &replayStream{PipeReader: pr, closed: make(chan struct{})}
	go r.feed(ctx, s, pw, line)
	return s, nil
}

type replayStream struct {
	*io.PipeReader
	closed    chan struct{}
	closeOnce sync.Once
}

func (s *replayStream) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	return s.PipeReader.Close()
}

// feed writes the stream's reports until it is closed, ctx ends or a
// capture ends it.
func (r *Replay) feed(ctx context.Context, s *replayStream, w *io.PipeWriter, line string) {
	stopped := func() {
		w.CloseWithError(&Error{Command: line, ExitCode: -1, Err: fmt.Errorf("stopped: %w", context.Cause(ctx))})
	}
	// Unblock a write that waits for a reader when ctx ends. When the loop
	// below sees ctx end first, stop may cancel that call before it ran:
	// the reader must still get its error, so close here too (the first
	// close wins).
	stop := context.AfterFunc(ctx, stopped)
	defer func() {
		stop()
		if ctx.Err() != nil {
			stopped()
		}
	}()
	tick := time.NewTicker(replayPoll)
	defer tick.Stop()
	step, wrote := -1, time.Time{}
	var next int // the capture's report to write next, with StreamEvery
	// An events stream's capture is the queue at that step: written once a
	// step, as zpool events -f gives each event once.
	every := r.opts.StreamEvery
	if IsEventsLine(line) {
		every = 0
	}
	for {
		cur := r.Step()
		if cur != step || (every > 0 && r.opts.Now().Sub(wrote) >= every) {
			first := step == -1
			step, wrote = cur, r.opts.Now()
			if !r.writeReport(w, cur, line, first, &next) {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		case <-tick.C:
		}
	}
}

// writeReport writes a step's capture to a stream and reports whether the
// stream goes on. With StreamEvery, a capture of several reports is written
// one report each time, as the command prints one per interval: the first
// time with the report before it, which averages since import (or boot) and
// which samplers skip; after that the later reports in turn, never that
// first one again, on a step change too (the real stream goes on).
func (r *Replay) writeReport(w *io.PipeWriter, step int, line string, first bool, next *int) bool {
	c, served, err := r.lookupStream(step, line)
	if err == nil {
		r.tellStream(line, served, c)
		_, err = c.result(line)
		out := c.stdout
		if reports := splitReports(out); r.opts.StreamEvery > 0 && len(reports) > 1 {
			switch {
			case first:
				out, *next = slices.Concat(reports[0], reports[1]), 2
			default:
				if *next < 1 || *next >= len(reports) {
					*next = 1
				}
				out = reports[*next]
				*next++
			}
		}
		if len(out) > 0 {
			if _, werr := w.Write(out); werr != nil {
				return false // closed by the reader, or ctx ended
			}
		}
	}
	if err != nil {
		w.CloseWithError(err)
		return false
	}
	return true
}

// splitReports cuts a streamed capture before each repeat of its first
// line, the header that `zpool iostat` and `iostat` print atop every report.
// A capture whose first line never comes again is one report.
func splitReports(out []byte) [][]byte {
	lines := bytes.SplitAfter(out, []byte("\n"))
	var header []byte
	for _, l := range lines {
		if len(bytes.TrimSpace(l)) > 0 {
			header = l
			break
		}
	}
	var reports [][]byte
	start, pos, headers := 0, 0, 0
	for _, l := range lines {
		if header != nil && bytes.Equal(l, header) {
			if headers++; headers > 1 {
				reports = append(reports, out[start:pos])
				start = pos
			}
		}
		pos += len(l)
	}
	if start < len(out) {
		reports = append(reports, out[start:])
	}
	return reports
}
