package poolconfig

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// ParseModuleVersion reads Linux's /sys/module/zfs/version
// ("2.3.2-2~bpo12+2", "0.7.13-1") as a release ("2.3.2").
func ParseModuleVersion(content []byte) (string, error) {
	v := zpool.Release(strings.TrimSpace(string(content)))
	if v == "" {
		return "", fmt.Errorf("no version number in %q", strings.TrimSpace(string(content)))
	}
	return v, nil
}

// PoolVersionInfo is the first line of `zpool upgrade -v`.
type PoolVersionInfo struct {
	// Version is the highest pool version this ZFS runs: 23 on zfs-fuse,
	// 28 on ZFS on Linux before feature flags, 44 on Solaris 11.4; 0 with
	// FeatureFlags.
	Version      int
	FeatureFlags bool // "This system supports ZFS pool feature flags."
}

var poolVersionRE = regexp.MustCompile(`running ZFS pool version ([0-9]+)`)

// ParseUpgradeV reads the first lines of `zpool upgrade -v`: "This system
// is currently running ZFS pool version 23." (zfs-fuse, Solaris, ZFS
// before feature flags) or "This system supports ZFS pool feature flags."
func ParseUpgradeV(out []byte) (PoolVersionInfo, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for n := 0; sc.Scan() && n < 5; n++ {
		line := sc.Text()
		if m := poolVersionRE.FindStringSubmatch(line); m != nil {
			v, err := strconv.Atoi(m[1])
			if err != nil || v <= 0 {
				return PoolVersionInfo{}, fmt.Errorf("line %d: pool version %q is not a version", n+1, m[1])
			}
			return PoolVersionInfo{Version: v}, nil
		}
		if strings.Contains(line, "supports ZFS pool feature flags") {
			return PoolVersionInfo{FeatureFlags: true}, nil
		}
	}
	return PoolVersionInfo{}, fmt.Errorf("no pool version in the first lines of `zpool upgrade -v`")
}

// openZFSName names an OpenZFS release as its project was called then:
// ZFS on Linux before 2.0 on Linux, OpenZFS otherwise.
// releaseName names the release of the tools and of the kernel module
// that `zfs version` (or zpool's) prints: the module's, which runs the
// pool, with the tools' beside it when they differ.
func releaseName(user, kernel, goos string) string {
	switch {
	case kernel == "":
		return openZFSName(user, goos) + " (userland)"
	case user != "" && user != kernel:
		return openZFSName(kernel, goos) + " (userland " + user + ")"
	}
	return openZFSName(kernel, goos)
}

func openZFSName(release, goos string) string {
	if strings.HasPrefix(release, "0.") && goos == "linux" {
		return "ZFS on Linux " + release
	}
	return "OpenZFS " + release
}

// osZFSNames name the ZFS of a system that only tells its pool version.
var osZFSNames = map[string]string{
	"solaris": "Solaris ZFS",
	"illumos": "illumos ZFS",
	"freebsd": "FreeBSD ZFS",
	"darwin":  "ZFS",
	"linux":   "ZFS",
}

func poolVersionName(info PoolVersionInfo, goos string, zfsFuse bool) string {
	name := osZFSNames[goos]
	if name == "" {
		name = "ZFS"
	}
	if zfsFuse {
		name = "zfs-fuse"
	}
	if info.FeatureFlags {
		return name + " (feature flags)"
	}
	return fmt.Sprintf("%s (pool version %d)", name, info.Version)
}
