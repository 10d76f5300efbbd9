package deploy

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

var installGuide = repo("docs", "install.md")

// docs/install.md covers every file of deploy/ (the demo's replay has its
// own author and README), and every file it names exists.
func TestInstallGuideFiles(t *testing.T) {
	guide := readFile(t, installGuide)
	err := filepath.WalkDir(repo("deploy"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "deploy/demo" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(rel, ".dockerignore") {
			return nil
		}
		// Named itself, or a directory of it named as a whole (`deploy/compose/`).
		for d := rel; d != "deploy"; d = path.Dir(d) {
			if strings.Contains(guide, "`"+d+"`") || strings.Contains(guide, "`"+d+"/`") || (d == rel && strings.Contains(guide, d)) {
				return nil
			}
		}
		t.Errorf("docs/install.md does not mention %s", rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?:deploy|dashboards/out|docs)/[A-Za-z0-9_./-]*[A-Za-z0-9_]").FindAllString(guide, -1) {
		if _, err := os.Stat(repo(m)); err != nil {
			t.Errorf("docs/install.md names %s: %v", m, err)
		}
	}
}

// The paths the deployment files expect are those the guide installs to.
func TestInstallGuidePaths(t *testing.T) {
	guide := readFile(t, installGuide)
	unit := unitSettings(t, readFile(t, unitFile))
	want := []string{
		strings.Fields(unit["Service.ExecStart"][0])[0],
		strings.TrimPrefix(unit["Service.EnvironmentFile"][0], "-"),
		"/usr/local/etc/rc.d/zpool_exporter",
		"docker compose --profile demo up",
		"docker compose --profile host up",
		"/etc/prometheus/rules",
		"/etc/prometheus/targets",
	}
	r, _ := runRCScript(t, `zpool_exporter_enable="YES"`+"\n")
	_, program, _ := daemonArgs(t, r.argv)
	want = append(want, program)
	start, _ := parseManifest(t).all("service")[0].find("exec_method", "name", "start")
	want = append(want, strings.Fields(start.attr("exec"))[0])
	_, password := exampleCredentials(t)
	want = append(want, password)
	for _, w := range want {
		if !strings.Contains(guide, w) {
			t.Errorf("docs/install.md does not mention %s", w)
		}
	}
}

// The guide's shell blocks are valid shell.
func TestInstallGuideShell(t *testing.T) {
	bash := repotest.Tool(t, "bash", "bash")
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(readFile(t, installGuide), -1)
	if len(blocks) < 5 {
		t.Fatalf("%d shell blocks", len(blocks))
	}
	for _, b := range blocks {
		f := filepath.Join(t.TempDir(), "block.sh")
		writeFile(t, f, b[1])
		if out, err := run(t, "", bash, "-n", f); err != nil {
			t.Errorf("bash -n:\n%s\n%v\n%s", b[1], err, out)
		}
	}
}
