#!/usr/bin/env bash
# Builds a Debian guest with a real OpenZFS kernel module for the qemu test
# bed: a kernel, its initrd and an ext4 root image. Everything ZFS goes into a
# chroot that becomes the guest's root filesystem, never onto the host (the
# host's zfs-fuse conflicts with zfsutils-linux).
#
# usage: build-image.sh [--zfs 2.4|2.3|2.3-trixie|2.1] [--out DIR]
#
# The image lands in /var/cache/zpool-exporter/testbed/zfs-<version>-<hash>,
# where the hash covers this script and its inputs; an image that is already
# complete there is reused at once. The last line of stdout is the image
# directory; progress and step timings go to stderr. Needs root, debootstrap
# and e2fsprogs.
set -euo pipefail

readonly label=zpe-root
readonly image_size=4G
# A fixed hostid, so pools written by one run import cleanly in the next.
readonly hostid=5a504531
readonly cache_root=/var/cache/zpool-exporter/testbed

base_packages=(systemd systemd-sysv udev kmod procps util-linux e2fsprogs sysstat)
kernel_packages=(linux-image-amd64 linux-headers-amd64)
zfs_packages=(zfs-dkms zfsutils-linux zfs-zed)

usage() {
	echo "usage: $0 [--zfs 2.4|2.3|2.3-trixie|2.1] [--out DIR]" >&2
	exit 2
}

log() { echo "build-image: $*" >&2; }

die() {
	log "$*"
	exit 1
}

zfs_version=2.3
out=""
while (($#)); do
	case $1 in
	--zfs)
		[ $# -ge 2 ] || usage
		zfs_version=$2
		shift 2
		;;
	--out)
		[ $# -ge 2 ] || usage
		out=$2
		shift 2
		;;
	-h | --help) usage ;;
	*) usage ;;
	esac
done

# Each version is a Debian release and the suite its OpenZFS comes from;
# zfs_release is what zfsutils-linux's version must start with, since a
# suite can move on (trixie-backports also still holds 2.3.5's zfs-dkms).
case $zfs_version in
2.4) suite=trixie zfs_suite=trixie-backports zfs_release=2.4 ;;
2.3) suite=bookworm zfs_suite=bookworm-backports zfs_release=2.3 ;;
2.3-trixie) suite=trixie zfs_suite=trixie zfs_release=2.3 ;;
2.1) suite=bookworm zfs_suite=bookworm zfs_release=2.1 ;;
*) die "unsupported --zfs $zfs_version (want 2.4, 2.3, 2.3-trixie or 2.1)" ;;
esac

[ "$(id -u)" = 0 ] || die "must run as root (debootstrap, chroot, mounts)"
for tool in debootstrap mkfs.ext4 chroot findmnt; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install debootstrap e2fsprogs)"
done

self=$(readlink -f "${BASH_SOURCE[0]}")
hash=$({
	sha256sum <"$self"
	printf 'zfs=%s\nzfs_suite=%s\nsuite=%s\n' "$zfs_version" "$zfs_suite" "$suite"
	printf 'packages=%s\n' "${base_packages[*]} ${kernel_packages[*]} ${zfs_packages[*]}"
} | sha256sum | cut -c1-16)
out=${out:-$cache_root/zfs-$zfs_version-$hash}

image_complete() {
	[ -s "$out/vmlinuz" ] && [ -s "$out/initrd.img" ] && [ -s "$out/root.img" ] &&
		grep -qx "hash=$hash" "$out/INPUTS" 2>/dev/null
}

mkdir -p "$out"
out=$(readlink -f "$out")
# One build per output directory at a time; a second caller waits and then
# reuses what the first one built.
exec 9>"$out.lock"
flock 9
if image_complete; then
	log "reusing $out"
	echo "$out"
	exit 0
fi
# INPUTS is written last, so its absence marks a half-built directory.
rm -f "$out/INPUTS"

