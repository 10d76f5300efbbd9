#!/usr/bin/env bash
# Runs the whole test suite: gofmt, go vet, staticcheck, the unit tests, and
# the end-to-end tests against real zfs-fuse pools with promtool checking the
# exposition. Run it as root on Debian: it installs zfs-fuse and prometheus
# (for promtool) when missing, starts the zfs-fuse daemon when none runs,
# and stops the daemon again if it started it.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v zfs-fuse >/dev/null || missing+=(zfs-fuse)
command -v promtool >/dev/null || missing+=(prometheus)
if ((${#missing[@]})); then
	if [ "$(id -u)" != 0 ]; then
		echo "test-all: ${missing[*]} missing; run as root to install them, or the tests that need them skip" >&2
	else
		apt-get update -q
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
			-o DPkg::Lock::Timeout=300 "${missing[@]}"
	fi
fi

pidfile=/run/zpool-exporter-test-zfs-fuse.pid
started=""
# The daemon counts as running when zpool can talk to it (a pgrep would also
# match a zombie left behind by an earlier daemon).
stop_zfs_fuse() {
	if [ -n "$started" ] && [ -f "$pidfile" ]; then
		kill "$(cat "$pidfile")" 2>/dev/null || true
		for _ in $(seq 50); do zpool list >/dev/null 2>&1 || break; sleep 0.2; done
		rm -f "$pidfile"
	fi
}
trap stop_zfs_fuse EXIT
if [ "$(id -u)" = 0 ] && command -v zfs-fuse >/dev/null && ! zpool list >/dev/null 2>&1; then
	# A daemon that was just stopped may still hold zfs-fuse's lock for a
	# moment: a new one then exits at once, so try again.
	for _ in $(seq 10); do zfs-fuse --pidfile "$pidfile" && break; sleep 1; done
	started=1
	for _ in $(seq 50); do zpool list >/dev/null 2>&1 && break; sleep 0.2; done
	zpool list >/dev/null 2>&1 || { echo "test-all: zfs-fuse did not start" >&2; exit 1; }
fi

make check cross
go test -count=1 -timeout 30m ./...
