package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// writeFiles writes files (path relative to dir -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newReplay(t *testing.T, files map[string]string, opts ReplayOptions) (*Replay, string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, files)
	r, err := NewReplayWithOptions(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r, dir
}

// timeout returns a context ending after d.
func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func mustRun(t *testing.T, r Runner, name string, args ...string) string {
	t.Helper()
	out, err := r.Run(context.Background(), Cmd(name, args...))
	if err != nil {
		t.Fatalf("%s: %v", CommandLine(name, args...), err)
	}
	return string(out)
}

func TestReplayServesCaptures(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"zpool_status_-p.txt": "  pool: tank\n",
		// The header wins over the file name; unknown keys are ignored.
		"list.txt": "# command: zpool list -Hp\n# scenario: demo\n# ---\ntank\t1000\n",
		"cat_%2Fproc%2Fspl%2Fkstat%2Fzfs%2Farcstats.txt": "13 1 0x01 147 39984 1 2\n",
		"zpool%5Finfluxdb.txt":                           "zpool_stats,name=tank\n",
		// Looks like a header but has no "# ---": all of it is output.
		"zpool_version.txt": "# not a header\nzfs-2.3.2-1\n",
		"README.md":         "not a capture",
	}, ReplayOptions{})
	for _, tc := range []struct {
		line string
		want string
	}{
		{"zpool status -p", "  pool: tank\n"},
		{"zpool list -Hp", "tank\t1000\n"},
		{"cat /proc/spl/kstat/zfs/arcstats", "13 1 0x01 147 39984 1 2\n"},
		{"zpool_influxdb", "zpool_stats,name=tank\n"},
		{"zpool version", "# not a header\nzfs-2.3.2-1\n"},
	} {
		f := strings.Fields(tc.line)
		if got := mustRun(t, r, f[0], f[1:]...); got != tc.want {
			t.Errorf("%s = %q, want %q", tc.line, got, tc.want)
		}
	}
	if _, err := r.Run(context.Background(), Cmd("zpool", "list")); !errors.Is(err, ErrNoCapture) {
		t.Errorf("the header's command line, not the file name, answers: zpool list = %v", err)
	}
}

func TestReplayExitStatusAndStderr(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"a.txt":                  "# command: zpool status -j\n# exit: 2\n# stderr: invalid option 'j'\n# stderr: usage:\n# stderr: \tstatus [-vx]\n# ---\n",
		"zpool_get.txt":          "partial\n",
		"zpool_get.exit":         "1\n",
		"zpool_get.stderr.txt":   "cannot get property\n",
		"zpool_list.txt":         "tank\n",
		"zpool_list.stderr.txt":  "a warning on stderr\n",
		"zpool_iostat_-l.txt":    "# command: zpool iostat -l\n# exit: 0\n# ---\nok\n",
		"zpool_iostat_-l.exit":   "2\n", // the header wins
		"zpool_events_-v.txt":    "# command: zpool events -v\n# ---\n",
		"zpool_events_-v.stderr": "not a sidecar name\n",
	}, ReplayOptions{})

	_, err := r.Run(context.Background(), Cmd("zpool", "status", "-j"))
	var ce *Error
	if !errors.As(err, &ce) || ce.ExitCode != 2 || err.Error() != "zpool status -j: exit status 2: invalid option 'j' (+2 more lines on stderr)" {
		t.Errorf("header exit and stderr: %v", err)
	}
	if want := "invalid option 'j'\nusage:\n\tstatus [-vx]"; ce == nil || ce.Stderr != want {
		t.Errorf("stderr from the header = %q, want %q", ce.Stderr, want)
	}
	out, err := r.Run(context.Background(), Cmd("zpool", "get"))
	if !errors.As(err, &ce) || ce.ExitCode != 1 || err.Error() != "zpool get: exit status 1: cannot get property" || string(out) != "partial\n" {
		t.Errorf("sidecar exit and stderr: %q, %v", out, err)
	}
	if got := mustRun(t, r, "zpool", "list"); got != "tank\n" {
		t.Errorf("stderr with exit status 0: %q, want the output and no error", got)
	}
	if got := mustRun(t, r, "zpool", "iostat", "-l"); got != "ok\n" {
		t.Errorf("header exit 0 beside a .exit file: %q", got)
	}
	if got := mustRun(t, r, "zpool", "events", "-v"); got != "" {
		t.Errorf("empty capture: %q", got)
	}
	if st := r.Stats()["zpool get"]; st.Runs != 1 || st.Failures != 1 {
		t.Errorf("stats = %+v, want one failed run", st)
	}
}

