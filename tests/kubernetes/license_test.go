package kubernetes

import (
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// The chart names the license of the repository's LICENSE, as the
// packages' License tag does (scripts/dist.sh), so that a chart index
// shows the terms the code is under.
func TestChartNamesTheRepositorysLicense(t *testing.T) {
	license := string(readFile(t, repotest.Path("LICENSE")))
	if !strings.HasPrefix(strings.TrimSpace(license), "Apache License\n                           Version 2.0, January 2004") {
		t.Fatalf("LICENSE is not the Apache License 2.0; the chart's annotation and dist.sh's PACKAGE_LICENSE follow it:\n%s", head(license, 3))
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := chrt.Metadata.Annotations["artifacthub.io/license"]; got != "Apache-2.0" {
		t.Errorf("Chart.yaml's artifacthub.io/license is %q, want Apache-2.0", got)
	}
	if dist := string(readFile(t, repotest.Path("scripts", "dist.sh"))); !strings.Contains(dist, "PACKAGE_LICENSE=${PACKAGE_LICENSE:-Apache-2.0}") {
		t.Error("scripts/dist.sh does not give the packages Apache-2.0 as their License by default")
	}
}
