// Package prometheus3 scrapes the exporter with a real Prometheus 3.x,
// built from its Go module (Debian has 2.42 only), to prove what only 3.x
// reads: native histograms over protobuf and classic histograms stored as
// native histograms with custom buckets (NHCB). It has tests only.
package prometheus3
