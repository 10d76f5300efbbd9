package runner

import (
	"context"
	"strings"
	"testing"
)

func TestCommandKind(t *testing.T) {
	vdevProps := "read_bytes,write_bytes,read_ops,write_ops,ashift,sit_out,autosit,slow_io_events"
	datasetProps := "name,type,used,available,mountpoint"
	for _, tc := range []struct{ line, want string }{
		// The exporter's own command lines, as the captures hold them.
		{"zpool status -j --json-int -t -i", "zpool status -j"},
		{"zpool status -j --json-int", "zpool status -j"},
		{"zpool status -s -p -t -i", "zpool status -p"},
		{"zpool status -p", "zpool status -p"},
		{"zpool status", "zpool status"},
		{"zpool get -Hp all", "zpool get all"},
		{"zpool get -H all", "zpool get all"},
		{"zpool get all tank r10", "zpool get all"},
		{"zpool get -Hp -- " + vdevProps + " r10 all-vdevs", "zpool get all-vdevs"},
		{"zpool get -Hp -- " + vdevProps + " all-vdevs all-vdevs", "zpool get all-vdevs"}, // a pool called all-vdevs
		{"zpool iostat -vHp -w", "zpool iostat -w"},
		{"zpool iostat -vHp -q", "zpool iostat -q"},
		{"zpool iostat -vHp -r", "zpool iostat -r"},
		{"zpool iostat -vHp 10", "zpool iostat -v"},
		{"zpool list -v -Hp", "zpool list -v"},
		{"zpool list -v -H", "zpool list -v"},
		{"zpool list -v", "zpool list -v"},
		{"zpool version", "zpool version"},
		{"zfs list -Hp -t filesystem,volume -o " + datasetProps, "zfs list"},
		{"zfs list -Hp -r -t filesystem,volume -o " + datasetProps + " tank r10", "zfs list"},
		{"zfs list -j --json-int -t filesystem,volume -o " + datasetProps, "zfs list -j"},
		{"zfs list -j --json-int -t snapshot -o name,creation", "zfs list -j -t snapshot"},
		{"zfs list -Hp -t snapshot -o name,creation,used", "zfs list -t snapshot"},
		{"zfs get -Hp -o name,property,value type,used", "zfs get"},
		// Other programs are named alone.
		{"iostat -xnc", "iostat"},
		{"ps -e -o pid,comm,time", "ps"},
		{"sysctl -q kstat.zfs", "sysctl"},
		{"glabel status -s", "glabel"},
		{"zpool", "zpool"},
		{"zpool -?", "zpool"},
	} {
		fields := strings.Fields(tc.line)
		if got := CommandKind(fields[0], fields[1:]); got != tc.want {
			t.Errorf("CommandKind(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

// A probe that zpool answers no to is a run, not a failure: the stats of
// an older zpool then show no failure for what it was only asked once.
func TestProbeAnsweredNoIsNoFailure(t *testing.T) {
	r, _ := newReplay(t, map[string]string{
		"zpool_status_-j_--json-int.txt": "# command: zpool status -j --json-int\n# exit: 2\n# stderr: invalid option 'j'\n# ---\n",
		"zpool_status_-p.txt":            "# command: zpool status -p\n# exit: 1\n# ---\n",
	}, ReplayOptions{})
	for _, tc := range []struct {
		probe        bool
		args         []string
		wantFailures uint64
	}{
		{true, []string{"status", "-j", "--json-int"}, 0},             // exit status 2
		{true, []string{"status", "-j", "--json-int", "-t", "-i"}, 0}, // no capture
		{false, []string{"status", "-p"}, 1},                          // not a probe
	} {
		line := CommandLine("zpool", tc.args...)
		r.Run(context.Background(), Command{Path: "zpool", Args: tc.args, Probe: tc.probe})
		if st := r.Stats()[line]; st.Runs != 1 || st.Failures != tc.wantFailures {
			t.Errorf("%s: stats = %+v, want 1 run and %d failures", line, st, tc.wantFailures)
		}
	}
}

func TestStatsKind(t *testing.T) {
	r, _ := newReplay(t, map[string]string{"zpool_status_-p.txt": "x\n"}, ReplayOptions{})
	r.Run(context.Background(), Command{Path: "/opt/bin/zpool-sudo", Args: []string{"status", "-p"}, Program: "zpool"})
	r.Run(context.Background(), Cmd("/sbin/zpool", "status", "-p"))
	for line, want := range map[string]string{
		"/opt/bin/zpool-sudo status -p": "zpool status -p",
		"/sbin/zpool status -p":         "zpool status -p",
	} {
		if st := r.Stats()[line]; st.Kind != want {
			t.Errorf("%s: kind %q, want %q", line, st.Kind, want)
		}
	}
}
