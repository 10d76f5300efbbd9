package kubernetes

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// zfsResource is the extended resource a device plugin such as squat's
// generic-device-plugin serves /dev/zfs as.
const zfsResource = "squat.ai/zfs"

// valueSets are the values the chart is rendered with besides its
// defaults; every one must lint and render to objects of known kinds.
var valueSets = map[string]map[string]any{
	"defaults":             nil,
	"device plugin":        {"zfsDevice": map[string]any{"resourceName": zfsResource}},
	"device plugin+limits": {"zfsDevice": map[string]any{"resourceName": zfsResource}, "resources": map[string]any{"limits": map[string]any{"memory": "128Mi"}}},
	"operator objects off": {
		"serviceMonitor": map[string]any{"enabled": false},
		"prometheusRule": map[string]any{"enabled": false},
		"dashboards":     map[string]any{"enabled": false},
	},
	"extra args":       {"extraArgs": []any{"--collector.dataset.max=200", "--zpool.iostat-interval=1s"}},
	"node selector":    {"nodeSelector": map[string]any{"zfs": "true"}, "priorityClassName": "system-node-critical"},
	"existing account": {"serviceAccount": map[string]any{"create": false, "name": "zfs"}},
	"everything set": {
		"imagePullSecrets": []any{map[string]any{"name": "registry"}},
		"podAnnotations":   map[string]any{"a": "b"},
		"podLabels":        map[string]any{"team": "storage"},
		"affinity":         map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "zfs", "operator": "Exists"}}}}}}},
		"serviceMonitor":   map[string]any{"labels": map[string]any{"release": "kube-prometheus-stack"}, "nativeHistograms": true},
		"prometheusRule":   map[string]any{"labels": map[string]any{"release": "kube-prometheus-stack"}},
		"dashboards":       map[string]any{"label": "dashboards", "labelValue": "zfs", "folderAnnotation": "folder", "folder": "Storage"},
	},
}

// Every value set renders, each object decodes strictly into its Go type
// (render fails the test otherwise), and the objects fit together.
func TestEveryValueSetRendersObjectsThatDecodeStrictlyAndFitTogether(t *testing.T) {
	for name, vals := range valueSets {
		t.Run(name, func(t *testing.T) {
			objs := render(t, vals)
			checkConsistent(t, objs)
		})
	}
}

