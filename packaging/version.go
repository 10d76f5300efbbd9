package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

var (
	// A release tag, v1.2.3 or v1.2.3-rc.1, as git describe prints it.
	releaseTag = regexp.MustCompile(`^v?([0-9]+(?:\.[0-9]+)*)(?:-([0-9A-Za-z.]+))?$`)
	// What git describe appends past the tag: commits since it, and the
	// abbreviated hash.
	sinceTag = regexp.MustCompile(`-([0-9]+)-g([0-9a-f]+)$`)
	// git describe --always on a history without tags: the hash alone.
	bareHash = regexp.MustCompile(`^[0-9a-f]{4,40}$`)
)

// packageVersion turns the version scripts/dist.sh stamps into the binaries
// (git describe --tags --always --dirty) into one that dpkg and rpm both
// order as releases go: a pre-release before its release (1.2.3~rc.1), a
// build past a tag after it (1.2.3+5.gabc1234), and builds of an untagged
// history by commit date (0.0~git20251202.abc1234). Neither format allows
// a hyphen in it, nor dpkg a version that starts with a letter.
func packageVersion(describe string, commitTime time.Time) (string, error) {
	rest, dirty := strings.CutSuffix(describe, "-dirty")
	var local []string
	if m := bareHash.FindStringSubmatch(rest); m != nil {
		v := "0.0~git" + commitTime.UTC().Format("20060102") + "." + rest
		if dirty {
			v += ".dirty"
		}
		return v, nil
	}
	if m := sinceTag.FindStringSubmatch(rest); m != nil {
		rest = strings.TrimSuffix(rest, m[0])
		local = append(local, m[1], "g"+m[2])
	}
	if dirty {
		local = append(local, "dirty")
	}
	m := releaseTag.FindStringSubmatch(rest)
	if m == nil {
		return "", fmt.Errorf("version %q: want a tag like v1.2.3 or v1.2.3-rc.1, as git describe prints it, or a commit hash", describe)
	}
	v := m[1]
	if m[2] != "" {
		v += "~" + m[2]
	}
	if len(local) > 0 {
		v += "+" + strings.Join(local, ".")
	}
	return v, nil
}
