// Package hostgen writes the outputs of a large ZFS host that does not
// exist, for benchmarks of the exporter at scale: P pools, each a stripe
// of 2-way mirrors of L leaves, as a replay directory (see
// internal/runner/REPLAY.md) that --zpool.replay-dir serves.
//
// Every output is written row for row like the project's captures of a
// real OpenZFS 2.3.2 or 2.4.4 (pool r10 of the guest's 01-created
// scenario, a stripe of two mirrors): the same commands, columns,
// properties, sources and JSON keys, in the same order, with only names,
// GUIDs and the figures that add up across vdevs (sizes, the pool's
// counters) made to fit the layout. The host has what the exporter reads
// at start and at each scrape: zpool status (JSON, -p, -s -p and plain),
// zpool get of the pools and of each pool's vdevs, the kstats of
// /proc/spl/kstat/zfs under kstat/, and /proc/diskstats, /dev and /sys
// under proc/, dev/ and sys/ for the disk join.
//
// Answer serves such a host as zpool would, for an exporter that runs
// zpool rather than replaying (cmd/zpool stands in for zpool), and
// WriteCaptures lays out a scenario of the real captures the same way.
//
// A host may also have datasets and snapshots (Spec.Datasets and
// Snapshots; named "1x8:10000d:100000s"), a tree of filesystems and
// volumes under each pool's root dataset, written under zfs/ as a row of
// properties each (zfs_store.go, zfs_gen.go). AnswerZFS answers zfs list
// and zfs get from them as zfs 2.3.2 or 2.4.4 prints them, every property
// in the form of the guest's captures of zfs (cmd/zfs stands in for zfs,
// and can take long on the snapshots alone).
package hostgen
