package main

import (
	"io"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// formats are the --format values, in the order --help lists them.
var formats = []string{"table", "markdown", "csv", "json"}

var reportWriters = map[string]func(io.Writer, benchreport.Report) error{
	"table":    benchreport.WriteTable,
	"markdown": benchreport.WriteMarkdown,
	"csv":      benchreport.WriteCSV,
	"json":     benchreport.WriteJSON,
}

var comparisonWriters = map[string]func(io.Writer, benchreport.Comparison) error{
	"table":    benchreport.WriteComparisonTable,
	"markdown": benchreport.WriteComparisonMarkdown,
	"csv":      benchreport.WriteComparisonCSV,
	"json":     benchreport.WriteComparisonJSON,
}
