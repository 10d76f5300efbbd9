#!/usr/bin/env bash
# Captures zpool outputs from real zfs-fuse pools into this directory.
# Needs root and a running zfs-fuse daemon (zfs-fuse --pidfile FILE).
# Every file is headed by the exact command and the scenario, then "# ---".
# Pools are file-backed under a temporary directory and destroyed at the end.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)
# A fixed directory keeps the vdev paths in the captures stable.
work=/var/tmp/zfs-fuse-capture
rm -rf "$work" && mkdir -p "$work"
pools=(cmirror craid10 craidz ctwo cold)
cleanup() {
	for p in "${pools[@]}"; do
		for _ in 1 2 3 4 5; do zpool destroy -f "$p" 2>/dev/null && break; zpool list "$p" &>/dev/null || break; sleep 1; done
	done
	rm -rf "$work"
}
trap cleanup EXIT

capture() { # scenario slug command...
	local scenario=$1 slug=$2
	shift 2
	{
		echo "# command: $*"
		echo "# scenario: $scenario"
		echo "# ---"
		"$@"
	} >"$out/${scenario}__${slug}.txt" 2>/dev/null || true
}

disk() { truncate -s 128M "$work/$1"; echo "$work/$1"; }
fill() { dd if=/dev/urandom of="$1" bs=1M count="$2" status=none; sync; }

# 1. A two-way mirror with data.
zpool create cmirror mirror "$(disk m1)" "$(disk m2)" 2>/dev/null
fill /cmirror/data 24
capture mirror status zpool status cmirror
capture mirror iostat-v zpool iostat -v cmirror
capture mirror list-H zpool list -H -o name,size,allocated,free,capacity,dedupratio,health,guid cmirror
capture mirror get-all zpool get all cmirror

# 2. raid10: two mirrors striped.
zpool create craid10 mirror "$(disk r1)" "$(disk r2)" mirror "$(disk r3)" "$(disk r4)" 2>/dev/null
fill /craid10/data 32
capture raid10 status zpool status craid10
capture raid10 iostat-v zpool iostat -v craid10

# 3. raidz1 with a hot spare.
zpool create craidz raidz1 "$(disk z1)" "$(disk z2)" "$(disk z3)" spare "$(disk z4)" 2>/dev/null
fill /craidz/data 32
capture raidz1-spare status zpool status craidz
capture raidz1-spare iostat-v zpool iostat -v craidz

# 4. DEGRADED after zpool offline.
zpool offline craidz "$work/z2"
capture raidz1-offline status zpool status craidz
capture raidz1-offline iostat-v zpool iostat -v craidz
zpool online craidz "$work/z2"
sleep 2

# 5. Spare in use after zpool replace with the hot spare.
zpool replace craidz "$work/z3" "$work/z4"
sleep 3
capture raidz1-spare-inuse status zpool status craidz
capture raidz1-spare-inuse iostat-v zpool iostat -v craidz
zpool detach craidz "$work/z4"
sleep 2

# 6. Checksum errors: overwrite the middle of a leaf's file, then scrub.
dd if=/dev/urandom of="$work/z1" bs=1M seek=8 count=48 conv=notrunc status=none
sync
zpool scrub craidz
for _ in $(seq 60); do
	zpool status craidz | grep -q 'scrub in progress' || break
	sleep 1
done
capture raidz1-cksum status zpool status craidz
capture raidz1-cksum status-v zpool status -v craidz
zpool clear craidz

# 7. Two pools in one output, and zpool status -x.
zpool create ctwo "$(disk t1)" 2>/dev/null
capture two-pools status zpool status cmirror ctwo
capture two-pools status-x zpool status -x
capture two-pools list-H zpool list -H -o name,size,allocated,free,capacity,dedupratio,health,guid cmirror ctwo
capture two-pools iostat-v zpool iostat -v cmirror ctwo

# 8. iostat with intervals while data is written, with -T u timestamps.
writer() { for i in $(seq 12); do fill "/cmirror/w$i" 4; sleep 0.4; done; }
writer &
capture interval iostat-v-1-3 zpool iostat -v cmirror 1 3
capture interval iostat-v-Tu-1-2 zpool iostat -T u -v cmirror 1 2
wait

# 9. A pool at an older on-disk version: zpool status asks for zpool upgrade.
zpool create -o version=22 cold "$(disk o1)" 2>/dev/null
capture old-version status zpool status cold
