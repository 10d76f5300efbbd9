package boards_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

const (
	// outDir is where cmd/mixin writes the dashboards that are committed.
	outDir = "../out/dashboards"
	// chartDir is the Helm chart's copy, which cmd/mixin writes too: Helm
	// reads only files inside the chart, so the chart cannot use outDir.
	chartDir = "../../deploy/helm/zpool-exporter/files/dashboards"
)

// The committed dashboards are exactly what the generator produces.
func TestCommittedDashboardsUpToDate(t *testing.T) {
	checkGeneratedDir(t, outDir, "out/dashboards")
}

// The Helm chart's dashboards, which it ships as ConfigMaps, are the same
// generated files.
func TestChartDashboardsUpToDate(t *testing.T) {
	checkGeneratedDir(t, chartDir, "deploy/helm/zpool-exporter/files/dashboards")
}

// checkGeneratedDir fails for every generated dashboard that dir lacks or
// holds in another version, and for every JSON file of dir no longer
// generated. shown is dir as the messages name it.
func checkGeneratedDir(t *testing.T, dir, shown string) {
	t.Helper()
	files := generated(t)
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%s: %v; run `go run ./cmd/mixin` in dashboards/", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what boards.Files generates; run `go run ./cmd/mixin` in dashboards/ and commit the result", filepath.Join(shown, name))
		}
	}
	stale, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range stale {
		if _, ok := files[filepath.Base(path)]; !ok {
			t.Errorf("%s is no longer generated; delete it", filepath.Join(shown, filepath.Base(path)))
		}
	}
}
