#!/usr/bin/env bash
# Captures zfs outputs about datasets from a real zfs-fuse pool into this
# directory. Needs root and a running zfs-fuse daemon (zfs-fuse --pidfile
# FILE). Every file is headed by the exact command and the scenario, then
# "# ---"; what a command prints on stderr goes to a .stderr.txt beside it.
# The pool is file-backed and destroyed at the end.
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
	local scenario=$1 slug=$2
	shift 2
	local head="# command: $*"$'\n'"# scenario: $scenario"$'\n'"# ---"
	echo "$head" >"$out/${scenario}__${slug}.txt"
	if ! "$@" >>"$out/${scenario}__${slug}.txt" 2>"$work/stderr"; then
		{ echo "$head"; cat "$work/stderr"; } >"$out/${scenario}__${slug}.stderr.txt"
		rm "$out/${scenario}__${slug}.txt"
	fi
}
fill() { dd if=/dev/urandom of="$1" bs=1M count="$2" status=none; sync; }

# Every property a dataset collector could want, in the order it would
# ask; zfs-fuse knows some of them.
all=name,type,used,available,referenced,logicalused,logicalreferenced,written,usedbydataset,usedbychildren,usedbysnapshots,usedbyrefreservation,quota,refquota,reservation,refreservation,volsize,compressratio,encryption,keystatus,mounted,compression,recordsize,volblocksize,atime,sync,dedup,primarycache,origin,mountpoint
known=name,type,used,available,referenced,usedbydataset,usedbychildren,usedbysnapshots,usedbyrefreservation,quota,refquota,reservation,refreservation,volsize,compressratio,mounted,compression,recordsize,volblocksize,atime,dedup,primarycache,origin,mountpoint

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

capture datasets list-p zfs list -Hp -o "$known"
capture datasets list-H zfs list -H -o "$known" -t filesystem,volume
capture datasets get-all-props zfs get -Hp -o name,property,value "$all"
capture datasets get-Hp zfs get -Hp -o name,property,value "${known#name,}"
capture datasets get-snapshots zfs get -Hp -o name,property,value type,creation,used
