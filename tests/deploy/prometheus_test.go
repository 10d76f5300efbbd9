package deploy

import (
	"net"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

type staticConfig struct {
	Targets []string
	Labels  map[string]string
}

type scrapeConfig struct {
	JobName       string `yaml:"job_name"`
	Scheme        string
	StaticConfigs []staticConfig `yaml:"static_configs"`
	FileSDConfigs []struct {
		Files []string
	} `yaml:"file_sd_configs"`
}

// promConfig is the part of a Prometheus configuration the tests look at.
type promConfig struct {
	Global struct {
		ScrapeInterval string `yaml:"scrape_interval"`
		ScrapeTimeout  string `yaml:"scrape_timeout"`
	}
	RuleFiles []string `yaml:"rule_files"`
	Alerting  struct {
		Alertmanagers []struct {
			StaticConfigs []staticConfig `yaml:"static_configs"`
		}
	}
	ScrapeConfigs []scrapeConfig `yaml:"scrape_configs"`
	RemoteWrite   []struct {
		URL                 string
		WriteRelabelConfigs []struct {
			SourceLabels []string `yaml:"source_labels"`
			Regex        string
			Action       string
		} `yaml:"write_relabel_configs"`
	} `yaml:"remote_write"`
}

func (c promConfig) job(t testing.TB, name string) scrapeConfig {
	t.Helper()
	for _, j := range c.ScrapeConfigs {
		if j.JobName == name {
			return j
		}
	}
	t.Fatalf("no scrape job %q", name)
	return scrapeConfig{}
}

// ruleFile is a Prometheus rule file.
type ruleFile struct {
	Groups []struct {
		Name  string
		Rules []struct {
			Alert  string
			Record string
			Expr   string
			Labels map[string]string
		}
	}
}

func ruleFiles(t testing.TB) map[string]ruleFile {
	t.Helper()
	paths, _ := filepath.Glob(repo("dashboards", "out", "rules", "*.yaml"))
	if len(paths) < 2 {
		t.Fatalf("dashboards/out/rules: %v, want the alerts and the recording rules", paths)
	}
	out := map[string]ruleFile{}
	for _, p := range paths {
		var f ruleFile
		readYAML(t, p, &f)
		out[filepath.Base(p)] = f
	}
	return out
}

func (f ruleFile) count() int {
	n := 0
	for _, g := range f.Groups {
		n += len(g.Rules)
	}
	return n
}

// rulesJob is the job the rules select: every job="..." in them.
func rulesJob(t testing.TB) string {
	t.Helper()
	jobs := map[string]bool{}
	re := regexp.MustCompile(`job="([^"]*)"`)
	for _, f := range ruleFiles(t) {
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				for _, m := range re.FindAllStringSubmatch(r.Expr, -1) {
					jobs[m[1]] = true
				}
			}
		}
	}
	if len(jobs) != 1 {
		t.Fatalf("the rules select jobs %v, want one", jobs)
	}
	for j := range jobs {
		return j
	}
	return ""
}

