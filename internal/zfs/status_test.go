package zfs

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// jsonOnlyRunner answers `zpool status -j --json-int` with its output and
// refuses every other command, as a zpool would refuse unknown options.
type jsonOnlyRunner struct{ status string }

func (r jsonOnlyRunner) Run(_ context.Context, cmd runner.Command) ([]byte, error) {
	line := cmd.Line()
	if line == "zpool status -j --json-int" {
		return []byte(r.status), nil
	}
	return nil, &runner.Error{Command: line, ExitCode: 2}
}

// A JSON status carries a running removal's and expansion's raw figures
// only: the client derives their rates and times left from the clock, as
// zpool's text does (100 MiB copied in 100 s is 1 MiB/s; 300 MiB to go,
// 300 s).
func TestStatusEstimatesRemovalAndExpansion(t *testing.T) {
	const mib = 1 << 20
	now := testNow.Unix()
	status := `{"output_version": {"command": "zpool status", "vers_major": 0, "vers_minor": 1},
"pools": {"tank": {"name": "tank", "state": "ONLINE",
	"removal_stats": {"name": "/dev/sdc", "vdev_type": "disk", "state": "SCANNING", "removing_vdev": 1,
		"start_time": ` + itoa(now-100) + `, "end_time": 0, "to_copy": ` + itoa(400*mib) + `, "copied": ` + itoa(100*mib) + `, "mapping_memory": 0},
	"raidz_expand_stats": {"name": "raidz1", "state": "SCANNING", "expanding_vdev": 0,
		"start_time": ` + itoa(now-1024) + `, "end_time": 0, "to_reflow": ` + itoa(4096*mib) + `, "reflowed": ` + itoa(1024*mib) + `, "waiting_for_resilver": 0},
	"vdevs": {"tank": {"name": "tank", "vdev_type": "root", "state": "ONLINE", "vdevs": {
		"raidz1-0": {"name": "raidz1-0", "vdev_type": "raidz", "state": "ONLINE", "vdevs": {
			"sda": {"name": "sda", "vdev_type": "disk", "state": "ONLINE"},
			"sdb": {"name": "sdb", "vdev_type": "disk", "state": "ONLINE"}}},
		"sdc": {"name": "sdc", "vdev_type": "disk", "state": "ONLINE"}}}}}}}`
	client := New(Config{Runner: jsonOnlyRunner{status}, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	st, err := client.Status(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Pools) != 1 || st.Pools[0].Removal == nil || st.Pools[0].Expansion == nil {
		t.Fatalf("status %+v: want tank with a removal and an expansion", st.Pools)
	}
	p := st.Pools[0]
	for _, c := range []struct {
		what      string
		got, want *float64
	}{
		{"removal rate", p.Removal.Rate, fp(mib)},
		{"removal time left", p.Removal.Remaining, fp(300)},
		{"expansion rate", p.Expansion.Rate, fp(mib)},
		{"expansion time left", p.Expansion.Remaining, fp(3072)},
	} {
		if c.got == nil || *c.got != *c.want {
			t.Errorf("%s = %v, want %v", c.what, deref(c.got), *c.want)
		}
	}
}

// A status the parser cannot read fails with a parse error that names the
// command line and the line, once each.
func TestStatusUnreadableNamesCommandAndLine(t *testing.T) {
	status := "  pool: tank\n state: ONLINE\nconfig:\n\n" +
		"\tNAME        STATE     READ WRITE CKSUM\n" +
		"\ttank        ONLINE       0     0     0\n" +
		"\t  sda       ONLINE       0    x1     0\n"
	client := New(Config{Runner: answers{"zpool status -p": status}, Location: time.UTC}, slog.New(slog.DiscardHandler))
	_, err := client.Status(context.Background())
	var pe *parse.Error
	if !errors.Is(err, parse.ErrUnexpected) || !errors.As(err, &pe) || pe.Source != "zpool status -p" || pe.Line != 7 {
		t.Fatalf("error %v, want a parse error of zpool status -p at line 7", err)
	}
	if want := `zpool status -p: line 7: vdev "sda": cannot parse WRITE count "x1"`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func fp(v float64) *float64 { return &v }

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}
