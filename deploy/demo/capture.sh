#!/usr/bin/env bash
# Records the demo scenario (zpool_exporter --demo, docker compose --profile
# demo) from a real zfs-fuse pool: every zpool command the exporter runs,
# one numbered step per moment of a disk's failure and replacement. See
# README.md beside it. Needs root and a running zfs-fuse daemon; takes about
# two minutes.
#
#   deploy/demo/capture.sh [OUTPUT_DIR]    (internal/demo/replay unless given)
#
# DEMO_DATA_MIB (2048 unless set) is the data written before the disk fails:
# the resilver's length follows it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# The exporter embeds the replay from its package, internal/demo.
out=${1:-$here/../../internal/demo/replay}
# A fixed directory keeps the vdev paths in the captures stable.
work=/var/tmp/zfs-demo
pools=(tank)
data_mib=${DEMO_DATA_MIB:-2048}
# shellcheck source=../../scripts/replay-capture-lib.sh
source "$here/../../scripts/replay-capture-lib.sh"
capture_start
began=$SECONDS

# step_writing N STATE: a step whose iostat stream sees writes to tank,
# 4 MiB every half second while it runs. Each file is fsynced: zfs-fuse
# gets no sync(2) through FUSE, and would hold the data until the next
# transaction group, after the stream.
step_writing() {
	step_commands "$@"
	(for i in $(seq 8); do
		dd if=/dev/urandom of="$work/tank/step$1-$i" bs=1M count=4 conv=fsync status=none
		sleep 0.5
	done) &
	step_stream "$1"
	wait $!
}

# shows TEXT: whether zpool status of tank shows TEXT now.
shows() { [[ $(zpool status tank) == *"$1"* ]]; }

# status_of N: the zpool status that step N captured.
status_of() { sed '1,/^# ---$/d' "$out/$(printf '%03d' "$1")/zpool_status.txt"; }

# progress N: the resilver's percentage done, as step N captured it.
progress() { status_of "$1" | sed -n 's/.* \([0-9.]*\)% done.*/\1/p'; }

fail() {
	echo "$0: $*" >&2
	exit 1
}

zpool create -m "$work/tank" tank raidz1 "$(disk disk1 4G)" "$(disk disk2 4G)" "$(disk disk3 4G)" 2>/dev/null
# A resilver copies block by block: with 4 KiB records, 2 GiB of data keep
# zfs-fuse resilvering for several seconds (with the default 128 KiB
# records it is done within a second).
zfs set recordsize=4K tank
write "$work/tank/data" "$data_mib"

step_writing 0 "tank ONLINE, data being written"

# The disk dies: its file loses every block. A scrub finds its label gone,
# and ZFS stops using it; the pool goes on with the other two.
truncate -s 0 "$work/disk2"
zpool scrub tank
for _ in $(seq 100); do shows 'scrub in progress' || break; sleep 0.2; done
step_writing 1 "tank DEGRADED: disk2 lost all its data, a scrub found it unusable; tank keeps serving writes"
[[ $(status_of 1) == *'state: DEGRADED'* ]] || fail "tank is not DEGRADED after the scrub: $(status_of 1)"

# A new disk replaces it. zfs-fuse's zpool replace returns when the
# resilver ends. A step is taken as the resilver passes each mark, however
# long a step takes to record on a busy machine; each step's iostat stream
# runs on in the background while the next steps are taken.
disk disk4 4G >/dev/null
resilver_began=$SECONDS
zpool replace tank "$work/disk2" "$work/disk4" 2>/dev/null &
replace=$!
for _ in $(seq 100); do shows 'resilver in progress' && break; sleep 0.1; done
marks=(5 25 45 65 85)
n=2 streams=()
# One zpool status a poll, read without forking: the sooner a mark is
# seen, the closer to it its step.
while status=$(zpool status tank) && [[ $status == *'resilver in progress'* ]]; do
	if ((n - 2 < ${#marks[@]})) && [[ $status =~ \ ([0-9]+)(\.[0-9]+)?%\ done ]] && ((BASH_REMATCH[1] >= marks[n - 2])); then
		step_commands $n "tank DEGRADED: disk4 replacing disk2, resilver in progress"
		at=$(progress $n)
		if [ -z "$at" ]; then
			rm -rf "${out:?}/$(printf '%03d' $n)" # it ended between the check and the capture
			break
		fi
		echo "tank DEGRADED: disk4 replacing disk2, resilver $at% done" >"$out/$(printf '%03d' $n)/STATE"
		step_stream $n &
		streams+=($!)
		n=$((n + 1))
	fi
	sleep 0.1
done
wait $replace || fail "zpool replace failed"
resilver_seconds=$((SECONDS - resilver_began))
wait "${streams[@]}"
((n >= 5)) || fail "only $((n - 2)) steps of the resilver were captured; write more data (DEMO_DATA_MIB)"
for _ in $(seq 50); do
	shows replacing || break
	sleep 0.2
done

step_writing $n "tank ONLINE: disk4 resilvered, disk2 detached"
[[ $(status_of $n) == *'resilver completed'* ]] || fail "no completed resilver in the last step: $(status_of $n)"
echo "$0: $((n + 1)) steps in $out; the resilver took about $resilver_seconds s, the capture $((SECONDS - began)) s"
