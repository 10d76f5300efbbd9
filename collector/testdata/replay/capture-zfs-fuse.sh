#!/usr/bin/env bash
# Records, from real zfs-fuse pools, every zpool command the exporter runs,
# as a replay directory (see the README's "Replay format"): one numbered
# step per pool state, each capture headed by its command, exit status and
# stderr. Needs root and a running zfs-fuse daemon.
#
#   collector/testdata/replay/capture-zfs-fuse.sh collector/testdata/replay/zfs-fuse
set -euo pipefail
out=${1:?usage: $0 OUTPUT_DIR}
# A fixed directory keeps the vdev paths in the captures stable.
work=/var/tmp/zfs-fuse-replay
pools=(backup tank) # in the order zpool status prints them
# shellcheck source=../../../scripts/replay-capture-lib.sh
source "$(dirname "$0")/../../../scripts/replay-capture-lib.sh"
capture_start

zpool create -m "$work/tank" tank mirror "$(disk t1)" "$(disk t2)" 2>/dev/null
zpool create -m "$work/backup" backup raidz1 "$(disk b1)" "$(disk b2)" "$(disk b3)" spare "$(disk b4)" 2>/dev/null
write "$work/tank/data" 24
write "$work/backup/data" 32

# Writes go on during the stream so that its rates are not all zero.
(for i in 1 2 3 4; do write "$work/tank/more$i" 4; sleep 0.5; done) &
step 0 "both pools healthy, data being written to tank"
wait

zpool offline backup "$work/b2"
step 1 "backup DEGRADED: b2 taken offline"
zpool online backup "$work/b2"
sleep 2

zpool replace backup "$work/b3" "$work/b4"
sleep 3
step 2 "backup: hot spare b4 replaced b3 (spare-2, b4 INUSE), resilver done"
zpool detach backup "$work/b4"
sleep 2

dd if=/dev/urandom of="$work/b1" bs=1M seek=8 count=48 conv=notrunc status=none
sync
zpool scrub backup
for _ in $(seq 60); do zpool status backup | grep -q 'scrub in progress' || break; sleep 1; done
step 3 "backup: b1 overwritten in the middle, scrubbed: checksum errors repaired"
