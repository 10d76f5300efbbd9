package deploy

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

var dockerfile = repo("deploy", "docker", "Dockerfile")

// dockerStage is a stage of the Dockerfile and the COPY lines in it.
type dockerStage struct {
	name, base string
	copies     [][]string // the arguments of each COPY
}

func parseDockerfile(t testing.TB) []dockerStage {
	t.Helper()
	text := strings.ReplaceAll(readFile(t, dockerfile), "\\\n", " ")
	var stages []dockerStage
	from := regexp.MustCompile(`(?i)^FROM\s+(\S+)(?:\s+AS\s+(\S+))?\s*$`)
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if m := from.FindStringSubmatch(line); m != nil {
			stages = append(stages, dockerStage{name: m[2], base: m[1]})
			continue
		}
		if rest, ok := strings.CutPrefix(line, "COPY "); ok {
			if len(stages) == 0 {
				t.Fatalf("COPY before FROM: %s", line)
			}
			stages[len(stages)-1].copies = append(stages[len(stages)-1].copies, strings.Fields(rest))
		}
	}
	return stages
}

func dockerfileStages(t testing.TB) []string {
	t.Helper()
	var names []string
	for _, s := range parseDockerfile(t) {
		names = append(names, s.name)
	}
	return names
}

// contextFiles lists the files of the build context, relative to the top
// of the repository, as the Dockerfile's own .dockerignore leaves them.
func contextFiles(t testing.TB) []string {
	t.Helper()
	f, err := os.Open(dockerfile + ".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		excluded, err := pm.MatchesOrParentMatches(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		if d.IsDir() {
			// An excluded directory is skipped unless an exception puts
			// back something under it ("!deploy/docker/zpool-host"), as
			// docker does.
			if excluded && !slices.ContainsFunc(pm.Patterns(), func(p *patternmatcher.Pattern) bool {
				return p.Exclusion() && strings.HasPrefix(p.String(), filepath.ToSlash(rel)+"/")
			}) {
				return filepath.SkipDir
			}
			return nil
		}
		if !excluded && d.Type().IsRegular() {
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// The Dockerfile's stages: a build, and the runtime targets that
// docker-compose.yml and docs/install.md name; host is the default.
func TestDockerfileStages(t *testing.T) {
	stages := parseDockerfile(t)
	names := dockerfileStages(t)
	for _, want := range []string{"build", "demo", "zfsutils", "host"} {
		if !slices.Contains(names, want) {
			t.Errorf("no stage %s in %v", want, names)
		}
	}
	if last := stages[len(stages)-1].name; last != "host" {
		t.Errorf("the default (last) stage is %q, want host", last)
	}
	files := contextFiles(t)
	for _, s := range stages {
		for _, c := range s.copies {
			var from string
			var args []string
			for _, a := range c {
				if v, ok := strings.CutPrefix(a, "--from="); ok {
					from = v
				} else if !strings.HasPrefix(a, "--") {
					args = append(args, a)
				}
			}
			if from != "" {
				if !slices.Contains(names, from) {
					t.Errorf("stage %s copies from unknown stage %s", s.name, from)
				}
				continue
			}
			for _, src := range args[:len(args)-1] {
				if src == "." {
					continue
				}
				if !slices.Contains(files, src) {
					t.Errorf("stage %s copies %s, which is not in the build context", s.name, src)
				}
			}
		}
	}
	// The runtime of the host target has the wrapper as zpool and zfs,
	// first in Debian's PATH.
	for _, s := range stages {
		for _, as := range []string{"/usr/local/sbin/zpool", "/usr/local/sbin/zfs"} {
			if s.name == "host" && !slices.ContainsFunc(s.copies, func(c []string) bool {
				return slices.Equal(c, []string{"deploy/docker/zpool-host", as})
			}) {
				t.Errorf("stage host does not install deploy/docker/zpool-host as %s: %q", as, s.copies)
			}
		}
	}
}

// The build context that the Dockerfile's .dockerignore leaves holds what
// the build stage needs: the exporter builds from it alone, with the build
// stage's command.
func TestDockerBuildContext(t *testing.T) {
	files := contextFiles(t)
	for _, want := range []string{"go.mod", "go.sum", "cmd/zpool_exporter/main.go", "deploy/docker/zpool-host"} {
		if !slices.Contains(files, want) {
			t.Errorf("the build context lacks %s", want)
		}
	}
	for _, f := range files {
		for _, unwanted := range []string{".git/", "testbed/", "dashboards/", "tests/", "deploy/demo/"} {
			if strings.HasPrefix(f, unwanted) {
				t.Errorf("the build context holds %s", f)
			}
		}
		if strings.Contains(f, "/testdata/") {
			t.Errorf("the build context holds test data: %s", f)
		}
	}
	ctx := t.TempDir()
	for _, f := range files {
		copyPath(t, filepath.Join(root, f), filepath.Join(ctx, f))
	}
	// The Dockerfile's build command, without the version flags.
	m := regexp.MustCompile(`go build\s+([^\n]*?)\s+-ldflags\s+"[^"]*"\s+-o\s+\S+\s+(\./cmd/zpool_exporter)`).FindStringSubmatch(strings.ReplaceAll(readFile(t, dockerfile), "\\\n", " "))
	if m == nil {
		t.Fatal("no `go build ... ./cmd/zpool_exporter` in the Dockerfile")
	}
	args := append([]string{"build"}, strings.Fields(m[1])...)
	args = append(args, "-o", filepath.Join(t.TempDir(), "zpool_exporter"), m[2])
	cmd := exec.Command("go", args...)
	cmd.Dir = ctx
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go %s in the build context: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestZpoolHostWrapperSyntax(t *testing.T) {
	bash := repotest.Tool(t, "bash", "bash")
	if out, err := run(t, "", bash, "-n", repo("deploy", "docker", "zpool-host")); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
	if info, err := os.Stat(repo("deploy", "docker", "zpool-host")); err != nil || info.Mode()&0o111 == 0 {
		t.Errorf("deploy/docker/zpool-host is not executable: %v", err)
	}
}

// The wrapper runs the zpool, or as zfs the zfs, of a root file system in a
// chroot, with the exporter's arguments intact and dates in the
// container's zone. A stand-in (a static Go program, as both) reports what
// it got.
func TestZpoolHostWrapper(t *testing.T) {
	if os.Geteuid() != 0 {
		e2e.SkipOrFail(t, "chroot needs root")
	}
	repotest.Tool(t, "chroot", "coreutils")
	hostRoot := t.TempDir()
	src := t.TempDir()
	writeFile(t, filepath.Join(src, "go.mod"), "module fakezpool\n\ngo 1.26\n")
	writeFile(t, filepath.Join(src, "main.go"), `package main

import (
	"encoding/json"
	"os"
	"path/filepath"
)

func main() {
	_, err := os.Stat("/host-marker")
	json.NewEncoder(os.Stdout).Encode(map[string]any{
		"name": filepath.Base(os.Args[0]), "args": os.Args[1:], "tz": os.Getenv("TZ"), "lc_all": os.Getenv("LC_ALL"), "chrooted": err == nil,
	})
}
`)
	build := exec.Command("go", "build", "-o", filepath.Join(hostRoot, "usr", "sbin", "zpool"), ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in zpool: %v\n%s", err, out)
	}
	standIn, err := os.ReadFile(filepath.Join(hostRoot, "usr", "sbin", "zpool"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hostRoot, "usr", "sbin", "zfs"), standIn, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(hostRoot, "host-marker"), "")
	// The image installs the wrapper as zfs too.
	asZfs := filepath.Join(t.TempDir(), "zfs")
	if err := os.Symlink(repo("deploy", "docker", "zpool-host"), asZfs); err != nil {
		t.Fatal(err)
	}

	callAs := func(wrapper string, env []string, args ...string) (map[string]any, string, error) {
		cmd := exec.Command(wrapper, args...)
		cmd.Env = append([]string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "ZPOOL_HOST_ROOT=" + hostRoot}, env...)
		out, err := cmd.Output()
		var stderr string
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = string(ee.Stderr)
		}
		var got map[string]any
		if err == nil {
			if jerr := json.Unmarshal(out, &got); jerr != nil {
				t.Fatalf("stand-in zpool's output %q: %v", out, jerr)
			}
		}
		return got, stderr, err
	}
	call := func(env []string, args ...string) (map[string]any, string, error) {
		return callAs(repo("deploy", "docker", "zpool-host"), env, args...)
	}

	// Without /dev/zfs under the root, the wrapper says what is missing.
	if _, stderr, err := call(nil, "status"); err == nil || !strings.Contains(stderr, "dev/zfs") {
		t.Errorf("without dev/zfs: %v, stderr %q", err, stderr)
	} else if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() != 127 {
		t.Errorf("without dev/zfs: exit %d, want 127 (command not found)", ee.ExitCode())
	}
	writeFile(t, filepath.Join(hostRoot, "dev", "zfs"), "")

	got, stderr, err := call([]string{"LC_ALL=C"}, "status", "-p", "a pool with spaces")
	if err != nil {
		t.Fatalf("wrapper: %v\n%s", err, stderr)
	}
	if args, _ := json.Marshal(got["args"]); string(args) != `["status","-p","a pool with spaces"]` {
		t.Errorf("zpool got arguments %s", args)
	}
	if got["chrooted"] != true {
		t.Errorf("zpool did not run in the host's root")
	}
	if got["tz"] != "UTC0" || got["lc_all"] != "C" {
		t.Errorf("zpool's TZ %q, LC_ALL %q: want UTC0 (the container's zone) and the exporter's C locale", got["tz"], got["lc_all"])
	}
	if got["name"] != "zpool" {
		t.Errorf("the wrapper ran %q, want zpool", got["name"])
	}
	got, _, err = call([]string{"TZ=Europe/Paris"}, "list")
	if err != nil || got["tz"] != "Europe/Paris" {
		t.Errorf("with TZ set: %v, zpool's TZ %q", err, got["tz"])
	}
	got, stderr, err = callAs(asZfs, nil, "list", "-Hp", "-o", "name,used")
	if err != nil {
		t.Fatalf("wrapper as zfs: %v\n%s", err, stderr)
	}
	if args, _ := json.Marshal(got["args"]); got["name"] != "zfs" || got["chrooted"] != true || string(args) != `["list","-Hp","-o","name,used"]` {
		t.Errorf("the wrapper as zfs ran %q (in the host's root: %v) with arguments %s, want the host's zfs", got["name"], got["chrooted"], args)
	}
}
