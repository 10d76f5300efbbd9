package collector

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

// The project's own captures that the fuzz targets of this package start
// from; the shared samples are added when they are there.
const (
	replaySteps   = "testdata/replay/zfs-fuse"
	zpoolFixtures = "../internal/zfs/zpool/testdata"
	guestCaptures = "../internal/zfs/zpool/testdata/openzfs-2.3-guest"
	kstatFixtures = "../internal/zfs/kstat/testdata"
)

// fuzzEnv is what the collectors read in one run of FuzzCollectors: the
// outputs of commands by command line, the Linux kstat directory, and how
// kstats are read.
type fuzzEnv struct {
	outputs map[string]fuzzOutput
	kstats  fstest.MapFS
	kstatOS string
	stream  []byte // fed to the zpool iostat sampler; nil: no report
}

type fuzzOutput struct {
	stdout []byte
	exit   int
}

// Run answers like zpool would: the output and, for a non-zero exit, an
// error; a command without an output fails as a missing command does.
func (e *fuzzEnv) Run(_ context.Context, cmd runner.Command) ([]byte, error) {
	line := cmd.Line()
	out, ok := e.outputs[line]
	switch {
	case !ok:
		return nil, &runner.Error{Command: line, ExitCode: -1, Err: runner.ErrNoCapture}
	case out.exit != 0:
		return out.stdout, &runner.Error{Command: line, ExitCode: out.exit, Err: fmt.Errorf("exit status %d", out.exit)}
	}
	return out.stdout, nil
}

// setZpool makes a zpool command print data and succeed.
func (e *fuzzEnv) setZpool(data []byte, args ...string) {
	e.outputs[runner.CommandLine("zpool", args...)] = fuzzOutput{stdout: data}
}

// fuzzInput is one source the collectors parse: FuzzCollectors gives it
// the fuzzed bytes, over a base of real outputs for everything else.
type fuzzInput struct {
	name  string
	seeds func(testing.TB) [][]byte
	set   func(e *fuzzEnv, data []byte, step int)
}

// fuzzInputs are numbered by their place, the fuzzed kind byte modulo
// their count: add new ones at the end.
var fuzzInputs = []fuzzInput{
	{"zpool status", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, replaySteps, "*/zpool_status.txt"),
			sample.Glob(t, zpoolFixtures, "status-*.txt"),
			sample.Glob(t, zpoolFixtures, "zfs-fuse/*__status*.txt"),
			sample.Glob(t, guestCaptures, "*__zpool_status.txt"),
			sample.Seeds(t, "corpus/zpool-status", "*.txt"),
			notJSON(sample.Seeds(t, "captures/openzfs-2.3", "*zpool-status*.txt")),
		)
	}, func(e *fuzzEnv, data []byte, _ int) { e.setZpool(data, "status") }},
	{"zpool status -p", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, guestCaptures, "*__zpool_status_-p.txt"),
			sample.Glob(t, zpoolFixtures, "status-*-p.txt"),
			notJSON(sample.Seeds(t, "captures/openzfs-2.3", "*zpool-status-*p.txt")),
		)
	}, func(e *fuzzEnv, data []byte, _ int) { e.setZpool(data, "status", "-p") }},
	{"zpool status -s -p", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, guestCaptures, "*__zpool_status_-s_-p.txt"),
			sample.Glob(t, zpoolFixtures, "status-classes-slow.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) { e.setZpool(data, "status", "-s", "-p") }},
	{"zpool status -j --json-int", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, zpoolFixtures, "json-*.txt"),
			sample.Glob(t, guestCaptures, "*__zpool_status_-j_--json-int.txt"),
			sample.Seeds(t, "corpus/zpool-json", "*.txt"),
			sample.Seeds(t, "captures/openzfs-2.3", "*zpool-status-j*.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) { e.setZpool(data, "status", "-j", "--json-int") }},
	{"zpool get -Hp all", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, guestCaptures, "*__zpool_get_-Hp_all.txt"),
			sample.Seeds(t, "captures/openzfs-2.3", "*zpool-get-Hp-all.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) { e.setZpool(data, "get", "-Hp", "all") }},
	// zfs-fuse has no -H: the properties come from the table of every pool
	// status shows.
	{"zpool get all POOL...", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, replaySteps, "*/zpool_get_all_backup_tank.txt"),
			sample.Glob(t, zpoolFixtures, "zfs-fuse/*get-all*.txt"),
			sample.Seeds(t, "corpus/zpool-list", "get-all-*.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) { e.setZpool(data, "get", "all", "backup", "tank") }},
	{"zpool get -Hp all POOL all-vdevs", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, guestCaptures, "*_all-vdevs.txt"),
			sample.Glob(t, zpoolFixtures, "vdevprops-*.txt"),
			sample.Seeds(t, "captures/openzfs-2.3", "*zpool-get-Hp-all-*-all-vdevs.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) {
		for _, pool := range []string{"backup", "tank"} {
			e.setZpool(data, "get", "-Hp", "--", strings.Join(vdevAskedProperties, ","), pool, "all-vdevs")
		}
	}},
	{"zpool iostat -v INTERVAL", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, replaySteps, "*/zpool_iostat_-v_1.txt"),
			sample.Glob(t, zpoolFixtures, "iostat-*.txt"),
			sample.Glob(t, zpoolFixtures, "zfs-fuse/*iostat*.txt"),
			sample.Glob(t, guestCaptures, "*__zpool_iostat_-v.txt"),
			sample.Seeds(t, "corpus/zpool-iostat", "*.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) { e.stream = data }},
	linuxKstatInput("arcstats", "linux-arcstats-*.txt", "*arcstats*.txt"),
	linuxKstatInput("tank/state", "linux-state-*.txt", "*state*.txt"),
	linuxKstatInput("tank/iostats", "linux-iostats-*.txt", "*iostats*.txt"),
	linuxKstatInput("tank/objset-0x36", "linux-objset-*.txt", "objset-*.txt"),
	linuxKstatInput("tank/txgs", "linux-txgs-*.txt", "*txgs*.txt"),
	linuxKstatInput("tank/io", "linux-io-*.txt", "*-io-*.txt"),
	// The module-wide kstats are named kstats like arcstats; the step
	// chooses which of them the bytes replace.
	{"zil, dmu_tx, abdstats or zfetchstats", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, kstatFixtures, "linux-*.txt"),
			sample.Seeds(t, "corpus/kstat-linux", "*.txt"),
		)
	}, func(e *fuzzEnv, data []byte, step int) {
		e.kstats[kstat.MiscKstats[step%len(kstat.MiscKstats)]] = &fstest.MapFile{Data: data}
	}},
	{"sysctl -q kstat.zfs", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, kstatFixtures, "freebsd-sysctl-*.txt"),
			sample.Seeds(t, "corpus/kstat-freebsd", "*.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) {
		e.kstatOS = "freebsd"
		e.outputs["sysctl -q kstat.zfs"] = fuzzOutput{stdout: data}
	}},
	{"kstat -p -m zfs -i 0", func(t testing.TB) [][]byte {
		return sample.Bodies(
			sample.Glob(t, kstatFixtures, "illumos-kstat-*.txt"),
			sample.Seeds(t, "corpus/kstat-illumos", "*.txt"),
		)
	}, func(e *fuzzEnv, data []byte, _ int) {
		e.kstatOS = "illumos"
		e.outputs["kstat -p -m zfs -i 0"] = fuzzOutput{stdout: data}
	}},
}

