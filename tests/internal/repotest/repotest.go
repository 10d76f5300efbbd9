// Package repotest gives the test packages of this module, each a
// directory directly under tests/, the repository's files and a
// directory for what their tests build once.
package repotest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// Root is the top of the repository, two levels above the test package
// the test binary runs in.
var Root = func() string {
	abs, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return abs
}()

// Path returns the path of a file of the repository.
func Path(parts ...string) string {
	return filepath.Join(append([]string{Root}, parts...)...)
}

// Main runs a package's tests with *tmp set to a new directory named
// after prefix, removed once they are done, and exits with their status.
func Main(m *testing.M, prefix string, tmp *string) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*tmp = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Tool finds a command, or skips the test (fails it in CI) naming the
// Debian package that has it.
func Tool(t testing.TB, name, pkg string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		e2e.SkipOrFail(t, "%s is not installed (Debian package %s)", name, pkg)
	}
	return p
}

// FlagValue returns the value of --name=VALUE in args, the command of a
// service in the project's compose file or manifests.
func FlagValue(args []string, name string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}
