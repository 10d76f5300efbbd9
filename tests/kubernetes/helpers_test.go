package kubernetes

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	release "helm.sh/helm/v4/pkg/release/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// chartDir is the chart under test.
var chartDir = repotest.Path("deploy", "helm", "zpool-exporter")

// The release the plain manifests of deploy/kubernetes are rendered as,
// and the tests' default.
const (
	releaseName = "zpool-exporter"
	namespace   = "monitoring"
)

// objects are the rendered objects of one release, each decoded into its
// Go type.
type objects struct {
	ServiceAccounts []*corev1.ServiceAccount
	DaemonSets      []*appsv1.DaemonSet
	Services        []*corev1.Service
	ConfigMaps      []*corev1.ConfigMap
	ServiceMonitors []*monitoringv1.ServiceMonitor
	PrometheusRules []*monitoringv1.PrometheusRule
	// Docs are the manifest's YAML documents in Helm's order, as rendered.
	Docs []doc
	// Notes is the rendered NOTES.txt.
	Notes string
}

// doc is one YAML document of a rendered manifest.
type doc struct {
	APIVersion, Kind, Name, Namespace string
	Labels                            map[string]string
	Text                              string
}

// renderManifest renders the chart as `helm template` does: client-only,
// Helm's default capabilities, no cluster. vals are overrides, as --set
// or -f give them.
func renderManifest(vals map[string]any) (*release.Release, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	install := action.NewInstall(action.NewConfiguration(func(c *action.Configuration) {
		c.SetLogger(slog.DiscardHandler)
	}))
	install.DryRunStrategy = action.DryRunClient
	install.Replace = true // no release store to look a name up in
	install.ReleaseName = releaseName
	install.Namespace = namespace
	r, err := install.Run(chrt, vals)
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*release.Release)
	if !ok {
		return nil, fmt.Errorf("install returned a %T, not a v1 release", r)
	}
	return rel, nil
}

// render renders the chart with vals and decodes every object, failing
// the test on an object of a kind the chart is not meant to make.
func render(t *testing.T, vals map[string]any) *objects {
	t.Helper()
	rel, err := renderManifest(vals)
	if err != nil {
		t.Fatalf("helm template: %v", err)
	}
	if len(rel.Hooks) != 0 {
		t.Errorf("the chart renders %d hooks; it has none, and the plain manifests would leave them out", len(rel.Hooks))
	}
	objs := &objects{Notes: rel.Info.Notes}
	for _, d := range splitDocs(rel.Manifest) {
		d, err := objs.decode(d)
		if err != nil {
			t.Fatalf("%v\n%s", err, head(d.Text, 40))
		}
		if d.Name == "" {
			t.Errorf("a %s has no name", d.Kind)
		}
		objs.Docs = append(objs.Docs, d)
	}
	return objs
}

// docSeparator ends one YAML document and starts the next.
var docSeparator = regexp.MustCompile(`(?m)^---[ \t]*$\n?`)

// splitDocs returns the manifest's documents that hold more than comments.
func splitDocs(manifest string) []string {
	var out []string
	for _, d := range docSeparator.Split(manifest, -1) {
		for line := range strings.Lines(d) {
			if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
				out = append(out, strings.TrimSpace(d)+"\n")
				break
			}
		}
	}
	return out
}

// decode decodes one document into the Go type of its kind and adds it
// to objs.
func (objs *objects) decode(text string) (doc, error) {
	var meta struct {
		metav1.TypeMeta   `json:",inline"`
		metav1.ObjectMeta `json:"metadata"`
	}
	if err := yaml.Unmarshal([]byte(text), &meta); err != nil {
		return doc{Text: text}, err
	}
	d := doc{APIVersion: meta.APIVersion, Kind: meta.Kind, Name: meta.Name, Namespace: meta.Namespace, Labels: meta.Labels, Text: text}
	var err error
	switch d.APIVersion + " " + d.Kind {
	case "v1 ServiceAccount":
		objs.ServiceAccounts, err = decodeInto(objs.ServiceAccounts, text)
	case "apps/v1 DaemonSet":
		objs.DaemonSets, err = decodeInto(objs.DaemonSets, text)
	case "v1 Service":
		objs.Services, err = decodeInto(objs.Services, text)
	case "v1 ConfigMap":
		objs.ConfigMaps, err = decodeInto(objs.ConfigMaps, text)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		objs.ServiceMonitors, err = decodeInto(objs.ServiceMonitors, text)
	case "monitoring.coreos.com/v1 PrometheusRule":
		objs.PrometheusRules, err = decodeInto(objs.PrometheusRules, text)
	default:
		err = fmt.Errorf("the chart rendered a %s %s, a kind these tests do not know", d.APIVersion, d.Kind)
	}
	if err != nil {
		return d, fmt.Errorf("%s %s: %w", d.Kind, d.Name, err)
	}
	return d, nil
}

// decodeInto decodes text strictly into a new T and appends it to list.
func decodeInto[T any](list []*T, text string) ([]*T, error) {
	v := new(T)
	if err := decodeStrict([]byte(text), v); err != nil {
		return list, err
	}
	return append(list, v), nil
}

// decodeStrict decodes YAML into v as the API server decodes a request
// with fieldValidation=Strict: duplicate keys, unknown fields and fields
// that differ from the Go type's only by case are errors. (encoding/json
// alone would take "hostpid" for hostPID.)
func decodeStrict(text []byte, v any) error {
	j, err := yaml.YAMLToJSONStrict(text)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(j, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return fmt.Errorf("strict decoding: %s", strings.Join(msgs, "; "))
	}
	return nil
}

// only returns the one element of list, failing the test unless there is
// exactly one.
func only[T any](t *testing.T, what string, list []*T) *T {
	t.Helper()
	if len(list) != 1 {
		t.Fatalf("rendered %d %s, want 1", len(list), what)
	}
	return list[0]
}

// container returns the DaemonSet's one container.
func container(t *testing.T, ds *appsv1.DaemonSet) *corev1.Container {
	t.Helper()
	if n := len(ds.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the DaemonSet has %d containers, want 1", n)
	}
	return &ds.Spec.Template.Spec.Containers[0]
}

// repoFiles returns the repository's files matching pattern (a path
// relative to the top of the repository), sorted, failing the test if
// there is none.
func repoFiles(t *testing.T, pattern string) []string {
	t.Helper()
	paths, err := filepath.Glob(repotest.Path(pattern))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no file matches %s", pattern)
	}
	slices.Sort(paths)
	return paths
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// head returns the first n lines of text, enough to tell which object a
// message is about without printing a whole dashboard.
func head(text string, n int) string {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) <= n {
		return text
	}
	return strings.Join(lines[:n], "") + "...\n"
}
