#!/usr/bin/env bash
# Smoke job for the OpenZFS test bed: a mirror on two virtio disks, 16 MiB of
# data, the status and properties the exporter reads, the pool's kstat and a
# running zed. Run it with: run-job.sh --image DIR --job testbed/openzfs/smoke
set -euo pipefail

# Prints each command before its output, so the log reads like a terminal transcript.
run() {
	echo "\$ $*"
	"$@"
	echo
}

disk=/dev/disk/by-id/virtio
run zfs version
run zpool create tank mirror "$disk-zd01" "$disk-zd02"
run dd if=/dev/urandom of=/tank/random bs=1M count=16 status=none
run zpool sync tank
run ls -l /tank/random

# JSON output and vdev properties came with OpenZFS 2.2 and 2.3: on older
# releases these are noted and skipped.
if zpool status -j --json-int tank >/dev/null 2>&1; then
	run zpool status -j --json-int tank
else
	echo "# zpool status -j: not supported by this OpenZFS, skipped"
fi
if zpool get -Hp all tank all-vdevs >/dev/null 2>&1; then
	echo "\$ zpool get -Hp all tank all-vdevs | head"
	zpool get -Hp all tank all-vdevs | head || true
	echo
else
	echo "# zpool get all-vdevs: not supported by this OpenZFS, skipped"
fi

run zpool status -p tank
run cat /proc/spl/kstat/zfs/tank/state
# zed attaches hot spares in the walk; it must be running.
run pgrep -a zed
run zpool export tank
echo "smoke: ok after ${SECONDS}s"
