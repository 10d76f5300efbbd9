package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/e2e"
)

// exporterBin is the binary under test, built once by TestMain.
var exporterBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zpool_exporter-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if exporterBin, err = e2e.BuildExporter("../..", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