// checkConsistent checks what holds for every value set: the namespace,
// the labels, and that each object finds the one it refers to.
func checkConsistent(t *testing.T, objs *objects) {
	t.Helper()
	ds := only(t, "DaemonSets", objs.DaemonSets)
	svc := only(t, "Services", objs.Services)
	c := container(t, ds)
	pod := ds.Spec.Template

	for _, d := range objs.Docs {
		if d.Namespace != namespace {
			t.Errorf("%s %s is in namespace %q, not the release's, %s", d.Kind, d.Name, d.Namespace, namespace)
		}
		for _, l := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/managed-by", "helm.sh/chart"} {
			if d.Labels[l] == "" {
				t.Errorf("%s %s lacks the label %s", d.Kind, d.Name, l)
			}
		}
	}

	sel, err := metav1.LabelSelectorAsSelector(ds.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(labels.Set(pod.Labels)) {
		t.Errorf("the DaemonSet's selector %v does not match its pods' labels %v", ds.Spec.Selector.MatchLabels, pod.Labels)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(pod.Labels)) {
		t.Errorf("the Service's selector %v does not match the pods' labels %v", svc.Spec.Selector, pod.Labels)
	}
	if svc.Spec.Type != corev1.ServiceTypeClusterIP {
		t.Errorf("the Service is a %s, want ClusterIP", svc.Spec.Type)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "metrics" || svc.Spec.Ports[0].Port != 9134 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("the Service's ports are %+v, want one named metrics, 9134 to the container's port metrics", svc.Spec.Ports)
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 9134 {
		t.Errorf("the container's ports are %+v, want metrics 9134", c.Ports)
	}
	for _, sm := range objs.ServiceMonitors {
		smSel := labels.SelectorFromSet(sm.Spec.Selector.MatchLabels)
		if len(sm.Spec.Selector.MatchExpressions) > 0 || !smSel.Matches(labels.Set(svc.Labels)) {
			t.Errorf("the ServiceMonitor's selector %+v does not select the Service (labels %v)", sm.Spec.Selector, svc.Labels)
		}
		if !slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
			t.Errorf("the ServiceMonitor looks in namespaces %v, want the release's, %s", sm.Spec.NamespaceSelector.MatchNames, namespace)
		}
		for _, ep := range sm.Spec.Endpoints {
			if ep.Port != svc.Spec.Ports[0].Name {
				t.Errorf("the ServiceMonitor scrapes port %q, the Service's is %q", ep.Port, svc.Spec.Ports[0].Name)
			}
		}
	}

	spec := pod.Spec
	if len(objs.ServiceAccounts) > 0 {
		sa := only(t, "ServiceAccounts", objs.ServiceAccounts)
		if spec.ServiceAccountName != sa.Name {
			t.Errorf("the pods run as %q, the chart's ServiceAccount is %q", spec.ServiceAccountName, sa.Name)
		}
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			t.Error("the ServiceAccount does not turn off token automounting")
		}
	}
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pods mount a ServiceAccount token; the exporter calls no Kubernetes API")
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/-/healthy" || p.HTTPGet.Port.String() != "metrics" {
			t.Errorf("probe %+v: want an httpGet of /-/healthy on port metrics, which answers without running zpool", p)
		}
	}
	// The runtime creates the termination log file at container start,
	// and cannot on the host's read-only /dev.
	if strings.HasPrefix(c.TerminationMessagePath, "/dev/") || c.TerminationMessagePath == "" {
		t.Errorf("terminationMessagePath %q is under the read-only /dev (Kubernetes's default is /dev/termination-log)", c.TerminationMessagePath)
	}
	if ds.Spec.UpdateStrategy.Type != appsv1.RollingUpdateDaemonSetStrategyType {
		t.Errorf("update strategy %q, want RollingUpdate", ds.Spec.UpdateStrategy.Type)
	}
}

func TestDaemonSetSeesTheHostReadOnly(t *testing.T) {
	for name, vals := range valueSets {
		t.Run(name, func(t *testing.T) {
			ds := only(t, "DaemonSets", render(t, vals).DaemonSets)
			spec := ds.Spec.Template.Spec
			c := container(t, ds)
			if !spec.HostPID {
				t.Error("hostPID is off: the ZFS kernel threads' CPU time is read from their /proc/PID/stat, only in the host's PID namespace")
			}
			if spec.HostNetwork {
				t.Error("hostNetwork is on: the exporter needs no host network")
			}
			hostPaths := map[string]string{}
			for _, v := range spec.Volumes {
				if v.HostPath != nil {
					hostPaths[v.Name] = v.HostPath.Path
				}
			}
			mounts := map[string]corev1.VolumeMount{}
			for _, m := range c.VolumeMounts {
				mounts[m.MountPath] = m
				if !m.ReadOnly {
					t.Errorf("%s is mounted writable", m.MountPath)
				}
			}
			host, ok := mounts["/host"]
			if !ok || hostPaths[host.Name] != "/" {
				t.Errorf("the host's / is not mounted at /host (mounts %v, host paths %v)", mounts, hostPaths)
			}
			if host.MountPropagation == nil || *host.MountPropagation != corev1.MountPropagationHostToContainer {
				t.Errorf("/host's propagation is %v, want HostToContainer so that file systems mounted later on the host appear", host.MountPropagation)
			}
			if dev, ok := mounts["/dev"]; !ok || hostPaths[dev.Name] != "/dev" {
				t.Errorf("the host's /dev is not mounted at /dev, where the disk collector follows /dev/disk/by-id (mounts %v)", mounts)
			}
			if sc := c.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				t.Error("the root file system is writable")
			}
		})
	}
}

