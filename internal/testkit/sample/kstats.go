package sample

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// KstatCaptures lays out the OpenZFS 2.3.2 kstat captures of one scenario
// as /proc/spl/kstat/zfs: "kstat-zfs-arcstats" is arcstats,
// "kstat-zfs-r10.state" is r10/state. Like Dir, it skips the test when
// the captures are missing outside CI.
func KstatCaptures(t testing.TB, scenario string) fstest.MapFS {
	t.Helper()
	dir := Dir(t, "captures/openzfs-2.3")
	fsys := fstest.MapFS{}
	for _, f := range Glob(t, dir, scenario+"__kstat-zfs-*.txt") {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f.Path), scenario+"__kstat-zfs-"), ".txt")
		if pool, file, ok := strings.Cut(name, "."); ok {
			name = pool + "/" + file
		}
		fsys[name] = &fstest.MapFile{Data: f.Body}
	}
	return fsys
}
