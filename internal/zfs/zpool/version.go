package zpool

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// releaseRE finds a release in a version string: "2.3.2-2~bpo12+2" ->
// "2.3.2", "2.2.0-rc4" -> "2.2.0-rc4"; "FreeBSD_g9305ff2ed" has none.
var releaseRE = regexp.MustCompile(`[0-9]+\.[0-9]+(?:\.[0-9]+)?(?:-?rc[0-9]+)?`)

// Release returns the release in a version string, "" when it has none.
func Release(version string) string { return releaseRE.FindString(version) }

// ParseVersion reads `zpool version` or `zfs version` (OpenZFS 0.8 and
// later), which print the same: the userland line ("zfs-2.3.2-1",
// "zfs-macOS-2.2.2-1") and the kernel module's ("zfs-kmod-2.3.2-1",
// "zfs.kext-2.2.2-1"), as releases ("2.3.2"). Either may be missing: the
// userland line comes alone when the module is not loaded.
func ParseVersion(out []byte) (userland, kernel string, err error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		var dst *string
		switch {
		case strings.HasPrefix(line, "zfs-kmod-"), strings.HasPrefix(line, "zfs.kext-"):
			dst = &kernel
		case strings.HasPrefix(line, "zfs-"), strings.HasPrefix(line, "zfswin-"):
			dst = &userland
		default:
			continue
		}
		if v := Release(line); v != "" && *dst == "" {
			*dst = v
		}
	}
	if userland == "" && kernel == "" {
		return "", "", parse.Errorf(0, "no zfs-VERSION line")
	}
	return userland, kernel, nil
}
