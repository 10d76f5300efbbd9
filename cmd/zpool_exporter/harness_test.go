package main

import (
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// exporterBin is the binary under test, built once by TestMain.
var exporterBin string

func TestMain(m *testing.M) { e2e.MainWithExporter(m, "../..", &exporterBin) }