func TestReplayMissingCapture(t *testing.T) {
	r, dir := newReplay(t, map[string]string{"zpool_status.txt": "x\n"}, ReplayOptions{})
	_, err := r.Run(context.Background(), Cmd("zpool", "status", "-j", "--json-int"))
	want := "zpool status -j --json-int: no capture in replay directory " + dir
	if !errors.Is(err, ErrNoCapture) || err.Error() != want {
		t.Errorf("error = %v, want %q", err, want)
	}
	if _, err := r.StartStream(context.Background(), Cmd("zpool", "iostat", "10")); !errors.Is(err, ErrNoCapture) {
		t.Errorf("stream without capture: %v, want ErrNoCapture", err)
	}
}

// The exporter writes "--" ahead of the pool names it passes; captures
// recorded without it still answer, and one recorded with it comes first.
func TestReplayAnswersOptionsEndWithOlderCaptures(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"zpool_get_-Hp_all_tank_all-vdevs.txt":      "old form\n",
		"zpool_get_-Hp_all_backup_all-vdevs.txt":    "old form\n",
		"zpool_get_-Hp_--_all_backup_all-vdevs.txt": "recorded with --\n",
		"000/zdb_-C_tank.txt":                       "step\n",
	}, ReplayOptions{})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"get", "-Hp", "--", "all", "tank", "all-vdevs"}, "old form\n"},
		{[]string{"get", "-Hp", "--", "all", "backup", "all-vdevs"}, "recorded with --\n"},
		{[]string{"get", "-Hp", "all", "backup", "all-vdevs"}, "old form\n"},
	} {
		if got := mustRun(t, r, "zpool", tc.args...); got != tc.want {
			t.Errorf("zpool %s = %q, want %q", strings.Join(tc.args, " "), got, tc.want)
		}
	}
	if got := mustRun(t, r, "zdb", "-C", "--", "tank"); got != "step\n" {
		t.Errorf("zdb -C -- tank in a step = %q", got)
	}
	_, err := r.Run(context.Background(), Cmd("zpool", "get", "-Hp", "--", "all", "nosuch", "all-vdevs"))
	if want := "zpool get -Hp -- all nosuch all-vdevs: no capture"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("no capture either way: %v, want an error naming the line asked", err)
	}
}

func TestReplayRejectsBadDirectories(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"bad exit header": {"a.txt": "# command: zpool list\n# exit: two\n# ---\n"},
		"bad exit file":   {"zpool_list.txt": "", "zpool_list.exit": "x"},
		"bad escape":      {"zpool%zz.txt": ""},
		"duplicate":       {"zpool_list.txt": "", "b.txt": "# command: zpool list\n# ---\n"},
		"empty":           {"README.md": ""},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, files)
		if _, err := NewReplay(dir); err == nil {
			t.Errorf("%s: no error", name)
		} else if name == "bad exit header" && !strings.Contains(err.Error(), `line 2: exit status "two" is not a number`) {
			t.Errorf("%s: %v, want the line number", name, err)
		}
	}
	if _, err := NewReplay(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing directory: no error")
	}
}

func TestReplaySteps(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"zpool_version.txt":   "zfs-2.3.2\n",
		"0/zpool_status.txt":  "healthy\n",
		"2/zpool_status.txt":  "degraded\n",
		"2/zpool_version.txt": "zfs-2.3.3\n",
		"10/zpool_list.txt":   "tank\n",
		"notes/zpool_x.txt":   "not a step\n",
	}, ReplayOptions{})
	if r.NumSteps() != 3 {
		t.Fatalf("%d steps, want 3 (0, 2, 10)", r.NumSteps())
	}
	if got := mustRun(t, r, "zpool", "status"); got != "healthy\n" {
		t.Errorf("step 0: %q", got)
	}
	if got := mustRun(t, r, "zpool", "version"); got != "zfs-2.3.2\n" {
		t.Errorf("step 0 falls back to the directory: %q", got)
	}
	if !r.Advance() || r.Step() != 1 {
		t.Fatal("Advance to step 1 failed")
	}
	if got := mustRun(t, r, "zpool", "status"); got != "degraded\n" {
		t.Errorf("step 1 (dir 2, numeric order): %q", got)
	}
	if got := mustRun(t, r, "zpool", "version"); got != "zfs-2.3.3\n" {
		t.Errorf("step's own capture wins: %q", got)
	}
	if !r.Advance() || r.Step() != 2 {
		t.Fatal("Advance to step 2 failed")
	}
	if _, err := r.Run(context.Background(), Cmd("zpool", "status")); !errors.Is(err, ErrNoCapture) {
		t.Errorf("step 2 has no zpool status: %v; earlier steps must not leak", err)
	}
	if r.Advance() || r.Step() != 2 {
		t.Error("Advance past the last step moved")
	}
}

