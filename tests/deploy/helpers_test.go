package deploy

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// root is the top of the repository.
var root = repotest.Root

// repo returns the path of a file of the repository.
func repo(parts ...string) string { return repotest.Path(parts...) }

// tmpRoot holds what the tests build once for all of them.
var tmpRoot string

func TestMain(m *testing.M) { repotest.Main(m, "zpool-exporter-deploy-", &tmpRoot) }

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// exporterBinary builds the exporter once, the way the Dockerfile does.
func exporterBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		binary, buildErr = e2e.BuildExporter(root, filepath.Join(tmpRoot, "bin"))
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// run runs a command and returns its combined output.
func run(t testing.TB, dir, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyPath copies a file or a directory tree.
func copyPath(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, info.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

func readYAML(t testing.TB, path string, v any) {
	t.Helper()
	if err := yaml.Unmarshal([]byte(readFile(t, path)), v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// uncomment enables the commented-out configuration of a file: a block
// starts at a comment with no space after its "#" ("#remote_write:") and
// goes on over the comment lines indented by two spaces or more after
// their "#". Prose comments ("# text") stay comments.
func uncomment(s string) string {
	lines := strings.Split(s, "\n")
	in := false
	for i, l := range lines {
		trimmed := strings.TrimLeft(l, " \t")
		indent := l[:len(l)-len(trimmed)]
		rest, ok := strings.CutPrefix(trimmed, "#")
		switch {
		case !ok:
			in = false
		case rest != "" && !strings.ContainsRune(" #!", rune(rest[0])):
			in = true
			lines[i] = indent + rest
		case in && strings.HasPrefix(rest, "  "):
			lines[i] = indent + rest
		default:
			in = false
		}
	}
	return strings.Join(lines, "\n")
}

func TestUncomment(t *testing.T) {
	in := "# prose\n#key: 1\n#  sub: 2\n#  # note\n# more prose\n#   not config\n  #other: 3\n"
	want := "# prose\nkey: 1\n  sub: 2\n  # note\n# more prose\n#   not config\n  other: 3\n"
	if got := uncomment(in); got != want {
		t.Errorf("uncomment:\n%s\nwant:\n%s", got, want)
	}
}

// defaultArgs are the exporter's flags of the systemd unit's defaults file,
// which the rc.d script, the SMF manifest and docker-compose.yml repeat.
func defaultArgs(t testing.TB) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^ZPOOL_EXPORTER_ARGS="([^"]*)"$`).FindStringSubmatch(readFile(t, repo("deploy", "systemd", "zpool_exporter.default")))
	if m == nil {
		t.Fatal(`deploy/systemd/zpool_exporter.default: no ZPOOL_EXPORTER_ARGS="..." line`)
	}
	args := strings.Fields(m[1])
	if !slices.Contains(args, "--web.listen-address=:9134") {
		t.Fatalf("default flags %q: not listening on :9134, the port every Prometheus configuration scrapes", args)
	}
	return args
}

// checkFlags runs the built exporter with args, which must all be flags it
// knows (--version makes it exit once they are parsed).
func checkFlags(t testing.TB, args []string) {
	t.Helper()
	bin := exporterBinary(t)
	out, err := run(t, "", bin, append(slices.Clone(args), "--version")...)
	if err != nil || !strings.Contains(out, "zpool_exporter, version") {
		t.Errorf("zpool_exporter %s --version: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestDefaultFlagsAreTheExportersFlags(t *testing.T) {
	checkFlags(t, defaultArgs(t))
	// And an unknown flag is refused: the check above can fail.
	bin := exporterBinary(t)
	if out, err := run(t, "", bin, "--no-such-flag", "--version"); err == nil {
		t.Errorf("an unknown flag was accepted:\n%s", out)
	}
}
