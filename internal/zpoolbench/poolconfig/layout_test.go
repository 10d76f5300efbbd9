package poolconfig

import "testing"

// TestLayoutMixed covers what the captured pools do not: mixed kinds in a
// class, leaves beside interior vdevs, holes of removed vdevs.
func TestLayoutMixed(t *testing.T) {
	v := func(name, typ, class string, width int) Vdev {
		return Vdev{Name: name, Type: typ, Class: class, Width: width}
	}
	tests := []struct {
		vdevs []Vdev
		want  string
	}{
		{[]Vdev{v("mirror-0", "mirror", "normal", 2), v("mirror-1", "mirror", "normal", 3)}, "mirror of 2 + mirror of 3"},
		{[]Vdev{v("mirror-0", "mirror", "normal", 2), v("sdc", "disk", "normal", 1), v("mirror-2", "mirror", "normal", 2)}, "2 × mirror of 2 + disk"},
		{[]Vdev{v("raidz2-0", "raidz2", "normal", 6), v("raidz2-1", "raidz2", "normal", 6), v("sdm", "disk", "log", 1), v("sdn", "disk", "log", 1)}, "2 × raidz2 of 6 + log 2"},
		// A top-level disk being replaced is still one disk.
		{[]Vdev{v("replacing-0", "replacing", "normal", 1), v("sdb", "disk", "normal", 1)}, "stripe of 2"},
		// The hole a removed log leaves holds nothing.
		{[]Vdev{v("mirror-0", "mirror", "normal", 2), v("hole-1", "hole", "normal", 1), v("sdd", "disk", "cache", 1)}, "mirror of 2 + cache 1"},
		{[]Vdev{v("sdb", "disk", "spare", 1), v("raidz1-0", "raidz1", "normal", 3), v("mirror-1", "mirror", "special", 2), v("mirror-2", "mirror", "special", 2)}, "raidz1 of 3 + special 2 × mirror of 2 + spare 1"},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := Layout(tc.vdevs); got != tc.want {
			t.Errorf("Layout(%+v) = %q, want %q", tc.vdevs, got, tc.want)
		}
	}
}

func TestPoolVersionName(t *testing.T) {
	tests := []struct {
		info    PoolVersionInfo
		goos    string
		zfsFuse bool
		want    string
	}{
		{PoolVersionInfo{Version: 23}, "linux", true, "zfs-fuse (pool version 23)"},
		{PoolVersionInfo{Version: 23}, "linux", false, "ZFS (pool version 23)"},
		{PoolVersionInfo{Version: 44}, "solaris", false, "Solaris ZFS (pool version 44)"},
		{PoolVersionInfo{FeatureFlags: true}, "illumos", false, "illumos ZFS (feature flags)"},
		{PoolVersionInfo{FeatureFlags: true}, "freebsd", false, "FreeBSD ZFS (feature flags)"},
		{PoolVersionInfo{Version: 28}, "netbsd", false, "ZFS (pool version 28)"},
	}
	for _, tc := range tests {
		if got := poolVersionName(tc.info, tc.goos, tc.zfsFuse); got != tc.want {
			t.Errorf("poolVersionName(%+v, %s, %v) = %q, want %q", tc.info, tc.goos, tc.zfsFuse, got, tc.want)
		}
	}
}
