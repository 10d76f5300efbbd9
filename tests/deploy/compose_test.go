package deploy

import (
	"context"
	"encoding/json"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// exporterPort is the exporter's default port (--web.listen-address).
const exporterPort = 9134

// loadCompose loads docker-compose.yml as docker compose does, with the
// given profiles and environment (none from the test's own).
func loadCompose(t testing.TB, profiles []string, env ...string) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{repo("docker-compose.yml")},
		cli.WithWorkingDirectory(root),
		cli.WithProfiles(profiles),
		cli.WithEnv(env),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("loading docker-compose.yml with profiles %q: %v", profiles, err)
	}
	return p
}

func service(t testing.TB, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, ok := p.Services[name]
	if !ok {
		t.Fatalf("profiles %q: no service %s (services: %v)", p.Profiles, name, slices.Sorted(maps.Keys(p.Services)))
	}
	return s
}

// hostPath returns the file of the host (the repository) that a container
// path of s is bind-mounted from.
func hostPath(s types.ServiceConfig, containerPath string) (string, bool) {
	for _, v := range s.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		if containerPath == v.Target {
			return v.Source, true
		}
		if rest, ok := strings.CutPrefix(containerPath, strings.TrimSuffix(v.Target, "/")+"/"); ok {
			return filepath.Join(v.Source, rest), true
		}
	}
	return "", false
}

