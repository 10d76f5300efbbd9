package deploy

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

var rcScript = repo("deploy", "freebsd", "zpool_exporter")

func TestRCScriptSyntax(t *testing.T) {
	for _, sh := range []string{"dash", "sh"} {
		p := repotest.Tool(t, sh, "dash")
		if out, err := run(t, "", p, "-n", rcScript); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
}

// The rc.subr(8) conventions, read from the script.
func TestRCScriptConventions(t *testing.T) {
	text := readFile(t, rcScript)
	lines := strings.Split(text, "\n")
	if lines[0] != "#!/bin/sh" {
		t.Errorf("first line %q, want #!/bin/sh", lines[0])
	}
	header := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?m)^# (PROVIDE|REQUIRE|BEFORE|KEYWORD): (.*)$`).FindAllStringSubmatch(text, -1) {
		header[m[1]] = append(header[m[1]], strings.Fields(m[2])...)
	}
	if !slices.Equal(header["PROVIDE"], []string{"zpool_exporter"}) {
		t.Errorf("PROVIDE: %v", header["PROVIDE"])
	}
	for _, want := range []string{"LOGIN", "zfs"} {
		if !slices.Contains(header["REQUIRE"], want) {
			t.Errorf("REQUIRE: %v lacks %s", header["REQUIRE"], want)
		}
	}
	if !slices.Contains(header["KEYWORD"], "shutdown") {
		t.Errorf("KEYWORD: %v lacks shutdown: the exporter would not be stopped at shutdown", header["KEYWORD"])
	}
	// The statements in their order: rc.subr, name, rcvar, load_rc_config,
	// the defaults, and run_rc_command last.
	order := []string{`. /etc/rc.subr`, `name=zpool_exporter`, `rcvar=zpool_exporter_enable`, `load_rc_config $name`, `: ${zpool_exporter_enable:="NO"}`, `run_rc_command "$1"`}
	at := -1
	for _, stmt := range order {
		i := slices.Index(lines, stmt)
		if i < 0 {
			t.Errorf("no line %q", stmt)
			continue
		}
		if i < at {
			t.Errorf("%q comes before %q", stmt, lines[at])
		}
		at = i
	}
	var code []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			code = append(code, l)
		}
	}
	if code[len(code)-1] != `run_rc_command "$1"` {
		t.Errorf("last statement %q", code[len(code)-1])
	}
	// Every rc.conf variable it reads is documented in its header.
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^# (zpool_exporter_\w+) \(`).FindAllStringSubmatch(text, -1) {
		documented[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`(?m)^: \$\{(zpool_exporter_\w+):=`).FindAllStringSubmatch(text, -1) {
		if !documented[m[1]] {
			t.Errorf("%s is not documented in the header", m[1])
		}
		delete(documented, m[1])
	}
	for v := range documented {
		t.Errorf("%s is documented but has no default", v)
	}
}

// rcSubr stands in for FreeBSD's /etc/rc.subr: load_rc_config reads the
// test's rc.conf, run_rc_command prints what rc.subr would run, split into
// words by eval as rc.subr does, and install(1) only reports its arguments.
const rcSubr = `
load_rc_config() { if [ -f "$RC_CONF" ]; then . "$RC_CONF"; fi; }
checkyesno() {
	eval _value=\$$1
	case $_value in
	[Yy][Ee][Ss]|[Tt][Rr][Uu][Ee]|[Oo][Nn]|1) return 0 ;;
	esac
	return 1
}
install() { echo "install $*"; }
run_rc_command() {
	[ "$1" = start ] || return 2
	if ! checkyesno "$rcvar"; then echo disabled; return 0; fi
	echo "name=$name"
	echo "pidfile=$pidfile"
	echo "procname=$procname"
	echo "required_files=$required_files"
	${start_precmd}
	eval "set -- $command $command_args"
	for a in "$@"; do echo "arg=$a"; done
}
`

type rcRun struct {
	vars    map[string]string
	install string
	argv    []string
}

