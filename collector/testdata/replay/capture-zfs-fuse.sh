#!/usr/bin/env bash
# Records, from real zfs-fuse pools, every zpool command the exporter runs,
# as a replay directory (see the README's "Replay format"): one numbered
# step per pool state, each capture headed by its command, exit status and
# stderr. Needs root and a running zfs-fuse daemon.
#
#   collector/testdata/replay/capture-zfs-fuse.sh collector/testdata/replay/zfs-fuse
set -euo pipefail
out=${1:?usage: $0 OUTPUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# A fixed directory keeps the vdev paths in the captures stable.
work=/var/tmp/zfs-fuse-replay
pools=(backup tank) # in the order zpool status prints them
cleanup() {
	for p in "${pools[@]}"; do
		for _ in 1 2 3 4 5; do zpool destroy -f "$p" 2>/dev/null && break; zpool list "$p" &>/dev/null || break; sleep 1; done
	done
	rm -rf "$work"
}
trap cleanup EXIT
rm -rf "$work" && mkdir -p "$work"

# record DIR NOTE COMMAND...: runs the command, keeps stdout, stderr, exit.
record() {
	local dir=$1 note=$2
	shift 2
	local name status=0
	name=$(printf '%s' "$*" | sed 's/ /_/g; s#/#%2F#g').txt
	local stdout stderr
	stdout=$(mktemp) stderr=$(mktemp)
	"$@" >"$stdout" 2>"$stderr" || status=$?
	{
		echo "# command: $*"
		[ -n "$note" ] && echo "# notes: $note"
		echo "# exit: $status"
		while IFS= read -r line; do echo "# stderr: $line"; done <"$stderr"
		echo "# ---"
		cat "$stdout"
	} >"$dir/$name"
	rm -f "$stdout" "$stderr"
}

# step N: records the commands the exporter runs against the current state.
step() {
	local dir
	dir="$out/$(printf '%03d' "$1")"
	rm -rf "$dir" && mkdir -p "$dir"
	echo "$2" >"$dir/STATE"
	for args in "status -j --json-int" "status -s -p" "status -p" "status" "get -Hp all" "get -H all" \
		"get all ${pools[*]}" "iostat -v -p"; do
		# shellcheck disable=SC2086
		record "$dir" "" zpool $args
	done
	for p in "${pools[@]}"; do record "$dir" "" zpool get -Hp all "$p" all-vdevs; done
	# The sampler's stream runs forever; four reports of it are kept.
	{
		echo "# command: zpool iostat -v 1"
		echo "# notes: stopped after 4.5 s (four reports)"
		echo "# exit: 0"
		echo "# ---"
		timeout 4.5 zpool iostat -v 1 || true
	} >"$dir/zpool_iostat_-v_1.txt"
}

disk() { truncate -s 128M "$work/$1"; echo "$work/$1"; }
write() { dd if=/dev/urandom of="$1" bs=1M count="$2" status=none; sync; }

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
