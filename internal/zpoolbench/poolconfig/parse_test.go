package poolconfig

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// zdbCaptures are the `zdb -C` outputs of testdata/zfs-fuse.
func zdbCaptures(t testing.TB) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("testdata/zfs-fuse/zdb_-C_*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no zdb captures: %v", err)
	}
	out := map[string][]byte{}
	for _, path := range files {
		f, err := sample.Read(path)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(f.Header["command"], "zdb -C ")] = f.Body
	}
	return out
}

func TestParseZdbConfig(t *testing.T) {
	caps := zdbCaptures(t)
	tests := map[string]ZdbConfig{
		"pcfgm": {Name: "pcfgm", Version: 23, Vdevs: []ZdbVdev{
			{ID: 0, Type: "mirror", Ashift: 12, Children: 2},
		}},
		"pcfgr": {Name: "pcfgr", Version: 23, Vdevs: []ZdbVdev{
			{ID: 0, Type: "raidz", Ashift: 12, NParity: 1, Children: 3},
		}},
		"pcfgs": {Name: "pcfgs", Version: 23, Vdevs: []ZdbVdev{
			{ID: 0, Type: "file", Path: "/var/tmp/pcfg-cap/d14", Ashift: 12},
			{ID: 1, Type: "file", Path: "/var/tmp/pcfg-cap/d15", Ashift: 12},
			{ID: 2, Type: "file", Path: "/var/tmp/pcfg-cap/d16", Ashift: 12, Log: true},
		}},
		"pcfgx": {Name: "pcfgx", Version: 23, Vdevs: []ZdbVdev{
			{ID: 0, Type: "mirror", Ashift: 9, Children: 2},
			{ID: 1, Type: "mirror", Ashift: 9, Children: 2},
			{ID: 2, Type: "mirror", Ashift: 9, Log: true, Children: 3},
		}},
	}
	for pool, want := range tests {
		got, err := ParseZdbConfig(bytes.NewReader(caps[pool]))
		if err != nil {
			t.Fatalf("%s: %v", pool, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", pool, got, want)
		}
	}
}

// TestParseZdbConfigCachedThenMOS: `zdb -C` of OpenZFS may print the
// cached configuration before the MOS one; the last one counts. The
// first block is a zfs-fuse capture with its ashift changed.
func TestParseZdbConfigCachedThenMOS(t *testing.T) {
	mos := zdbCaptures(t)["pcfgm"]
	cached := bytes.Replace(bytes.Replace(mos, []byte("MOS Configuration:"), []byte("pcfgm:"), 1), []byte("ashift: 12"), []byte("ashift: 9"), 1)
	got, err := ParseZdbConfig(bytes.NewReader(append(cached, mos...)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Vdevs) != 1 || got.Vdevs[0].Ashift != 12 {
		t.Errorf("vdevs %+v, want the MOS configuration's one mirror of ashift 12", got.Vdevs)
	}
}

func TestParseZdbConfigErrors(t *testing.T) {
	for name, in := range map[string]string{
		"empty":       "",
		"stderr":      "zdb: can't open 'nosuchpool': No such file or directory\n",
		"no children": "MOS Configuration:\n        version: 23\n        name: 'x'\n        vdev_tree:\n            type: 'root'\n",
		"bad ashift":  "MOS Configuration:\n    vdev_tree:\n        type: 'root'\n        children[0]:\n            type: 'disk'\n            ashift: twelve\n",
	} {
		if got, err := ParseZdbConfig(strings.NewReader(in)); err == nil {
			t.Errorf("%s: no error, got %+v", name, got)
		}
	}
}

func FuzzParseZdbConfig(f *testing.F) {
	for _, b := range zdbCaptures(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cfg, err := ParseZdbConfig(bytes.NewReader(b))
		if err == nil && len(cfg.Vdevs) == 0 {
			t.Errorf("no error and no vdevs")
		}
	})
}

func TestParseUpgradeV(t *testing.T) {
	f, err := sample.Read("testdata/zfs-fuse/zpool_upgrade_-v.txt")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseUpgradeV(f.Body)
	if err != nil || got != (PoolVersionInfo{Version: 23}) {
		t.Errorf("zfs-fuse: %+v %v, want pool version 23", got, err)
	}
	got, err = ParseUpgradeV([]byte("This system supports ZFS pool feature flags.\n\nThe following features are supported:\n"))
	if err != nil || !got.FeatureFlags {
		t.Errorf("feature flags: %+v %v", got, err)
	}
	if _, err := ParseUpgradeV([]byte("usage: zpool upgrade\n")); err == nil {
		t.Error("no error for a usage text")
	}
}

func TestParseModuleVersion(t *testing.T) {
	for in, want := range map[string]string{"2.3.2-2~bpo12+2\n": "2.3.2", "0.7.13-1\n": "0.7.13", "0.6.5.9-5~bpo8+1\n": "0.6.5"} {
		if got, err := ParseModuleVersion([]byte(in)); err != nil || got != want {
			t.Errorf("ParseModuleVersion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseModuleVersion([]byte("\n")); err == nil {
		t.Error("no error for an empty file")
	}
}

func FuzzParseVersions(f *testing.F) {
	f.Add([]byte("zfs-2.3.2-2~bpo12+2\nzfs-kmod-2.3.2-2~bpo12+2\n"))
	if b, err := os.ReadFile("testdata/zfs-fuse/zpool_upgrade_-v.txt"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if info, err := ParseUpgradeV(b); err == nil && info.Version == 0 && !info.FeatureFlags {
			t.Error("no error and no pool version")
		}
		if v, err := ParseModuleVersion(b); err == nil && v == "" {
			t.Error("no error and no version")
		}
	})
}