// A step's own kstat directory is read while it is served; a step without
// one reads the replay directory's.
func TestReplayDirMovesWithTheSteps(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"kstat/arcstats":          "base\n",
		"kstat/tank/state":        "ONLINE\n",
		"000/zpool_status.txt":    "healthy\n",
		"000/kstat/arcstats":      "step 0\n",
		"001/zpool_status.txt":    "still healthy\n",
		"002/zpool_status.txt":    "degraded\n",
		"002/kstat/arcstats":      "step 2\n",
		"002/kstat/tank/state":    "DEGRADED\n",
		"002/proc/not-asked-for":  "x\n",
		"003/kstat":               "a file, not a directory\n",
		"003/zpool_status_-p.txt": "x\n",
	}, ReplayOptions{})
	kstats, ok := r.Dir("kstat")
	if !ok {
		t.Fatal("Dir(kstat): not found")
	}
	read := func(name string) string {
		t.Helper()
		data, err := fs.ReadFile(kstats, name)
		if err != nil {
			t.Fatalf("step %d: %v", r.Step(), err)
		}
		return string(data)
	}
	for step, want := range []struct{ arcstats, state string }{
		{"step 0\n", ""}, {"base\n", "ONLINE\n"}, {"step 2\n", "DEGRADED\n"}, {"base\n", "ONLINE\n"},
	} {
		if got := read("arcstats"); got != want.arcstats {
			t.Errorf("step %d: arcstats %q, want %q", step, got, want.arcstats)
		}
		if want.state == "" {
			if _, err := fs.ReadFile(kstats, "tank/state"); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("step %d: tank/state of the directory read through the step's own kstats: %v", step, err)
			}
		} else if got := read("tank/state"); got != want.state {
			t.Errorf("step %d: tank/state %q, want %q", step, got, want.state)
		}
		r.Advance()
	}
	if _, err := kstats.Open("../zpool_status.txt"); err == nil {
		t.Error("a path out of the directory opened")
	}
	if _, ok := r.Dir("sys"); ok {
		t.Error("Dir(sys): found, but no step and not the directory has one")
	}
}

// Captures embedded in the binary replay as a directory does, and messages
// name their files after the directory given.
func TestReplayFromFS(t *testing.T) {
	fsys := fstest.MapFS{
		"000/zpool_status.txt":    {Data: []byte("healthy\n")},
		"001/zpool_status.txt":    {Data: []byte("degraded\n")},
		"001/zpool_status_-p.txt": {Data: []byte("# command: zpool status -p\n# exit: 2\n# stderr: invalid option 'p'\n# ---\n")},
	}
	r, err := NewReplayFS(fsys, "embedded/replay", ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.NumSteps() != 2 {
		t.Fatalf("%d steps, want 2", r.NumSteps())
	}
	if got := mustRun(t, r, "zpool", "status"); got != "healthy\n" {
		t.Errorf("step 0: %q", got)
	}
	_, err = r.Run(context.Background(), Cmd("zpool", "status", "-p"))
	if want := "no capture in replay directory " + filepath.Join("embedded/replay", "000"); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("step 0, zpool status -p: %v, want %q", err, want)
	}
	r.Advance()
	if got := mustRun(t, r, "zpool", "status"); got != "degraded\n" {
		t.Errorf("step 1: %q", got)
	}
	var failed *Error
	if _, err := r.Run(context.Background(), Cmd("zpool", "status", "-p")); !errors.As(err, &failed) || failed.ExitCode != 2 || failed.Stderr != "invalid option 'p'" {
		t.Errorf("step 1, zpool status -p: %v, want exit status 2 with its stderr", err)
	}

	fsys["002/zpool_list.exit"] = &fstest.MapFile{Data: []byte("x")}
	fsys["002/zpool_list.txt"] = &fstest.MapFile{}
	if _, err := NewReplayFS(fsys, "embedded/replay", ReplayOptions{}); err == nil || !strings.Contains(err.Error(), filepath.Join("embedded/replay", "002", "zpool_list.exit")) {
		t.Errorf("a bad exit file: %v, want an error naming it under embedded/replay", err)
	}
}

