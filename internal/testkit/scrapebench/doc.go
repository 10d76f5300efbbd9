// Package scrapebench measures exporters side by side on the same host:
// started together, scraped in turn, each one's own CPU time (children
// excluded), memory, zpool runs, latency and series per scrape, as medians
// of rounds, written as one Markdown table. make bench runs it over the
// hosts of internal/testkit/hostgen and the guest's captures, with zpool_exporter
// reading them as a replay or through the stand-in zpool, and
// pdf/zfs_exporter through the stand-in beside it.
package scrapebench