// linuxKstatInput is a file of /proc/spl/kstat/zfs, seeded from the
// fixtures matching own and the Linux kstat corpus matching shared.
func linuxKstatInput(path, own, shared string) fuzzInput {
	return fuzzInput{path, func(t testing.TB) [][]byte {
		return sample.Bodies(sample.Glob(t, kstatFixtures, own), sample.Seeds(t, "corpus/kstat-linux", shared))
	}, func(e *fuzzEnv, data []byte, _ int) { e.kstats[path] = &fstest.MapFile{Data: data} }}
}

// notJSON leaves out the samples of `zpool status -j`.
func notJSON(files []sample.File) []sample.File {
	var out []sample.File
	for _, f := range files {
		if !strings.Contains(f.Header["command"], " -j") {
			out = append(out, f)
		}
	}
	return out
}

// fuzzBase is what the collectors read apart from the fuzzed input: each
// step of the zfs-fuse replay (text status, properties from the table, no
// vdev properties) and the Linux kstat fixtures of a pool tank.
type fuzzBase struct {
	steps  []map[string]fuzzOutput
	kstats fstest.MapFS
}

func loadFuzzBase(t testing.TB) fuzzBase {
	t.Helper()
	var b fuzzBase
	dirs, err := filepath.Glob(filepath.Join(replaySteps, "[0-9][0-9][0-9]"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no replay steps in %s: %v", replaySteps, err)
	}
	for _, dir := range dirs {
		outputs := map[string]fuzzOutput{}
		for _, f := range sample.Glob(t, dir, "*.txt") {
			exit := 0
			if s := f.Header["exit"]; s != "" {
				if exit, err = strconv.Atoi(s); err != nil {
					t.Fatalf("%s: exit %q: %v", f.Path, s, err)
				}
			}
			outputs[f.Header["command"]] = fuzzOutput{stdout: f.Body, exit: exit}
		}
		b.steps = append(b.steps, outputs)
	}
	b.kstats = fstest.MapFS{}
	for path, fixture := range map[string]string{
		"arcstats":         "linux-arcstats-2.3.txt",
		"tank/state":       "linux-state-degraded.txt",
		"tank/iostats":     "linux-iostats-2.3.txt",
		"tank/objset-0x36": "linux-objset-space-in-name.txt",
		"tank/txgs":        "linux-txgs-states.txt",
		"tank/io":          "linux-io-0.7.txt",
	} {
		b.kstats[path] = &fstest.MapFile{Data: sample.MustRead(t, filepath.Join(kstatFixtures, fixture)).Body}
	}
	return b
}

// env returns the base of a step, to be changed by one input. With
// zpoolDown, zpool answers nothing but the fuzzed input, and pool health
// falls back to the kstats.
func (b fuzzBase) env(step int, zpoolDown bool) *fuzzEnv {
	e := &fuzzEnv{outputs: maps.Clone(b.steps[step%len(b.steps)]), kstats: maps.Clone(b.kstats), kstatOS: "linux"}
	if zpoolDown {
		clear(e.outputs)
	}
	return e
}

// collect runs the status, properties, vdev_io and kstat collectors over
// env and fails t unless the exposition passes the linter and a pedantic
// registry gathers it.
func collect(t *testing.T, env *fuzzEnv) {
	t.Helper()
	var logs bytes.Buffer // the handler writes under a lock of its own
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelError}))
	sampler := NewIostatSampler("zpool", time.Second, nil, env, logger)
	sampler.now = func() time.Time { return testNow }
	if env.stream != nil {
		_ = sampler.consume(bytes.NewReader(env.stream))
	}
	cfg := testConfig(zfs.Config{
		Runner:   env,
		Location: time.UTC,
		Kstat:    env.kstats,
		KstatOS:  env.kstatOS,
		Now:      func() time.Time { return testNow },
	}, Config{Sampler: sampler}, logger)
	e, err := New(cfg, logger, map[string]bool{"status": true, "properties": true, "vdev_io": true, "kstat": true})
	if err != nil {
		t.Fatal(err)
	}
	// A generous bound for a hang: the stand-in answers at once, so a
	// scrape that meets its deadline waited for something that never came.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	defer func() {
		if ctx.Err() != nil {
			t.Errorf("the scrape ran into its deadline")
		}
	}()
	problems, err := testutil.CollectAndLint(e.Scraper(ctx))
	if err != nil {
		t.Fatalf("collect and lint: %v", err)
	}
	if len(problems) > 0 {
		t.Fatalf("lint problems: %v", problems)
	}
	// A second scrape, which reads what the first one left behind
	// (capabilities, freshness, transaction groups already seen).
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e.Scraper(ctx))
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	// A panic fails its collector instead of the process, and a metric the
	// collectors could not build is dropped: both are bugs all the same.
	if strings.Contains(logs.String(), errPanic.Error()) {
		t.Fatalf("a collector panicked:\n%s", logs.String())
	}
	for _, c := range []string{"status", "properties", "vdev_io", "kstat", exporterMetrics} {
		if v, _ := value(fams, "zfs_exporter_dropped_series_total", map[string]string{"collector": c, "reason": dropInvalid}); v != 0 {
			t.Fatalf("%v invalid series of collector %s dropped", v, c)
		}
	}
}