// promtoolCheckConfig runs `promtool check config` and returns the rule
// files it checked with the number of rules it found in each.
func promtoolCheckConfig(t testing.TB, cfg string) map[string]int {
	t.Helper()
	promtool := repotest.Tool(t, "promtool", "prometheus")
	out, err := run(t, filepath.Dir(cfg), promtool, "check", "config", cfg)
	if err != nil {
		t.Fatalf("promtool check config %s: %v\n%s", cfg, err, out)
	}
	checked := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^Checking (\S+)\n\s+SUCCESS: (\d+) rules found`).FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		checked[filepath.Base(m[1])] = n
	}
	return checked
}

// checkAllRules asserts that promtool checked every rule file of
// dashboards/out/rules, and found all their rules.
func checkAllRules(t testing.TB, cfg string, checked map[string]int) {
	t.Helper()
	for name, f := range ruleFiles(t) {
		if n, ok := checked[name]; !ok || n != f.count() {
			t.Errorf("%s: promtool checked %s with %d rules (%v), want %d", cfg, name, n, ok, f.count())
		}
	}
}

// exampleLayout installs a Prometheus configuration as docs/install.md
// says: prometheus.yml with rules/ and targets/ beside it.
func exampleLayout(t testing.TB, config string) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "prometheus.yml"), config)
	copyPath(t, repo("dashboards", "out", "rules"), filepath.Join(dir, "rules"))
	copyPath(t, repo("deploy", "prometheus", "targets"), filepath.Join(dir, "targets"))
	return filepath.Join(dir, "prometheus.yml")
}

func TestPrometheusExamples(t *testing.T) {
	job := rulesJob(t)
	for _, name := range []string{"prometheus-single.yml", "prometheus-fleet.yml"} {
		t.Run(name, func(t *testing.T) {
			src := repo("deploy", "prometheus", name)
			cfg := exampleLayout(t, readFile(t, src))
			checkAllRules(t, src, promtoolCheckConfig(t, cfg))
			var c promConfig
			readYAML(t, cfg, &c)
			j := c.job(t, job)
			if len(j.StaticConfigs)+len(j.FileSDConfigs) == 0 {
				t.Errorf("job %s has no targets", job)
			}
			if len(c.Alerting.Alertmanagers) == 0 {
				t.Errorf("no Alertmanager: the alerts go nowhere")
			}
		})
	}
}

// The fleet's targets come from targets/zfs-*.yml, which promtool reads:
// a broken targets file fails the check.
func TestPrometheusFleetTargets(t *testing.T) {
	src := repo("deploy", "prometheus", "prometheus-fleet.yml")
	cfg := exampleLayout(t, readFile(t, src))
	var c promConfig
	readYAML(t, cfg, &c)
	var matched []string
	for _, sd := range c.job(t, rulesJob(t)).FileSDConfigs {
		for _, pattern := range sd.Files {
			m, _ := filepath.Glob(filepath.Join(filepath.Dir(cfg), pattern))
			matched = append(matched, m...)
		}
	}
	if len(matched) == 0 {
		t.Fatal("the fleet's file_sd_configs match no file of deploy/prometheus/targets")
	}
	for _, f := range matched {
		var groups []staticConfig
		readYAML(t, f, &groups)
		for _, g := range groups {
			for _, target := range g.Targets {
				if _, port, err := net.SplitHostPort(target); err != nil || port != strconv.Itoa(exporterPort) {
					t.Errorf("%s: target %q is not host:%d", f, target, exporterPort)
				}
			}
		}
	}
	writeFile(t, matched[0], "- targets: [broken\n")
	promtool := repotest.Tool(t, "promtool", "prometheus")
	if out, err := run(t, "", promtool, "check", "config", cfg); err == nil {
		t.Errorf("promtool accepted a broken targets file:\n%s", out)
	}
}

// prometheus3xOnly are the settings for Prometheus 3.8 and later, which
// promtool 2.42 refuses: the configurations for any Prometheus carry them
// commented out, compose's (its image is 3.16) has them on.
// tests/prometheus3 loads them all in Prometheus 3.16.
var prometheus3xOnly = []string{"scrape_native_histograms: true", "convert_classic_histograms_to_nhcb: true"}

// without3xOnly drops the lines of prometheus3xOnly, commented out or
// not, from a configuration.
func without3xOnly(s string) string {
	lines := strings.Split(s, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if !slices.Contains(prometheus3xOnly, strings.TrimPrefix(strings.TrimSpace(l), "#")) {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// The fleet's commented-out blocks (TLS and basic auth to the exporters,
// remote_write to Thanos or Mimir) are valid once uncommented, and the
// remote_write filter keeps every recorded series and drops the rest.
func TestPrometheusFleetCommentedBlocks(t *testing.T) {
	src := repo("deploy", "prometheus", "prometheus-fleet.yml")
	text := uncomment(without3xOnly(readFile(t, src)))
	cfg := exampleLayout(t, text)
	dir := filepath.Dir(cfg)
	certPEM, _ := e2e.SelfSignedCert(t)
	writeFile(t, filepath.Join(dir, "zpool_exporter-ca.crt"), string(certPEM))
	writeFile(t, filepath.Join(dir, "zpool_exporter.password"), "zfs-exporter-example\n")
	writeFile(t, filepath.Join(dir, "mimir.password"), "secret\n")
	checkAllRules(t, src, promtoolCheckConfig(t, cfg))

	var c promConfig
	readYAML(t, cfg, &c)
	if j := c.job(t, rulesJob(t)); j.Scheme != "https" {
		t.Errorf("uncommented, job zfs scrapes over %q, want https", j.Scheme)
	}
	if len(c.RemoteWrite) != 1 || len(c.RemoteWrite[0].WriteRelabelConfigs) != 1 {
		t.Fatalf("uncommented, remote_write is %+v", c.RemoteWrite)
	}
	rc := c.RemoteWrite[0].WriteRelabelConfigs[0]
	if rc.Action != "keep" || !slices.Equal(rc.SourceLabels, []string{"__name__"}) {
		t.Fatalf("remote_write relabelling %+v, want keep on __name__", rc)
	}
	// Prometheus anchors relabelling regexes at both ends.
	keep := regexp.MustCompile("^(?:" + rc.Regex + ")$")
	records := 0
	for _, f := range ruleFiles(t) {
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.Record == "" {
					continue
				}
				records++
				if !keep.MatchString(r.Record) {
					t.Errorf("remote_write drops the recorded series %s", r.Record)
				}
			}
		}
	}
	if records == 0 {
		t.Error("no recording rules")
	}
	for _, raw := range []string{"zfs_pool_state", "zfs_vdev_read_bytes_total", "up"} {
		if keep.MatchString(raw) {
			t.Errorf("remote_write keeps the raw series %s", raw)
		}
	}
}

// containerFS lays out the files a compose service mounts from the
// repository as the container sees them, under a temporary directory.
func containerFS(t testing.TB, s types.ServiceConfig) string {
	t.Helper()
	dir := t.TempDir()
	for _, v := range s.Volumes {
		if v.Type != types.VolumeTypeBind {
			continue
		}
		if rel, err := filepath.Rel(root, v.Source); err != nil || !filepath.IsLocal(rel) {
			continue
		}
		copyPath(t, v.Source, filepath.Join(dir, v.Target))
	}
	return dir
}

// Prometheus in docker-compose.yml finds its configuration and every rule
// file where the compose file mounts them.
func TestComposePrometheusConfig(t *testing.T) {
	p := loadCompose(t, []string{"demo"})
	prom := service(t, p, "prometheus")
	fsRoot := containerFS(t, prom)
	cfg, _ := repotest.FlagValue(prom.Command, "config.file")
	// Debian's promtool is 2.42: the 3.x settings out (tests/prometheus3
	// and tests/compose run the file as it is in Prometheus 3.16).
	path := filepath.Join(fsRoot, cfg)
	writeFile(t, path, without3xOnly(readFile(t, path)))
	checkAllRules(t, "docker-compose.yml's Prometheus", promtoolCheckConfig(t, path))
	var c promConfig
	readYAML(t, filepath.Join(fsRoot, cfg), &c)
	c.job(t, rulesJob(t))
}

func amtoolCheck(t testing.TB, cfg string) {
	t.Helper()
	amtool := repotest.Tool(t, "amtool", "prometheus-alertmanager")
	out, err := run(t, "", amtool, "check-config", cfg)
	if err != nil || !strings.Contains(out, "SUCCESS") {
		t.Errorf("amtool check-config %s: %v\n%s", cfg, err, out)
	}
}

// amtoolRoute returns the receivers an alert with labels goes to.
func amtoolRoute(t testing.TB, cfg string, labels ...string) string {
	t.Helper()
	amtool := repotest.Tool(t, "amtool", "prometheus-alertmanager")
	args := append([]string{"config", "routes", "test", "--config.file=" + cfg}, labels...)
	ctxOut, err := run(t, "", amtool, args...)
	if err != nil {
		t.Fatalf("amtool %s: %v\n%s", strings.Join(args, " "), err, ctxOut)
	}
	// amtool warns on stderr that --config.file wins over the URL.
	for line := range strings.Lines(ctxOut) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "Warning:") {
			return line
		}
	}
	return ""
}

type amConfig struct {
	Route struct {
		Receiver string
		Routes   []struct {
			Matchers []string
			Receiver string
		}
	}
	InhibitRules []struct {
		SourceMatchers []string `yaml:"source_matchers"`
		TargetMatchers []string `yaml:"target_matchers"`
		Equal          []string
	} `yaml:"inhibit_rules"`
}

// alertLabels returns the names of the alerts and their severities.
func alertLabels(t testing.TB) (names, severities map[string]bool) {
	t.Helper()
	names, severities = map[string]bool{}, map[string]bool{}
	for _, f := range ruleFiles(t) {
		for _, g := range f.Groups {
			for _, r := range g.Rules {
				if r.Alert != "" {
					names[r.Alert] = true
					severities[r.Labels["severity"]] = true
				}
			}
		}
	}
	return names, severities
}

// checkMatchers asserts that the matchers name alerts and severities the
// rules have.
func checkMatchers(t testing.TB, cfg string, matchers []string) {
	t.Helper()
	names, severities := alertLabels(t)
	re := regexp.MustCompile(`^\s*(\w+)\s*(=~|=)\s*"?([^"]*)"?\s*$`)
	for _, m := range matchers {
		p := re.FindStringSubmatch(m)
		if p == nil {
			t.Errorf("%s: matcher %q not understood", cfg, m)
			continue
		}
		known := map[string]map[string]bool{"alertname": names, "severity": severities}[p[1]]
		if known == nil {
			continue
		}
		values := []string{p[3]}
		if p[2] == "=~" {
			values = strings.Split(p[3], "|")
		}
		for _, v := range values {
			if !known[v] {
				t.Errorf("%s: matcher %q: no alert has %s %q", cfg, m, p[1], v)
			}
		}
	}
}