// Without a device plugin the container must be privileged, the only way
// stock Kubernetes opens /dev/zfs to it; the API server rejects
// allowPrivilegeEscalation: false beside privileged.
func TestPrivilegedOnlyWithoutDevicePlugin(t *testing.T) {
	ds := only(t, "DaemonSets", render(t, nil).DaemonSets)
	c := container(t, ds)
	sc := c.SecurityContext
	if sc == nil || sc.Privileged == nil || !*sc.Privileged {
		t.Fatal("with no zfsDevice.resourceName the container is not privileged, and cannot open /dev/zfs")
	}
	if sc.AllowPrivilegeEscalation != nil {
		t.Errorf("allowPrivilegeEscalation is set (%v) beside privileged: the API server rejects false", *sc.AllowPrivilegeEscalation)
	}
	if _, ok := c.Resources.Limits[corev1.ResourceName(zfsResource)]; ok {
		t.Errorf("the container requests %s with no zfsDevice.resourceName", zfsResource)
	}
}

func TestDevicePluginRunsUnprivilegedWithOnlySysChroot(t *testing.T) {
	for _, name := range []string{"device plugin", "device plugin+limits"} {
		t.Run(name, func(t *testing.T) {
			ds := only(t, "DaemonSets", render(t, valueSets[name]).DaemonSets)
			c := container(t, ds)
			sc := c.SecurityContext
			if sc == nil {
				t.Fatal("no securityContext")
			}
			if sc.Privileged == nil || *sc.Privileged {
				t.Error("privileged is not false")
			}
			if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				t.Error("allowPrivilegeEscalation is not false")
			}
			if sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || !slices.Equal(sc.Capabilities.Add, []corev1.Capability{"SYS_CHROOT"}) {
				t.Errorf("capabilities %+v, want drop [ALL] add [SYS_CHROOT]", sc.Capabilities)
			}
			if sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("seccompProfile %+v, want RuntimeDefault", sc.SeccompProfile)
			}
			if q := c.Resources.Limits[corev1.ResourceName(zfsResource)]; q.Cmp(resource.MustParse("1")) != 0 {
				t.Errorf("limits %v: want 1 %s", c.Resources.Limits, zfsResource)
			}
			if name == "device plugin+limits" {
				if q := c.Resources.Limits[corev1.ResourceMemory]; q.Cmp(resource.MustParse("128Mi")) != 0 {
					t.Errorf("limits %v lost the values' memory limit", c.Resources.Limits)
				}
			}
		})
	}
}

func TestDefaultPodSchedulingAndResources(t *testing.T) {
	ds := only(t, "DaemonSets", render(t, nil).DaemonSets)
	spec := ds.Spec.Template.Spec
	c := container(t, ds)
	want := []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
	if diff := cmp.Diff(want, spec.Tolerations); diff != "" {
		t.Errorf("tolerations (-want +got), a node monitor runs on tainted nodes too:\n%s", diff)
	}
	if len(spec.NodeSelector) > 0 || spec.Affinity != nil || spec.PriorityClassName != "" {
		t.Errorf("default nodeSelector %v, affinity %v, priority class %q: want none", spec.NodeSelector, spec.Affinity, spec.PriorityClassName)
	}
	if len(c.Resources.Limits) > 0 {
		t.Errorf("default limits %v: a CPU limit throttles a scrape's zpool commands", c.Resources.Limits)
	}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: "10m", corev1.ResourceMemory: "32Mi"} {
		if got := c.Resources.Requests[name]; got.Cmp(resource.MustParse(q)) != 0 {
			t.Errorf("request of %s %v, want %s", name, got.String(), q)
		}
	}
	if img := c.Image; img != "zpool_exporter:host" || c.ImagePullPolicy != corev1.PullIfNotPresent {
		t.Errorf("image %s (%s), want zpool_exporter:host, IfNotPresent", img, c.ImagePullPolicy)
	}
}

