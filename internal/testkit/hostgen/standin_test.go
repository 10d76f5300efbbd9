package hostgen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// pdf/zfs_exporter's two commands, and the exporter's, are answered from
// the same host.
func TestAnswer(t *testing.T) {
	dir := writeHost(t, Spec{Pools: 2, Leaves: 2, Version: "2.3"})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "-Ho", "name"}, "tank0\ntank1\n"},
		{[]string{"list", "-H", "-o", "name", "tank1"}, "tank1\n"},
		{[]string{"get", "-Hpo", "name,property,value", "health,size,fragmentation", "tank1"},
			"tank1\thealth\tONLINE\ntank1\tsize\t1006632960\ntank1\tfragmentation\t1\n"},
		{[]string{"get", "-H", "-p", "-o", "value,source", "failmode", "tank0", "tank1"}, "wait\tdefault\nwait\tdefault\n"},
		{[]string{"get", "-Hp", "--", "all", "tank1", "all-vdevs"}, string(readCapture(t, dir, "zpool get -Hp all tank1 all-vdevs"))},
		{[]string{"get", "-Hp", "--", "read_ops,write_ops", "tank1", "all-vdevs"},
			string(runner.KeepProperties(readCapture(t, dir, "zpool get -Hp all tank1 all-vdevs"), []string{"read_ops", "write_ops"}))},
		{[]string{"status", "-j", "--json-int"}, string(readCapture(t, dir, "zpool status -j --json-int"))},
	} {
		got, err := Answer(dir, tc.args)
		if err != nil || string(got) != tc.want {
			t.Errorf("zpool %s:\n%s(%v), want\n%s", strings.Join(tc.args, " "), got, err, tc.want)
		}
	}
	for _, args := range [][]string{{"iostat", "-v"}, {"list"}, {"list", "-o", "name"}, {"list", "-Ho", "name,size"}, {"get", "-Hpo", "name"}, {}} {
		if out, err := Answer(dir, args); !errors.Is(err, ErrNoAnswer) {
			t.Errorf("zpool %s: %q, %v; want ErrNoAnswer", strings.Join(args, " "), out, err)
		}
	}
}

// A scenario of the guest's captures is laid out as a generated host, and
// answered the same way.
func TestWriteCaptures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "host")
	model := fmt.Sprintf(zpoolCaptures, "2.3")
	if err := WriteCaptures(dir, kstatScenario, model, kstatCaptures); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"zpool status -j --json-int", "zpool get -Hp all r10 all-vdevs"} {
		got, err := Answer(dir, strings.Fields(line)[1:])
		if want := capturedIn(t, model, kstatScenario, line); err != nil || string(got) != string(want) {
			t.Errorf("%s: %d bytes (%v), the capture has %d", line, len(got), err, len(want))
		}
	}
	// The exporter ends its options before the pool's name.
	if _, err := Answer(dir, []string{"get", "-Hp", "--", "all", "dr", "all-vdevs"}); err != nil {
		t.Error(err)
	}
	if got, err := Answer(dir, []string{"list", "-Ho", "name"}); err != nil || string(got) != "dr\nmir\nr10\nrz1\n" {
		t.Errorf("zpool list -Ho name: %q, %v", got, err)
	}
	if state, err := os.ReadFile(filepath.Join(dir, "kstat", "r10", "state")); err != nil || string(state) != "ONLINE\n" {
		t.Errorf("kstat r10/state: %q, %v", state, err)
	}
	// zfs's listings are written beside zpool's outputs.
	const datasets = "../../zfs/dataset/testdata/openzfs-2.3-guest"
	withDatasets := filepath.Join(t.TempDir(), "datasets")
	if err := WriteCaptures(withDatasets, "12-datasets", datasets); err != nil {
		t.Fatal(err)
	}
	command, want, err := splitCapture(readFile(t, datasets, "12-datasets__zfs_list_-Hp_snapshots.txt"))
	if err != nil {
		t.Fatal(err)
	}
	replay, err := runner.NewReplay(withDatasets)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(command)
	if got, err := replay.Run(t.Context(), runner.Cmd(args[0], args[1:]...)); err != nil || string(got) != string(want) {
		t.Errorf("%s replayed: %d bytes (%v), the capture has %d", command, len(got), err, len(want))
	}
	if err := WriteCaptures(filepath.Join(t.TempDir(), "none"), "99-missing", model); err == nil {
		t.Error("a scenario without captures was written")
	}
}

// The stand-in reads back the settings it is given, and refuses a file
// without a host.
func TestStandInSettings(t *testing.T) {
	dir := t.TempDir()
	want := StandIn{Host: "/tmp/host", Delay: 150 * time.Millisecond, Log: "/tmp/runs.log"}
	if err := WriteStandIn(dir, want); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadStandIn(dir); err != nil || got != want {
		t.Errorf("read back %+v, %v; want %+v", got, err, want)
	}
	if err := WriteStandIn(dir, StandIn{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadStandIn(dir); err == nil {
		t.Error("settings without a host were accepted")
	}
}