// runRCScript runs the script's start with rc.conf holding rcConf.
func runRCScript(t testing.TB, rcConf string) (rcRun, bool) {
	t.Helper()
	sh := repotest.Tool(t, "dash", "dash")
	dir := t.TempDir()
	text := readFile(t, rcScript)
	if strings.Count(text, "\n. /etc/rc.subr\n") != 1 {
		t.Fatal("the script does not source /etc/rc.subr once")
	}
	writeFile(t, filepath.Join(dir, "rc.subr"), rcSubr)
	writeFile(t, filepath.Join(dir, "rc.conf"), rcConf)
	script := filepath.Join(dir, "zpool_exporter")
	writeFile(t, script, strings.Replace(text, "\n. /etc/rc.subr\n", "\n. "+filepath.Join(dir, "rc.subr")+"\n", 1))
	cmd := exec.Command(sh, script, "start")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "RC_CONF=" + filepath.Join(dir, "rc.conf")}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s start: %v\n%s", script, err, out)
	}
	r := rcRun{vars: map[string]string{}}
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "disabled":
			return r, false
		case strings.HasPrefix(line, "arg="):
			r.argv = append(r.argv, strings.TrimPrefix(line, "arg="))
		case strings.HasPrefix(line, "install "):
			r.install = line
		default:
			k, v, _ := strings.Cut(line, "=")
			r.vars[k] = v
		}
	}
	return r, true
}

// daemonArgs splits daemon(8)'s command line into its options and the
// program's.
func daemonArgs(t testing.TB, argv []string) (opts map[string]string, program string, args []string) {
	t.Helper()
	if len(argv) == 0 || argv[0] != "/usr/sbin/daemon" {
		t.Fatalf("the script runs %q, not daemon(8)", argv)
	}
	opts = map[string]string{}
	withValue := "PpTRuot" // daemon(8)'s options that take a value
	i := 1
	for ; i < len(argv) && strings.HasPrefix(argv[i], "-"); i++ {
		o := strings.TrimPrefix(argv[i], "-")
		if strings.Contains(withValue, o) {
			i++
			opts[o] = argv[i]
		} else {
			opts[o] = ""
		}
	}
	if i >= len(argv) {
		t.Fatalf("daemon %q runs no program", argv)
	}
	return opts, argv[i], argv[i+1:]
}

func TestRCScriptStart(t *testing.T) {
	if _, enabled := runRCScript(t, ""); enabled {
		t.Error("started without zpool_exporter_enable=YES")
	}

	r, enabled := runRCScript(t, `zpool_exporter_enable="YES"`+"\n")
	if !enabled {
		t.Fatal("not started with zpool_exporter_enable=YES")
	}
	opts, program, args := daemonArgs(t, r.argv)
	if program != "/usr/local/bin/zpool_exporter" || r.vars["required_files"] != program {
		t.Errorf("program %s, required_files %s", program, r.vars["required_files"])
	}
	// rc.subr finds the running service through the supervisor's pid file
	// and name.
	if opts["P"] != r.vars["pidfile"] || r.vars["pidfile"] != "/var/run/zpool_exporter.pid" || r.vars["procname"] != "/usr/sbin/daemon" {
		t.Errorf("daemon -P %q, pidfile %q, procname %q", opts["P"], r.vars["pidfile"], r.vars["procname"])
	}
	if _, ok := opts["f"]; !ok || opts["T"] != "zpool_exporter" || opts["R"] == "" {
		t.Errorf("daemon options %v: want -f, -T zpool_exporter (syslog) and -R (restart)", opts)
	}
	if r.install != "install -o root -m 0644 /dev/null /var/run/zpool_exporter.pid" {
		t.Errorf("start_precmd ran %q", r.install)
	}
	if !slices.Equal(args, defaultArgs(t)) {
		t.Errorf("default flags %q, want the systemd unit's %q", args, defaultArgs(t))
	}
	checkFlags(t, args)

	r, _ = runRCScript(t, `zpool_exporter_enable="YES"
zpool_exporter_args="--web.listen-address=:9200 --log.level=debug"
zpool_exporter_user="nobody"
zpool_exporter_syslog_tag="zfs"
`)
	opts, _, args = daemonArgs(t, r.argv)
	if !slices.Equal(args, []string{"--web.listen-address=:9200", "--log.level=debug"}) {
		t.Errorf("zpool_exporter_args gave %q", args)
	}
	if opts["T"] != "zfs" || r.install != "install -o nobody -m 0644 /dev/null /var/run/zpool_exporter.pid" {
		t.Errorf("syslog tag %q, pid file %q", opts["T"], r.install)
	}
}
