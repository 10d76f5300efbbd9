package main

import (
	"testing"
	"time"
)

func TestPackageVersion(t *testing.T) {
	commit := time.Date(2025, 12, 2, 23, 57, 0, 0, time.UTC)
	for _, tc := range []struct{ describe, want string }{
		{"v1.2.3", "1.2.3"},
		{"1.2.3", "1.2.3"},
		{"v1.2.3-dirty", "1.2.3+dirty"},
		{"v1.2.3-rc.1", "1.2.3~rc.1"},
		{"v1.2.3-5-gabc1234", "1.2.3+5.gabc1234"},
		{"v1.2.3-5-gabc1234-dirty", "1.2.3+5.gabc1234.dirty"},
		{"v1.2.3-rc.1-5-gabc1234", "1.2.3~rc.1+5.gabc1234"},
		{"v0.10", "0.10"},
		{"ed74d78", "0.0~git20251202.ed74d78"},
		{"ed74d78-dirty", "0.0~git20251202.ed74d78.dirty"},
	} {
		got, err := packageVersion(tc.describe, commit)
		if err != nil || got != tc.want {
			t.Errorf("packageVersion(%q) = %q, %v; want %q", tc.describe, got, err, tc.want)
		}
	}
	for _, bad := range []string{"unknown", "", "release-1", "v1.2.3_beta", "v1.2.3-rc 1"} {
		if got, err := packageVersion(bad, commit); err == nil {
			t.Errorf("packageVersion(%q) = %q, want an error", bad, got)
		}
	}
}
