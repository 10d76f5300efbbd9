package collector

// GeneratedExporter is generatedExporter for the tests of package
// collector_test.
var GeneratedExporter = generatedExporter

// CapturesExporter is capturesExporter for the tests of package
// collector_test.
var CapturesExporter = capturesExporter
