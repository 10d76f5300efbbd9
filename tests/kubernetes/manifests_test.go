package kubernetes

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

var update = flag.Bool("update", false, "rewrite deploy/kubernetes/*.yaml from the chart")

// manifestsDir holds the plain manifests, for those who apply with kubectl
// rather than Helm.
var manifestsDir = repotest.Path("deploy", "kubernetes")

// manifestFile returns the plain manifest a kind goes to: the exporter
// itself, what needs the Prometheus Operator's CRDs, and what only
// Grafana's sidecar reads, so that each can be applied or left out.
func manifestFile(kind string) (string, error) {
	switch kind {
	case "ServiceAccount", "DaemonSet", "Service":
		return "zpool-exporter.yaml", nil
	case "ServiceMonitor", "PrometheusRule":
		return "prometheus-operator.yaml", nil
	case "ConfigMap":
		return "grafana-dashboards.yaml", nil
	}
	return "", fmt.Errorf("no plain manifest for a %s", kind)
}

const manifestHeader = `# Generated from the Helm chart deploy/helm/zpool-exporter with its
# default values (release %s, namespace %s): do not edit.
# Change the chart, then regenerate with
#   cd tests && go test -count=1 -run TestPlainManifests ./kubernetes -update
# %s
`

// manifestPurpose is the second part of each file's header.
var manifestPurpose = map[string]string{
	"zpool-exporter.yaml":      "The exporter: a privileged DaemonSet on every node, and its Service.",
	"prometheus-operator.yaml": "The ServiceMonitor, and the alerting and recording rules; needs the Prometheus Operator's CRDs.",
	"grafana-dashboards.yaml":  "The dashboards, as ConfigMaps for Grafana's dashboard sidecar.",
}

// plainManifests renders the chart with its defaults and returns each
// plain manifest's content by file name.
func plainManifests(t *testing.T) map[string][]byte {
	t.Helper()
	objs := render(t, nil)
	out := map[string]*bytes.Buffer{}
	for _, d := range objs.Docs {
		name, err := manifestFile(d.Kind)
		if err != nil {
			t.Fatal(err)
		}
		b, ok := out[name]
		if !ok {
			b = &bytes.Buffer{}
			fmt.Fprintf(b, manifestHeader, releaseName, namespace, manifestPurpose[name])
			out[name] = b
		}
		fmt.Fprintf(b, "---\n%s", d.Text)
	}
	files := map[string][]byte{}
	for name, b := range out {
		files[name] = b.Bytes()
	}
	return files
}

// deploy/kubernetes holds the chart rendered with its defaults, so that
// `kubectl apply -f deploy/kubernetes/` installs what `helm install`
// would; -update rewrites it.
func TestPlainManifestsAreTheChartRenderedWithDefaults(t *testing.T) {
	files := plainManifests(t)
	if *update {
		if err := os.MkdirAll(manifestsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(manifestsDir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(manifestsDir, name))
		if err != nil {
			t.Errorf("%v: run `go test -run TestPlainManifests ./kubernetes -update` in tests/", err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("deploy/kubernetes/%s differs from the chart rendered with its defaults: run `go test -run TestPlainManifests ./kubernetes -update` in tests/", name)
		}
	}
	present, err := filepath.Glob(filepath.Join(manifestsDir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range present {
		if _, ok := files[filepath.Base(path)]; !ok {
			t.Errorf("deploy/kubernetes/%s is not rendered from the chart: remove it", filepath.Base(path))
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	if want := []string{"grafana-dashboards.yaml", "prometheus-operator.yaml", "zpool-exporter.yaml"}; !slices.Equal(names, want) {
		t.Errorf("the defaults render to %v, want %v", names, want)
	}
}

// The plain manifests decode strictly too: each document is checked the
// way rendered objects are, so a hand edit that breaks one fails here
// before the golden comparison says only "differs".
func TestPlainManifestsDecodeStrictly(t *testing.T) {
	for _, path := range repoFiles(t, "deploy/kubernetes/*.yaml") {
		var objs objects
		text := string(readFile(t, path))
		if !strings.HasPrefix(text, "# Generated from the Helm chart") {
			t.Errorf("%s does not start with the header that says it is generated", filepath.Base(path))
		}
		for _, d := range splitDocs(text) {
			if _, err := objs.decode(d); err != nil {
				t.Errorf("%s: %v", filepath.Base(path), err)
			}
		}
	}
}
