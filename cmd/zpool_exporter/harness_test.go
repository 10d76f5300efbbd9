package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// exporterBin is the binary under test, built once by TestMain.
var exporterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zpool_exporter-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exporterBin = filepath.Join(dir, "zpool_exporter")
	build := exec.Command("go", "build", "-o", exporterBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building zpool_exporter:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