func TestArgsAndScheduling(t *testing.T) {
	objs := render(t, valueSets["extra args"])
	c := container(t, only(t, "DaemonSets", objs.DaemonSets))
	want := []string{"--web.listen-address=:9134", "--collector.dataset.max=200", "--zpool.iostat-interval=1s"}
	if diff := cmp.Diff(want, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	if len(c.Command) > 0 {
		t.Errorf("command %v replaces the image's entrypoint", c.Command)
	}

	spec := only(t, "DaemonSets", render(t, valueSets["node selector"]).DaemonSets).Spec.Template.Spec
	if diff := cmp.Diff(map[string]string{"zfs": "true"}, spec.NodeSelector); diff != "" {
		t.Errorf("nodeSelector (-want +got):\n%s", diff)
	}
	if spec.PriorityClassName != "system-node-critical" {
		t.Errorf("priorityClassName %q", spec.PriorityClassName)
	}
}

func TestOperatorObjectsAndDashboardsCanBeTurnedOff(t *testing.T) {
	objs := render(t, valueSets["operator objects off"])
	var kinds []string
	for _, d := range objs.Docs {
		kinds = append(kinds, d.Kind)
	}
	slices.Sort(kinds)
	if want := []string{"DaemonSet", "Service", "ServiceAccount"}; !slices.Equal(kinds, want) {
		t.Errorf("rendered %v, want %v", kinds, want)
	}

	objs = render(t, valueSets["existing account"])
	if len(objs.ServiceAccounts) != 0 {
		t.Errorf("serviceAccount.create false rendered %d ServiceAccounts", len(objs.ServiceAccounts))
	}
	if got := only(t, "DaemonSets", objs.DaemonSets).Spec.Template.Spec.ServiceAccountName; got != "zfs" {
		t.Errorf("the pods run as %q, want the existing zfs", got)
	}
}

// The dashboards and rules select job="zfs": the ServiceMonitor must give
// the series that job, and the node's name as instance, which alerts show.
func TestServiceMonitorRelabelsJobAndInstance(t *testing.T) {
	objs := render(t, nil)
	sm := only(t, "ServiceMonitors", objs.ServiceMonitors)
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("%d endpoints, want 1", len(sm.Spec.Endpoints))
	}
	ep := sm.Spec.Endpoints[0]
	if ep.Interval != "15s" || ep.ScrapeTimeout != "10s" || ep.Path != "/metrics" {
		t.Errorf("interval %q, scrape timeout %q, path %q: want 15s, 10s, /metrics", ep.Interval, ep.ScrapeTimeout, ep.Path)
	}
	// The last relabeling that writes a label decides its value.
	last := map[string]monitoringv1.RelabelConfig{}
	for _, r := range ep.RelabelConfigs {
		last[r.TargetLabel] = r
	}
	isReplace := func(r monitoringv1.RelabelConfig) bool {
		return (r.Action == "" || strings.EqualFold(r.Action, "replace")) && (r.Regex == "" || r.Regex == "(.*)")
	}
	job, ok := last["job"]
	if !ok || !isReplace(job) || job.Replacement == nil || *job.Replacement != "zfs" {
		t.Errorf("the job relabeling is %+v, want a replace to zfs", job)
	}
	inst, ok := last["instance"]
	if !ok || !isReplace(inst) || !slices.Equal(inst.SourceLabels, []monitoringv1.LabelName{"__meta_kubernetes_pod_node_name"}) ||
		(inst.Replacement != nil && *inst.Replacement != "$1") {
		t.Errorf("the instance relabeling is %+v, want a replace from __meta_kubernetes_pod_node_name", inst)
	}

	// Every job the rules select is the one relabeled to; the dashboards
	// list every job in their job variable and write none.
	selected := regexp.MustCompile(`job=\\?"([^"\\]*)`)
	found := 0
	for _, path := range append(repoFiles(t, "dashboards/out/rules/*.yaml"), repoFiles(t, "dashboards/out/dashboards/*.json")...) {
		for _, m := range selected.FindAllSubmatch(readFile(t, path), -1) {
			found++
			if string(m[1]) != *job.Replacement {
				t.Errorf("%s selects job=%q; the ServiceMonitor relabels to %q", filepath.Base(path), m[1], *job.Replacement)
			}
		}
	}
	if found == 0 {
		t.Error("no rule or dashboard selects a job: the check above checks nothing")
	}
}