func TestAlertmanagerConfigs(t *testing.T) {
	p := loadCompose(t, nil)
	am := service(t, p, "alertmanager")
	composeCfg, _ := repotest.FlagValue(am.Command, "config.file")
	for _, cfg := range []string{
		repo("deploy", "alertmanager", "alertmanager.yml"),
		filepath.Join(containerFS(t, am), composeCfg),
	} {
		amtoolCheck(t, cfg)
		var c amConfig
		readYAML(t, cfg, &c)
		if len(c.InhibitRules) == 0 {
			t.Errorf("%s: no inhibit rules", cfg)
		}
		for _, r := range c.InhibitRules {
			checkMatchers(t, cfg, r.SourceMatchers)
			checkMatchers(t, cfg, r.TargetMatchers)
		}
		for _, r := range c.Route.Routes {
			checkMatchers(t, cfg, r.Matchers)
		}
	}
}

// The example pages for critical alerts and mails everything; the compose
// stack shows alerts and sends them nowhere.
func TestAlertmanagerRoutes(t *testing.T) {
	example := repo("deploy", "alertmanager", "alertmanager.yml")
	for _, tc := range []struct {
		cfg    string
		labels []string
		want   string
	}{
		{example, []string{"alertname=ZFSPoolNotOnline", "severity=critical", "pool=tank"}, "storage-team-pager,storage-team-mail"},
		{example, []string{"alertname=ZFSScrubOverdue", "severity=warning", "pool=tank"}, "storage-team-mail"},
		{repo("deploy", "compose", "alertmanager.yml"), []string{"alertname=ZFSPoolNotOnline", "severity=critical"}, "none"},
	} {
		if got := amtoolRoute(t, tc.cfg, tc.labels...); got != tc.want {
			t.Errorf("%s: %v goes to %q, want %q", tc.cfg, tc.labels, got, tc.want)
		}
	}
}
