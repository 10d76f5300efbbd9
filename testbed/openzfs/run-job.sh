#!/usr/bin/env bash
# Boots a guest built by build-image.sh, runs JOBDIR/run.sh in it and exits
# with that script's exit status. JOBDIR is shared with the guest over
# virtio-9p as /job; the guest writes /job/log and /job/exit there and powers
# off. The root image opens with snapshot=on, so every run starts from the
# same state, and the data disks are fresh sparse files each time.
#
# usage: run-job.sh --image DIR --job DIR [--disks N] [--disk-size SIZE]
#                   [--disk-opt NAME:OPTS]... [--timeout SECONDS] [--accel tcg|kvm] [--cpus N]
#
# Data disks appear in the guest as /dev/disk/by-id/virtio-zd01 and so on.
# --disk-opt zd03:throttling.bps-total=2097152 appends qemu -drive options to
# one disk (repeatable). The default accelerator is TCG (ZPE_ACCEL overrides
# it): Debian kernels do not run under this machine's /dev/kvm; use
# --accel kvm on a host with real KVM. The guest's serial console goes to
# JOBDIR/console.log.
set -euo pipefail

log() { echo "run-job: $*" >&2; }

die() {
	log "$*"
	exit 1
}

usage() {
	sed -n 's/^# \{0,1\}//; 8,9p' "${BASH_SOURCE[0]}" >&2
	exit 2
}

image=""
job=""
disks=8
disk_size=1G
timeout=1800
accel=${ZPE_ACCEL:-tcg}
memory=${ZPE_MEMORY:-3072}
cpus=2
declare -A disk_opts=()

while (($#)); do
	[ $# -ge 2 ] || usage
	case $1 in
	--image) image=$2 ;;
	--job) job=$2 ;;
	--disks) disks=$2 ;;
	--disk-size) disk_size=$2 ;;
	--disk-opt)
		[[ $2 == *:* ]] || die "--disk-opt wants NAME:OPTS, got $2"
		name=${2%%:*}
		disk_opts[$name]=${disk_opts[$name]:+${disk_opts[$name]},}${2#*:}
		;;
	--timeout) timeout=$2 ;;
	--accel) accel=$2 ;;
	--cpus) cpus=$2 ;;
	*) usage ;;
	esac
	shift 2
done

if [ -z "$image" ] || [ -z "$job" ]; then usage; fi
# Each disk takes a PCI slot of the 32 on the default machine; the host
# bridge, the ISA bridge, the root disk and the 9p share take four.
if ! [[ $disks =~ ^[0-9]+$ ]] || ((disks > 28)); then die "--disks wants 0 to 28, got $disks"; fi
if ! [[ $timeout =~ ^[1-9][0-9]*$ ]]; then die "--timeout wants seconds, got $timeout"; fi
if ! [[ $cpus =~ ^[1-9][0-9]?$ ]]; then die "--cpus wants 1 to 99, got $cpus"; fi
image=$(readlink -f "$image")
job=$(readlink -f "$job")
for f in vmlinuz initrd.img root.img; do
	[ -s "$image/$f" ] || die "$image/$f missing: build it with build-image.sh"
done
[ -f "$job/run.sh" ] || die "$job/run.sh missing"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found (apt-get install qemu-system-x86)"

case $accel in
tcg) accel_args=(-accel "tcg,thread=multi,tb-size=512" -cpu max) ;;
kvm) accel_args=(-accel kvm -cpu host) ;;
*) die "--accel wants tcg or kvm, got $accel" ;;
esac

label=$(sed -n 's/^label=//p' "$image/INPUTS" 2>/dev/null)
label=${label:-zpe-root}

for name in "${!disk_opts[@]}"; do
	if ! [[ $name =~ ^zd([0-9]{2})$ ]] || ((10#${BASH_REMATCH[1]} < 1 || 10#${BASH_REMATCH[1]} > disks)); then
		die "--disk-opt names $name, but the disks are zd01 to zd$(printf %02d "$disks")"
	fi
done

tmp=$(mktemp -d /var/tmp/zpe-disks.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

drive_args=()
for ((i = 1; i <= disks; i++)); do
	name=$(printf 'zd%02d' "$i")
	truncate -s "$disk_size" "$tmp/$name.img"
	drive_args+=(
		-drive "if=none,id=$name,file=$tmp/$name.img,format=raw${disk_opts[$name]:+,${disk_opts[$name]}}"
		-device "virtio-blk-pci,drive=$name,serial=$name"
	)
done

# Left-overs of an earlier run would pass for this run's results.
rm -f "$job/log" "$job/exit" "$job/console.log"

# panic=1 with -no-reboot: a guest that cannot boot ends qemu at once
# instead of sitting in a shell until the timeout.
append="root=LABEL=$label rw console=ttyS0 zpe.job=1 panic=1 quiet loglevel=4 systemd.show_status=error"
# ZPE_APPEND adds kernel options, e.g. systemd.show_status=true to debug boot.
append+=${ZPE_APPEND:+ $ZPE_APPEND}

log "booting $(basename "$image") ($accel, $cpus CPUs) with $disks disks of $disk_size, timeout ${timeout}s"
start=$SECONDS
rc=0
timeout --kill-after=15 "$timeout" qemu-system-x86_64 \
	-name zpe-job "${accel_args[@]}" -smp "$cpus" -m "$memory" \
	-nographic -vga none -monitor none -serial "file:$job/console.log" -nic none -no-reboot \
	-kernel "$image/vmlinuz" -initrd "$image/initrd.img" -append "$append" \
	-drive "if=none,id=root,file=$image/root.img,format=raw,snapshot=on" \
	-device virtio-blk-pci,drive=root,serial=zpe-root \
	-virtfs "local,path=$job,mount_tag=job,security_model=none,id=job" \
	"${drive_args[@]}" </dev/null || rc=$?
log "qemu ran $((SECONDS - start)) s"

if ((rc == 124 || rc == 137)); then
	log "timed out after ${timeout}s (--timeout); last lines of $job/console.log:"
	tail -n 30 "$job/console.log" >&2 || true
	[ -f "$job/log" ] && cat "$job/log"
	exit 1
fi
((rc == 0)) || log "qemu exited $rc"

[ -f "$job/log" ] && cat "$job/log"
if [ ! -s "$job/exit" ]; then
	log "no /job/exit: the guest died before the job finished; last lines of $job/console.log:"
	tail -n 30 "$job/console.log" >&2 || true
	exit 1
fi
status=$(cat "$job/exit")
[[ $status =~ ^[0-9]+$ ]] || die "$job/exit holds \"$status\", not an exit status"
log "job exited $status"
exit "$status"
