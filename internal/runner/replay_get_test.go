package runner

import (
	"context"
	"errors"
	"slices"
	"testing"
)

func TestGetAllLine(t *testing.T) {
	for _, tc := range []struct {
		line, all string
		props     []string
	}{
		{"zpool get -Hp -- read_ops,write_ops tank all-vdevs", "zpool get -Hp -- all tank all-vdevs", []string{"read_ops", "write_ops"}},
		{"zpool get -H -p size tank", "zpool get -H -p all tank", []string{"size"}},
		{"zpool get -Hp -- all tank all-vdevs", "", nil}, // already all
		{"zpool get -Ho name,value size tank", "", nil},  // columns picked
		{"zpool get size tank", "", nil},                 // a table, not scripted
		{"zpool get -Hp -- read_ops", "", nil},           // no pool
		{"zpool status -Hp -- read_ops tank", "", nil},   // not get
	} {
		all, props, ok := GetAllLine(tc.line)
		if ok != (tc.all != "") || all != tc.all || !slices.Equal(props, tc.props) {
			t.Errorf("GetAllLine(%q) = %q, %q, %v; want %q, %q", tc.line, all, props, ok, tc.all, tc.props)
		}
	}
}

// A get of some properties is answered from the capture of all of them,
// each vdev's rows in the order asked, and fails as that capture does.
func TestReplayDerivesPropertiesFromGetAll(t *testing.T) {
	all := "root-0\tread_ops\t1\t-\nroot-0\tsize\t9\t-\nroot-0\twrite_ops\t2\t-\n" +
		"sda\tsize\t8\t-\nsda\twrite_ops\t4\t-\nsda\tread_ops\t3\t-\n"
	r, _ := newReplay(t, map[string]string{
		"zpool_get_-Hp_all_tank_all-vdevs.txt":       all,
		"zpool_get_-Hp_all_old_all-vdevs.txt":        "",
		"zpool_get_-Hp_all_old_all-vdevs.exit":       "2\n",
		"zpool_get_-Hp_all_old_all-vdevs.stderr.txt": "bad property list: invalid property 'all-vdevs'\n",
	}, ReplayOptions{})
	got := mustRun(t, r, "zpool", "get", "-Hp", "--", "read_ops,write_ops", "tank", "all-vdevs")
	want := "root-0\tread_ops\t1\t-\nroot-0\twrite_ops\t2\t-\nsda\tread_ops\t3\t-\nsda\twrite_ops\t4\t-\n"
	if got != want {
		t.Errorf("derived get = %q, want %q", got, want)
	}
	_, err := r.Run(context.Background(), Cmd("zpool", "get", "-Hp", "--", "read_ops", "old", "all-vdevs"))
	var ce *Error
	if !errors.As(err, &ce) || ce.ExitCode != 2 || ce.Command != "zpool get -Hp -- read_ops old all-vdevs" {
		t.Errorf("derived from a failed capture: %v, want exit status 2 for the line asked", err)
	}
}
