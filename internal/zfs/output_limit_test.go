package zfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

func TestOutputLimitsLearn(t *testing.T) {
	var l outputLimits
	tooLarge := &runner.Error{Command: "zpool status", ExitCode: -1, Err: runner.ErrOutputTooLarge}
	if _, raised := l.learn("get", make([]byte, 1000), nil); raised || l.bytes["get"] != 0 {
		t.Errorf("a small output set the limit to %d, want the runner's", l.bytes["get"])
	}
	if n, raised := l.learn("status", nil, tooLarge); !raised || n != 2*runner.DefaultMaxOutput {
		t.Errorf("a cut output raised the limit to %d (%v), want twice the runner's", n, raised)
	}
	if _, raised := l.learn("status", make([]byte, 10<<20), nil); raised || l.bytes["status"] != 4*10<<20 {
		t.Errorf("after 10 MiB, the limit is %d, want 40 MiB", l.bytes["status"])
	}
	if l.bytes["get"] != 0 {
		t.Error("status's limit changed get's")
	}
	for range 20 {
		l.learn("status", nil, tooLarge)
	}
	if n, raised := l.learn("status", nil, tooLarge); raised || l.bytes["status"] != maxOutputLimit {
		t.Errorf("after many cuts the limit is %d (raised again: %v, %d), want it to stop at %d", l.bytes["status"], raised, n, maxOutputLimit)
	}
}

// A zpool whose vdev properties pass the runner's output limit fails the
// read, and is not taken for a zpool without vdev properties: the next
// read, with the limit raised, gets them.
func TestVdevPropertiesPastOutputLimit(t *testing.T) {
	dir := t.TempDir()
	zpool := filepath.Join(dir, "zpool")
	script := "#!/bin/sh\ni=0\nwhile [ $i -lt 100 ]; do printf 'mirror-0\\tread_ops\\t%d\\t-\\n' $i; i=$((i+1)); done\n"
	if err := os.WriteFile(zpool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := runner.NewExec(runner.ExecOptions{MaxOutput: 1000})
	client := New(Config{Runner: run, Zpool: zpool, Location: time.UTC, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	props, ok, err := client.VdevProperties(ctx, "tank", "read_ops")
	if !errors.Is(err, runner.ErrOutputTooLarge) {
		t.Fatalf("first read: %d rows, ok %v, err %v; want ErrOutputTooLarge", len(props), ok, err)
	}
	if caps, _ := client.Detected(); caps.VdevPropertiesKnown {
		t.Fatal("an output cut at the limit decided whether zpool has vdev properties")
	}
	props, ok, err = client.VdevProperties(ctx, "tank", "read_ops")
	if err != nil || !ok || len(props) != 100 {
		t.Fatalf("second read: %d rows, ok %v, err %v; want 100 rows", len(props), ok, err)
	}
	if got := fmt.Sprint(props[99].Name, " ", props[99].Property, " ", props[99].Value); got != "mirror-0 read_ops 99" {
		t.Errorf("last row %q", got)
	}
}
