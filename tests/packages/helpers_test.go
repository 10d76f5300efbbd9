package packages

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// What the packages are built from: a version as git describe prints it
// past a pre-release tag, and fixed stamps, so that the tests know the
// names, version and times to expect.
const (
	describe       = "v1.2.3-rc.1-4-gabc1234"
	packageVersion = "1.2.3~rc.1+4.gabc1234" // dpkg and rpm order it after 1.2.3~rc.1 and before 1.2.3
	revision       = "0123456789abcdef0123456789abcdef01234567"
	sourceDate     = 1764633600 // 2025-12-02 00:00:00 UTC
	buildHost      = "build-host"
)

// The files the tests read, by architecture.
var (
	debFile = map[string]string{
		"amd64": "zpool-exporter_" + packageVersion + "_amd64.deb",
		"arm64": "zpool-exporter_" + packageVersion + "_arm64.deb",
	}
	rpmFile = map[string]string{
		"amd64": "zpool-exporter-" + packageVersion + "-1.x86_64.rpm",
		"arm64": "zpool-exporter-" + packageVersion + "-1.aarch64.rpm",
	}
)

// repo returns the path of a file of the repository.
func repo(parts ...string) string { return repotest.Path(parts...) }

// tmpRoot holds what the tests build once for all of them.
var tmpRoot string

func TestMain(m *testing.M) { repotest.Main(m, "zpool-exporter-packages-", &tmpRoot) }

var (
	distOnce sync.Once
	distDir  string
	distErr  error
)

// dist builds the packages once for every test, the way make dist does
// (scripts/dist.sh), for the two Linux platforms only, and returns the
// directory that holds them.
func dist(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binaries for two architectures and packages them (half a minute, minutes with a cold build cache); skipped with -short")
	}
	bash := repotest.Tool(t, "bash", "bash")
	repotest.Tool(t, "git", "git")
	distOnce.Do(func() {
		dir := filepath.Join(tmpRoot, "dist")
		began := time.Now()
		cmd := exec.Command(bash, repo("scripts", "dist.sh"))
		cmd.Env = append(os.Environ(), "GOWORK=off", "PLATFORMS=linux/amd64 linux/arm64", "PACKAGES=deb rpm", "DIST_DIR="+dir,
			"VERSION="+describe, "REVISION="+revision, "BRANCH=main", "BUILD_USER=packager@"+buildHost,
			fmt.Sprintf("SOURCE_DATE_EPOCH=%d", sourceDate))
		if out, err := cmd.CombinedOutput(); err != nil {
			distErr = fmt.Errorf("scripts/dist.sh: %v\n%s", err, out)
			return
		}
		t.Logf("scripts/dist.sh built the packages in %s", time.Since(began).Round(time.Second))
		distDir = dir
	})
	if distErr != nil {
		t.Fatal(distErr)
	}
	return distDir
}

// needRoot skips the test (fails it in CI) unless it runs as root, as
// installing into a root directory and new mount namespaces need.
func needRoot(t testing.TB, why string) {
	t.Helper()
	if os.Geteuid() != 0 {
		e2e.SkipOrFail(t, "%s needs root", why)
	}
}

// run runs a command and returns its standard output, failing the test
// with its standard error when it fails.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// debEntry is a file of a .deb's data archive.
type debEntry struct {
	mode    os.FileMode
	owner   string
	modTime time.Time
	data    []byte
}

// debFiles reads the data archive of a .deb through dpkg-deb.
func debFiles(t testing.TB, deb string) map[string]debEntry {
	t.Helper()
	cmd := exec.Command(repotest.Tool(t, "dpkg-deb", "dpkg"), "--fsys-tarfile", deb)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	files := map[string]debEntry{}
	tr := tar.NewReader(stdout)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = debEntry{mode: h.FileInfo().Mode(), owner: h.Uname + "/" + h.Gname, modTime: h.ModTime, data: data}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return files
}

// mixin lists the dashboards and rules of dashboards/out, as the packages
// install them under /usr/share/zpool-exporter.
func mixin(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pattern := range []string{"dashboards/*.json", "rules/*.yaml"} {
		m, err := filepath.Glob(repo("dashboards", "out", pattern))
		if err != nil || len(m) == 0 {
			t.Fatalf("no dashboards/out/%s: %v", pattern, err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(repo("dashboards", "out"), p)
			out = append(out, "/usr/share/zpool-exporter/"+filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	return out
}

// controlFields parses a control paragraph, as dpkg-deb --field prints it.
func controlFields(text string) map[string]string {
	fields := map[string]string{}
	var key string
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\n")
		if strings.HasPrefix(line, " ") && key != "" {
			fields[key] += "\n" + line
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			key = k
			fields[k] = strings.TrimSpace(v)
		}
	}
	return fields
}
