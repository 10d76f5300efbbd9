//go:build unix

package runner

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRunOwnCPU runs commands as the exporter does and reports the
// exporter's own CPU per run (own-cpu-us/op: user and system time of this
// process, the children's excluded), which is what a scrape pays for each
// zpool it runs; ns/op is mostly the children's time. The commands print
// an output of zpool status's size, at once or after a pause as a slow
// zpool does.
func BenchmarkRunOwnCPU(b *testing.B) {
	out := filepath.Join(b.TempDir(), "status.txt")
	line := []byte("\tmirror-0                  ONLINE       0     0     0\n")
	if err := os.WriteFile(out, bytes.Repeat(line, 400), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"cat", []string{"cat", out}},
		{"sleep-then-cat", []string{"sh", "-c", `sleep 0.05; exec cat "$0"`, out}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			e := NewExec(ExecOptions{})
			ctx := context.Background()
			before := ownCPU(b)
			for b.Loop() {
				if _, err := e.Run(ctx, Cmd(bc.args[0], bc.args[1:]...)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((ownCPU(b)-before).Microseconds())/float64(b.N), "own-cpu-us/op")
		})
	}
}

// ownCPU is the user and system time of this process so far.
func ownCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