# Prints the archive URI that the host's own apt uses for a suite, so the
# guest is built from the same mirror as the host without naming one here.
host_archive_uri() {
	local want=$1 f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -e "$f" ] || continue
		awk -v want="$want" '
			function flush() {
				if (uri != "" && (suites " ") ~ (" " want " ") && (types " ") ~ / deb /) { print uri; uri = ""; exit }
				uri = suites = types = ""
			}
			/^[[:space:]]*$/ { flush(); next }
			/^[[:space:]]*#/ { next }
			tolower($1) == "uris:" { uri = $2 }
			tolower($1) == "suites:" { $1 = ""; suites = $0 }
			tolower($1) == "types:" { $1 = ""; types = $0 }
			END { flush() }
		' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -e "$f" ] || continue
		awk -v want="$want" '
			$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
				if ($(i + 1) == want) { print $i; exit }
			}
		' "$f"
	done
}

first_line() { printf '%s\n' "$1" | sed -n 1p; }

# A guest of another release than the host's comes from the archive that
# serves the host's own release.
host_suite=$( (. /etc/os-release && echo "${VERSION_CODENAME:-}"))
mirror=$(first_line "$(host_archive_uri "$suite")")
[ -n "$mirror" ] || mirror=$(first_line "$(host_archive_uri "$host_suite")")
[ -n "$mirror" ] || die "no apt source for $suite or $host_suite on the host (/etc/apt/sources.list.d/*.sources or sources.list)"
security_mirror=$(first_line "$(host_archive_uri "$suite-security")")
[ -n "$security_mirror" ] || security_mirror=$(first_line "$(host_archive_uri "$host_suite-security")")

work=$(mktemp -d "$(dirname "$out")/.build-XXXXXX")
root=$work/root
buildlog=$work/build.log

# Unmounts everything below the chroot, deepest first.
unmount_chroot() {
	local mnt
	[ -d "$root" ] || return 0
	findmnt -rn -o TARGET | awk -v r="$root" 'index($0, r "/") == 1' | sort -r |
		while read -r mnt; do
			umount "$mnt" 2>/dev/null || umount -l "$mnt"
		done
}

