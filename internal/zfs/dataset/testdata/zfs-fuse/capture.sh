#!/usr/bin/env bash
# Captures zfs outputs about datasets from a real zfs-fuse pool into this
# directory. Needs root and a running zfs-fuse daemon (zfs-fuse --pidfile
# FILE). Every file is headed by the exact command and the scenario, and
# for a command that failed its exit status and stderr, then "# ---"; the
# directory replays as it is (internal/runner/REPLAY.md). The pool is
# file-backed and destroyed at the end.
set -euo pipefail
out=$(cd "$(dirname "$0")" && pwd)
work=/var/tmp/zfs-fuse-datasets
pool=cds
rm -rf "$work" && mkdir -p "$work"
cleanup() {
	for _ in 1 2 3 4 5; do zpool destroy -f "$pool" 2>/dev/null && break; zpool list "$pool" &>/dev/null || break; sleep 1; done
	rm -rf "$work"
}
trap cleanup EXIT

capture() { # scenario slug command...
	local scenario=$1 slug=$2 rc=0
	shift 2
	"$@" >"$work/stdout" 2>"$work/stderr" || rc=$?
	{
		echo "# command: $*"
		echo "# scenario: $scenario"
		if [ "$rc" -ne 0 ]; then
			echo "# exit: $rc"
			sed 's/^/# stderr: /' "$work/stderr"
		fi
		echo "# ---"
		cat "$work/stdout"
	} >"$out/${scenario}__${slug}.txt"
}
fill() { dd if=/dev/urandom of="$1" bs=1M count="$2" status=none; sync; }

# Every property the dataset listing asks for, in its order
# (internal/zfs/datasets.go).
props=type,used,available,referenced,logicalused,logicalreferenced,written,usedbydataset,usedbychildren,usedbysnapshots,usedbyrefreservation,quota,refquota,reservation,refreservation,volsize,compressratio,encryption,keystatus,mounted,canmount,compression,recordsize,volblocksize,atime,sync,dedup,primarycache,origin,mountpoint

truncate -s 256M "$work/d1"
zpool create "$pool" "$work/d1" 2>/dev/null
zfs create -o compression=off "$pool/plain"
zfs create -o compression=gzip "$pool/gzip"
zfs create -o quota=64M -o refquota=32M "$pool/quota"
zfs create -o reservation=16M -o refreservation=8M "$pool/reserved"
zfs create -p -o atime=off "$pool/nested/child"
# zfs-fuse makes no volumes ("internal error: Function not implemented"):
# the OpenZFS guest's captures have them.
fill "/$pool/plain/data" 8
# Text compresses; random bytes do not.
{ yes 'zpool_exporter dataset capture' || true; } | head -c 8M >"/$pool/gzip/text"
fill "/$pool/quota/data" 20
zfs snapshot "$pool/plain@first"
sleep 2
fill "/$pool/plain/more" 4
zfs snapshot "$pool/plain@second"
zfs snapshot -r "$pool/nested@all"
zfs clone "$pool/plain@first" "$pool/clone"
sync

# What the exporter runs to learn what this zfs takes: list -p first,
# then get, leaving out each property zfs refuses, one per run.
capture datasets list-p zfs list -Hp -t filesystem,volume -o "name,$props"
step=0
while :; do
	capture datasets "get-$step" zfs get -Hp -o name,property,value "$props"
	bad=$(sed -n "s/^# stderr: bad property list: invalid property '\(.*\)'$/\1/p" "$out/datasets__get-$step.txt")
	[ -n "$bad" ] || break
	props=$(echo ",$props," | sed "s/,$bad,/,/; s/^,//; s/,$//")
	step=$((step + 1))
done
mv "$out/datasets__get-$step.txt" "$out/datasets__get-Hp.txt"
# The same figures rounded, as zfs list prints them, for the tests.
capture datasets list-H zfs list -H -t filesystem,volume -o "name,$props"
# The snapshot listing: zfs list -p is refused again, zfs get answers
# with every dataset and snapshot.
capture datasets snapshots-list-p zfs list -Hp -t snapshot -o name,creation,used,referenced
capture datasets snapshots-get-Hp zfs get -Hp -o name,property,value creation,used,referenced