// Holds looks at the directory's captures and at every step's, and by
// program, not by prefix.
func TestReplayHolds(t *testing.T) {
	flat, _ := newReplay(t, map[string]string{"zpool_status.txt": "x\n", "zfsx_list.txt": "x\n"}, ReplayOptions{})
	stepped, _ := newReplay(t, map[string]string{
		"zpool_version.txt":      "zfs-2.3.2\n",
		"0/zpool_status.txt":     "x\n",
		"1/zfs_list_-Hp.txt":     "tank\n",
		"notes/zfs_list_-Hp.txt": "not a step\n",
	}, ReplayOptions{})
	for _, c := range []struct {
		r       *Replay
		program string
		want    bool
	}{
		{flat, "zpool", true},
		{flat, "zfs", false},
		{stepped, "zpool", true},
		{stepped, "zfs", true},
		{stepped, "iostat", false},
	} {
		if got := c.r.Holds(c.program); got != c.want {
			t.Errorf("%s: Holds(%q) = %v, want %v", c.r.dir, c.program, got, c.want)
		}
	}
}

func TestReplayTimedStepsLoop(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, _ := newReplay(t, map[string]string{
		"000/zpool_status.txt": "healthy\n",
		"001/zpool_status.txt": "resilvering\n",
	}, ReplayOptions{StepEvery: 10 * time.Second, Loop: true, Now: func() time.Time { return now }})
	for _, tc := range []struct {
		at   time.Duration
		want string
	}{{0, "healthy\n"}, {9 * time.Second, "healthy\n"}, {10 * time.Second, "resilvering\n"}, {25 * time.Second, "healthy\n"}} {
		now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(tc.at)
		if got := mustRun(t, r, "zpool", "status"); got != tc.want {
			t.Errorf("at %s: %q, want %q", tc.at, got, tc.want)
		}
	}
	if !r.Advance() || r.Step() != 1 { // at 25s: step 0 + 1
		t.Errorf("Advance in a timed loop: step %d, want 1", r.Step())
	}
}