cleanup() {
	local rc=$?
	unmount_chroot || true
	# The log stays beside the image, for a look after a failed build.
	cp "$buildlog" "$out/build.log" 2>/dev/null || true
	if ((rc != 0)) && [ -s "$buildlog" ]; then
		log "failed; last lines of the build log:"
		tail -n 40 "$buildlog" >&2
	fi
	# Never delete while something is still mounted in the chroot: a bound
	# /dev would take the host's device nodes with it.
	if findmnt -rn -o TARGET | awk -v r="$root" 'index($0, r "/") == 1 { found = 1 } END { exit !found }'; then
		log "mounts remain below $root; leaving $work in place"
	else
		rm -rf --one-file-system "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Runs a named step with its output in the build log and logs its duration.
step() {
	local name=$1 start=$SECONDS
	shift
	log "$name ..."
	echo "=== $name" >>"$buildlog"
	"$@" >>"$buildlog" 2>&1
	log "$name: $((SECONDS - start)) s"
}

in_chroot() {
	chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

apt_in_chroot() {
	in_chroot apt-get -y -q -o DPkg::Lock::Timeout=300 -o Acquire::Retries=3 "$@"
}

mount_chroot() {
	mount -t proc proc "$root/proc"
	mount -t sysfs sysfs "$root/sys"
	mount --bind /dev "$root/dev"
	mount --bind /dev/pts "$root/dev/pts"
}

bootstrap() {
	local include
	include=$(
		IFS=,
		echo "${base_packages[*]}"
	)
	debootstrap --variant=minbase --include="$include" "$suite" "$root" "$mirror"
}

configure_apt() {
	rm -f "$root/etc/apt/sources.list"
	{
		printf 'Types: deb\nURIs: %s\nSuites: %s %s-updates %s-backports\n' "$mirror" "$suite" "$suite" "$suite"
		printf 'Components: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
		if [ -n "$security_mirror" ]; then
			printf '\nTypes: deb\nURIs: %s\nSuites: %s-security\n' "$security_mirror" "$suite"
			printf 'Components: main contrib\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
		fi
	} >"$root/etc/apt/sources.list.d/debian.sources"
	# Services must not start inside the chroot.
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	apt_in_chroot update
}

install_kernel() {
	apt_in_chroot install --no-install-recommends "${kernel_packages[@]}"
}

guest_kernel_version() {
	local v
	v=$(find "$root/boot" -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sort -V | tail -n 1)
	v=${v#vmlinuz-}
	[ -n "$v" ] || die "no kernel in $root/boot"
	echo "$v"
}

# DKMS builds the module for the guest's kernel inside the chroot; the
# host's own kernel has no headers there, which DKMS only warns about.
install_zfs() {
	local target=()
	[ "$zfs_suite" = "$suite" ] || target=(-t "$zfs_suite")
	apt_in_chroot install --no-install-recommends "${target[@]}" "${zfs_packages[@]}"
	local installed
	# shellcheck disable=SC2016 # expanded by dpkg-query
	installed=$(in_chroot dpkg-query -W -f='${Version}' zfsutils-linux)
	case $installed in
	"$zfs_release".*) ;;
	*) die "$zfs_suite gave zfsutils-linux $installed, not OpenZFS $zfs_release" ;;
	esac
	if ! find "$root/lib/modules/$kver" -name 'zfs.ko*' | grep -q .; then
		in_chroot dkms autoinstall -k "$kver"
	fi
	find "$root/lib/modules/$kver" -name 'zfs.ko*' | grep -q . ||
		die "DKMS built no zfs module for $kver"
}

# zinject lives in zfs-test, which pulls in a whole test suite; the binary
# alone is all the test bed needs. Same version as zfsutils-linux, so it
# links against the libraries already installed.
install_zinject() {
	local version tmp deb bin
	# shellcheck disable=SC2016 # expanded by dpkg-query or the inner sh
	version=$(in_chroot dpkg-query -W -f='${Version}' zfsutils-linux)
	tmp=$(mktemp -d "$root/tmp/zfs-test.XXXXXX")
	# shellcheck disable=SC2016 # expanded by dpkg-query or the inner sh
	in_chroot sh -c 'cd "$1" && apt-get download -q "$2"' sh "${tmp#"$root"}" "zfs-test=$version"
	deb=$(find "$tmp" -maxdepth 1 -name 'zfs-test_*.deb' | sed -n 1p)
	[ -n "$deb" ] || die "apt-get download zfs-test=$version produced no package"
	dpkg-deb -x "$deb" "$tmp/x"
	bin=$(find "$tmp/x" -name zinject -type f | sed -n 1p)
	[ -n "$bin" ] || die "no zinject in $deb"
	install -m 755 "$bin" "$root/usr/local/sbin/zinject"
	rm -rf "$tmp"
	if in_chroot ldd /usr/local/sbin/zinject | grep 'not found'; then
		die "zinject misses libraries"
	fi
}

# The guest unit: with zpe.job=1 on the kernel command line it runs the job
# from the host's 9p share and powers off whatever happens.
write_job_unit() {
	cat >"$root/usr/local/sbin/zpe-job" <<'EOF'
#!/bin/bash
# Runs /job/run.sh from the host's virtio-9p share, its output to /job/log
# and its exit status to /job/exit. The unit powers off afterwards.
set -uo pipefail
echo "zpe-job: start at uptime $(cut -d' ' -f1 /proc/uptime) s"
modprobe 9p && modprobe 9pnet_virtio || exit 1
mkdir -p /job
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 job /job || exit 1
modprobe zfs
udevadm settle
# zed attaches hot spares and faults vdevs: the jobs rely on it.
systemctl start zfs-zed.service
rc=0
if [ -x /job/run.sh ]; then
	(cd /job && exec /job/run.sh) >/job/log 2>&1 </dev/null || rc=$?
else
	(cd /job && exec bash /job/run.sh) >/job/log 2>&1 </dev/null || rc=$?
fi
echo "$rc" >/job/exit
sync
echo "zpe-job: run.sh exited $rc at uptime $(cut -d' ' -f1 /proc/uptime) s"
umount /job
exit 0
EOF
	chmod 755 "$root/usr/local/sbin/zpe-job"
	cat >"$root/etc/systemd/system/zpe-job.service" <<'EOF'
[Unit]
Description=Run the test bed job shared over virtio-9p, then power off
ConditionKernelCommandLine=zpe.job=1
Wants=systemd-udev-settle.service zfs-zed.service
After=systemd-udev-settle.service local-fs.target zfs.target zfs-zed.service
SuccessAction=poweroff
FailureAction=poweroff

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/zpe-job
TimeoutStartSec=infinity
StandardOutput=journal+console
StandardError=journal+console
Environment=HOME=/root LANG=C.UTF-8

[Install]
WantedBy=multi-user.target
EOF
}

configure_guest() {
	echo zpe-guest >"$root/etc/hostname"
	printf '127.0.0.1\tlocalhost\n127.0.1.1\tzpe-guest\n' >"$root/etc/hosts"
	printf 'LABEL=%s\t/\text4\tdefaults,errors=remount-ro\t0\t0\n' "$label" >"$root/etc/fstab"
	# Loaded early, so zed's condition on /sys/module/zfs holds at boot.
	echo zfs >"$root/etc/modules-load.d/zfs.conf"
	rm -f "$root/etc/hostid"
	in_chroot zgenhostid -f "$hostid"
	write_job_unit
	in_chroot systemctl enable zpe-job.service zfs-zed.service
	# Timers that only cost CPU in an emulated guest without network.
	in_chroot systemctl mask apt-daily.timer apt-daily-upgrade.timer \
		e2scrub_all.timer fstrim.timer systemd-timesyncd.service
	rm -f "$root/usr/sbin/policy-rc.d"
	apt_in_chroot clean
	rm -rf "$root/var/lib/apt/lists/"* "$root/tmp/"*
}

make_image() {
	rm -f "$out/root.img"
	truncate -s "$image_size" "$out/root.img"
	mkfs.ext4 -q -F -L "$label" -d "$root" "$out/root.img"
	cp "$root/boot/vmlinuz-$kver" "$out/vmlinuz"
	cp "$root/boot/initrd.img-$kver" "$out/initrd.img"
}

write_inputs() {
	local versions
	# shellcheck disable=SC2016 # expanded by dpkg-query or the inner sh
	versions=$(in_chroot dpkg-query -W -f='${Package}=${Version}\n' \
		zfs-dkms zfsutils-linux zfs-zed "linux-image-$kver" systemd)
	{
		echo "hash=$hash"
		echo "zfs=$zfs_version"
		echo "zfs_suite=$zfs_suite"
		echo "suite=$suite"
		echo "packages=${base_packages[*]} ${kernel_packages[*]} ${zfs_packages[*]}"
		echo "kernel=$kver"
		echo "label=$label"
		echo "hostid=$hostid"
		echo "mirror=$mirror"
		echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
		echo "$versions"
	} >"$out/INPUTS.tmp"
	mv "$out/INPUTS.tmp" "$out/INPUTS"
}

total_start=$SECONDS
log "building OpenZFS $zfs_version ($zfs_suite) on $suite from $mirror into $out"
step debootstrap bootstrap
mount_chroot
step "apt sources" configure_apt
step kernel install_kernel
kver=$(guest_kernel_version)
log "guest kernel $kver"
step "zfs (dkms)" install_zfs
step zinject install_zinject
step "configure guest" configure_guest
unmount_chroot
step mkfs make_image
# INPUTS lists the package versions from the chroot, which cleanup removes.
write_inputs
log "image: $(du -h --apparent-size "$out/root.img" | cut -f1) apparent, $(du -h "$out/root.img" | cut -f1) used"
log "total: $((SECONDS - total_start)) s"
echo "$out"
