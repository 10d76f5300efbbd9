package deploy

import (
	"encoding/xml"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

var smfManifest = repo("deploy", "illumos", "zpool_exporter.xml")

// node is an XML element with its attributes and children, in order.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n node) all(name string) []node {
	var out []node
	for _, c := range n.Children {
		if c.XMLName.Local == name {
			out = append(out, c)
		}
	}
	return out
}

func (n node) find(name, attr, value string) (node, bool) {
	for _, c := range n.all(name) {
		if c.attr(attr) == value {
			return c, true
		}
	}
	return node{}, false
}

func parseManifest(t testing.TB) node {
	t.Helper()
	f, err := os.Open(smfManifest)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bundle node
	d := xml.NewDecoder(f)
	d.Strict = true
	if err := d.Decode(&bundle); err != nil {
		t.Fatalf("%s: %v", smfManifest, err)
	}
	return bundle
}

func TestSMFManifestXMLLint(t *testing.T) {
	xmllint := repotest.Tool(t, "xmllint", "libxml2-utils")
	args := []string{"--noout"}
	// On illumos and Solaris the DTD is installed: validate against it.
	const dtd = "/usr/share/lib/xml/dtd/service_bundle.dtd.1"
	if _, err := os.Stat(dtd); err == nil {
		args = append(args, "--valid")
	}
	if out, err := run(t, "", xmllint, append(args, smfManifest)...); err != nil || strings.TrimSpace(out) != "" {
		t.Errorf("xmllint %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func TestSMFManifest(t *testing.T) {
	bundle := parseManifest(t)
	if bundle.XMLName.Local != "service_bundle" || bundle.attr("type") != "manifest" {
		t.Fatalf("root element %s type %q, want a service_bundle of type manifest", bundle.XMLName.Local, bundle.attr("type"))
	}
	services := bundle.all("service")
	if len(services) != 1 {
		t.Fatalf("%d services", len(services))
	}
	svc := services[0]
	if svc.attr("name") != "application/zpool_exporter" || svc.attr("type") != "service" || svc.attr("version") == "" {
		t.Errorf("service %v", svc.Attrs)
	}

	// The children of service in the order service_bundle.dtd.1 requires,
	// which svccfg import enforces.
	order := []string{"create_default_instance", "single_instance", "restarter", "dependency", "dependent",
		"method_context", "exec_method", "property_group", "instance", "stability", "template"}
	last := -1
	for _, c := range svc.Children {
		i := slices.Index(order, c.XMLName.Local)
		if i < 0 {
			t.Errorf("unexpected element %s in service", c.XMLName.Local)
			continue
		}
		if i < last {
			t.Errorf("%s comes after %s", c.XMLName.Local, order[last])
		}
		last = i
	}
	if d := svc.all("create_default_instance"); len(d) != 1 || d[0].attr("enabled") != "false" {
		t.Errorf("create_default_instance %v: the instance should exist, disabled until svcadm enable", d)
	}

	// It starts once the network is up and the local file systems (and so
	// the pools' mounts) are there.
	deps := map[string]bool{}
	for _, d := range svc.all("dependency") {
		if d.attr("grouping") != "require_all" || d.attr("type") != "service" {
			t.Errorf("dependency %s: %v", d.attr("name"), d.Attrs)
		}
		for _, f := range d.all("service_fmri") {
			deps[strings.TrimSuffix(f.attr("value"), ":default")] = true
		}
	}
	for _, want := range []string{"svc:/milestone/network", "svc:/system/filesystem/local"} {
		if !deps[want] {
			t.Errorf("no dependency on %s (have %v)", want, deps)
		}
	}

	start, ok := svc.find("exec_method", "name", "start")
	if !ok {
		t.Fatal("no start method")
	}
	fields := strings.Fields(start.attr("exec"))
	if len(fields) != 2 || !strings.HasPrefix(fields[0], "/") || !strings.HasSuffix(fields[0], "/zpool_exporter") || fields[1] != "%{config/args}" {
		t.Errorf("start method %q, want /path/to/zpool_exporter %%{config/args}", start.attr("exec"))
	}
	if stop, ok := svc.find("exec_method", "name", "stop"); !ok || stop.attr("exec") != ":kill" {
		t.Errorf("stop method %v, want :kill", stop.Attrs)
	}
	for _, m := range svc.all("exec_method") {
		if m.attr("type") != "method" || m.attr("timeout_seconds") == "" {
			t.Errorf("method %s: %v", m.attr("name"), m.Attrs)
		}
	}

	// The exporter stays in the foreground: SMF's "child" model.
	startd, _ := svc.find("property_group", "name", "startd")
	if d, ok := startd.find("propval", "name", "duration"); !ok || d.attr("value") != "child" {
		t.Errorf("startd/duration %v, want child", d.Attrs)
	}

	// The flags: config/args, one value per flag (SMF expands a
	// multi-valued property to one word per value), the same as the
	// systemd unit's.
	config, _ := svc.find("property_group", "name", "config")
	args, ok := config.find("property", "name", "args")
	if !ok || args.attr("type") != "astring" {
		t.Fatalf("no astring property config/args: %v", config)
	}
	var values []string
	for _, list := range args.all("astring_list") {
		for _, v := range list.all("value_node") {
			values = append(values, v.attr("value"))
		}
	}
	if !slices.Equal(values, defaultArgs(t)) {
		t.Errorf("config/args %q, want the systemd unit's %q", values, defaultArgs(t))
	}
	checkFlags(t, values)

	// Root, with the basic privileges at most: zpool's read-only ioctls,
	// kstat, iostat and ps need no more.
	var creds []node
	for _, mc := range svc.all("method_context") {
		creds = append(creds, mc.all("method_credential")...)
	}
	if len(creds) != 1 {
		t.Fatalf("%d method credentials", len(creds))
	}
	privs := strings.Split(creds[0].attr("privileges"), ",")
	if creds[0].attr("user") != "root" || len(privs) == 0 || privs[0] != "basic" {
		t.Errorf("method_credential %v: want user root with privileges basic,...", creds[0].Attrs)
	}
	for _, p := range privs[1:] {
		if !strings.HasPrefix(p, "!") {
			t.Errorf("privilege %s added to basic", p)
		}
	}
	for _, needed := range []string{"proc_fork", "proc_exec", "proc_info"} {
		if slices.Contains(privs, "!"+needed) {
			t.Errorf("%s removed: the exporter runs zpool, iostat, kstat and ps, and reads zpool-POOL processes", needed)
		}
	}
	if tmpl := svc.all("template"); len(tmpl) != 1 || len(tmpl[0].all("common_name")) != 1 {
		t.Error("no template with a common_name (svcs -l shows it)")
	}
}