func TestReplayStreamFollowsSteps(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"000/zpool_iostat_-vHp_10.txt": "tank\t1\n",
		"001/zpool_iostat_-vHp_10.txt": "tank\t2\n",
		"002/zpool_iostat_-vHp_10.txt": "# command: zpool iostat -vHp 10\n# exit: 1\n# stderr: pool I/O is currently suspended\n# ---\ntank\t3\n",
	}, ReplayOptions{})
	rc, err := r.StartStream(timeout(t, 5*time.Second), Cmd("zpool", "iostat", "-vHp", "10"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	readReport(t, rc, "tank\t1\n")
	r.Advance()
	readReport(t, rc, "tank\t2\n")
	r.Advance()
	readReport(t, rc, "tank\t3\n")
	if _, err := rc.Read(make([]byte, 1)); err == nil || err.Error() != "zpool iostat -vHp 10: exit status 1: pool I/O is currently suspended" {
		t.Errorf("end of stream: %v, want the capture's exit status", err)
	}
}

func TestReplayStreamRepeatsAndStops(t *testing.T) {
	r, _ := newReplay(t, map[string]string{"zpool_iostat_-v_1.txt": "report\n"}, ReplayOptions{StreamEvery: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	rc, err := r.StartStream(ctx, Cmd("zpool", "iostat", "-v", "1"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	for range 3 {
		readReport(t, rc, "report\n")
	}
	cancel()
	_, err = io.Copy(io.Discard, rc)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("end of a cancelled stream: %v, want context.Canceled", err)
	}
}

// A stream asked at an interval the replay has no capture of replays the
// same command captured at the nearest other interval, at the stream's own
// pace, and says so once.
func TestReplayStreamAtAnotherInterval(t *testing.T) {
	var logs bytes.Buffer
	r, _ := newReplay(t, map[string]string{
		"zpool_iostat_-v_1.txt":    "   capacity\nsince import\n   capacity\nat 1\n",
		"zpool_iostat_-v_5.txt":    "   capacity\nsince import\n   capacity\nat 5\n",
		"zpool_iostat_-v_-p_1.txt": "   capacity\nexact\n",
		"iostat_-xnc_1.txt":        "disks\n",
	}, ReplayOptions{StreamEvery: 10 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	rc, err := r.StartStream(context.Background(), Cmd("zpool", "iostat", "-v", "10"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	readReport(t, rc, "   capacity\nsince import\n   capacity\nat 5\n")
	for range 3 {
		readReport(t, rc, "   capacity\nat 5\n")
	}
	for _, args := range [][]string{{"-v", "1"}, {"-v", "0.5"}} {
		rc, err := r.StartStream(context.Background(), Cmd("zpool", append([]string{"iostat"}, args...)...))
		if err != nil {
			t.Fatal(err)
		}
		readReport(t, rc, "   capacity\nsince import\n   capacity\nat 1\n")
		rc.Close()
	}
	for _, line := range []string{"zpool iostat -v -p -j 10", "zpool iostat -v", "iostat -xn 10"} {
		f := strings.Fields(line)
		if _, err := r.StartStream(context.Background(), Cmd(f[0], f[1:]...)); !errors.Is(err, ErrNoCapture) {
			t.Errorf("%s: %v, want ErrNoCapture: another command, not another interval", line, err)
		}
	}
	// A command line is never answered from another interval outside a
	// stream.
	if _, err := r.Run(context.Background(), Cmd("zpool", "iostat", "-v", "10")); !errors.Is(err, ErrNoCapture) {
		t.Errorf("Run of zpool iostat -v 10: %v, want ErrNoCapture", err)
	}
	if n := strings.Count(logs.String(), "level=INFO"); n != 2 || !strings.Contains(logs.String(), `command="zpool iostat -v 10" capture="zpool iostat -v 5"`) {
		t.Errorf("log, want one line for each of -v 10 and -v 0.5:\n%s", logs.String())
	}
}

// A capture of several reports streams one report per interval, as the
// command prints them: the since-import report only at the start.
func TestReplayStreamWritesOneReportPerInterval(t *testing.T) {
	capture := "   capacity\nsince import\n   capacity\nsecond\n   capacity\nthird\n"
	r, _ := newReplay(t, map[string]string{
		"000/zpool_iostat_-v_1.txt": capture,
		"001/zpool_iostat_-v_1.txt": "   capacity\nnew since import\n   capacity\nnew second\n",
	}, ReplayOptions{StreamEvery: 10 * time.Millisecond})
	rc, err := r.StartStream(context.Background(), Cmd("zpool", "iostat", "-v", "1"))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	readReport(t, rc, "   capacity\nsince import\n   capacity\nsecond\n")
	readReport(t, rc, "   capacity\nthird\n")
	readReport(t, rc, "   capacity\nsecond\n")
	readReport(t, rc, "   capacity\nthird\n")
	// The next step's capture goes on the same stream: no second
	// since-import report.
	r.Advance()
	for range 3 {
		readReport(t, rc, "   capacity\nnew second\n")
	}
}

func TestSplitReports(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"one report\nno header again\n", []string{"one report\nno header again\n"}},
		{"\nH\na\nH\nb", []string{"\nH\na\n", "H\nb"}},
		{"H\nH\n", []string{"H\n", "H\n"}},
	} {
		var got []string
		for _, r := range splitReports([]byte(c.in)) {
			got = append(got, string(r))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("splitReports(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A stream cancelled while it waits for the next report ends for its
// reader, every time. The feeder that saw ctx end before its AfterFunc ran
// used to return without closing the pipe, and a sampler then waited for
// ever; that race showed on a loaded machine (TestOSIostatSamplerRun), so
// this tries many rounds.
func TestReplayStreamCancelledEndsForItsReader(t *testing.T) {
	r, _ := newReplay(t, map[string]string{"zpool_iostat_-v_1.txt": "report\n"}, ReplayOptions{})
	for i := range 300 {
		ctx, cancel := context.WithCancel(context.Background())
		rc, err := r.StartStream(ctx, Cmd("zpool", "iostat", "-v", "1"))
		if err != nil {
			t.Fatal(err)
		}
		readReport(t, rc, "report\n")
		cancel()
		ended := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, rc); ended <- err }()
		select {
		case err := <-ended:
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("round %d: end of a cancelled stream: %v, want context.Canceled", i, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("round %d: the reader of a cancelled stream still waits after 5 s", i)
		}
		rc.Close()
	}
}

func readReport(t *testing.T, rc io.Reader, want string) {
	t.Helper()
	buf := make([]byte, len(want))
	if _, err := io.ReadFull(rc, buf); err != nil || string(buf) != want {
		t.Fatalf("report = %q, %v; want %q", buf, err, want)
	}
}

// The testbed captures replay as they are, one step per scenario.
func TestReplayTestbedCaptures(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	if _, err := NewReplay(dir); err == nil || !strings.Contains(err.Error(), "both capture") {
		t.Errorf("flat directory of several scenarios: %v, want a duplicate error", err)
	}
	scenarios := []string{"04-scrubbed-healthy", "09-errors-repaired"}
	r, err := NewReplayWithOptions(dir, ReplayOptions{Scenarios: scenarios})
	if err != nil {
		t.Fatal(err)
	}
	for i, sc := range scenarios {
		if i > 0 && !r.Advance() {
			t.Fatal("Advance failed")
		}
		files := sample.Glob(t, dir, sc+"__zpool-*.txt")
		for _, f := range files {
			fields := strings.Fields(f.Header["command"])
			out, err := r.Run(context.Background(), Cmd(fields[0], fields[1:]...))
			if err != nil || string(out) != string(f.Body) {
				t.Errorf("%s: %d bytes, %v; want the %d bytes of %s", f.Header["command"], len(out), err, len(f.Body), f.Path)
			}
		}
		if len(files) < 20 {
			t.Errorf("%s: only %d zpool captures", sc, len(files))
		}
	}
}

func TestCaptureFileName(t *testing.T) {
	for line, want := range map[string]string{
		"zpool status -p":                  "zpool_status_-p.txt",
		"zpool get -Hp name,size all":      "zpool_get_-Hp_name,size_all.txt",
		"zpool_influxdb":                   "zpool%5Finfluxdb.txt",
		"cat /proc/spl/kstat/zfs/arcstats": "cat_%2Fproc%2Fspl%2Fkstat%2Fzfs%2Farcstats.txt",
		"iostat -xn 10":                    "iostat_-xn_10.txt",
	} {
		if got := CaptureFileName(line); got != want {
			t.Errorf("CaptureFileName(%q) = %q, want %q", line, got, want)
		}
	}
}

func FuzzCaptureFileName(f *testing.F) {
	for _, s := range []string{"zpool status -p", "zpool_influxdb", "cat /proc/a%b", "a  b", "", "\x00\xff", "ü"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		name := CaptureFileName(line)
		if strings.ContainsAny(name, "/ \x00") {
			t.Fatalf("CaptureFileName(%q) = %q: not a plain file name", line, name)
		}
		back, err := commandFromFileName(strings.TrimSuffix(name, ".txt"))
		if err != nil || back != line {
			t.Fatalf("round trip of %q through %q gave %q, %v", line, name, back, err)
		}
	})
}

// The captures keep `zpool events -vH`, which answers every other form of
// zpool events: the exporter's probe and its stream.
func TestReplayAnswersEventsFromTheirCapture(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"zpool_events_-vH.txt": "Dec  8 2026 00:29:56.484001381\tsysevent.fs.zfs.pool_create\n        eid = 0x1\n\n",
		"zpool_status.txt":     "healthy\n",
	}, ReplayOptions{})
	for _, line := range []string{"zpool events -H", "zpool events -vHf", "zpool events -vH"} {
		args := strings.Fields(line)
		if got := mustRun(t, r, args[0], args[1:]...); !strings.Contains(got, "pool_create") {
			t.Errorf("%s: %q", line, got)
		}
	}
	if _, err := r.Run(context.Background(), Cmd("zpool", "iostat", "-H")); !errors.Is(err, ErrNoCapture) {
		t.Errorf("zpool iostat -H answered from the events: %v", err)
	}
}

// An events stream writes a step's queue once, whatever the stream
// interval: zpool events -f gives each event once.
func TestReplayEventsStreamOncePerStep(t *testing.T) {
	const queue = "Dec  8 2026 00:29:56.484001381\tsysevent.fs.zfs.pool_create\n        eid = 0x1\n\n"
	r, _ := newReplay(t, map[string]string{"zpool_events_-vH.txt": queue}, ReplayOptions{StreamEvery: 10 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	out, err := r.StartStream(ctx, Cmd("zpool", "events", "-vHf"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	got, _ := io.ReadAll(out) // until ctx ends the stream
	if string(got) != queue {
		t.Errorf("the stream wrote %d bytes over 300 ms at a 10 ms interval, want the queue once (%d)", len(got), len(queue))
	}
}
