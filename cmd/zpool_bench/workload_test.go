package main

import (
	"os"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchrun"
	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/workload"
)

func captured(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../internal/zpoolbench/workload/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestParseWorkload(t *testing.T) {
	fio := captured(t, "fio-333-seq-write-tmpfs.txt")
	dd := captured(t, "dd-gnu91-write-fdatasync.txt")
	interrupted := captured(t, "dbench-400-interrupted.txt")

	// fio behind a wrapper script: found from its output.
	s, msg := parseWorkload("", []string{"./bench.sh"}, benchrun.Result{Stdout: fio})
	if s == nil || s.Tool != workload.Fio || msg != "" {
		t.Errorf("fio behind a script: %+v, %q", s, msg)
	}
	// dd prints on stderr; its direction comes from its operands.
	s, msg = parseWorkload(workload.DD, []string{"dd", "if=/dev/zero", "of=/tank/f", "bs=1M"}, benchrun.Result{Stderr: dd})
	if s == nil || len(s.Final()) == 0 || s.Final()[0].Direction != workload.Write || msg != "" {
		t.Errorf("dd: %+v, %q", s, msg)
	}
	// A tool named but its summary missing: said, not fatal.
	s, msg = parseWorkload(workload.Dbench, []string{"dbench", "4"}, benchrun.Result{Stdout: interrupted})
	if s != nil || !strings.HasPrefix(msg, "dbench summary not read") {
		t.Errorf("interrupted dbench: %+v, %q", s, msg)
	}
	// A copy is no benchmark tool: nothing to say.
	if s, msg = parseWorkload("", []string{"cp", "a", "b"}, benchrun.Result{}); s != nil || msg != "" {
		t.Errorf("cp: %+v, %q", s, msg)
	}
}