// fuzzSeeds maps each input's name to its seeds, for the seed check.
func fuzzSeeds() map[string]func(testing.TB) [][]byte {
	m := map[string]func(testing.TB) [][]byte{"FuzzOSIostatSampler": osIostatSeeds}
	for _, in := range fuzzInputs {
		m["FuzzCollectors "+in.name] = in.seeds
	}
	return m
}

func TestFuzzSeedsWithoutSharedSamples(t *testing.T) {
	sample.CheckSeeds(t, fuzzSeeds())
}

// FuzzCollectors gives any bytes as one source's output (a zpool command,
// a kstat file, sysctl or kstat -p) to the collectors, over real outputs
// for the rest: whatever a parser gets, a scrape must neither panic nor
// give an exposition that the linter or a registry rejects. kind chooses
// the input, the replay step of the rest and whether zpool answers at all.
func FuzzCollectors(f *testing.F) {
	base := loadFuzzBase(f)
	for i, in := range fuzzInputs {
		for _, data := range in.seeds(f) {
			f.Add(uint8(i), data)
		}
	}
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		n := len(fuzzInputs)
		in, rest := fuzzInputs[int(kind)%n], int(kind)/n
		step, zpoolDown := rest%len(base.steps), rest/len(base.steps)%2 == 1
		env := base.env(step, zpoolDown)
		in.set(env, data, step)
		t.Logf("%s over step %d (zpool down: %v)", in.name, step, zpoolDown)
		collect(t, env)
	})
}

// osIostatSeeds are the iostat fixtures of the disk collector and the
// shared iostat corpus when it is there.
func osIostatSeeds(t testing.TB) [][]byte {
	return sample.Bodies(sample.Glob(t, "testdata/disk-iostat", "*-iostat-*.txt"), sample.Seeds(t, "corpus/iostat", "*.txt"))
}
