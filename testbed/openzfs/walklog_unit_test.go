package openzfs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWalkFailures(t *testing.T) {
	// The shape of go test -v output from a walk in which one subtest of
	// a scenario failed after another test had printed.
	log := `=== RUN   TestWalk
=== RUN   TestWalk/capabilities
    walk_test.go:310: status_format exact
--- PASS: TestWalk/capabilities (0.50s)
=== RUN   TestWalk/long_operations
=== RUN   TestWalk/long_operations/removal_of_a_top-level_mirror
=== RUN   TestWalk/long_operations/trim_and_initialize
    ops_test.go:261: opr: TRIM started at 0 (present false), want within the last minutes
    ops_test.go:300: zfs_vdev_trim_state{pool="opr"} = 1 from JSON, 0 from the text
        second line of the same message
=== NAME  TestWalk/long_operations
    ops_test.go:120: after the subtests
--- FAIL: TestWalk (40.00s)
    --- PASS: TestWalk/capabilities (0.50s)
    --- FAIL: TestWalk/long_operations (39.00s)
        --- PASS: TestWalk/long_operations/removal_of_a_top-level_mirror (1.00s)
        --- FAIL: TestWalk/long_operations/trim_and_initialize (37.72s)
FAIL
`
	failed, passed := walkFailures(log)
	if passed {
		t.Error("a log that ends in FAIL read as passed")
	}
	want := []failure{
		{name: "long_operations", lines: []string{"    ops_test.go:120: after the subtests"}},
		{name: "long_operations/trim_and_initialize", lines: []string{
			"    ops_test.go:261: opr: TRIM started at 0 (present false), want within the last minutes",
			`    ops_test.go:300: zfs_vdev_trim_state{pool="opr"} = 1 from JSON, 0 from the text`,
			"        second line of the same message",
		}},
	}
	if diff := cmp.Diff(want, failed, cmp.AllowUnexported(failure{})); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}

	if _, passed := walkFailures("=== RUN   TestWalk\n--- PASS: TestWalk (1.00s)\nPASS\n"); !passed {
		t.Error("a log that ends in PASS read as failed")
	}
}

func TestWalkFailuresKeepsTheLastLines(t *testing.T) {
	log := "=== RUN   TestWalk/x\n"
	for range 3 * failureLines {
		log += "    x_test.go:1: early\n"
	}
	log += "    x_test.go:2: the last\n--- FAIL: TestWalk/x (1.00s)\n"
	failed, _ := walkFailures(log)
	if len(failed) != 1 || len(failed[0].lines) != failureLines || failed[0].lines[failureLines-1] != "    x_test.go:2: the last" {
		t.Errorf("failures = %q, want x with its last %d lines", failed, failureLines)
	}
}