// The PrometheusRule holds every group of the generated rule files, in
// full: a rule added, removed or changed there and not in the chart fails.
func TestPrometheusRuleGroupsEqualGeneratedRuleFiles(t *testing.T) {
	objs := render(t, nil)
	pr := only(t, "PrometheusRules", objs.PrometheusRules)
	if diff := cmp.Diff(generatedRuleGroups(t, "zfs"), pr.Spec.Groups); diff != "" {
		t.Errorf("the PrometheusRule's groups differ from dashboards/out/rules (-files +chart); run `go run ./cmd/mixin` in dashboards/:\n%s", diff)
	}
	// Prometheus, not Helm, expands the annotations' templates.
	if !strings.Contains(only(t, "PrometheusRule docs", docsOf(objs, "PrometheusRule")).Text, "{{ $labels.pool }}") {
		t.Error("the rendered PrometheusRule lost the annotations' {{ $labels.pool }}")
	}
}

// Another serviceMonitor.job moves the ServiceMonitor's series and the
// rules' selector together: the rules are the generated ones with their
// selector's text replaced, which the dashboards module's
// TestRulesFollowTheSelector shows is what generating them for that job
// gives.
func TestServiceMonitorJobAndRulesMoveTogether(t *testing.T) {
	objs := render(t, map[string]any{"serviceMonitor": map[string]any{"job": "zpool"}})
	ep := only(t, "ServiceMonitors", objs.ServiceMonitors).Spec.Endpoints[0]
	relabeled := ""
	for _, r := range ep.RelabelConfigs {
		if r.TargetLabel == "job" && r.Replacement != nil {
			relabeled = *r.Replacement
		}
	}
	if relabeled != "zpool" {
		t.Errorf("the ServiceMonitor relabels job to %q, want zpool", relabeled)
	}
	pr := only(t, "PrometheusRules", objs.PrometheusRules)
	if diff := cmp.Diff(generatedRuleGroups(t, "zpool"), pr.Spec.Groups); diff != "" {
		t.Errorf("with serviceMonitor.job=zpool, the PrometheusRule's groups are not the rules moved to job zpool (-want +chart):\n%s", diff)
	}
	text := only(t, "PrometheusRule docs", docsOf(objs, "PrometheusRule")).Text
	if strings.Contains(text, `job=\"zfs\"`) || strings.Contains(text, `job="zfs"`) || !strings.Contains(text, `job=\"zpool\"`) && !strings.Contains(text, `job="zpool"`) {
		t.Errorf("the rendered PrometheusRule still selects job zfs, or not zpool:\n%s", head(text, 40))
	}
}

// generatedRuleGroups are the groups of dashboards/out/rules, their
// selector moved from job zfs to the job given.
func generatedRuleGroups(t *testing.T, job string) []monitoringv1.RuleGroup {
	t.Helper()
	var want []monitoringv1.RuleGroup
	for _, path := range repoFiles(t, "dashboards/out/rules/*.yaml") {
		var f struct {
			Groups []monitoringv1.RuleGroup `json:"groups"`
		}
		text := strings.ReplaceAll(string(readFile(t, path)), `job="zfs"`, fmt.Sprintf("job=%q", job))
		if err := decodeStrict([]byte(text), &f); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(f.Groups) == 0 {
			t.Fatalf("%s holds no group", path)
		}
		want = append(want, f.Groups...)
	}
	return want
}

func docsOf(objs *objects, kind string) []*doc {
	var out []*doc
	for i := range objs.Docs {
		if objs.Docs[i].Kind == kind {
			out = append(out, &objs.Docs[i])
		}
	}
	return out
}

