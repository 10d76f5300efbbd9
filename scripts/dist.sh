#!/usr/bin/env bash
# Builds the release tarballs: for each platform, statically linked
# binaries, zpool_exporter and zpool_bench (CGO off, -trimpath), stamped
# with the version, next to the README and the LICENSE,
# the install guide (docs/install.md), the deploy/ configurations and the generated dashboards and rules, as
# DIST_DIR/zpool_exporter-VERSION.OS-ARCH.tar.gz; for each Linux platform,
# when PACKAGES asks for them, the same binaries as a .deb and an .rpm
# (packaging/, with nfpm) with the systemd unit, its environment file, man
# pages, the dashboards and rules; and DIST_DIR/sha256sums.txt of them all.
#
#   scripts/dist.sh            the tarballs, and the packages (make dist)
#   scripts/dist.sh ldflags    the -ldflags that stamp the version (make build)
#
# Environment, each with a default:
#   VERSION            git describe --tags --always --dirty
#   REVISION           git rev-parse HEAD
#   BRANCH             the current git branch
#   BUILD_USER         user@host
#   SOURCE_DATE_EPOCH  the time of the last commit: the build date, and the
#                      time of every file in the tarballs
#   BUILD_DATE         SOURCE_DATE_EPOCH as YYYYMMDD-HH:MM:SS, UTC
#   PLATFORMS          the Makefile's PLATFORMS (OS/ARCH, space separated)
#   DIST_DIR           dist
#   GO                 go
#   PACKAGES           the package formats for each Linux platform, "deb rpm"
#                      as make dist sets it; none unless set
#   MAINTAINER         the packages' maintainer, Name <address>
#   PACKAGE_LICENSE    the SPDX license expression of the .rpm's License tag,
#                      Apache-2.0 (LICENSE)
#
# Two runs on one commit with the same BUILD_USER give identical tarballs
# and packages.
# Needs GNU tar and GNU date.
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
VERSION=${VERSION:-$(git describe --tags --always --dirty 2>/dev/null || echo unknown)}
REVISION=${REVISION:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
BRANCH=${BRANCH:-$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)}
BUILD_USER=${BUILD_USER:-$(id -un)@$(hostname)}
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
BUILD_DATE=${BUILD_DATE:-$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d-%H:%M:%S)}
PLATFORMS=${PLATFORMS:-$(sed -n 's/^PLATFORMS *?= *//p' Makefile)}
DIST_DIR=${DIST_DIR:-dist}
PACKAGES=${PACKAGES:-}
MAINTAINER=${MAINTAINER:-zpool_exporter developers <zpool-exporter@users.noreply.github.com>}
PACKAGE_LICENSE=${PACKAGE_LICENSE:-Apache-2.0}
# The exporter, and the benchmark runner that works with it.
BINARIES="zpool_exporter zpool_bench"

ldflags() {
	local pkg=github.com/prometheus/common/version kv flags=""
	for kv in "Version=$VERSION" "Revision=$REVISION" "Branch=$BRANCH" "BuildUser=$BUILD_USER" "BuildDate=$BUILD_DATE"; do
		# go build splits -ldflags at spaces and takes quotes as quoting.
		if [[ $kv =~ [[:space:]\'\"] ]]; then
			echo "dist: ${kv%%=*} must hold no spaces or quotes: ${kv#*=}" >&2
			return 1
		fi
		flags+="${flags:+ }-X $pkg.$kv"
	done
	printf '%s\n' "$flags"
}

case "${1:-}" in
ldflags)
	ldflags
	exit
	;;
"") ;;
*)
	echo "usage: $0 [ldflags]" >&2
	exit 2
	;;
esac

flags=$(ldflags)
[ -n "$PLATFORMS" ] || { echo "dist: no PLATFORMS" >&2; exit 1; }
mkdir -p "$DIST_DIR"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# The packages' man pages come from the binaries' --help-man, which runs
# only on this machine's platform; the packager is built once.
if [ -n "$PACKAGES" ] && [[ " $PLATFORMS " == *" linux/"* ]]; then
	for bin in $BINARIES; do
		CGO_ENABLED=0 "$GO" build -trimpath -buildvcs=false -ldflags "$flags" -o "$stage/host/$bin" "./cmd/$bin"
	done
	"$GO" build -C packaging -trimpath -o "$stage/packaging" .
fi

artifacts=()
for platform in $PLATFORMS; do
	os=${platform%/*} arch=${platform#*/}
	name=zpool_exporter-$VERSION.$os-$arch
	dir=$stage/$name
	echo "dist: $name"
	mkdir -p "$dir/dashboards"
	for bin in $BINARIES; do
		GOOS=$os GOARCH=$arch CGO_ENABLED=0 "$GO" build -trimpath -buildvcs=false -ldflags "$flags" \
			-o "$dir/$bin" "./cmd/$bin"
	done
	cp README.md LICENSE "$dir/"
	mkdir -p "$dir/docs" && cp docs/install.md "$dir/docs/"
	cp -R dashboards/out "$dir/dashboards/"
	if [ -d deploy ]; then cp -R deploy "$dir/"; fi
	# Fixed order, times, owners and modes, and no time in the gzip
	# header: the tarball depends only on its contents.
	tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
		--mode='u+rw,go+rX,go-w' --format=gnu -C "$stage" -cf - "$name" | gzip -9n >"$DIST_DIR/$name.tar.gz"
	artifacts+=("$name.tar.gz")
	if [ -n "$PACKAGES" ] && [ "$os" = linux ]; then
		packages=$("$stage/packaging" -formats "$PACKAGES" -version "$VERSION" -revision "$REVISION" -date "$SOURCE_DATE_EPOCH" \
			-arch "$arch" -binaries "$dir" -host-binaries "$stage/host" -out "$DIST_DIR" \
			-maintainer "$MAINTAINER" -license "$PACKAGE_LICENSE" -build-host "${BUILD_USER#*@}" \
			-modcache "$("$GO" env GOMODCACHE)" -goroot "$("$GO" env GOROOT)")
		for p in $packages; do
			echo "dist: $p"
			artifacts+=("${p##*/}")
		done
	fi
done
(cd "$DIST_DIR" && sha256sum -- "${artifacts[@]}" >sha256sums.txt)
echo "dist: $DIST_DIR/sha256sums.txt"
