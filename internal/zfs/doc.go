// Package zfs is the exporter's one way to ZFS: a Client runs (or replays)
// zpool through a runner, parses its output with the pure parsers of
// internal/zfs/zpool, and reads the kernel's statistics with those of
// internal/zfs/kstat. It detects what this zpool can print and keeps when
// each source last answered, for the freshness metrics.
//
// The collectors read ZFS through it, and so does poolconfig, which
// zpool_bench uses; the status page shows the status the collectors read.
// The collectors of one scrape share a Scrape, which reads `zpool status`
// and `zpool get` once for all of them:
//
//	client := zfs.New(zfs.Config{Runner: runner.NewExec(runner.ExecOptions{})}, logger)
//	scrape := client.NewScrape()
//	status, err := scrape.Status(ctx)  // zpool status -j, -p or plain, as this zpool has it
//	props, err := scrape.Properties(ctx) // zpool get, whose table form needs status's pools
//
// A new source is one method here, over a parser of its own package, and
// one collector in package collector that maps what it returns to metrics.
package zfs
