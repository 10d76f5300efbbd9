package zpool

import (
	"path/filepath"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/parsetest"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

func TestParseVersion(t *testing.T) {
	f := sample.MustRead(t, filepath.Join(sample.Dir(t, "captures"), "openzfs-2.3", "env__zfs-version.txt"))
	user, kernel, err := ParseVersion(f.Body)
	if err != nil || user != "2.3.2" || kernel != "2.3.2" {
		t.Errorf("OpenZFS 2.3.2 capture: %q %q %v", user, kernel, err)
	}
	// Other systems' forms, as they print them.
	for in, want := range versionForms {
		user, kernel, err := ParseVersion([]byte(in))
		if err != nil || user != want[0] || kernel != want[1] {
			t.Errorf("ParseVersion(%q) = %q, %q, %v; want %q, %q", in, user, kernel, err, want[0], want[1])
		}
	}
	if _, _, err := ParseVersion([]byte("unrecognized command 'version'\n")); err == nil {
		t.Error("no error for an output without version")
	}
}

var versionForms = map[string][2]string{
	"zfs-2.1.9-FreeBSD_g92e0d9d18\nzfs-kmod-2.1.9-FreeBSD_g92e0d9d18\n": {"2.1.9", "2.1.9"},
	"zfs-macOS-2.2.2-1\nzfs.kext-2.2.2-1\n":                             {"2.2.2", "2.2.2"},
	"zfs-2.2.0-rc4\nzfs-kmod-2.1.5-1ubuntu6~22.04.1\n":                  {"2.2.0-rc4", "2.1.5"},
	"zfs-0.8.3-1ubuntu12.17\n":                                          {"0.8.3", ""},
}

func FuzzParseVersion(f *testing.F) {
	for in := range versionForms {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		user, kernel, err := ParseVersion(b)
		if err == nil && user == "" && kernel == "" {
			t.Error("no error and no version")
		}
		parsetest.Check(t, err)
	})
}
