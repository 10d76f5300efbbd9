package boards_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// outDir is where cmd/mixin writes the dashboards that are committed.
const outDir = "../out/dashboards"

// The committed dashboards are exactly what the generator produces.
func TestCommittedDashboardsUpToDate(t *testing.T) {
	files := generated(t)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(outDir, name))
		if err != nil {
			t.Errorf("%s: %v; run `go run ./cmd/mixin` in dashboards/", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what boards.Files generates; run `go run ./cmd/mixin` in dashboards/ and commit the result", filepath.Join("out/dashboards", name))
		}
	}
	stale, err := filepath.Glob(filepath.Join(outDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range stale {
		if _, ok := files[filepath.Base(path)]; !ok {
			t.Errorf("%s is no longer generated; delete it", path)
		}
	}
}