// Grafana's sidecar gets each dashboard in a ConfigMap of its own, byte
// for byte the generated JSON.
func TestDashboardConfigMapsHoldGeneratedDashboards(t *testing.T) {
	for name, vals := range map[string]map[string]any{"defaults": nil, "everything set": valueSets["everything set"]} {
		t.Run(name, func(t *testing.T) {
			label, labelValue, annotation, folder := "grafana_dashboard", "1", "grafana_folder", "ZFS"
			if vals != nil {
				label, labelValue, annotation, folder = "dashboards", "zfs", "folder", "Storage"
			}
			objs := render(t, vals)
			byFile := map[string]*corev1.ConfigMap{}
			for _, cm := range objs.ConfigMaps {
				if len(cm.Data) != 1 || len(cm.BinaryData) != 0 {
					t.Errorf("ConfigMap %s holds %d files, want 1", cm.Name, len(cm.Data)+len(cm.BinaryData))
				}
				for file := range cm.Data {
					byFile[file] = cm
				}
				if cm.Labels[label] != labelValue {
					t.Errorf("ConfigMap %s: label %s=%q, want %q", cm.Name, label, cm.Labels[label], labelValue)
				}
				if cm.Annotations[annotation] != folder {
					t.Errorf("ConfigMap %s: annotation %s=%q, want %q", cm.Name, annotation, cm.Annotations[annotation], folder)
				}
			}
			files := repoFiles(t, "dashboards/out/dashboards/*.json")
			if len(objs.ConfigMaps) != len(files) {
				t.Errorf("%d ConfigMaps for %d dashboards", len(objs.ConfigMaps), len(files))
			}
			for _, path := range files {
				file := filepath.Base(path)
				cm, ok := byFile[file]
				if !ok {
					t.Errorf("no ConfigMap holds %s", file)
					continue
				}
				if !bytes.Equal([]byte(cm.Data[file]), readFile(t, path)) {
					t.Errorf("ConfigMap %s's %s differs from dashboards/out/dashboards/%s; run `go run ./cmd/mixin` in dashboards/", cm.Name, file, file)
				}
			}
		})
	}
}

func TestNotesNameTheDaemonSetAndTheJob(t *testing.T) {
	notes := render(t, nil).Notes
	for _, want := range []string{"daemonset/zpool-exporter", "-n monitoring", `job="zfs"`, "privileged"} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES.txt lacks %q:\n%s", want, notes)
		}
	}
}

// The optional pod and operator settings of values.yaml reach the objects
// they are meant for.
func TestOptionalSettingsReachTheirObjects(t *testing.T) {
	objs := render(t, valueSets["everything set"])
	pod := only(t, "DaemonSets", objs.DaemonSets).Spec.Template
	if pod.Labels["team"] != "storage" || pod.Annotations["a"] != "b" {
		t.Errorf("pod labels %v, annotations %v: want podLabels and podAnnotations in them", pod.Labels, pod.Annotations)
	}
	if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "registry"}}, pod.Spec.ImagePullSecrets); diff != "" {
		t.Errorf("imagePullSecrets (-want +got):\n%s", diff)
	}
	if a := pod.Spec.Affinity; a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		t.Errorf("affinity %+v lost the values' nodeAffinity", a)
	}
	if got := only(t, "ServiceMonitors", objs.ServiceMonitors).Labels["release"]; got != "kube-prometheus-stack" {
		t.Errorf("the ServiceMonitor's release label is %q, want serviceMonitor.labels'", got)
	}
	if got := only(t, "PrometheusRules", objs.PrometheusRules).Labels["release"]; got != "kube-prometheus-stack" {
		t.Errorf("the PrometheusRule's release label is %q, want prometheusRule.labels'", got)
	}
	sm := only(t, "ServiceMonitors", objs.ServiceMonitors).Spec
	if p, c := sm.ScrapeNativeHistograms, sm.ConvertClassicHistogramsToNHCB; p == nil || !*p || c == nil || !*c {
		t.Errorf("serviceMonitor.nativeHistograms: scrapeNativeHistograms %v, convertClassicHistogramsToNHCB %v; want both true", p, c)
	}
	if sm := only(t, "ServiceMonitors", render(t, nil).ServiceMonitors).Spec; sm.ScrapeNativeHistograms != nil || sm.ConvertClassicHistogramsToNHCB != nil {
		t.Error("the default ServiceMonitor sets native histogram settings, which Prometheus before 3.8 cannot take")
	}
}