// listenPort is the port a service's program listens on: its
// --web.listen-address, or def.
func listenPort(t testing.TB, s types.ServiceConfig, def int) int {
	t.Helper()
	addr, ok := repotest.FlagValue(s.Command, "web.listen-address")
	if !ok {
		return def
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("service %s: --web.listen-address=%s: %v", s.Name, addr, err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// resolve finds the one service of p that answers to host on the compose
// network: by its name or by a network alias.
func resolve(t testing.TB, p *types.Project, host string) types.ServiceConfig {
	t.Helper()
	var found []types.ServiceConfig
	for _, s := range p.Services {
		names := []string{s.Name}
		for _, n := range s.Networks {
			if n != nil {
				names = append(names, n.Aliases...)
			}
		}
		if slices.Contains(names, host) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("profiles %q: %d services answer to %q, want 1", p.Profiles, len(found), host)
	}
	return found[0]
}

// checkTarget asserts that host:port reaches a service of p listening on
// that port and publishing it.
func checkTarget(t testing.TB, p *types.Project, target string, defaultPort int) types.ServiceConfig {
	t.Helper()
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		t.Fatalf("target %q: %v", target, err)
	}
	s := resolve(t, p, host)
	if got := strconv.Itoa(listenPort(t, s, defaultPort)); got != port {
		t.Errorf("profiles %q: target %s reaches service %s, which listens on %s", p.Profiles, target, s.Name, got)
	}
	return s
}

func TestComposeProfiles(t *testing.T) {
	for _, tc := range []struct {
		profiles []string
		want     []string
	}{
		{nil, []string{"alertmanager", "grafana", "prometheus"}},
		{[]string{"demo"}, []string{"alertmanager", "grafana", "prometheus", "zpool_exporter_demo"}},
		{[]string{"host"}, []string{"alertmanager", "grafana", "prometheus", "zpool_exporter"}},
	} {
		p := loadCompose(t, tc.profiles)
		if got := slices.Sorted(maps.Keys(p.Services)); !slices.Equal(got, tc.want) {
			t.Errorf("profiles %q: services %v, want %v", tc.profiles, got, tc.want)
		}
	}
}

// Prometheus scrapes, as job zfs, whichever exporter the profile starts,
// and sends alerts to the Alertmanager service; Grafana reads that
// Prometheus.
func TestComposeTargets(t *testing.T) {
	for _, profile := range []string{"demo", "host"} {
		p := loadCompose(t, []string{profile})
		prom := service(t, p, "prometheus")
		cfgPath, ok := repotest.FlagValue(prom.Command, "config.file")
		if !ok {
			t.Fatal("prometheus: no --config.file")
		}
		src, ok := hostPath(prom, cfgPath)
		if !ok {
			t.Fatalf("prometheus: %s is not mounted from the repository", cfgPath)
		}
		var cfg promConfig
		readYAML(t, src, &cfg)
		zfs := cfg.job(t, "zfs")
		if len(zfs.StaticConfigs) != 1 || len(zfs.StaticConfigs[0].Targets) != 1 {
			t.Fatalf("%s: job zfs must scrape one target, the exporter: %+v", src, zfs.StaticConfigs)
		}
		exp := checkTarget(t, p, zfs.StaticConfigs[0].Targets[0], exporterPort)
		if !slices.Contains(exp.Profiles, profile) {
			t.Errorf("profile %s: job zfs scrapes service %s, of profiles %q", profile, exp.Name, exp.Profiles)
		}
		if !hasPublished(exp, exporterPort) {
			t.Errorf("service %s does not publish port %d", exp.Name, exporterPort)
		}

		var ams []string
		for _, am := range cfg.Alerting.Alertmanagers {
			for _, sc := range am.StaticConfigs {
				ams = append(ams, sc.Targets...)
			}
		}
		if len(ams) != 1 {
			t.Fatalf("%s: alerting targets %q, want the alertmanager service", src, ams)
		}
		if s := checkTarget(t, p, ams[0], 9093); s.Name != "alertmanager" || !hasPublished(s, 9093) {
			t.Errorf("alerts go to %s (service %s), not to the published alertmanager service", ams[0], s.Name)
		}

		ds := grafanaDatasource(t, p)
		u, err := url.Parse(ds.URL)
		if err != nil {
			t.Fatal(err)
		}
		if s := checkTarget(t, p, u.Host, 9090); s.Name != "prometheus" || !hasPublished(s, 9090) {
			t.Errorf("Grafana's data source %s reaches service %s, not the published prometheus", ds.URL, s.Name)
		}
		if ds.JSONData.TimeInterval != cfg.Global.ScrapeInterval {
			t.Errorf("Grafana's data source timeInterval %q differs from Prometheus' scrape_interval %q: $__rate_interval would be wrong",
				ds.JSONData.TimeInterval, cfg.Global.ScrapeInterval)
		}
	}
}

func hasPublished(s types.ServiceConfig, port int) bool {
	for _, p := range s.Ports {
		if int(p.Target) == port && p.Published == strconv.Itoa(port) {
			return true
		}
	}
	return false
}

func TestComposePorts(t *testing.T) {
	want := map[string]int{"zpool_exporter": exporterPort, "zpool_exporter_demo": exporterPort, "prometheus": 9090, "alertmanager": 9093, "grafana": 3000}
	for _, tc := range []struct {
		env  []string
		host string
	}{
		{nil, "127.0.0.1"},
		{[]string{"BIND_ADDRESS=0.0.0.0"}, "0.0.0.0"},
	} {
		p := loadCompose(t, []string{"demo", "host"}, tc.env...)
		for name, port := range want {
			s := service(t, p, name)
			if len(s.Ports) != 1 || int(s.Ports[0].Target) != port || s.Ports[0].Published != strconv.Itoa(port) || s.Ports[0].HostIP != tc.host {
				t.Errorf("env %q: service %s publishes %+v, want %s:%d:%d", tc.env, name, s.Ports, tc.host, port, port)
			}
		}
	}
}

// Every file a service mounts from the repository exists, and no container
// can write to the repository or the host.
func TestComposeBindMounts(t *testing.T) {
	p := loadCompose(t, []string{"demo", "host"})
	hostMounts := map[string]string{}
	for _, s := range p.Services {
		for _, v := range s.Volumes {
			switch v.Type {
			case types.VolumeTypeBind:
				if !v.ReadOnly {
					t.Errorf("service %s: %s is mounted read-write", s.Name, v.Target)
				}
				if rel, err := filepath.Rel(root, v.Source); err == nil && filepath.IsLocal(rel) {
					if _, err := os.Stat(v.Source); err != nil {
						t.Errorf("service %s mounts %s from the repository: %v", s.Name, v.Target, err)
					}
					continue
				}
				hostMounts[s.Name+" "+v.Source] = v.Target
			case types.VolumeTypeVolume:
				if _, ok := p.Volumes[v.Source]; !ok {
					t.Errorf("service %s: volume %s is not declared", s.Name, v.Source)
				}
			default:
				t.Errorf("service %s: unexpected %s mount on %s", s.Name, v.Type, v.Target)
			}
		}
	}
	// Only the real exporter sees the host: its root for zpool, its /dev
	// for the disks under the vdevs.
	want := map[string]string{"zpool_exporter /": "/host", "zpool_exporter /dev": "/dev"}
	if len(hostMounts) != len(want) {
		t.Errorf("host paths mounted: %v, want %v", hostMounts, want)
	}
	for k, target := range want {
		if hostMounts[k] != target {
			t.Errorf("%s: mounted on %q, want %s", k, hostMounts[k], target)
		}
	}
}

// The exporter images are built from deploy/docker/Dockerfile, the others
// are pinned public images.
func TestComposeImages(t *testing.T) {
	p := loadCompose(t, []string{"demo", "host"})
	stages := dockerfileStages(t)
	built := 0
	for _, s := range p.Services {
		if s.Build == nil {
			if !regexp.MustCompile(`^[a-z0-9./-]+:v?\d+\.\d+\.\d+$`).MatchString(s.Image) {
				t.Errorf("service %s: image %q is not pinned to a version", s.Name, s.Image)
			}
			continue
		}
		built++
		if s.Build.Context != root {
			t.Errorf("service %s: build context %s, want the top of the repository", s.Name, s.Build.Context)
		}
		df := s.Build.Dockerfile
		if !filepath.IsAbs(df) {
			df = filepath.Join(s.Build.Context, df)
		}
		if df != repo("deploy", "docker", "Dockerfile") {
			t.Errorf("service %s: Dockerfile %s", s.Name, df)
		}
		if !slices.Contains(stages, s.Build.Target) {
			t.Errorf("service %s: target %q is not a stage of the Dockerfile (%v)", s.Name, s.Build.Target, stages)
		}
	}
	if built != 2 {
		t.Errorf("%d services built from the Dockerfile, want the two exporters", built)
	}
}

// The demo runs the exporter's --demo, which serves the replay built into
// the binary and needs nothing from the host, not even a file; the test
// runs the built exporter with the service's flags.
func TestComposeDemo(t *testing.T) {
	p := loadCompose(t, []string{"demo"})
	s := service(t, p, "zpool_exporter_demo")
	if !slices.Contains(s.Command, "--demo") {
		t.Errorf("zpool_exporter_demo: command %q, want --demo", s.Command)
	}
	if len(s.Volumes) != 0 {
		t.Errorf("zpool_exporter_demo mounts %+v; the demo is in the binary", s.Volumes)
	}
	if len(s.Devices) != 0 || len(s.CapAdd) != 0 || s.Pid != "" || !slices.Equal(s.CapDrop, []string{"ALL"}) || !s.ReadOnly {
		t.Errorf("the demo asks for privileges: devices %v, cap_add %v, cap_drop %v, pid %q, read_only %v", s.Devices, s.CapAdd, s.CapDrop, s.Pid, s.ReadOnly)
	}
	if s.Build == nil || s.Build.Target != "demo" {
		t.Errorf("the demo is not built from the Dockerfile's demo stage: %+v", s.Build)
	}

	var args []string
	for _, a := range s.Command {
		if !strings.HasPrefix(a, "--web.listen-address=") {
			args = append(args, a)
		}
	}
	checkFlags(t, s.Command)
	e := e2e.Start(t, exporterBinary(t), nil, args...)
	m := e.Scrape(t)
	if len(m.Series("zfs_pool_state", nil)) == 0 {
		t.Errorf("the demo exports no zfs_pool_state:\n%s", e.ScrapeText(t))
	}
	if v, ok := m.Get("zfs_exporter_collector_success", map[string]string{"collector": "status"}); !ok || v != 1 {
		t.Errorf("the demo's status collector failed (%v, %v)", v, ok)
	}
}

// The real exporter: the host's zpool through the image's chroot wrapper,
// /dev/zfs, the host PID namespace, and nothing more.
func TestComposeHostExporter(t *testing.T) {
	p := loadCompose(t, []string{"host"})
	s := service(t, p, "zpool_exporter")
	if !slices.Equal(s.Command, defaultArgs(t)) {
		t.Errorf("command %q, want the defaults of the systemd unit %q", s.Command, defaultArgs(t))
	}
	if len(s.Devices) != 1 || s.Devices[0].Source != "/dev/zfs" || s.Devices[0].Target != "/dev/zfs" {
		t.Errorf("devices %+v, want /dev/zfs", s.Devices)
	}
	if s.Pid != "host" {
		t.Errorf("pid %q: the ZFS kernel threads' CPU needs the host's PID namespace", s.Pid)
	}
	if !slices.Equal(s.CapDrop, []string{"ALL"}) || !slices.Equal(s.CapAdd, []string{"SYS_CHROOT"}) {
		t.Errorf("cap_drop %v, cap_add %v: want ALL dropped and SYS_CHROOT alone for chroot", s.CapDrop, s.CapAdd)
	}
	if !s.ReadOnly || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
		t.Errorf("read_only %v, security_opt %v", s.ReadOnly, s.SecurityOpt)
	}
	for _, v := range s.Volumes {
		if v.Target == "/host" && (v.Bind == nil || v.Bind.Propagation != "rslave") {
			t.Errorf("/host is mounted without rslave propagation: %+v", v.Bind)
		}
	}
	// The wrapper chroots into the mount's target.
	m := regexp.MustCompile(`root=\$\{ZPOOL_HOST_ROOT:-([^}]+)\}`).FindStringSubmatch(readFile(t, repo("deploy", "docker", "zpool-host")))
	if m == nil || m[1] != "/host" {
		t.Errorf("deploy/docker/zpool-host chroots into %q, not /host", m)
	}
	if _, ok := repotest.FlagValue(s.Command, "zpool.command"); ok {
		t.Errorf("the command sets --zpool.command: the wrapper is found as zpool in PATH")
	}
}

// grafanaDatasource is the default data source that Grafana is
// provisioned with.
type datasource struct {
	Name      string
	UID       string
	Type      string
	URL       string
	IsDefault bool `yaml:"isDefault"`
	JSONData  struct {
		TimeInterval string `yaml:"timeInterval"`
	} `yaml:"jsonData"`
}

func grafanaDatasource(t testing.TB, p *types.Project) datasource {
	t.Helper()
	g := service(t, p, "grafana")
	dir, ok := hostPath(g, "/etc/grafana/provisioning/datasources")
	if !ok {
		t.Fatal("grafana: /etc/grafana/provisioning is not mounted")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.y*ml"))
	var defaults []datasource
	for _, f := range files {
		var c struct {
			APIVersion  int `yaml:"apiVersion"`
			Datasources []datasource
		}
		readYAML(t, f, &c)
		if c.APIVersion != 1 {
			t.Errorf("%s: apiVersion %d", f, c.APIVersion)
		}
		for _, d := range c.Datasources {
			if d.IsDefault {
				defaults = append(defaults, d)
			}
		}
	}
	if len(defaults) != 1 || defaults[0].Type != "prometheus" {
		t.Fatalf("grafana: default data sources %+v, want one of type prometheus", defaults)
	}
	return defaults[0]
}

// Grafana loads the five dashboards, whose data source variable picks the
// provisioned default Prometheus.
func TestComposeGrafana(t *testing.T) {
	p := loadCompose(t, nil)
	g := service(t, p, "grafana")
	ds := grafanaDatasource(t, p)

	provDir, _ := hostPath(g, "/etc/grafana/provisioning/dashboards")
	files, _ := filepath.Glob(filepath.Join(provDir, "*.y*ml"))
	if len(files) != 1 {
		t.Fatalf("dashboard providers: %v, want one file", files)
	}
	var prov struct {
		APIVersion int `yaml:"apiVersion"`
		Providers  []struct {
			Name    string
			Type    string
			Folder  string
			Options struct {
				Path string
			}
		}
	}
	readYAML(t, files[0], &prov)
	if prov.APIVersion != 1 || len(prov.Providers) != 1 || prov.Providers[0].Type != "file" {
		t.Fatalf("%s: %+v", files[0], prov)
	}
	dashDir, ok := hostPath(g, prov.Providers[0].Options.Path)
	if !ok {
		t.Fatalf("grafana: the provider's path %s is not mounted", prov.Providers[0].Options.Path)
	}
	if dashDir != repo("dashboards", "out", "dashboards") {
		t.Errorf("grafana loads dashboards from %s, want dashboards/out/dashboards", dashDir)
	}
	dashboards, _ := filepath.Glob(filepath.Join(dashDir, "*.json"))
	var uids []string
	for _, f := range dashboards {
		var d struct {
			UID        string
			Templating struct {
				List []struct {
					Name, Type string
					Query      any
				}
			}
			Panels []struct {
				Title      string
				Datasource *struct{ Type, UID string }
			}
		}
		if err := json.Unmarshal([]byte(readFile(t, f)), &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		uids = append(uids, d.UID)
		var dsVar []string
		for _, v := range d.Templating.List {
			if v.Type == "datasource" {
				dsVar = append(dsVar, v.Name)
				if v.Query != ds.Type {
					t.Errorf("%s: data source variable $%s lists %v data sources; Grafana is provisioned with %s", f, v.Name, v.Query, ds.Type)
				}
			}
		}
		if len(dsVar) != 1 {
			t.Fatalf("%s: data source variables %v, want one", f, dsVar)
		}
		for _, panel := range d.Panels {
			if panel.Datasource != nil && panel.Datasource.UID != "${"+dsVar[0]+"}" {
				t.Errorf("%s: panel %q uses data source %q, not $%s", f, panel.Title, panel.Datasource.UID, dsVar[0])
			}
		}
	}
	slices.Sort(uids)
	if want := []string{"zfs-arc", "zfs-benchmark", "zfs-datasets", "zfs-io", "zfs-pools", "zfs-scans"}; !slices.Equal(uids, want) {
		t.Errorf("dashboards %v, want %v", uids, want)
	}
	home := g.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
	if home == nil {
		t.Fatal("grafana: no home dashboard")
	}
	if src, ok := hostPath(g, *home); !ok {
		t.Errorf("grafana's home dashboard %s is not mounted", *home)
	} else if _, err := os.Stat(src); err != nil {
		t.Errorf("grafana's home dashboard: %v", err)
	}
}
