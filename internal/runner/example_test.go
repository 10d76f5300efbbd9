package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// A replay directory answers commands from captured outputs.
func ExampleReplay() {
	dir, err := os.MkdirTemp("", "replay")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	name := runner.CaptureFileName("zpool list -Hp -o name,health")
	if err := os.WriteFile(filepath.Join(dir, name), []byte("tank\tONLINE\n"), 0o644); err != nil {
		panic(err)
	}

	var r runner.Runner
	if r, err = runner.NewReplay(dir); err != nil {
		panic(err)
	}
	ctx := context.Background()
	out, _ := r.Run(ctx, runner.Cmd("zpool", "list", "-Hp", "-o", "name,health"))
	fmt.Printf("%s: %q\n", name, out)
	_, err = r.Run(ctx, runner.Cmd("zpool", "status", "-j", "--json-int"))
	fmt.Println(errors.Is(err, runner.ErrNoCapture))
	// Output:
	// zpool_list_-Hp_-o_name,health.txt: "tank\tONLINE\n"
	// true
}
