package compose

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v2"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// tmpRoot holds what the tests build once for all of them.
var tmpRoot string

func TestMain(m *testing.M) { repotest.Main(m, "zpool-exporter-compose-", &tmpRoot) }

// The services of the demo profile that run here; Grafana's image cannot
// be had, so its provisioning is checked by its structure (tests/deploy).
var stackServices = []string{"zpool_exporter_demo", "prometheus", "alertmanager"}

// The alert that the demo's pool raises: tank is DEGRADED for two of the
// demo's 2 minutes 40, longer than the rule's minute.
const (
	demoAlert = "ZFSPoolNotOnline"
	demoPool  = "tank"
)

// TestComposeDemoStack builds the images, brings up docker-compose.yml's
// demo profile with an override that moves its listeners onto the host's
// network, and follows the demo's degraded pool from the exporter through
// Prometheus and its rules to Alertmanager; then takes the stack down and
// checks that nothing of it is left.
func TestComposeDemoStack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds images and runs the compose stack on a Docker engine (3 to 6 minutes); skipped with -short")
	}
	e := startEngine(t)
	composeBin := composeCLI(t)
	project := loadProject(t)

	debian := debianImage(t, e)
	golang := goImage(t, e, debian)
	demo := project.Services["zpool_exporter_demo"]
	began := time.Now()
	dockerfile := demo.Build.Dockerfile
	if !filepath.IsAbs(dockerfile) {
		dockerfile = filepath.Join(demo.Build.Context, dockerfile)
	}
	e.mustDocker(t, "build", "--quiet", "--network=host", "--file", dockerfile, "--target", demo.Build.Target,
		"--build-arg", "GO_IMAGE="+golang, "--build-arg", "DEBIAN_IMAGE="+debian, "--build-arg", "DEMO_IMAGE="+debian,
		"--build-arg", "GOPROXY="+moduleProxy(t), "--tag", demo.Image, demo.Build.Context)
	t.Logf("built %s from %s, target %s, in %s", demo.Image, dockerfile, demo.Build.Target, time.Since(began).Round(time.Second))
	images := map[string]string{
		"prometheus":   prometheusImage(t, e, debian, project.Services["prometheus"].Image),
		"alertmanager": serviceImage(t, e, debian, "alertmanager", "/usr/bin/prometheus-alertmanager"),
	}

	addr := map[string]string{}
	for _, s := range stackServices {
		addr[s] = e2e.FreeAddress(t)
	}
	dir := t.TempDir()
	promConfig := filepath.Join(dir, "prometheus.yml")
	writePrometheusConfig(t, promConfig, addr)
	override := filepath.Join(dir, "docker-compose.override.yml")
	writeOverride(t, override, project, images, addr, promConfig)

	stack := &composeStack{bin: composeBin, engine: e, files: []string{repotest.Path("docker-compose.yml"), override}}
	t.Cleanup(func() { stack.down(t) })
	stack.run(t, append([]string{"up", "--detach", "--no-build"}, stackServices...)...)

	t.Run("no network", func(t *testing.T) {
		if nets := e.networks(t); !slices.Equal(nets, []string{"host", "none"}) {
			t.Errorf("the engine has networks %v; the stack must create none", nets)
		}
	})
	t.Run("demo container as composed", func(t *testing.T) {
		checkDemoContainer(t, e, stack, demo)
	})
	t.Run("exporter serves the demo", func(t *testing.T) {
		exp := e2e.Attach(t, "http://"+addr["zpool_exporter_demo"], time.Minute)
		if len(exp.Scrape(t).Series("zfs_pool_state", map[string]string{"pool": demoPool})) == 0 {
			t.Errorf("no zfs_pool_state of %s:\n%s", demoPool, exp.ScrapeText(t))
		}
		if page := get(t, exp.URL+"/"); !strings.Contains(page, demoPool) {
			t.Errorf("the status page does not show %s", demoPool)
		}
	})
	prom := "http://" + addr["prometheus"]
	t.Run("prometheus scrapes the exporter", func(t *testing.T) {
		eventually(t, time.Minute, "the zfs target up in Prometheus", func() (bool, string) {
			var r struct {
				Data struct {
					ActiveTargets []struct {
						Labels    map[string]string `json:"labels"`
						Health    string            `json:"health"`
						LastError string            `json:"lastError"`
					} `json:"activeTargets"`
				} `json:"data"`
			}
			if err := getJSON(prom+"/api/v1/targets", &r); err != nil {
				return false, err.Error()
			}
			for _, tg := range r.Data.ActiveTargets {
				if tg.Labels["job"] == "zfs" {
					return tg.Health == "up", fmt.Sprintf("health %q, last error %q", tg.Health, tg.LastError)
				}
			}
			return false, "no target of job zfs"
		})
	})
	t.Run("prometheus loads the rules", func(t *testing.T) {
		checkRules(t, prom)
	})
	t.Run("alert reaches alertmanager", func(t *testing.T) {
		am := "http://" + addr["alertmanager"]
		eventually(t, 5*time.Minute, demoAlert+" of "+demoPool+" in Alertmanager", func() (bool, string) {
			var alerts []struct {
				Labels map[string]string `json:"labels"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			}
			if err := getJSON(am+"/api/v2/alerts", &alerts); err != nil {
				return false, err.Error()
			}
			var seen []string
			for _, a := range alerts {
				if a.Labels["alertname"] == demoAlert && a.Labels["pool"] == demoPool && a.Labels["job"] == "zfs" {
					return a.Status.State == "active", "state " + a.Status.State
				}
				seen = append(seen, a.Labels["alertname"])
			}
			return false, fmt.Sprintf("alerts: %v", seen)
		})
	})
}

// loadProject reads docker-compose.yml with its demo profile as compose
// does.
func loadProject(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{repotest.Path("docker-compose.yml")},
		cli.WithWorkingDirectory(repotest.Root), cli.WithProfiles([]string{"demo"}), cli.WithEnv(nil), cli.WithResolvedPaths(true))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stackServices {
		if _, ok := p.Services[s]; !ok {
			t.Fatalf("docker-compose.yml has no service %s in the demo profile", s)
		}
	}
	if p.Services["zpool_exporter_demo"].Build == nil {
		t.Fatal("zpool_exporter_demo is not built from the Dockerfile")
	}
	return p
}

// writePrometheusConfig writes deploy/compose/prometheus.yml with its
// targets, names on the compose network, moved to the host's loopback.
func writePrometheusConfig(t *testing.T, path string, addr map[string]string) {
	t.Helper()
	data, err := os.ReadFile(repotest.Path("deploy", "compose", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	config := string(data)
	for target, service := range map[string]string{
		"zpool_exporter:9134": "zpool_exporter_demo",
		"alertmanager:9093":   "alertmanager",
		"localhost:9090":      "prometheus",
	} {
		if !strings.Contains(config, target) {
			t.Fatalf("deploy/compose/prometheus.yml does not name %s", target)
		}
		config = strings.ReplaceAll(config, target, addr[service])
	}
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeOverride writes the compose file that runs the stack here: every
// service on the host's network (the engine has no bridge), without
// published ports or networks, listening on its loopback address; the
// Prometheus configuration above; and the Debian images for Prometheus
// and Alertmanager. Everything else (the images, commands, mounts,
// volumes and restrictions) is docker-compose.yml's own.
func writeOverride(t *testing.T, path string, p *types.Project, images, addr map[string]string, promConfig string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("services:\n")
	for _, name := range stackServices {
		s := p.Services[name]
		command := slices.DeleteFunc(slices.Clone(s.Command), func(a string) bool {
			return strings.HasPrefix(a, "--web.listen-address=")
		})
		command = append(command, "--web.listen-address="+addr[name])
		fmt.Fprintf(&b, "  %s:\n    network_mode: host\n    ports: !reset []\n    networks: !reset {}\n", name)
		if image, ok := images[name]; ok {
			fmt.Fprintf(&b, "    image: %q\n", image)
		}
		switch name {
		case "alertmanager":
			// Its gossip listens on every address by default.
			command = append(command, "--cluster.listen-address=")
		case "prometheus":
			fmt.Fprintf(&b, "    volumes:\n      - %q\n", promConfig+":/etc/prometheus/prometheus.yml:ro")
			if v, ok := repotest.FlagValue(command, "config.file"); !ok || v != "/etc/prometheus/prometheus.yml" {
				t.Fatalf("prometheus: --config.file=%q, the override mounts /etc/prometheus/prometheus.yml", v)
			}
		}
		b.WriteString("    command:\n")
		for _, a := range command {
			fmt.Fprintf(&b, "      - %q\n", a)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// composeStack runs the compose CLI on the engine, over the project's
// file and the override.
type composeStack struct {
	bin    string
	engine *engine
	files  []string
}

func (s *composeStack) command(args ...string) *exec.Cmd {
	var full []string
	for _, f := range s.files {
		full = append(full, "--file", f)
	}
	cmd := exec.Command(s.bin, append(append(full, "--profile", "demo"), args...)...)
	cmd.Env = s.engine.env()
	cmd.Dir = repotest.Root
	return cmd
}

func (s *composeStack) run(t testing.TB, args ...string) string {
	t.Helper()
	out, err := s.command(args...).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("docker compose %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

// down takes the stack down with its volumes, after printing its logs if
// the test failed, and checks that no container, volume or network is
// left.
func (s *composeStack) down(t *testing.T) {
	if t.Failed() {
		out, _ := s.command("logs", "--no-color", "--tail", "40").CombinedOutput()
		t.Logf("docker compose logs:\n%s", out)
	}
	if out, err := s.command("down", "--volumes", "--timeout", "10").CombinedOutput(); err != nil {
		t.Errorf("docker compose down: %v\n%s", err, out)
	}
	if left := strings.Fields(s.engine.mustDocker(t, "ps", "--all", "--quiet")); len(left) > 0 {
		t.Errorf("containers left after docker compose down: %v", left)
	}
	if left := strings.Fields(s.engine.mustDocker(t, "volume", "ls", "--quiet")); len(left) > 0 {
		t.Errorf("volumes left after docker compose down --volumes: %v", left)
	}
	if nets := s.engine.networks(t); !slices.Equal(nets, []string{"host", "none"}) {
		t.Errorf("networks after docker compose down: %v, want the engine's host and none", nets)
	}
}

// networks lists the engine's networks by name.
func (e *engine) networks(t testing.TB) []string {
	nets := strings.Fields(e.mustDocker(t, "network", "ls", "--format", "{{.Name}}"))
	slices.Sort(nets)
	return nets
}

// checkDemoContainer checks that the engine runs the demo exporter with
// the restrictions docker-compose.yml gives it, as the user the image
// sets, with nothing mounted.
func checkDemoContainer(t *testing.T, e *engine, stack *composeStack, s types.ServiceConfig) {
	id := strings.TrimSpace(stack.run(t, "ps", "--quiet", s.Name))
	if id == "" {
		t.Fatalf("no container of %s", s.Name)
	}
	var inspect []struct {
		Config struct {
			User string
		}
		HostConfig struct {
			ReadonlyRootfs bool
			Privileged     bool
			CapDrop        []string
			CapAdd         []string
			SecurityOpt    []string
			NetworkMode    string
		}
		Mounts []json.RawMessage
	}
	if err := json.Unmarshal([]byte(e.mustDocker(t, "inspect", id)), &inspect); err != nil || len(inspect) != 1 {
		t.Fatalf("docker inspect %s: %v", id, err)
	}
	c := inspect[0]
	if !s.ReadOnly || !c.HostConfig.ReadonlyRootfs {
		t.Errorf("read-only root: composed %v, running %v", s.ReadOnly, c.HostConfig.ReadonlyRootfs)
	}
	if c.HostConfig.Privileged || len(c.HostConfig.CapAdd) != 0 || !slices.Equal(c.HostConfig.CapDrop, s.CapDrop) || !slices.Equal(s.CapDrop, []string{"ALL"}) {
		t.Errorf("privileges: privileged %v, cap_add %v, cap_drop %v (composed %v)", c.HostConfig.Privileged, c.HostConfig.CapAdd, c.HostConfig.CapDrop, s.CapDrop)
	}
	if !slices.Equal(c.HostConfig.SecurityOpt, s.SecurityOpt) || !slices.Contains(s.SecurityOpt, "no-new-privileges:true") {
		t.Errorf("security options %v, composed %v", c.HostConfig.SecurityOpt, s.SecurityOpt)
	}
	if c.Config.User == "" || strings.HasPrefix(c.Config.User, "0") || strings.HasPrefix(c.Config.User, "root") {
		t.Errorf("the demo runs as %q, want the Dockerfile's unprivileged user", c.Config.User)
	}
	if len(c.Mounts) != 0 {
		t.Errorf("the demo has %d mounts, want none", len(c.Mounts))
	}
	if c.HostConfig.NetworkMode != "host" {
		t.Errorf("network mode %q, want the override's host", c.HostConfig.NetworkMode)
	}
}

// checkRules waits until Prometheus has evaluated every rule and checks
// that it has loaded every group and rule of dashboards/out/rules, and
// that none fails.
func checkRules(t *testing.T, prom string) {
	want := map[string][]string{}
	files, err := filepath.Glob(repotest.Path("dashboards", "out", "rules", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule files in dashboards/out/rules (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rf struct {
			Groups []struct {
				Name  string
				Rules []struct{ Alert, Record string }
			}
		}
		if err := yaml.Unmarshal(data, &rf); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, g := range rf.Groups {
			for _, r := range g.Rules {
				want[g.Name] = append(want[g.Name], r.Alert+r.Record)
			}
		}
	}
	eventually(t, 2*time.Minute, "every rule loaded and evaluated", func() (bool, string) {
		var r struct {
			Data struct {
				Groups []struct {
					Name  string
					Rules []struct {
						Name      string
						Health    string
						LastError string
					}
				}
			}
		}
		if err := getJSON(prom+"/api/v1/rules", &r); err != nil {
			return false, err.Error()
		}
		got := map[string][]string{}
		var unknown int
		var failing []string
		for _, g := range r.Data.Groups {
			for _, rule := range g.Rules {
				got[g.Name] = append(got[g.Name], rule.Name)
				switch rule.Health {
				case "ok":
				case "unknown":
					unknown++
				default:
					failing = append(failing, fmt.Sprintf("%s/%s: %s %s", g.Name, rule.Name, rule.Health, rule.LastError))
				}
			}
		}
		if !maps.EqualFunc(got, want, slices.Equal) {
			return false, fmt.Sprintf("groups loaded %v, want dashboards/out/rules' %v", got, want)
		}
		if len(failing) > 0 {
			t.Fatalf("rules failing in Prometheus: %v", failing)
		}
		return unknown == 0, fmt.Sprintf("%d rules not evaluated yet", unknown)
	})
}

// eventually polls cond every 2 seconds until it holds, and fails the
// test with its last word when timeout passes first.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s: %s", what, timeout, last)
		}
		time.Sleep(2 * time.Second)
	}
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func get(t testing.TB, url string) string {
	t.Helper()
	resp, err := httpClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return string(body)
}

func getJSON(url string, v any) error {
	resp, err := httpClient.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// Compose itself reads the file with each profile, as users run it.
func TestComposeConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Docker Compose (a minute with a cold build cache); skipped with -short")
	}
	bin := composeCLI(t)
	for _, profile := range []string{"demo", "host"} {
		cmd := exec.Command(bin, "--file", repotest.Path("docker-compose.yml"), "--profile", profile, "config", "--quiet")
		cmd.Dir = repotest.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("docker compose --profile %s config: %v\n%s", profile, err, out)
		}
	}
}
