#!/usr/bin/env bash
# Runs the whole test suite: gofmt, go vet, staticcheck, the unit tests, the
# end-to-end tests against real zfs-fuse pools (promtool checking the
# exposition; Prometheus running every dashboard query and recording rule,
# and alerts of real faults reaching a webhook through Alertmanager), the
# dashboards and rules, the status page in headless Chromium, the compose
# file and deployment configs, and the walk on real OpenZFS 2.4 and 2.3 in a
# qemu guest. Run it as root on Debian: it installs the packages of
# scripts/test-packages.txt whose commands are missing (zfs-fuse,
# prometheus, prometheus-alertmanager, chromium, libxml2-utils, and for the
# OpenZFS guest qemu-system-x86, debootstrap and e2fsprogs...), starts the zfs-fuse daemon when none runs, and stops the
# daemon again if it started it. ZPE_OPENZFS chooses the OpenZFS versions of
# the walk (2.4,2.3 unless set; "none" leaves the walk out).
set -euo pipefail
cd "$(dirname "$0")/.."

# A package is missing when one of its commands is; one that lists no
# command, when dpkg does not have it installed.
missing=()
while read -r pkg commands; do
	[[ -z $pkg || $pkg == \#* ]] && continue
	if [ -z "$commands" ]; then
		[ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" = installed ] || missing+=("$pkg")
		continue
	fi
	for cmd in $commands; do
		command -v "$cmd" >/dev/null || { missing+=("$pkg"); break; }
	done
done <scripts/test-packages.txt
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
		# zfs-fuse's zpool aborts when the daemon goes away under it; the
		# subshell keeps bash's "Aborted" report out of the log.
		for _ in $(seq 50); do (zpool list >/dev/null 2>&1; exit $?) 2>/dev/null || break; sleep 0.2; done
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

# The OpenZFS guests' images take minutes each to build on a new machine
# (a download, then a kernel module compiled): they build in the
# background, in a process group of their own (set -m), while the Go
# suites below run, which wait on servers and the network much of the
# time. A cached image is reused at once.
versions=${ZPE_OPENZFS:-2.4,2.3}
images_pid=""
images_log=$(mktemp)
if [ "$versions" != none ] && [ "$(id -u)" = 0 ] && command -v debootstrap >/dev/null && command -v qemu-system-x86_64 >/dev/null; then
	set -m
	(for v in ${versions//,/ }; do bash testbed/openzfs/build-image.sh --zfs "$v" >/dev/null || exit; done) >"$images_log" 2>&1 &
	images_pid=$!
	set +m
fi
stop_image_builds() {
	[ -n "$images_pid" ] && kill -- -"$images_pid" 2>/dev/null || true
}
trap 'stop_image_builds; stop_zfs_fuse' EXIT

make check cross
go test -count=1 -timeout 30m ./...
# The dashboards and rules, a module of their own (promtool checks them).
(cd dashboards && go test -count=1 -timeout 10m ./...)
# The status page in headless Chromium, the deployment files checked by
# their tools, native histograms in a real Prometheus 3.16, the Helm chart
# rendered by Helm's library, and the compose demo stack run on a Docker
# engine of the tests' own (its first run makes the base images: a few
# minutes more): a module of their own, for chromedp, compose-go and Helm.
# tests/prometheus3 builds Prometheus 3.16 (and its promtool, for the
# rules' unit tests) with go install into the user's
# cache: built here first, alone (minutes on 2 cores the first time, seconds
# once cached), the test finds it up to date rather than build it beside the
# other packages under the module's timeout. The version is
# tests/internal/prom3's Version.
prom3=${XDG_CACHE_HOME:-$HOME/.cache}/zpool_exporter-tests/prometheus-v0.316.0
(cd "$(mktemp -d)" && GOBIN=$prom3 GOWORK=off GOFLAGS=-buildvcs=false \
	go install github.com/prometheus/prometheus/cmd/prometheus@v0.316.0 \
	github.com/prometheus/prometheus/cmd/promtool@v0.316.0)
(cd tests && go test -count=1 -timeout 20m ./...)
# make dist's packager: a module of its own, for nfpm (its packages are
# checked by tests/packages above).
(cd packaging && go test -count=1 ./...)

# The OpenZFS guests, their images built above. The first release walks
# every scenario (about 17 minutes). The others leave out what their
# fixtures already hold or what watches the exporter over time rather than
# a form of zpool's output (about 10 minutes): the slow disk, the benchmark
# run, zed's hot spare, the duplicate vdev names, the long operations
# (raidz expansion, removal, checkpoint, TRIM and initialize, read-only
# import) and the wrap of the events queue, whose captures from every
# release are in the testdata. `make testbed` walks every scenario on every
# release.
if [ -n "$images_pid" ]; then
	# A walk builds its image again if this failed, and reports why.
	wait "$images_pid" || { echo "test-all: the guest images did not build in the background:" >&2; tail -n 30 "$images_log" >&2; }
	images_pid=""
fi
if [ "$versions" != none ]; then
	walk() { go test -tags testbed -count=1 -timeout 120m -v -run TestOpenZFSWalk ./testbed/openzfs/; }
	ZPE_OPENZFS=${versions%%,*} walk
	if [[ $versions == *,* ]]; then
		ZPE_OPENZFS=${versions#*,} ZPE_WALK_SKIP='TestWalk/(slow_disk|benchmark_run|hot_spare_attached_by_zed|duplicate_vdev_names|long_operations|events_queue_wraps)$' walk
	fi
fi
